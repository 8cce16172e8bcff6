"""A corpus store's columns: strings read a record batch at a time (:class:`StringColumn`),
and the set of a store's ids without a Python set of them (:class:`DocumentIds`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np

__all__ = ["DocumentIds", "StringColumn"]


class StringColumn(Sequence[str]):
    """One column of a store: ``col[i]`` is a ``str``, ``col[a:b]`` a ``list[str]``; iteration
    reads a record batch at a time. :attr:`arrow` is the column itself, for code that works
    on Arrow arrays.

    >>> import pyarrow as pa
    >>> col = StringColumn(pa.chunked_array([["a", "b"], ["c"]]))
    >>> col[2], col[1:3], list(col), col.take([2, 0])
    ('c', ['b', 'c'], ['a', 'b', 'c'], ['c', 'a'])
    """

    def __init__(self, array: Any, *, source: tuple[Path, str] | None = None) -> None:
        import pyarrow as pa

        self.arrow = array if isinstance(array, pa.ChunkedArray) else pa.chunked_array([array])
        lengths = [len(chunk) for chunk in self.arrow.chunks]
        self._starts = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        #: The Arrow file and column this one is mapped from: a pass over every row maps each
        #: record batch on its own and lets it go, so the pages read are not kept by this
        #: process (the whole corpus, otherwise: 3.5 GB of MS MARCO's texts).
        self.source = source

    def __len__(self) -> int:
        return int(self._starts[-1])

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            return self.arrow.slice(start, max(0, stop - start)).to_pylist()
        n = len(self)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError(f"row {index} out of range ({n} rows)")
        chunk, offset = self.locate(i)
        return self.arrow.chunks[chunk][offset].as_py()

    def locate(self, row: int) -> tuple[int, int]:
        """Where row ``row`` lives: (record batch, position in it); for a store's other
        columns, which share the batches.

        >>> import pyarrow as pa
        >>> StringColumn(pa.chunked_array([["a", "b"], ["c"]], type=pa.large_string())).locate(2)
        (1, 0)
        """
        chunk = int(np.searchsorted(self._starts, row, side="right")) - 1
        return chunk, row - int(self._starts[chunk])

    def __iter__(self) -> Iterator[str]:
        for number in range(len(self.arrow.chunks)):
            yield from self._chunk(number).to_pylist()

    def take(self, rows: Sequence[int] | np.ndarray) -> list[str]:
        """The values at ``rows``, in that order: one Arrow gather per record batch, not one
        lookup per row (nor a gather over the chunked column, which Arrow does by first
        joining every batch into one copy of the whole column). A column of a file gathers
        each batch from its own mapping, let go after: scattered rows touch pages all over
        the file, which would otherwise stay this process's memory."""
        rows = np.asarray(rows, dtype=np.int64)
        n = len(self)
        if len(rows) and (rows.min() < -n or rows.max() >= n):
            bad = rows[(rows < -n) | (rows >= n)][0]
            raise IndexError(f"row {bad} out of range ({n} rows)")
        rows = np.where(rows < 0, rows + n, rows)
        chunk_of = np.searchsorted(self._starts, rows, side="right") - 1
        values: list[Any] = [None] * len(rows)
        for chunk in np.unique(chunk_of).tolist():
            at = np.flatnonzero(chunk_of == chunk)
            local = rows[at] - self._starts[chunk]
            for slot, value in zip(
                at.tolist(), self._chunk(chunk).take(local).to_pylist(), strict=True
            ):
                values[slot] = value
        return values

    def _chunk(self, number: int) -> Any:
        """Record batch ``number`` of the column: mapped on its own when from a file."""
        if self.source is None:
            return self.arrow.chunks[number]
        import pyarrow as pa

        path, name = self.source
        with pa.memory_map(str(path), "r") as mapped:
            return pa.ipc.open_file(mapped).get_batch(number).column(name)

    def __repr__(self) -> str:
        return f"StringColumn({len(self)} rows)"


class DocumentIds:
    """The set of a store's document ids, without a Python set of them: a sorted array of
    64-bit hashes and the rows they come from; a lookup hashes the id, finds its rows by
    binary search and compares the stored ids there. ``len`` counts distinct ids.

    >>> import pyarrow as pa
    >>> ids = DocumentIds(StringColumn(pa.array(["d1", "d2", "d1"])))
    >>> "d2" in ids, "d9" in ids, 7 in ids, len(ids), ids.rows("d1")
    (True, False, False, 2, [0, 2])
    """

    def __init__(self, ids: StringColumn) -> None:
        self._ids = ids
        # One pass over the ids (a record batch of Python strings at a time).
        hashes = np.fromiter(map(hash, ids), np.int64, len(ids))
        self._order = np.argsort(hashes, kind="stable")
        self._hashes = hashes[self._order]
        self._distinct = self._count_distinct()

    def _count_distinct(self) -> int:
        if not len(self._hashes):
            return 0
        starts = np.flatnonzero(np.diff(self._hashes)) + 1
        count = len(starts) + 1
        # Rows sharing a hash are one id repeated, or (rarely) distinct ids that collide.
        bounds = np.concatenate([[0], starts, [len(self._hashes)]])
        for a, b in itertools.pairwise(bounds):
            if b - a > 1:
                count += len(set(self._ids.take(self._order[a:b]))) - 1
        return count

    def rows(self, doc_id: object) -> list[int]:
        """The rows holding ``doc_id``, in order (several where an id is repeated)."""
        if type(doc_id) is not str:
            return []
        h = hash(doc_id)
        a = int(np.searchsorted(self._hashes, h, side="left"))
        b = int(np.searchsorted(self._hashes, h, side="right"))
        candidates = sorted(int(r) for r in self._order[a:b])
        return [r for r in candidates if self._ids[r] == doc_id]

    def __contains__(self, doc_id: object) -> bool:
        return bool(self.rows(doc_id))

    def __len__(self) -> int:
        return self._distinct

    def __iter__(self) -> Iterator[str]:
        """Every row's id, in row order (a repeated id comes once per row)."""
        return iter(self._ids)
