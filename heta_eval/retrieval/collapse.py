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
from itertools import accumulate, repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_eval.models.columns import ResultColumns
from heta_eval.retrieval.first_chunks import first_chunks, first_chunks_of_ids

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
    document), query offsets and each query's own code (-1: none); per result its score
    (NaN: none); and the ids of the codes, as a list or as UTF-8 buffers."""

    query_ids: list[str]
    offsets: np.ndarray
    codes: np.ndarray
    own: np.ndarray | None  # None: found by id (see first_chunks_of_ids)
    n_codes: int
    scores: np.ndarray
    names: list[str] | None = None  # code -> id (one response)
    documents: tuple[np.ndarray, np.ndarray] | None = None  # code -> id (a batch)

    def ids(self, kept: np.ndarray) -> list[str]:
        """The document ids of results ``kept``."""
        return list(map(self.names.__getitem__, self.codes[kept].tolist()))  # type: ignore[union-attr]

    def collapse(self) -> tuple[np.ndarray, np.ndarray]:
        """The compiled kernel's keep mask and counts (self-hits by id if ``own`` is None)."""
        if self.own is None:
            ids = self.query_ids
            return first_chunks_of_ids(self.codes, self.offsets, self.n_codes, self.documents, ids)  # type: ignore[arg-type]
        return first_chunks(self.codes, self.offsets, self.own, self.n_codes, compiled=True)

    def kept_buffers(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """UTF-8 buffers of the kept results' ids."""
        from heta_eval.io.columnar import gather_strings  # heavy (numba): a batch only

        return gather_strings(*self.documents, self.codes[keep])  # type: ignore[misc,no-any-return]


def _offsets(sizes: Iterable[int]) -> np.ndarray:
    return np.array([0, *accumulate(sizes)], dtype=np.int64)


def _numbered(ids: list[Any], base: int) -> dict[Any, int]:
    """Each id -> one of its positions + ``base``: a code (any numbering would do)."""
    return dict(zip(ids, range(base, base + len(ids)), strict=False))


def _plain_ids(results: Sequence[QueryResult]) -> list[Any]:
    """Each result's ``source["document_id"]``, in C-level passes: the id the default
    resolver gives when it is a non-empty str (else see :func:`_resolved`)."""
    return list(map(dict.get, map(_SOURCE, results), repeat("document_id")))


def _resolved(ids: list[Any], results: Sequence[QueryResult]) -> list[str | None]:
    """``ids`` with each one that is not a non-empty str resolved from its result."""
    resolve = default_document_resolver
    return [i if type(i) is str and i else resolve(r) for i, r in zip(ids, results, strict=True)]


def _ids_and_codes(
    results: Sequence[QueryResult], resolver: DocumentResolver | None, base: int
) -> tuple[list[Any], dict[Any, int]]:
    """Each result's document id (None: unmapped), and the ids' codes."""
    if resolver is not None:
        ids = list(map(resolver, results))
        return ids, _numbered(ids, base)
    ids = _plain_ids(results)
    codes = _numbered(ids, base)
    if None in codes or "" in codes or not set(map(type, codes)) <= {str}:
        ids = _resolved(ids, results)
        codes = _numbered(ids, base)
    return ids, codes


def _encode_lists(
    pairs: Sequence[tuple[Any, QueryResponse]],
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> _Segment:
    """Responses of result lists (or one ``ResultColumns`` response, by its rows' ids), one
    response at a time while it is in cache."""
    names: list[str] = []  # code -> id: every result's id, codes being positions
    codes: list[int] = []
    own: list[int] = []
    scores: list[float | None] = []
    for query_id, response in pairs:
        results = response.results
        if resolver is None and isinstance(results, ResultColumns):
            ids = list(map(results.table.document_ids.__getitem__, results.rows.tolist()))
            number = _numbered(ids, len(names))
            has = results.scores is not None
            scores += results.scores.tolist() if has else [None] * len(ids)  # type: ignore[union-attr]
        else:
            ids, number = _ids_and_codes(results, resolver, len(names))
            scores += map(_SCORE, results)
        number[None] = -1
        codes += map(number.__getitem__, ids)
        own.append(number.get(query_id, -1) if ignore_identical_ids else -1)
        names += ids
    sizes = (len(response.results) for _, response in pairs)
    return _Segment(
        [query_id for query_id, _ in pairs],
        _offsets(sizes),
        np.array(codes, dtype=np.int64),
        np.array(own, dtype=np.int64),
        len(names),
        np.array(scores, dtype=np.float64),  # None -> NaN
        names=names,
    )


def _id_array(ids: list[Any], *, plain: bool) -> Any:
    """``ids`` as an Arrow string array (None: null), or None when one is not a str or, for
    ``plain`` ids (:func:`_plain_ids`), when one is None or empty."""
    import pyarrow as pa  # heavy: a batch only
    import pyarrow.compute as pc

    try:
        array = pa.array(ids, type=pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if plain and (array.null_count or pc.any(pc.equal(array, "")).as_py()):
        return None
    return array


def _encode_arrow(
    pairs: Sequence[tuple[str, QueryResponse]],
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> _Segment:
    """Many responses of result lists: their ids dictionary-encoded by Arrow, in C."""
    import pyarrow as pa  # heavy (pyarrow; numba for string_buffers): a batch only
    import pyarrow.compute as pc

    from heta_eval.io.columnar import string_buffers

    ids: list[Any] = []
    scores: list[float | None] = []
    for _, response in pairs:  # one response at a time, while it is in cache
        results = response.results
        ids += _plain_ids(results) if resolver is None else map(resolver, results)
        scores += map(_SCORE, results)
    encoded = _id_array(ids, plain=resolver is None)
    if encoded is None and resolver is None:
        flat = [result for _, response in pairs for result in response.results]
        encoded = _id_array(_resolved(ids, flat), plain=False)
    if encoded is None:
        raise TypeError("a document resolver returned an id that is not a str or None")
    encoded = encoded.dictionary_encode()
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    query_ids = [query_id for query_id, _ in pairs]
    if ignore_identical_ids and len(encoded.dictionary):
        found = pc.index_in(pa.array(query_ids, type=pa.large_string()), encoded.dictionary)
        own = found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    else:
        own = np.full(len(query_ids), -1, dtype=np.int64)
    return _Segment(
        query_ids,
        _offsets(len(response.results) for _, response in pairs),
        codes,
        own,
        len(encoded.dictionary),
        np.array(scores, dtype=np.float64),  # None -> NaN
        documents=string_buffers(encoded.dictionary),
    )


def _encode_table(
    pairs: Sequence[tuple[str, QueryResponse]], table: Any, ignore_identical_ids: bool
) -> _Segment:
    """``ResultColumns`` responses of one ``ChunkTable``: the table's codes, no objects."""
    query_ids = [query_id for query_id, _ in pairs]
    columns: list[ResultColumns] = [response.results for _, response in pairs]  # type: ignore[misc]
    rows = np.concatenate([c.rows for c in columns])
    scores = np.concatenate(
        [c.scores if c.scores is not None else np.full(len(c), np.nan) for c in columns]
    )
    offsets = _offsets(map(len, columns))
    codes = table.codes[rows]
    # Self-hits found by id in the kernel's pass (own None): cheaper than a pass of its own.
    own = None if ignore_identical_ids else np.full(len(columns), -1, dtype=np.int64)
    documents = table.document_buffers
    return _Segment(query_ids, offsets, codes, own, len(table.documents), scores, None, documents)


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
    segment = _encode_lists([(query_id, response)], resolver, ignore_identical_ids)
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
    from heta_eval.io.columnar import ColumnarRun  # heavy (numba): a batch only

    query_ids: list[str] = []
    counts, data, doc_offsets, scores = [], [], [], []
    for segment in _segments(pairs, resolver, ignore_identical_ids):
        keep, segment_counts = segment.collapse()
        kept_data, kept_offsets = segment.kept_buffers(keep)
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
        _offsets(count[:, 0].tolist()),
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
    runs: list[tuple[Any, list[tuple[str, QueryResponse]]]] = []
    for query_id, response in pairs:
        table = _table_of(response, resolver)
        if not runs or runs[-1][0] is not table:
            runs.append((table, []))
        runs[-1][1].append((query_id, response))
    for table, run in runs:
        if table is not None:
            yield _encode_table(run, table, ignore_identical_ids)
        else:
            yield _encode_arrow(run, resolver, ignore_identical_ids)
