"""Fusing runs: :func:`fuse` combines two or more runs with ranx's methods and
normalisations (:mod:`~heta_eval.fusion.methods`, :mod:`~heta_eval.fusion.normalize`), into
a run that goes wherever a run goes; :mod:`~heta_eval.fusion.optimize` tunes its parameters
on queries it then does not report on. docs/fusion.md has the rules and a worked example.

>>> bm25 = {"q1": {"d1": 12.0, "d2": 9.5, "d3": 3.0}}
>>> dense = {"q1": {"d3": 0.91, "d1": 0.80}}
>>> fuse([bm25, dense], method="rrf")
{'q1': {'d1': 0.03252247488101534, 'd3': 0.032266458495966696, 'd2': 0.016129032258064516}}
>>> fuse([bm25, dense], method="wsum", params={"weights": [0.3, 0.7]})["q1"]
{'d3': 0.7, 'd1': 0.3, 'd2': 0.21666666666666665}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from heta_eval.fusion.condorcet import condorcet
from heta_eval.fusion.methods import METHODS, RANK_METHODS, combine
from heta_eval.fusion.normalize import NORMS, normalize
from heta_eval.fusion.pool import Pool, build_pool, ranked_rows
from heta_eval.io.run import read_run
from heta_eval.sizes import MAX_RRF_K

__all__ = [
    "DEFAULT_DEPTH",
    "MAX_RRF_K",
    "METHODS",
    "NORMS",
    "FusionError",
    "fuse",
    "fuse_pool",
    "read_runs",
]

DEFAULT_DEPTH = 1000
RunDict = dict[str, dict[str, float]]


class FusionError(ValueError):
    """Runs, a method, a normalisation or parameters that cannot be fused; the message says
    which."""


def read_runs(runs: Sequence[Any]) -> list[Mapping[str, Mapping[str, float]]]:
    """Each run as a dict: a mapping as it is; a path, TREC or BEIR JSON text, a DataFrame
    or a ranx ``Run`` through :func:`heta_eval.io.run.read_run` (its errors name the file
    and line)."""
    return [run if isinstance(run, Mapping) else read_run(run) for run in runs]


def check_settings(method: str, norm: str | None, params: Mapping[str, Any], n_runs: int) -> None:
    """A :class:`FusionError` for a method, normalisation or parameter that cannot apply."""
    if method not in METHODS:
        raise FusionError(f"unknown fusion method {method!r}; choose from {', '.join(METHODS)}")
    if norm is not None and norm.replace("_", "-") not in NORMS:
        raise FusionError(f"unknown normalisation {norm!r}; choose from {', '.join(NORMS)}")
    if n_runs < 2:
        raise FusionError(f"fusion needs two or more runs, got {n_runs}")
    if norm == "borda" and method in RANK_METHODS:
        # ranx would rank every candidate in a set's order here: no defined result.
        raise FusionError(f"norm 'borda' gives {method!r} no ranking to read; use another norm")
    unknown = set(params) - {"k", "weights"}
    if unknown:
        raise FusionError(f"unknown parameter(s) {', '.join(sorted(unknown))}: use k or weights")
    k = params.get("k", 60)
    if isinstance(k, bool) or not isinstance(k, int | float) or not 0 <= k <= MAX_RRF_K:
        raise FusionError(f"rrf's k must be a number from 0 to {MAX_RRF_K:,}, got {k!r}")
    weights = params.get("weights")
    if method == "wsum":
        if weights is None or len(weights) != n_runs:
            raise FusionError(f"wsum needs one weight per run ({n_runs}), got {weights!r}")
        if not all(isinstance(w, int | float) and math.isfinite(w) for w in weights):
            raise FusionError(f"weights must be finite numbers, got {weights!r}")


def fuse_pool(pool: Pool, method: str, norm: str | None, params: Mapping[str, Any]) -> np.ndarray:
    """Each pool row's fused score (settings already checked)."""
    if method == "condorcet":
        return condorcet(pool.ranks, pool.offsets)
    by_rank = method in RANK_METHODS
    scores = pool.scores if by_rank else normalize(pool, norm)
    with np.errstate(over="ignore", invalid="ignore"):  # said below, as an error
        fused = combine(
            method,
            scores,
            pool.ranks if by_rank else np.zeros((0, 0), np.int64),  # score methods read no rank
            candidates=pool.candidates,
            lengths=pool.lengths[pool.query_of_row],
            k=params.get("k", 60),
            weights=params.get("weights"),
        )
    _check_finite(pool, fused, method, norm)
    return fused


def _check_finite(pool: Pool, fused: np.ndarray, method: str, norm: str | None) -> None:
    """A :class:`FusionError` naming the first query and document whose fused score is not a
    finite number (huge weights or scores overflow): a run of them would rank nothing."""
    bad = np.flatnonzero(~np.isfinite(fused))
    if not len(bad):
        return
    row = int(bad[0])
    query = pool.query_ids[int(pool.query_of_row[row])]
    raise FusionError(
        f"{method} (norm {norm}) gives {len(bad):,} documents a score that is not a finite "
        f"number (first: query {query!r}, doc {pool.doc_ids[row]!r}: {fused[row]}); the "
        "weights or the runs' scores are too large to add: nothing was written"
    )


def as_run(pool: Pool, fused: np.ndarray, depth: int | None) -> RunDict:
    """The fused run: each query's documents in trec_eval's order, ``depth`` at most."""
    rows = ranked_rows(pool, fused, depth)
    docs = pool.doc_ids[rows].tolist()
    values = fused[rows].tolist()
    bounds = np.searchsorted(pool.query_of_row[rows], np.arange(len(pool.query_ids) + 1))
    bounds = bounds.tolist()
    return {
        qid: dict(
            zip(docs[bounds[q] : bounds[q + 1]], values[bounds[q] : bounds[q + 1]], strict=True)
        )
        for q, qid in enumerate(pool.query_ids)
    }


def fuse(
    runs: Sequence[Any],
    method: str = "rrf",
    norm: str | None = "min-max",
    params: Mapping[str, Any] | None = None,
    depth: int | None = DEFAULT_DEPTH,
) -> RunDict:
    """Fuse two or more runs into one, ``{query id: {doc id: score}}``.

    ``runs``: dicts, paths of TREC runs or BEIR results JSON, DataFrames or ranx ``Run``
    objects (:func:`read_runs`). ``method``: one of :data:`METHODS`; ``norm``: one of
    :data:`NORMS` (ranx's default, ``min-max``; rank-based methods ignore it); ``params``:
    ``{"k": 60}`` for ``rrf``, ``{"weights": [...]}`` for ``wsum``. The scores equal
    ``ranx.fuse``'s (tests/fusion/test_fusion_parity.py). A query a run lacks counts as ranking
    nothing there; each query keeps its ``depth`` best documents in trec_eval's order
    (None: all).
    """
    params = dict(params or {})
    loaded = read_runs(runs)
    check_settings(method, norm, params, len(loaded))
    if depth is not None and (not isinstance(depth, int) or depth < 1):
        raise FusionError(f"depth must be a positive integer or None, got {depth!r}")
    pool = build_pool(loaded)
    return as_run(pool, fuse_pool(pool, method, norm, params), depth)
