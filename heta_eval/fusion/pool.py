"""The candidates of a fusion: every (query, document) that any run ranks, as arrays.

One row per candidate, grouped by query (query ``q`` owns rows ``offsets[q]:offsets[q+1]``);
one column per run. A run's ranking of a query is its scores in descending order with equal
scores ranked by document id, highest first (trec_eval's tie rule, on float64 scores); ranx
ranks equal scores in the order numba's quicksort leaves them, which is the input order for up
to 15 documents and unspecified beyond (docs/fusion.md#ties).

>>> pool = build_pool([{"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 5.0, "c": 4.0}}])
>>> pool.doc_ids.tolist(), pool.ranks.tolist()
(['a', 'b', 'c'], [[1, 0], [2, 1], [0, 2]])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain

import numpy as np

__all__ = ["Pool", "build_pool", "ordered", "per_query", "ranked_rows"]

RunDict = Mapping[str, Mapping[str, float]]
_EMPTY: Mapping[str, float] = {}


@dataclass
class Pool:
    """The candidates (see the module docstring)."""

    query_ids: list[str]
    offsets: np.ndarray  # int64, len(query_ids) + 1
    doc_ids: np.ndarray  # object (str), rows
    scores: np.ndarray  # float64 (rows, runs): NaN where the run does not rank the document
    lengths: np.ndarray  # int64 (queries, runs): documents each run ranks for the query
    entries: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(repr=False)
    # per run, query by query (the pool's order), each query's documents in the run's order:
    # each entry's row, query and score

    @cached_property
    def ranks(self) -> np.ndarray:
        """int64 (rows, runs): 1 = the run's first document, 0 = not ranked. Computed on
        first use: score methods never sort a run."""
        ranks = np.zeros(self.scores.shape, np.int64)
        for column, (rows, query, score) in enumerate(self.entries):
            ranks[rows, column] = _ranks(query, score, self.doc_ids[rows])
        return ranks

    @property
    def query_of_row(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.query_ids)), np.diff(self.offsets))

    @property
    def candidates(self) -> np.ndarray:
        """Per row: how many documents its query's runs rank between them."""
        return np.repeat(np.diff(self.offsets), np.diff(self.offsets))


def build_pool(runs: Sequence[RunDict]) -> Pool:
    """The pool of ``runs`` (dicts ``{query id: {doc id: score}}``); a query a run lacks
    counts as ranking nothing for it. Queries come in first-seen order, and each query's
    documents in first-seen order across the runs."""
    query_ids = list(dict.fromkeys(chain.from_iterable(runs)))
    n_queries = len(query_ids)
    rows_of: list[list[np.ndarray]] = [[] for _ in runs]
    lengths = np.zeros((n_queries, len(runs)), np.int64)
    pools: list[dict[str, int]] = []
    offset = 0
    for q, qid in enumerate(query_ids):
        ranked = [run.get(qid, _EMPTY) for run in runs]
        # A small table per query stays in the CPU's cache, where one table of every
        # (query, document) did not (docs/fusion.md). Loops are C (zip, map).
        distinct = dict.fromkeys(chain.from_iterable(ranked))
        rows = dict(zip(distinct, range(offset, offset + len(distinct)), strict=True))
        for column, docs in enumerate(ranked):
            rows_of[column].append(np.fromiter(map(rows.__getitem__, docs), np.int64, len(docs)))
            lengths[q, column] = len(docs)
        pools.append(rows)
        offset += len(rows)
    doc_ids = np.empty(offset, dtype=object)
    doc_ids[:] = list(chain.from_iterable(pools))  # the caller's own str objects
    offsets = np.zeros(n_queries + 1, np.int64)
    offsets[1:] = np.cumsum(np.fromiter(map(len, pools), np.int64, n_queries))
    matrix = np.full((offset, len(runs)), np.nan)
    entries = []
    for column, run in enumerate(runs):
        values = chain.from_iterable(run.get(qid, _EMPTY).values() for qid in query_ids)
        score = np.fromiter(values, float, int(lengths[:, column].sum()))
        if not np.isfinite(score).all():
            _refuse_non_finite(run, column)
        rows = np.concatenate([*rows_of[column], np.empty(0, np.int64)])
        matrix[rows, column] = score
        entries.append((rows, np.repeat(np.arange(n_queries), lengths[:, column]), score))
    return Pool(query_ids, offsets, doc_ids, matrix, lengths, entries)


def _refuse_non_finite(run: RunDict, number: int) -> None:
    """A ValueError naming the first score that is NaN or infinite: fusion has no rule for it."""
    for qid, docs in run.items():
        for doc, score in docs.items():
            if not np.isfinite(score):
                raise ValueError(
                    f"run {number + 1}: query {qid!r}, doc {doc!r}: score {score!r} is not finite"
                )


def ordered(query: np.ndarray, key: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
    """The permutation that sorts entries by query ascending, ``key`` descending, equal keys
    by doc id descending (``str`` order: code points, trec_eval's ``strcmp`` on UTF-8)."""
    with np.errstate(invalid="ignore"):  # inf - inf (float32 keys past 3.4e38): lexsort
        q_step, k_step = np.diff(query), np.diff(key)
    if np.all((q_step > 0) | ((q_step == 0) & (k_step <= 0))):
        order = np.arange(len(query))  # already in order (a run read from a sorted file)
    else:
        order = np.lexsort((-key, query))
    q, k = query[order], key[order]
    tied = (q[1:] == q[:-1]) & (k[1:] == k[:-1])
    if not tied.any():
        return order
    in_tie = np.zeros(len(order), bool)
    in_tie[1:] |= tied
    in_tie[:-1] |= tied
    positions = np.flatnonzero(in_tie)
    # Only tied entries' ids are sorted (numpy compares str by code point, as Python does).
    _, place = np.unique(np.array(doc_ids[order[positions]].tolist()), return_inverse=True)
    starts = in_tie & ~np.concatenate(([False], tied))
    group = np.cumsum(starts)[positions]
    order[positions] = order[positions][np.lexsort((-place.ravel(), group))]
    return order


def _ranks(query: np.ndarray, score: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
    """1-based ranks within each query: score descending, then doc id descending."""
    order = ordered(query, score, doc_ids)
    starts = np.searchsorted(query[order], query[order])  # sorted by query
    ranks = np.empty(len(order), np.int64)
    ranks[order] = np.arange(len(order)) - starts + 1
    return ranks


def per_query(values: np.ndarray, query: np.ndarray, n_queries: int, ufunc: np.ufunc) -> np.ndarray:
    """``ufunc.reduce`` of ``values`` per query (rows grouped by ``query``, ascending); 0
    for a query without rows."""
    counts = np.bincount(query, minlength=n_queries)
    out = np.zeros(n_queries)
    filled = counts > 0
    if len(values):
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        out[filled] = ufunc.reduceat(values, starts[filled])
    return out


def ranked_rows(pool: Pool, fused: np.ndarray, depth: int | None) -> np.ndarray:
    """The rows to keep, each query's in trec_eval's order (float32 score descending, then
    doc id descending, as heta-eval ranks when it evaluates), at most ``depth`` per query."""
    query = pool.query_of_row
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, as trec_eval reads it
        key = fused.astype(np.float32)
    order = ordered(query, key, pool.doc_ids)
    if depth is None:
        return order
    position = np.arange(len(order)) - pool.offsets[query[order]]
    return order[position < depth]
