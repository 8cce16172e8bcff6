"""Tuning fusion honestly: choose parameters on some queries, report on others.

The grid is ranx's ``optimize_fusion`` grid: for ``wsum``, every weight vector of multiples
of ``step`` (0.1) summing to 1; for ``rrf``, ``k`` in 10, 20, ..., 100. Each setting fuses
once and is scored per query (every judged query counts; one the fused run lacks scores the
measure's missing value, 0, as ``trec_eval -c``). Then:

* :func:`cross_validate` splits the judged queries into ``folds`` (a seeded shuffle); for each
  fold it picks the setting with the best mean on the other folds (the first on a tie, in grid
  order) and scores the fold's queries with it. The reported score is the mean over all
  judged queries of those held-out values: no query is scored by a setting chosen on it.
* :func:`tune_on_split` picks the setting on one set of judgments (a training split) and
  reports it on another whose queries it does not share.

>>> runs = [{"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 2.0, "d": 1.0}},
...         {"q1": {"b": 2.0, "a": 1.0}, "q2": {"d": 2.0, "c": 1.0}}]
>>> train, test = {"q1": {"a": 1}}, {"q2": {"c": 1}}
>>> tuned = tune_on_split(runs, "wsum", "min-max", train, test, "nDCG@10")
>>> tuned.settings[0], tuned.score
({'weights': [0.6, 0.4]}, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from heta_eval.fusion import (
    DEFAULT_DEPTH,
    FusionError,
    as_run,
    check_settings,
    fuse_pool,
    read_runs,
)
from heta_eval.fusion.pool import Pool, build_pool
from heta_eval.retrieval.run import evaluate_run
from heta_eval.sizes import MAX_GRID

__all__ = ["MAX_GRID", "Tuned", "cross_validate", "grid", "grid_size", "tune_on_split"]

Qrels = Mapping[str, Mapping[str, int]]


@dataclass
class Tuned:
    """What tuning chose and the score it earned on queries it did not tune on.

    ``settings[f]`` and ``fold_queries[f]``: the parameters chosen without fold ``f`` and the
    queries scored with them; ``fold_scores[f]`` their mean there; ``score``: the mean over
    every scored query; ``run``: the fused run, each query fused with the setting chosen
    without it (an unjudged query, never scored, with the setting chosen on all of them)."""

    measure: Any
    settings: list[dict[str, Any]]
    fold_queries: list[list[str]]
    fold_scores: list[float]
    score: float
    per_query: dict[str, float]
    run: dict[str, dict[str, float]] = field(repr=False)


def grid_size(method: str, n_runs: int, step: float = 0.1) -> int:
    """How many settings :func:`grid` holds, checked before it is built: a
    :class:`FusionError` for a step that does not divide 1 or a grid over :data:`MAX_GRID`.

    >>> grid_size("wsum", 3, 0.1), grid_size("rrf", 5)
    (66, 10)
    >>> grid_size("wsum", 4, 0.01)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    heta_eval.fusion.FusionError: a weight step of 0.01 over 4 runs makes a grid of 176,851 ...
    """
    if method == "rrf":
        return 10
    if method != "wsum":
        raise FusionError(f"{method!r} has nothing to tune: tune wsum's weights or rrf's k")
    if not (isinstance(step, int | float) and math.isfinite(step) and 0 < step <= 1):
        raise FusionError(f"the weight step must be a number in (0, 1], got {step!r}")
    if 1 / step > MAX_GRID:
        raise FusionError(
            f"the weight step must divide 1 into at most {MAX_GRID:,} parts, got {step!r}"
        )
    parts = round(1 / step)
    if not math.isclose(parts * step, 1.0):
        raise FusionError(f"the weight step must divide 1, got {step!r}")
    size = math.comb(parts + n_runs - 1, n_runs - 1)  # weight vectors of multiples summing to 1
    if size > MAX_GRID:
        raise FusionError(
            f"a weight step of {step:g} over {n_runs} runs makes a grid of {size:,} settings, "
            f"each fusing and scoring every query; at most {MAX_GRID:,}: take a larger step"
        )
    return size


def grid(method: str, n_runs: int, step: float = 0.1) -> list[dict[str, Any]]:
    """ranx's grid for ``method`` (module docstring), of :func:`grid_size` settings."""
    grid_size(method, n_runs, step)
    if method == "rrf":
        return [{"k": k} for k in range(10, 101, 10)]
    parts = round(1 / step)
    return [{"weights": [c / parts for c in combo]} for combo in _compositions(parts, n_runs)]


def _compositions(total: int, n: int) -> list[tuple[int, ...]]:
    if n == 1:
        return [(total,)]
    return [
        (first, *rest) for first in range(total + 1) for rest in _compositions(total - first, n - 1)
    ]


def _scores(
    pool: Pool,
    method: str,
    norm: str | None,
    settings: list[dict[str, Any]],
    qrels: Qrels,
    queries: list[str],
    measure: Any,
    depth: int | None,
) -> tuple[np.ndarray, list[dict[str, dict[str, float]]]]:
    """Per setting and query (rows × ``queries``): the measure's value; and the fused runs."""
    values = np.zeros((len(settings), len(queries)))
    runs = []
    for i, params in enumerate(settings):
        run = as_run(pool, fuse_pool(pool, method, norm, params), depth)
        runs.append(run)
        result = evaluate_run(qrels, {q: d for q, d in run.items() if d}, measures=[measure])
        name, chosen = next(iter(result.measures.items()))
        missing = {q: chosen.missing_value(sum(v > 0 for v in qrels[q].values())) for q in queries}
        values[i] = [result.per_query.get(q, {}).get(name, missing[q]) for q in queries]
    return values, runs


def _prepare(
    runs: Sequence[Any], method: str, norm: str | None, step: float
) -> tuple[Pool, list[dict[str, Any]]]:
    loaded = read_runs(runs)
    settings = grid(method, len(loaded), step)
    check_settings(method, norm, settings[0], len(loaded))
    return build_pool(loaded), settings


def _assemble(pool: Pool, runs: list[dict], chosen: Mapping[str, int], fallback: int) -> dict:
    return {q: runs[chosen.get(q, fallback)][q] for q in pool.query_ids}


def cross_validate(
    runs: Sequence[Any],
    method: str,
    norm: str | None,
    qrels: Qrels,
    measure: Any,
    *,
    folds: int = 5,
    seed: int = 0,
    step: float = 0.1,
    depth: int | None = DEFAULT_DEPTH,
) -> Tuned:
    """k-fold cross-validation over the judged queries (module docstring)."""
    pool, settings = _prepare(runs, method, norm, step)
    queries = sorted(qrels)
    if not 2 <= folds <= len(queries):
        raise FusionError(f"folds must be from 2 to the {len(queries)} judged queries, got {folds}")
    values, fused = _scores(pool, method, norm, settings, qrels, queries, measure, depth)
    parts = np.array_split(np.random.default_rng(seed).permutation(len(queries)), folds)
    chosen, picks, fold_scores, held_out = {}, [], [], np.zeros(len(queries))
    for part in parts:
        train = np.setdiff1d(np.arange(len(queries)), part)
        best = int(np.argmax(values[:, train].mean(axis=1)))  # first best in grid order
        picks.append(best)
        held_out[part] = values[best, part]
        fold_scores.append(float(values[best, part].mean()))
        chosen.update({queries[i]: best for i in part})
    fallback = int(np.argmax(values.mean(axis=1)))
    return Tuned(
        measure,
        [settings[b] for b in picks],
        [[queries[i] for i in sorted(p)] for p in parts],
        fold_scores,
        float(held_out.mean()),
        dict(zip(queries, held_out.tolist(), strict=True)),
        _assemble(pool, fused, chosen, fallback),
    )


def tune_on_split(
    runs: Sequence[Any],
    method: str,
    norm: str | None,
    train: Qrels,
    test: Qrels,
    measure: Any,
    *,
    step: float = 0.1,
    depth: int | None = DEFAULT_DEPTH,
) -> Tuned:
    """Choose on ``train``'s judged queries, report on ``test``'s (none shared)."""
    shared = sorted(set(train) & set(test))
    if shared:
        raise FusionError(
            f"{len(shared)} queries are judged in both the tuning and the reported "
            f"judgments (first: {shared[0]!r}); a score on them would not be held out"
        )
    if not train or not test:
        raise FusionError("tuning needs judged queries in both the tuning and reported judgments")
    pool, settings = _prepare(runs, method, norm, step)
    if not set(train) & set(pool.query_ids):
        raise FusionError(
            f"the runs rank none of the {len(train)} tuning queries: run the systems on "
            "the tuning split's queries too"
        )
    tuned, fused = _scores(pool, method, norm, settings, train, sorted(train), measure, depth)
    best = int(np.argmax(tuned.mean(axis=1)))
    queries = sorted(test)
    values, _ = _scores(pool, method, norm, [settings[best]], test, queries, measure, depth)
    return Tuned(
        measure,
        [settings[best]],
        [queries],
        [float(values[0].mean())],
        float(values[0].mean()),
        dict(zip(queries, values[0].tolist(), strict=True)),
        _assemble(pool, fused, {}, best),
    )
