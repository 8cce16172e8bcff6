"""The index's term dictionary: every field's terms, sorted, in two flat arrays on disk.

A term's id is its position: field 0's terms in code point order, then field 1's, and so on
(``field_starts`` says where each field begins). The strings are one UTF-8 blob (``terms.npy``,
uint8; lone surrogates kept as ``surrogatepass`` writes them, which sorts as code points do)
and their offsets (``term_offsets.npy``, int64). Both are memory-mapped when an index loads, so
a vocabulary of millions of terms costs no load time and no Python objects; a lookup is a
binary search (about 22 steps for 3M terms).

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> with TermTableWriter(folder) as writer:
...     order = writer.add_field(["cat", "bark"])
...     order = writer.add_field(["cat"])
>>> table = TermTable.open(folder)
>>> table.field_starts, table.lookup(0, "cat"), table.lookup(1, "cat"), table.lookup(1, "dog")
((0, 2, 3), 1, 2, None)
>>> table.term(0)
'bark'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

import numpy as np

__all__ = ["TermTable", "TermTableWriter", "open_array"]

_BLOB, _OFFSETS, _FIELDS = "terms.npy", "term_offsets.npy", "term_fields.json"
# Terms encoded per write: bounds the bytes objects alive at once.
_CHUNK = 100_000


def encode_term(term: str) -> bytes:
    """A term's bytes in the blob (UTF-8; a lone surrogate as ``surrogatepass`` writes it)."""
    return term.encode("utf-8", "surrogatepass")


def open_array(path: Path) -> np.ndarray:
    """An ``.npy`` array memory-mapped read-only (an empty one read, since it has no pages)."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    return np.load(path, allow_pickle=False) if array.size == 0 else array


class TermTableWriter:
    """Writes a term table field by field (``add_field`` with that field's terms, sorted
    here); closing it writes the offsets and the field boundaries."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._blob = open(self.directory / f"{_BLOB}.raw", "wb")  # noqa: SIM115 (closed in close)
        self._lengths: list[np.ndarray] = []
        self.field_starts = [0]

    def add_field(self, terms: Iterable[str]) -> list[str]:
        """Append one field's terms in sorted order; returns that order (a term's id in the
        field is its position there)."""
        ordered = sorted(terms)
        for start in range(0, len(ordered), _CHUNK):
            encoded = [encode_term(t) for t in ordered[start : start + _CHUNK]]
            self._blob.write(b"".join(encoded))
            self._lengths.append(np.fromiter(map(len, encoded), np.int64, len(encoded)))
        self.field_starts.append(self.field_starts[-1] + len(ordered))
        return ordered

    def close(self) -> None:
        if self._blob.closed:
            return
        size = self._blob.tell()
        self._blob.close()
        raw = self.directory / f"{_BLOB}.raw"
        # The blob as an .npy file (uint8): a header, then the bytes as written.
        blob = np.lib.format.open_memmap(self.directory / _BLOB, "w+", np.uint8, (size,))
        with open(raw, "rb") as source:
            for start in range(0, size, 1 << 26):
                chunk = source.read(1 << 26)
                blob[start : start + len(chunk)] = np.frombuffer(chunk, np.uint8)
        blob.flush()
        del blob
        raw.unlink()
        offsets = np.zeros(self.field_starts[-1] + 1, dtype=np.int64)
        if self._lengths:
            np.cumsum(np.concatenate(self._lengths), out=offsets[1:])
        np.save(self.directory / _OFFSETS, offsets, allow_pickle=False)
        (self.directory / _FIELDS).write_text(json.dumps(self.field_starts), encoding="utf-8")

    def __enter__(self) -> TermTableWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType
    ) -> None:
        if kind is None:
            self.close()
        else:
            self._blob.close()


class TermTable:
    """Sorted terms per field, memory-mapped: ``lookup(field, term)`` gives the term's id."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray, field_starts: list[int]) -> None:
        self.blob, self.offsets = blob, offsets
        self.field_starts = tuple(int(s) for s in field_starts)
        # Buffers index as Python ints and slice as bytes, without numpy scalars per step.
        self._bytes = memoryview(np.ascontiguousarray(blob)).cast("B")
        self._ends = memoryview(np.ascontiguousarray(offsets, dtype=np.int64)).cast("B").cast("q")

    @classmethod
    def open(cls, directory: Path) -> TermTable:
        directory = Path(directory)
        starts = json.loads((directory / _FIELDS).read_text(encoding="utf-8"))
        return cls(open_array(directory / _BLOB), open_array(directory / _OFFSETS), starts)

    def __len__(self) -> int:
        return self.field_starts[-1]

    def term(self, term_id: int) -> str:
        """The term of an id."""
        ends = self._ends
        data = self._bytes[ends[term_id] : ends[term_id + 1]].tobytes()
        return data.decode("utf-8", "surrogatepass")

    def lookup(self, field: int, term: str) -> int | None:
        """The id of ``term`` in ``field``, or None when the field never holds it."""
        key = encode_term(term)
        lo, hi = self.field_starts[field], self.field_starts[field + 1]
        data, ends = self._bytes, self._ends
        while lo < hi:
            mid = (lo + hi) // 2
            if data[ends[mid] : ends[mid + 1]].tobytes() < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.field_starts[field + 1] and data[ends[lo] : ends[lo + 1]] == key:
            return lo
        return None
