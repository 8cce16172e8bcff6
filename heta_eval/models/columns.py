"""Columnar results: a knowledge base's hits as rows of a shared chunk table.

A ``QueryResponse`` usually holds a list of ``QueryResult`` objects. At MS MARCO size
(7k queries x 1,000 chunks) building and then reading 7M Python objects costs more than
scoring them. A knowledge base that keeps its chunks in a :class:`ChunkTable` can answer
with :class:`ResultColumns` instead: the table rows of its hits and their scores.

``ResultColumns`` is a read-only ``Sequence[QueryResult]``: indexing, slicing or iterating
builds (and keeps) validated ``QueryResult`` objects, so evaluators, answerers and user code
see the usual results. The retrieval metrics read the arrays directly and never build them.

>>> table = ChunkTable(["d1", "d1", "d2"], texts=["Paris is big.", "It is old.", "Rome."],
...                    reference_ids=["d1#0", "d1#1", "d2#0"])
>>> hits = table.columns(rows=[2, 0], scores=[1.5, 0.5])
>>> hits.document_ids, hits[0].text, hits[1].source
(['d2', 'd1'], 'Rome.', {'document_id': 'd1'})
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

if TYPE_CHECKING:
    from heta_eval.models.query_result import QueryResult

__all__ = ["ChunkTable", "ResultColumns"]


class ChunkTable:
    """The chunks of a knowledge base as columns; row ``i`` is one chunk.

    ``document_ids`` (required, non-empty strings) map each chunk to its benchmark
    document. ``texts`` and ``reference_ids`` fill ``QueryResult.text`` / ``reference_id``;
    ``sources`` gives each row's locator dict (any ``Sequence`` of mappings, or a callable
    ``row -> mapping`` for locators built on demand). A materialized result's ``source`` is
    a copy of that locator with ``document_id`` set to the row's document id. The table keeps
    the columns it is given: do not modify them afterwards.

    >>> table = ChunkTable(["d1", "d2", "d1"], sources=lambda row: {"page_index": row})
    >>> table.result(1, score=0.5).source
    {'page_index': 1, 'document_id': 'd2'}
    >>> table.codes.tolist(), table.documents.to_pylist()
    ([0, 1, 0], ['d1', 'd2'])
    >>> ChunkTable(["d1", ""])
    Traceback (most recent call last):
    ...
    ValueError: ChunkTable document_ids: row 1 is '', expected a non-empty string
    """

    def __init__(
        self,
        document_ids: Sequence[str],
        *,
        texts: Sequence[str] | None = None,
        reference_ids: Sequence[str | None] | None = None,
        sources: Sequence[Mapping[str, Any]] | Callable[[int], Mapping[str, Any]] | None = None,
    ) -> None:
        # Heavy (pyarrow; numba for io.columnar's kernels): only a chunk table needs them.
        import pyarrow as pa
        import pyarrow.compute as pc

        from heta_eval.io.columnar import string_buffers

        n = len(document_ids)
        for name, column in (("texts", texts), ("reference_ids", reference_ids)):
            if column is not None and len(column) != n:
                raise ValueError(f"ChunkTable {name}: {len(column)} rows, document_ids has {n}")
        if sources is not None and not callable(sources) and len(sources) != n:
            raise ValueError(f"ChunkTable sources: {len(sources)} rows, document_ids has {n}")
        try:
            # A column of a corpus store is an Arrow array already: no trip through Python.
            arrow = getattr(document_ids, "arrow", None)
            if isinstance(arrow, pa.ChunkedArray):
                ids = arrow.combine_chunks().cast(pa.large_string())
            else:
                ids = pa.array(document_ids, type=pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            ids = None
        if ids is None or ids.null_count or (n and not pc.min(pc.utf8_length(ids)).as_py()):
            row = next(i for i, v in enumerate(document_ids) if not isinstance(v, str) or not v)
            raise ValueError(
                f"ChunkTable document_ids: row {row} is {document_ids[row]!r}, "
                "expected a non-empty string"
            )
        self.document_ids = document_ids
        self.texts = texts
        self.reference_ids = reference_ids
        self.sources = sources
        # Dictionary-encode once: the metrics dedup and match documents by integer code.
        encoded = ids.dictionary_encode()
        #: Per row, the index of its document in ``documents`` (int64).
        self.codes: np.ndarray = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        self.codes.setflags(write=False)
        #: The distinct document ids, in order of first appearance (an Arrow string array).
        self.documents = encoded.dictionary
        # The same ids as UTF-8 buffers, for the compiled collapse and engine.
        self.document_buffers: tuple[np.ndarray, np.ndarray] = string_buffers(self.documents)

    def __len__(self) -> int:
        return len(self.document_ids)

    def __repr__(self) -> str:
        return f"ChunkTable(rows={len(self)}, documents={len(self.documents)})"

    def document_ids_at(self, rows: Sequence[int] | np.ndarray) -> list[str]:
        """The document id of each of ``rows``, in order (one gather from :attr:`documents`).

        >>> ChunkTable(["d1", "d2", "d1"]).document_ids_at([2, 1])
        ['d1', 'd2']
        """
        codes = self.codes[np.asarray(rows, dtype=np.int64)]
        return self.documents.take(codes).to_pylist()

    def columns(self, rows: Sequence[int] | np.ndarray, scores: Any = None) -> ResultColumns:
        """Results at these rows (best first) with these scores (see :class:`ResultColumns`)."""
        return ResultColumns(self, rows, scores)

    def result(self, row: int, score: float | None = None) -> QueryResult:
        """Row ``row`` as a validated ``QueryResult``."""
        # Heavy (pydantic): the retrieval metrics read the arrays and never build results.
        from heta_eval.models.query_result import QueryResult

        doc_id = self.document_ids[row]
        reference_id = self.reference_ids[row] if self.reference_ids is not None else None
        if self.sources is None:
            source: dict[str, Any] = {}
        else:
            source = dict(self.sources(row) if callable(self.sources) else self.sources[row])
        source["document_id"] = doc_id
        return QueryResult(
            text=self.texts[row] if self.texts is not None else "",
            score=score,
            reference_id=reference_id,
            source=source,
        )


class ResultColumns(Sequence["QueryResult"]):
    """Ranked results as table rows and scores; a read-only ``Sequence[QueryResult]``.

    ``rows`` index the :class:`ChunkTable` (best first); ``scores`` is None (no scores:
    rankings are then rank-derived, as for results without scores) or one float per row,
    NaN meaning "no score". Pass it as ``QueryResponse(results=...)``.

    >>> table = ChunkTable(["d1", "d2", "d3"])
    >>> hits = table.columns([1, 2], scores=[2.0, float("nan")])
    >>> len(hits), hits[0].score, hits[1].score, hits[-1].source["document_id"]
    (2, 2.0, None, 'd3')
    >>> hits == [table.result(1, 2.0), table.result(2)]
    True
    """

    __slots__ = ("_materialized", "rows", "scores", "table")

    def __init__(self, table: ChunkTable, rows: Sequence[int] | np.ndarray, scores: Any = None):
        rows_array = np.array(rows, dtype=np.int64).reshape(-1)
        if len(rows_array) and (rows_array.min() < 0 or rows_array.max() >= len(table)):
            bad = rows_array[(rows_array < 0) | (rows_array >= len(table))][0]
            raise IndexError(f"ResultColumns: row {int(bad)} is outside the table's {len(table)}")
        rows_array.setflags(write=False)
        score_array = None
        if scores is not None:
            score_array = np.array(scores, dtype=np.float64).reshape(-1)
            if len(score_array) != len(rows_array):
                raise ValueError(
                    f"ResultColumns: {len(score_array)} scores for {len(rows_array)} rows"
                )
            if np.isinf(score_array).any():
                raise ValueError("ResultColumns: scores must be finite (NaN means no score)")
            score_array.setflags(write=False)
        self.table = table
        self.rows = rows_array
        self.scores = score_array
        self._materialized: list[QueryResult | None] = [None] * len(rows_array)

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> QueryResult: ...
    @overload
    def __getitem__(self, index: slice) -> list[QueryResult]: ...
    def __getitem__(self, index: int | slice) -> QueryResult | list[QueryResult]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(len(self.rows)))]
        n = len(self.rows)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError(f"result index {index} out of range ({n} results)")
        return self._at(i)

    def __iter__(self) -> Iterator[QueryResult]:
        return (self._at(i) for i in range(len(self.rows)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ResultColumns | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ResultColumns({len(self)} results of {self.table!r})"

    def _at(self, i: int) -> QueryResult:
        result = self._materialized[i]
        if result is None:
            result = self.table.result(int(self.rows[i]), self.score(i))
            self._materialized[i] = result
        return result

    def chunk_id(self, i: int) -> Any:
        """Result ``i``'s ``source["chunk_id"]``, else its ``reference_id`` (as the built
        result gives them), without building it: no text is read."""
        table, row = self.table, int(self.rows[i])
        if table.sources is None:
            source: Any = {}
        else:
            source = table.sources(row) if callable(table.sources) else table.sources[row]
        if "chunk_id" in source:
            return source["chunk_id"]
        return table.reference_ids[row] if table.reference_ids is not None else None

    def score(self, i: int) -> float | None:
        """Result ``i``'s score (``None``: no score), without building it."""
        if self.scores is None:
            return None
        value = float(self.scores[i])
        return None if value != value else value  # NaN: no score

    @property
    def document_ids(self) -> list[str]:
        """The document id of each result, in rank order."""
        return self.table.document_ids_at(self.rows)

    def to_list(self) -> list[QueryResult]:
        """Every result as a ``QueryResult`` (built once, then kept)."""
        return list(self)
