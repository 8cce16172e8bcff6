"""Chunk-level responses -> document-level rankings (the collapse BEIR's numbers need).

A response lists chunks; BEIR's measures rank documents. ``collapse_to_documents`` maps each
result to its benchmark document (``default_document_resolver`` or a caller's resolver) and
keeps each document's best-ranked chunk; ``collapse_batch`` does the same for many responses
at once, into the arrays of the compiled engine. The rules, the same on both paths:

* a result that maps to no document is dropped and counted (``unmapped``);
* a document's later chunks are dropped and counted (``duplicates``);
* with ``ignore_identical_ids`` a document whose id equals the query id is dropped (self-hit);
* a document's score is its best-ranked chunk's; when any kept result has no score (or a NaN
  one), every document gets a rank-derived score n, n-1, ..., 1 instead, which keeps the
  response's order exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_eval.models.columns import ResultColumns
from heta_eval.models.document_id import source_document_id

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


def collapse_to_documents(
    response: QueryResponse,
    *,
    query_id: str | None = None,
    resolver: DocumentResolver | None = None,
    ignore_identical_ids: bool = True,
) -> DocumentRanking:
    """Map chunk hits to document ids, keeping each document's best-ranked chunk.

    A document's score is its best-ranked chunk's score. When any mapped result has no
    score, every document gets a rank-derived score (n, n-1, ..., 1) instead, which keeps
    the response's order exactly. Results that map to no document are dropped and counted;
    with ``ignore_identical_ids`` a document whose id equals ``query_id`` is dropped too.

    >>> from heta_eval.evaluation import QueryResponse
    >>> response = QueryResponse(query="q", results=[
    ...     {"score": 0.9, "source": {"document_id": "a"}},
    ...     {"score": 0.8, "source": {"document_id": "b"}},
    ...     {"score": 0.7, "source": {"document_id": "a"}},
    ...     {"score": 0.6, "source": {}}])
    >>> ranking = collapse_to_documents(response)
    >>> ranking.scores, ranking.duplicates, ranking.unmapped
    ({'a': 0.9, 'b': 0.8}, 1, 1)
    """
    ids, kept_scores, unmapped, duplicates, self_hits = _collapse_ids(
        response.results, query_id, resolver, ignore_identical_ids
    )
    scores = dict(zip(ids, kept_scores, strict=True))
    rank_derived = any(score is None for score in scores.values())
    if rank_derived:
        n = len(scores)
        final = {doc_id: float(n - i) for i, doc_id in enumerate(scores)}
    else:
        final = {doc_id: float(score) for doc_id, score in scores.items()}  # type: ignore[arg-type]
    return DocumentRanking(final, unmapped, duplicates, self_hits, rank_derived)


_SOURCE = attrgetter("source")
_SCORE = attrgetter("score")


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


def _collapse_ids(
    results: Sequence[QueryResult],
    query_id: str | None,
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> tuple[list[str], list[float | None], int, int, int]:
    """Kept doc ids, their scores, and unmapped / duplicate / self-hit counts of a response.

    Same rules as :func:`collapse_to_documents`; the common case (the default resolver,
    every ``source`` has a non-empty str ``document_id``) runs in C-level passes, and
    ``ResultColumns`` in array operations.
    """
    n = len(results)
    if resolver is None and isinstance(results, ResultColumns):
        return _collapse_columns(results, query_id, ignore_identical_ids)
    if resolver is None:
        ids = list(map(dict.get, map(_SOURCE, results), repeat("document_id")))
        # doc id -> first position: built from the end so the first occurrence wins.
        first = dict(zip(reversed(ids), range(n - 1, -1, -1), strict=False))
        if None not in first and "" not in first and set(map(type, first)) <= {str}:
            self_hits = 0
            if ignore_identical_ids and query_id in first:
                self_hits = ids.count(query_id)
                del first[query_id]
            positions = sorted(first.values())
            if not positions:
                return [], [], 0, n - self_hits, self_hits
            pick = itemgetter(*positions)
            kept_ids = list(pick(ids)) if len(positions) > 1 else [pick(ids)]
            kept = pick(results)
            scores = list(map(_SCORE, kept)) if len(positions) > 1 else [kept.score]
            return kept_ids, scores, 0, n - self_hits - len(positions), self_hits
    resolve = resolver or default_document_resolver
    chosen: dict[str, float | None] = {}
    unmapped = duplicates = self_hits = 0
    for result in results:
        doc_id = resolve(result)
        if doc_id is None:
            unmapped += 1
        elif ignore_identical_ids and doc_id == query_id:
            self_hits += 1
        elif doc_id in chosen:
            duplicates += 1
        else:
            chosen[doc_id] = result.score
    return list(chosen), list(chosen.values()), unmapped, duplicates, self_hits


def _collapse_columns(
    results: ResultColumns, query_id: str | None, ignore_identical_ids: bool
) -> tuple[list[str], list[float | None], int, int, int]:
    """:func:`_collapse_ids` of one ``ResultColumns`` (every row has a document id)."""
    codes = results.table.codes[results.rows]
    n = len(codes)
    _, first = np.unique(codes, return_index=True)
    first.sort()
    doc_ids = results.table.document_ids
    kept_ids = [doc_ids[row] for row in results.rows[first].tolist()]
    self_hits = 0
    if ignore_identical_ids and query_id in kept_ids:
        j = kept_ids.index(query_id)
        self_hits = int((codes == codes[first[j]]).sum())
        del kept_ids[j]
        first = np.delete(first, j)
    if results.scores is None:
        scores: list[float | None] = [None] * len(kept_ids)
    else:
        scores = [None if v != v else v for v in results.scores[first].tolist()]
    return kept_ids, scores, 0, n - self_hits - len(kept_ids), self_hits


def collapse_batch(
    pairs: Iterable[tuple[str, QueryResponse]],
    *,
    resolver: DocumentResolver | None = None,
    ignore_identical_ids: bool = True,
) -> CollapsedBatch:
    """:func:`collapse_to_documents` for many ``(query id, response)`` pairs, into arrays.

    Consecutive ``ResultColumns`` responses of one chunk table are collapsed together by a
    compiled pass over their integer document codes, without building result objects.

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

    parts: list[_Part] = []
    segment: list[tuple[str, QueryResponse]] = []
    segment_table: Any = None
    for query_id, response in pairs:
        results = response.results
        table = results.table if resolver is None and isinstance(results, ResultColumns) else None
        if segment and table is not segment_table:
            parts.append(_collapse_segment(segment, segment_table, resolver, ignore_identical_ids))
            segment = []
        segment.append((query_id, response))
        segment_table = table
    if segment or not parts:
        parts.append(_collapse_segment(segment, segment_table, resolver, ignore_identical_ids))
    if len(parts) == 1:
        part = parts[0]
        data, doc_offsets = part.data, part.doc_offsets
    else:
        data = np.concatenate([part.data for part in parts])
        shifts = np.cumsum([0] + [len(part.data) for part in parts[:-1]])
        doc_offsets = np.concatenate(
            [parts[0].doc_offsets[:1]]
            + [part.doc_offsets[1:] + shift for part, shift in zip(parts, shifts, strict=True)]
        )
    query_ids = [qid for part in parts for qid in part.query_ids]
    lengths = np.concatenate([part.lengths for part in parts])
    offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    scores = np.concatenate([part.scores for part in parts])
    missing = np.isnan(scores)
    valid = None
    if missing.any():
        valid = ~missing
        scores[missing] = 0.0
    run = ColumnarRun(query_ids, offsets, data, doc_offsets, scores, valid)
    return CollapsedBatch(
        run,
        [n for part in parts for n in part.unmapped],
        [n for part in parts for n in part.duplicates],
        [n for part in parts for n in part.self_hits],
    )


@dataclass
class _Part:
    """A collapsed run of consecutive queries: kept doc ids as UTF-8 buffers, NaN = no score."""

    query_ids: list[str]
    lengths: np.ndarray
    data: np.ndarray
    doc_offsets: np.ndarray
    scores: np.ndarray
    unmapped: list[int]
    duplicates: list[int]
    self_hits: list[int]


def _collapse_segment(
    pairs: list[tuple[str, QueryResponse]],
    table: Any,
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> _Part:
    if table is not None:
        return _collapse_table_segment(pairs, table, ignore_identical_ids)
    # Heavy (pyarrow; numba for io.columnar's kernels): only list responses in a batch.
    import pyarrow as pa

    from heta_eval.io.columnar import string_buffers

    query_ids: list[str] = []
    all_ids: list[str] = []
    all_scores: list[float | None] = []
    lengths: list[int] = []
    unmapped: list[int] = []
    duplicates: list[int] = []
    self_hits: list[int] = []
    for query_id, response in pairs:
        ids, scores, n_unmapped, n_duplicates, n_self = _collapse_ids(
            response.results, query_id, resolver, ignore_identical_ids
        )
        query_ids.append(query_id)
        all_ids.extend(ids)
        all_scores.extend(scores)
        lengths.append(len(ids))
        unmapped.append(n_unmapped)
        duplicates.append(n_duplicates)
        self_hits.append(n_self)
    score_array = pa.array(all_scores, type=pa.float64()).fill_null(float("nan"))
    data, doc_offsets = string_buffers(all_ids)
    return _Part(
        query_ids,
        np.asarray(lengths, dtype=np.int64),
        data,
        doc_offsets,
        score_array.to_numpy(zero_copy_only=False).copy(),
        unmapped,
        duplicates,
        self_hits,
    )


def _collapse_table_segment(
    pairs: list[tuple[str, QueryResponse]], table: Any, ignore_identical_ids: bool
) -> _Part:
    # Heavy (numba): only a batch of table responses.
    from heta_eval.io.columnar import first_occurrences, gather_strings, string_buffers

    query_ids = [query_id for query_id, _ in pairs]
    columns: list[ResultColumns] = [response.results for _, response in pairs]  # type: ignore[misc]
    sizes = np.fromiter(map(len, columns), dtype=np.int64, count=len(columns))
    offsets = np.zeros(len(columns) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    rows = np.concatenate([c.rows for c in columns]) if columns else np.zeros(0, np.int64)
    scores = np.concatenate(
        [c.scores if c.scores is not None else np.full(len(c), np.nan) for c in columns]
        or [np.zeros(0)]
    )
    codes = table.codes[rows]
    doc_data, doc_offsets = table.document_buffers
    query_data, query_offsets = string_buffers(query_ids)
    keep, kept, duplicates, self_hits = first_occurrences(
        codes, offsets, doc_data, doc_offsets, query_data, query_offsets,
        ignore_identical_ids,
    )  # fmt: skip
    data, kept_offsets = gather_strings(doc_data, doc_offsets, codes[keep])
    return _Part(
        query_ids,
        kept,
        data,
        kept_offsets,
        scores[keep],
        [0] * len(query_ids),
        duplicates.tolist(),
        self_hits.tolist(),
    )
