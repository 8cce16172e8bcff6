"""Chunk-level responses -> document-level rankings (the collapse BEIR's numbers need).

A response lists chunks, best first; BEIR's measures rank documents. Each result is mapped
to its benchmark document (``default_document_resolver`` or a caller's resolver), then one
rule, :func:`~heta_eval.retrieval.first_chunks.first_chunks`, decides on every path:

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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_eval.models.columns import ResultColumns
from heta_eval.retrieval.first_chunks import first_chunks, own_codes

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
    source = result.source
    for key in ("document_id", "source_key", "object_key"):
        value = source.get(key)
        if value is not None and value != "":
            return str(value)
    return None


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


@dataclass
class _Segment:
    """Consecutive responses as the kernel's input: one integer code per result (-1: no
    document), query offsets, each query's own code, and scores (NaN: none)."""

    query_ids: list[str]
    offsets: np.ndarray
    codes: np.ndarray
    own: np.ndarray
    n_codes: int
    scores: np.ndarray
    names: list[str] | None = None  # code -> id (list responses)
    table: Any = None  # ChunkTable: its codes and documents (ResultColumns responses)
    rows: np.ndarray | None = None  # ResultColumns: the table row of each result

    def ids(self, kept: np.ndarray) -> list[str]:
        """The document ids of results ``kept``."""
        if self.table is not None:
            document_ids = self.table.document_ids
            return [document_ids[row] for row in self.rows[kept].tolist()]  # type: ignore[index]
        names = self.names
        return [names[code] for code in self.codes[kept].tolist()]  # type: ignore[index]

    def buffers(self) -> tuple[np.ndarray, np.ndarray]:
        """UTF-8 buffers of the ids of codes ``0..n_codes-1``."""
        from heta_eval.io.columnar import string_buffers  # heavy (numba): a batch only

        return self.table.document_buffers if self.table is not None else string_buffers(self.names)


def _offsets(sizes: Iterable[int], n: int) -> np.ndarray:
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.fromiter(sizes, dtype=np.int64, count=n), out=offsets[1:])
    return offsets


def _document_ids(results: Sequence[QueryResult], resolver: DocumentResolver | None) -> list:
    """Each result's document id (None: unmapped); the common case (the default resolver,
    every ``source`` has a non-empty str ``document_id``) in C-level passes."""
    if resolver is None:
        ids = list(map(dict.get, map(_SOURCE, results), repeat("document_id")))
        distinct = dict.fromkeys(ids)
        if None not in distinct and "" not in distinct and set(map(type, distinct)) <= {str}:
            return ids
        resolver = default_document_resolver
    return list(map(resolver, results))


def _encode_lists(
    pairs: Sequence[tuple[str | None, QueryResponse]],
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> _Segment:
    """Responses of result lists (or any responses under a caller's resolver)."""
    query_ids = [query_id for query_id, _ in pairs]
    results = [response.results for _, response in pairs]
    ids = [doc_id for result in results for doc_id in _document_ids(result, resolver)]
    names = list(dict.fromkeys(ids))
    if None in names:
        names.remove(None)
    lookup: dict[Any, int] = dict(zip(names, range(len(names)), strict=True))
    lookup[None] = -1
    codes = np.fromiter(map(lookup.__getitem__, ids), dtype=np.int64, count=len(ids))
    own = [lookup.get(query_id, -1) if ignore_identical_ids else -1 for query_id in query_ids]
    scores = [score for result in results for score in map(_SCORE, result)]
    return _Segment(
        query_ids,  # type: ignore[arg-type]
        _offsets(map(len, results), len(results)),
        codes,
        np.array(own, dtype=np.int64),
        len(names),
        np.array(scores, dtype=np.float64),  # None -> NaN
        names=names,
    )


def _encode_table(
    pairs: Sequence[tuple[str | None, QueryResponse]], table: Any, ignore_identical_ids: bool
) -> _Segment:
    """``ResultColumns`` responses of one ``ChunkTable``: its integer codes, no objects."""
    query_ids = [query_id for query_id, _ in pairs]
    columns: list[ResultColumns] = [response.results for _, response in pairs]  # type: ignore[misc]
    rows = np.concatenate([c.rows for c in columns]) if columns else np.zeros(0, np.int64)
    scores = np.concatenate(
        [c.scores if c.scores is not None else np.full(len(c), np.nan) for c in columns]
        or [np.zeros(0)]
    )
    offsets = _offsets(map(len, columns), len(columns))
    codes = table.codes[rows]
    own = np.full(len(columns), -1, dtype=np.int64)
    if ignore_identical_ids:
        own = own_codes(codes, offsets, table.document_buffers, query_ids)
    return _Segment(
        query_ids, offsets, codes, own, len(table.documents), scores, table=table, rows=rows
    )  # type: ignore[arg-type]


def _table_of(response: QueryResponse, resolver: DocumentResolver | None) -> Any:
    results = response.results
    return results.table if resolver is None and isinstance(results, ResultColumns) else None


def _encode(
    pairs: Sequence[tuple[Any, QueryResponse]],
    table: Any,
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> _Segment:
    if table is not None:
        return _encode_table(pairs, table, ignore_identical_ids)
    return _encode_lists(pairs, resolver, ignore_identical_ids)


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
    pairs = [(query_id, response)]
    segment = _encode(pairs, _table_of(response, resolver), resolver, ignore_identical_ids)
    keep, counts = first_chunks(segment.codes, segment.offsets, segment.own, segment.n_codes)
    kept = np.flatnonzero(keep)
    scores = segment.scores[kept]
    rank_derived = bool(np.isnan(scores).any())
    if rank_derived:
        scores = np.arange(len(kept), 0, -1, dtype=np.float64)
    _, unmapped, duplicates, self_hits = counts[0].tolist()
    final = dict(zip(segment.ids(kept), scores.tolist(), strict=True))
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
    from heta_eval.io.columnar import ColumnarRun, gather_strings  # heavy (numba): a batch

    query_ids: list[str] = []
    counts, data, doc_offsets, scores = [], [], [], []
    for segment in _segments(pairs, resolver, ignore_identical_ids):
        keep, segment_counts = first_chunks(
            segment.codes, segment.offsets, segment.own, segment.n_codes, compiled=True
        )
        kept_data, kept_offsets = gather_strings(*segment.buffers(), segment.codes[keep])
        query_ids += segment.query_ids
        counts.append(segment_counts)
        data.append(kept_data)
        doc_offsets.append(kept_offsets[1:] + sum(len(d) for d in data[:-1]))
        scores.append(segment.scores[keep])
    count = np.concatenate(counts) if counts else np.zeros((0, 4), dtype=np.int64)
    score = np.concatenate(scores) if scores else np.zeros(0)
    missing = np.isnan(score)
    valid = None
    if missing.any():
        valid = ~missing
        score[missing] = 0.0
    run = ColumnarRun(
        query_ids,
        _offsets(count[:, 0].tolist(), len(count)),
        np.concatenate(data) if data else np.zeros(0, dtype=np.uint8),
        np.concatenate([np.zeros(1, dtype=np.int64), *doc_offsets]),
        score,
        valid,
    )
    return CollapsedBatch(run, count[:, 1].tolist(), count[:, 2].tolist(), count[:, 3].tolist())


def _segments(
    pairs: Iterable[tuple[str, QueryResponse]],
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> Iterable[_Segment]:
    """Runs of consecutive responses of one kind (one chunk table, or result lists)."""
    run: list[tuple[str, QueryResponse]] = []
    run_table: Any = None
    for query_id, response in pairs:
        table = _table_of(response, resolver)
        if run and table is not run_table:
            yield _encode(run, run_table, resolver, ignore_identical_ids)
            run = []
        run.append((query_id, response))
        run_table = table
    if run:
        yield _encode(run, run_table, resolver, ignore_identical_ids)
