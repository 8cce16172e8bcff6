"""Fusion methods under ranx's names, over the pool's matrices (one row per candidate).

``s_i`` is run ``i``'s (normalised) score of a document, ``r_i`` its 1-based rank there,
``m`` the runs that rank the document, ``N`` the query's candidates, ``n_i`` the documents
run ``i`` ranks. Sums run over the runs in the order given, as ranx adds them.

============= ==========================================================================
``sum``       ``sum_i s_i`` (a run that does not rank the document adds 0)
``wsum``      ``sum_i w_i s_i`` (``weights``, one per run)
``mnz``       ``m * sum s_i``;  ``anz``: ``sum s_i / m``; ``med``: the median of its ``s_i``
``max``       ``max_i s_i``, a run that does not rank it counting -1e9 (ranx's value)
``min``       ``min_i s_i``, a run that does not rank it counting 1e9 (ranx's value)
``rrf``       ``sum_i 1 / (k + r_i)`` (``k``, default 60; Cormack et al., 2009)
``isr``       ``m * sum_i 1 / r_i**2``;  ``log_isr``: ``log(m) * sum_i 1 / r_i**2``
``bordafuse`` ``sum_i (N - r_i + 1)``, ``(N - n_i + 1) / 2`` where run ``i`` lacks it
``condorcet`` pairwise majority order (:mod:`heta_eval.fusion.condorcet`)
============= ==========================================================================

``rrf``, ``isr``, ``log_isr``, ``bordafuse`` and ``condorcet`` read ranks only, so every
normalisation but ``borda`` leaves them unchanged.

>>> ranks = np.array([[1, 0], [2, 1], [0, 2]])
>>> rrf(ranks, k=60).tolist()
[0.01639344262295082, 0.03252247488101534, 0.016129032258064516]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["METHODS", "RANK_METHODS", "combine", "rrf"]

SCORE_METHODS = ("sum", "wsum", "mnz", "anz", "max", "min", "med")
RANK_METHODS = ("rrf", "isr", "log_isr", "bordafuse", "condorcet")
METHODS = SCORE_METHODS + RANK_METHODS
MISSING_MAX, MISSING_MIN = -1e9, 1e9


def _added(values: np.ndarray) -> np.ndarray:
    """Row sums in column order, a NaN (not ranked) adding 0, as ranx's ``sum``."""
    total = np.zeros(values.shape[0])
    for column in range(values.shape[1]):
        total = total + np.nan_to_num(values[:, column], nan=0.0)
    return total


def rrf(ranks: np.ndarray, k: float = 60) -> np.ndarray:
    """Reciprocal rank fusion of a rank matrix (0 = not ranked): ``sum 1 / (k + r)``; the
    reference knowledge base's hybrid mode fuses through it."""
    ranked = ranks > 0
    return _added(np.where(ranked, 1 / np.where(ranked, (k + (ranks - 1)) + 1, 1), np.nan))


def _isr(ranks: np.ndarray) -> np.ndarray:
    ranked = ranks > 0
    return np.where(ranked, 1 / np.where(ranked, ranks * ranks, 1), np.nan)


def _median(scores: np.ndarray) -> np.ndarray:
    ordered = np.sort(scores, axis=1)  # NaN last
    count = np.sum(~np.isnan(scores), axis=1)
    low = np.take_along_axis(ordered, np.maximum((count - 1) // 2, 0)[:, None], 1)[:, 0]
    high = np.take_along_axis(ordered, np.maximum(count // 2, 0)[:, None], 1)[:, 0]
    return np.where(count % 2 == 1, low, (low + high) / 2)


def combine(
    method: str,
    scores: np.ndarray,
    ranks: np.ndarray,
    *,
    candidates: np.ndarray,
    lengths: np.ndarray,
    k: float = 60,
    weights: Sequence[float] | None = None,
) -> np.ndarray:
    """The fused score of each row by ``method`` (one of :data:`METHODS` but ``condorcet``).
    ``candidates``: each row's query's candidates; ``lengths``: each row's query's
    documents per run (rows × runs)."""
    present = ~np.isnan(scores)
    count = present.sum(axis=1)
    if method == "sum":
        return _added(scores)
    if method == "wsum":
        if weights is None or len(weights) != scores.shape[1]:
            raise ValueError(f"wsum needs one weight per run ({scores.shape[1]})")
        return _added(scores * np.asarray(weights, float))
    if method in ("mnz", "anz"):
        total = _added(scores)
        return total * count if method == "mnz" else total / count
    if method == "max":
        return np.max(np.where(present, scores, MISSING_MAX), axis=1)
    if method == "min":
        return np.min(np.where(present, scores, MISSING_MIN), axis=1)
    if method == "med":
        return _median(scores)
    if method == "rrf":
        return rrf(ranks, k)
    if method in ("isr", "log_isr"):
        ranked = (ranks > 0).sum(axis=1)
        factor = ranked if method == "isr" else np.log(ranked)
        return _added(_isr(ranks)) * factor
    if method == "bordafuse":
        given = candidates[:, None] - ranks + 1
        unranked = (candidates[:, None] - lengths + 1) / 2
        return _added(np.where(ranks > 0, given, unranked).astype(float))
    raise ValueError(f"unknown fusion method {method!r}; choose from {', '.join(METHODS)}")
