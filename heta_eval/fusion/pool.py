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


@dataclass
class Pool:
    """The candidates (see the module docstring)."""

    query_ids: list[str]
    offsets: np.ndarray  # int64, len(query_ids) + 1
    doc_ids: np.ndarray  # object (str), rows
    scores: np.ndarray  # float64 (rows, runs): NaN where the run does not rank the document
    lengths: np.ndarray  # int64 (queries, runs): documents each run ranks for the query
    entries: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(repr=False)
    # per run, in its own order: each entry's row, query and score

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
    counts as ranking nothing for it. Queries come in first-seen order."""
    query_ids = list(dict.fromkeys(chain.from_iterable(runs)))
    index = {qid: i for i, qid in enumerate(query_ids)}
    n_queries = len(query_ids)
    queries, scores = [], []
    for run in runs:
        lengths = [len(run[qid]) for qid in run]
        queries.append(np.repeat(np.array([index[q] for q in run], np.int64), lengths))
        scores.append(np.fromiter(chain.from_iterable(d.values() for d in run.values()), float))
        if not np.isfinite(scores[-1]).all():
            _refuse_non_finite(run, len(scores) - 1)
    every_doc = list(chain.from_iterable(chain.from_iterable(run.values()) for run in runs))
    # Codes in first-seen order, every loop in C (dict.fromkeys, zip, map): no bytecode per id.
    distinct = dict.fromkeys(every_doc)
    codes_of = dict(zip(distinct, range(len(distinct)), strict=True))
    codes = np.fromiter(map(codes_of.__getitem__, every_doc), np.int64, len(every_doc))
    vocabulary = np.empty(len(codes_of), dtype=object)
    vocabulary[:] = list(codes_of)  # the caller's own str objects
    n_vocabulary = max(len(codes_of), 1)
    keys = np.concatenate([*queries, np.empty(0, np.int64)]) * n_vocabulary + codes
    unique, inverse = np.unique(keys, return_inverse=True)
    row_query, row_code = np.divmod(unique, n_vocabulary)
    offsets = np.searchsorted(row_query, np.arange(n_queries + 1)).astype(np.int64)
    matrix = np.full((len(unique), len(runs)), np.nan)
    lengths = np.zeros((n_queries, len(runs)), np.int64)
    entries = []
    start = 0
    for column, (query, score) in enumerate(zip(queries, scores, strict=True)):
        rows = inverse.ravel()[start : start + len(score)]
        start += len(score)
        matrix[rows, column] = score
        lengths[:, column] = np.bincount(query, minlength=n_queries)
        entries.append((rows, query, score))
    return Pool(query_ids, offsets, vocabulary[row_code], matrix, lengths, entries)


def _refuse_non_finite(run: RunDict, number: int) -> None:
    """A ValueError naming the first score that is NaN or infinite: fusion has no rule for it."""
    for qid, docs in run.items():
        for doc, score in docs.items():
            if not np.isfinite(score):
                raise ValueError(f"run {number + 1}: query {qid!r}, doc {doc!r}: score {score!r} "
                                 "is not finite")  # fmt: skip


def ordered(query: np.ndarray, key: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
    """The permutation that sorts entries by query ascending, ``key`` descending, equal keys
    by doc id descending (``str`` order: code points, trec_eval's ``strcmp`` on UTF-8)."""
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
