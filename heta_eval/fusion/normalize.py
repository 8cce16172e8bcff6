"""Score normalisations, per run and query, under ranx's names and with ranx's formulas.

``s`` is a score of one run for one query, over the ``n`` documents it ranks; ``rank`` its
1-based rank (:mod:`heta_eval.fusion.pool`); ``N`` the query's candidates (documents any
run ranks). Denominators are floored at 1e-9, as ranx floors them.

============ ===============================================================================
``min-max``  ``(s - min) / max(max - min, 1e-9)``
``max``      ``s / max(max, 1e-9)``
``sum``      ``(s - min) / max(sum - n * min, 1e-9)``
``zmuv``     ``(s - mean) / max(std, 1e-9)`` (population standard deviation)
``rank``     ``1 - (rank - 1) / n``
``borda``    ``1 - (rank - 1) / N``; a candidate the run does not rank gets
             ``0.5 - (n - 1) / (2 N)``, so every run then scores every candidate
``none``     the scores as they are
============ ===============================================================================

>>> from heta_eval.fusion.pool import build_pool
>>> pool = build_pool([{"q": {"a": 3.0, "b": 1.0}}, {"q": {"b": 2.0}}])
>>> normalize(pool, "min-max")[:, 0].tolist()
[1.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from heta_eval.fusion.pool import Pool, per_query

__all__ = ["NORMS", "normalize"]

NORMS = ("min-max", "max", "sum", "zmuv", "rank", "borda", "none")
FLOOR = 1e-9


def normalize(pool: Pool, norm: str | None) -> np.ndarray:
    """The pool's score matrix under ``norm`` (NaN stays where a run ranks nothing, except
    under ``borda``)."""
    name = "none" if norm is None else norm.replace("_", "-")
    if name not in NORMS:
        raise ValueError(f"unknown normalisation {norm!r}; choose from {', '.join(NORMS)}")
    scores = pool.scores.copy()
    if name == "none":
        return scores
    if name == "borda":
        return _borda(pool)
    query = pool.query_of_row
    for column in range(scores.shape[1]):
        present = ~np.isnan(pool.scores[:, column])
        rows_query = query[present]
        values = scores[present, column]
        lengths = pool.lengths[:, column].astype(float)
        scores[present, column] = _column(name, values, rows_query, lengths, pool, present, column)
    return scores


def _column(
    name: str,
    values: np.ndarray,
    query: np.ndarray,
    lengths: np.ndarray,
    pool: Pool,
    present: np.ndarray,
    column: int,
) -> np.ndarray:
    n_queries = len(lengths)
    if name == "rank":
        return 1 - (pool.ranks[present, column] - 1) / lengths[query]
    if name == "zmuv":
        mean = per_query(values, query, n_queries, np.add) / np.maximum(lengths, 1)
        deviation = values - mean[query]
        var = per_query(deviation * deviation, query, n_queries, np.add) / np.maximum(lengths, 1)
        return deviation / np.maximum(np.sqrt(var), FLOOR)[query]
    low = per_query(values, query, n_queries, np.minimum)
    if name == "min-max":
        high = per_query(values, query, n_queries, np.maximum)
        return (values - low[query]) / np.maximum(high - low, FLOOR)[query]
    if name == "max":
        high = per_query(values, query, n_queries, np.maximum)
        return values / np.maximum(high, FLOOR)[query]
    total = per_query(values, query, n_queries, np.add)  # "sum"
    return (values - low[query]) / np.maximum(total - lengths * low, FLOOR)[query]


def _borda(pool: Pool) -> np.ndarray:
    candidates = pool.candidates.astype(float)
    query = pool.query_of_row
    out = np.empty(pool.scores.shape)
    for column in range(out.shape[1]):
        rank = pool.ranks[:, column]
        unranked = 0.5 - (pool.lengths[query, column] - 1) / (2 * candidates)
        out[:, column] = np.where(rank > 0, 1 - (rank - 1) / candidates, unranked)
    return out
