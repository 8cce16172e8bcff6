"""Chunk-level responses -> document-level rankings (the collapse BEIR's numbers need).

A response lists chunks, best first; BEIR's measures rank documents. Each result is mapped
to its benchmark document (``default_document_resolver`` or a caller's resolver), then one
rule, :mod:`~heta_eval.retrieval.first_chunks` (on a table's codes, or on a list's ids),
decides on every path:

* a result that maps to no document is dropped and counted (``unmapped``);
* with ``ignore_identical_ids`` every result whose document id equals the query id is
  dropped and counted (``self_hits``), as BEIR's ``EvaluateRetrieval`` drops them;
* a document keeps its *first* (best-ranked) result: position decides, not the score (a
  later chunk of the same document is dropped even when it scores higher, or the same) and
  is counted (``duplicates``);
* kept documents stay in response order with their first result's score; when any kept
  result has no score (``None``, or NaN in ``ResultColumns``), every document gets a
  rank-derived score n, n-1, ..., 1 instead, which keeps the response's order exactly.

``collapse_to_documents`` collapses one response, ``collapse_batch`` many at once into the
compiled engine's arrays. A run *file*'s repeated ``(query, doc)`` lines are another rule
(trec_eval refuses them, BEIR's loader keeps the last line's score: :mod:`heta_eval.io.run`),
and so are the engine's repeated rows (:mod:`heta_eval.providers.kernels.dedup`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate, repeat
from math import isnan
from operator import attrgetter
from threading import Lock
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

import numpy as np

from heta_eval.models.columns import ResultColumns
from heta_eval.models.document_id import source_document_id
from heta_eval.retrieval.first_chunks import (
    first_chunks,
    first_chunks_of_ids,
    first_chunks_of_list,
)

if TYPE_CHECKING:  # pydantic's models load with the evaluator, not for a run file
    from heta_eval.models.records import QueryResponse, QueryResult

__all__ = [
    "CollapsedBatch",
    "DocumentRanking",
    "DocumentResolver",
    "collapse_batch",
    "collapse_to_documents",
    "default_document_resolver",
]

DocumentResolver = Callable[["QueryResult"], "str | None"]


def default_document_resolver(result: QueryResult) -> str | None:
    """The benchmark document id of a result: ``source`` field ``document_id``, then
    ``source_key``, then ``object_key``.

    >>> from heta_eval.evaluation import QueryResult
    >>> default_document_resolver(QueryResult(source={"source_key": "doc-7", "chunk_id": 2}))
    'doc-7'
    """
    return source_document_id(result.source)


@dataclass(frozen=True)
class DocumentRanking:
    """A response collapsed to documents: ``scores`` in rank order, plus what was dropped."""

    scores: dict[str, float]
    unmapped: int = 0
    duplicates: int = 0
    self_hits: int = 0
    rank_derived: bool = False

    def metadata(self) -> dict[str, Any]:
        return {
            "documents": len(self.scores),
            "unmapped_results": self.unmapped,
            "duplicate_chunks": self.duplicates,
            "self_hits_removed": self.self_hits,
            "rank_derived_scores": self.rank_derived,
        }


# -- adapters: responses -> codes -----------------------------------------------------------

_SOURCE = attrgetter("source")
_SCORE = attrgetter("score")


def _offsets(sizes: Iterable[int]) -> np.ndarray:
    return np.array([0, *accumulate(sizes)], dtype=np.int64)


def _plain_ids(results: Sequence[QueryResult]) -> list[Any]:
    """Each result's ``source["document_id"]``, in C-level passes: the id the default
    resolver gives when it is a non-empty str (else see :func:`_resolved`)."""
    return list(map(dict.get, map(_SOURCE, results), repeat("document_id")))


def _resolved(ids: list[Any], results: Sequence[QueryResult]) -> list[str | None]:
    """``ids`` with each one that is not a non-empty str resolved from its result."""
    resolve = default_document_resolver
    return [i if type(i) is str and i else resolve(r) for i, r in zip(ids, results, strict=True)]


def _first_documents(
    results: Sequence[QueryResult], own: str | None, resolver: DocumentResolver | None
) -> tuple[dict[Any, int], list[int]]:
    """:func:`first_chunks_of_list` of one response's document ids: ``{kept id: row}``
    and the counts. With the default resolver the plain ids are tried first; any that is
    not a non-empty str (None among them) sends the response through the resolver."""
    if resolver is not None:
        return first_chunks_of_list(list(map(resolver, results)), own)
    ids = _plain_ids(results)
    # A resolved id is a non-empty str: an ``own`` that is not one can drop nothing, and
    # keeping it out leaves every id that needs resolving among the kept.
    first, counts = first_chunks_of_list(ids, own if type(own) is str and own else None)
    if counts[1] or "" in first or not set(map(type, first)) <= {str}:
        first, counts = first_chunks_of_list(_resolved(ids, results), own)
    return first, counts


def _kept_scores(results: Sequence[QueryResult], kept: Collection[int]) -> list[float | None]:
    """The scores of one response's results ``kept`` (None or NaN: none)."""
    if isinstance(results, ResultColumns):
        if results.scores is None:
            return [None] * len(kept)
        return list(map(results.scores.tolist().__getitem__, kept))
    return list(map(_SCORE, map(results.__getitem__, kept)))


def _collapse_one(
    results: Sequence[QueryResult],
    query_id: str | None,
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> tuple[Iterable[Any], list[float | None], list[int]]:
    """One response's kept document ids, their scores (None or NaN: none) and counts
    (kept, unmapped, duplicates, self-hits); every step while the response is in cache."""
    own = query_id if ignore_identical_ids else None
    if resolver is None and isinstance(results, ResultColumns):
        return _collapse_columns(results, own)
    first, counts = _first_documents(results, own, resolver)
    return first, _kept_scores(results, first.values()), counts


_SCRATCH: WeakKeyDictionary[Any, tuple[Lock, np.ndarray]] = WeakKeyDictionary()


def _scratch(table: Any) -> tuple[Lock, np.ndarray]:
    """A chunk table's scratch array for :func:`first_chunks` (one per document, all -1),
    kept while the table lives: one response's collapse then costs its rows, not the
    table's documents; and the lock of whoever uses it."""
    entry = _SCRATCH.get(table)
    if entry is None:
        seen = np.full(len(table.documents), -1, dtype=np.int64)
        entry = _SCRATCH.setdefault(table, (Lock(), seen))
    return entry


def _collapse_columns(
    results: ResultColumns, query_id: str | None
) -> tuple[list[Any], list[float | None], list[int]]:
    """:func:`_collapse_one` of ``ResultColumns``: its table's codes, no id strings but the
    kept ones. The query's own document, when among the rows, is among those kept without
    self-hits: a second pass runs only then."""
    table = results.table
    codes = table.codes[results.rows]
    offsets = np.array([0, len(codes)], dtype=np.int64)
    own = np.full(1, -1, dtype=np.int64)
    lock, seen = _scratch(table)
    mine = lock.acquire(blocking=False)  # else another thread has it: first_chunks allocates
    try:
        for _ in range(2):
            keep, counts = first_chunks(codes, offsets, own, len(seen), seen=seen if mine else None)
            kept = np.flatnonzero(keep)
            ids = table.document_ids_at(results.rows[kept])
            if query_id is None or own[0] >= 0 or query_id not in ids:
                break
            own[0] = codes[kept[ids.index(query_id)]]
    finally:
        if mine:
            lock.release()
    scores = results.scores
    kept_scores = [None] * len(ids) if scores is None else scores[kept].tolist()
    return ids, kept_scores, counts[0].tolist()


def _collapse_lists(
    pairs: Sequence[tuple[str, QueryResponse]],
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> tuple[Any, np.ndarray, np.ndarray]:
    """Responses of result lists collapsed one at a time (each while it is in cache): the
    kept ids as UTF-8 buffers, their scores (NaN: none), the counts per query."""
    from heta_eval.io.columnar import string_buffers  # heavy (numba): a batch only

    ids: list[Any] = []
    scores: list[float | None] = []
    counts: list[int] = []
    for query_id, response in pairs:
        kept_ids, kept_scores, kept_counts = _collapse_one(
            response.results, query_id, resolver, ignore_identical_ids
        )
        ids += kept_ids
        scores += kept_scores
        counts += kept_counts
    if resolver is not None and not set(map(type, ids)) <= {str}:
        raise TypeError("a document resolver returned an id that is not a str or None")
    counts_array = np.array(counts, dtype=np.int64).reshape(-1, 4)
    return string_buffers(ids), np.array(scores, dtype=np.float64), counts_array  # None: NaN


def _collapse_table(
    pairs: Sequence[tuple[str, QueryResponse]], table: Any, ignore_identical_ids: bool
) -> tuple[Any, np.ndarray, np.ndarray]:
    """:func:`_collapse_lists` of ``ResultColumns`` responses of one ``ChunkTable``, in one
    compiled pass over the table's codes; self-hits found by id (``first_chunks_of_ids``)."""
    from heta_eval.io.columnar import gather_strings  # heavy (numba): a batch only

    columns: list[ResultColumns] = [response.results for _, response in pairs]  # type: ignore[misc]
    codes = table.codes[np.concatenate([c.rows for c in columns])]
    offsets = _offsets(map(len, columns))
    documents = table.document_buffers
    if ignore_identical_ids:
        query_ids = [query_id for query_id, _ in pairs]
        keep, counts = first_chunks_of_ids(
            codes, offsets, len(table.documents), documents, query_ids
        )
    else:
        own = np.full(len(columns), -1, dtype=np.int64)
        keep, counts = first_chunks(codes, offsets, own, len(table.documents), compiled=True)
    scores = np.concatenate(
        [c.scores if c.scores is not None else np.full(len(c), np.nan) for c in columns]
    )
    kept = np.flatnonzero(keep)  # one pass over the mask, then two gathers
    return gather_strings(*documents, codes.take(kept)), scores.take(kept), counts


def _table_of(response: QueryResponse, resolver: DocumentResolver | None) -> Any:
    results = response.results
    return results.table if resolver is None and isinstance(results, ResultColumns) else None


# -- entry points ---------------------------------------------------------------------------


def collapse_to_documents(
    response: QueryResponse,
    *,
    query_id: str | None = None,
    resolver: DocumentResolver | None = None,
    ignore_identical_ids: bool = True,
) -> DocumentRanking:
    """Map chunk hits to document ids, keeping each document's best-ranked (first) chunk
    (the rules of :mod:`heta_eval.retrieval.collapse`).

    A document's score is its first chunk's score. When any kept result has no score,
    every document gets a rank-derived score (n, n-1, ..., 1) instead, which keeps the
    response's order exactly. Results that map to no document are dropped and counted; with
    ``ignore_identical_ids`` a document whose id equals ``query_id`` is dropped too.

    >>> from heta_eval.evaluation import QueryResponse
    >>> response = QueryResponse(query="q", results=[
    ...     {"score": 0.9, "source": {"document_id": "a"}},
    ...     {"score": 0.8, "source": {"document_id": "b"}},
    ...     {"score": 0.95, "source": {"document_id": "a"}},
    ...     {"score": 0.6, "source": {}}])
    >>> ranking = collapse_to_documents(response)
    >>> ranking.scores, ranking.duplicates, ranking.unmapped
    ({'a': 0.9, 'b': 0.8}, 1, 1)
    """
    kept_ids, scores, counts = _collapse_one(
        response.results, query_id, resolver, ignore_identical_ids
    )
    ids = list(kept_ids)
    _, unmapped, duplicates, self_hits = counts
    rank_derived = None in scores or any(map(isnan, scores))  # type: ignore[arg-type]
    values = range(len(ids), 0, -1) if rank_derived else scores
    final = dict(zip(ids, map(float, values), strict=True))  # type: ignore[arg-type]
    return DocumentRanking(final, unmapped, duplicates, self_hits, rank_derived)


@dataclass
class CollapsedBatch:
    """Many responses collapsed to documents at once, as a columnar run for the engine.

    ``run`` holds the kept documents of each query in first-occurrence order (scores may
    be missing: ``run.valid``); ``unmapped`` / ``duplicates`` / ``self_hits`` count dropped
    results per query, aligned with ``run.query_ids``.
    """

    run: Any  # engine.ColumnarRun
    unmapped: list[int]
    duplicates: list[int]
    self_hits: list[int]


def collapse_batch(
    pairs: Iterable[tuple[str, QueryResponse]],
    *,
    resolver: DocumentResolver | None = None,
    ignore_identical_ids: bool = True,
) -> CollapsedBatch:
    """:func:`collapse_to_documents` for many ``(query id, response)`` pairs, into arrays.

    Consecutive ``ResultColumns`` responses of one chunk table are collapsed on the table's
    integer document codes, without building result objects.

    >>> from heta_eval.evaluation import QueryResponse
    >>> response = QueryResponse(query="q", results=[
    ...     {"score": 0.9, "source": {"document_id": "a"}},
    ...     {"score": 0.8, "source": {"document_id": "b"}},
    ...     {"score": 0.7, "source": {"document_id": "a"}}])
    >>> batch = collapse_batch([("q1", response)])
    >>> batch.run.scores.tolist(), batch.duplicates
    ([0.9, 0.8], [1])
    """
    from heta_eval.io.columnar import ColumnarRun  # heavy (numba): a batch only

    query_ids: list[str] = []
    counts, data, doc_offsets, scores = [], [], [], []
    size = 0  # bytes of ids so far
    for run_query_ids, (kept_data, kept_offsets), kept_scores, run_counts in _collapsed_runs(
        pairs, resolver, ignore_identical_ids
    ):
        query_ids += run_query_ids
        counts.append(run_counts)
        data.append(kept_data)
        doc_offsets.append(kept_offsets[1:] + size)
        size += len(kept_data)
        scores.append(kept_scores)
    count = np.concatenate(counts) if counts else np.zeros((0, 4), dtype=np.int64)
    score = np.concatenate(scores) if scores else np.zeros(0)
    missing = np.isnan(score)
    valid = None
    if missing.any():
        valid = ~missing
        score[missing] = 0.0
    run = ColumnarRun(
        query_ids,
        _offsets(count[:, 0].tolist()),
        np.concatenate(data) if data else np.zeros(0, dtype=np.uint8),
        np.concatenate([np.zeros(1, dtype=np.int64), *doc_offsets]),
        score,
        valid,
    )
    return CollapsedBatch(run, count[:, 1].tolist(), count[:, 2].tolist(), count[:, 3].tolist())


def _collapsed_runs(
    pairs: Iterable[tuple[str, QueryResponse]],
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> Iterable[tuple[list[str], Any, np.ndarray, np.ndarray]]:
    """Runs of consecutive responses of one kind (one chunk table, or result lists),
    collapsed: query ids, kept ids as UTF-8 buffers, kept scores, counts per query."""
    runs: list[tuple[Any, list[tuple[str, QueryResponse]]]] = []
    for query_id, response in pairs:
        table = _table_of(response, resolver)
        if not runs or runs[-1][0] is not table:
            runs.append((table, []))
        runs[-1][1].append((query_id, response))
    for table, run in runs:
        query_ids = [query_id for query_id, _ in run]
        if table is not None:
            yield query_ids, *_collapse_table(run, table, ignore_identical_ids)
        else:
            yield query_ids, *_collapse_lists(run, resolver, ignore_identical_ids)
