"""The fast path of the run dict reader: pyarrow's multi-threaded CSV parser (correctly rounded
floats, equal to Python's ``float()``) on runs whose lines it splits exactly as the line
reader does — one delimiter (a space or a tab) throughout, no other ASCII whitespace, no
CR or NUL, no empty field. Anything else returns None and the line reader
(:mod:`heta_eval.io.run`), which names the bad line, reads the input.

Each check is a pass over the whole buffer or column, never a Python step per line, and no
copy of the file: the other whitespace bytes are ``find`` scans (memchr), empty fields and
non-ASCII bytes numpy passes over windows of the buffer, and the query blocks are found by
comparing each row's query id with the one before, eight bytes at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from heta_eval._runtime import paused_gc
from heta_eval.io import limits
from heta_eval.io.source import InputBytes

__all__ = ["arrow_to_numpy", "query_blocks", "read_table", "run_from_table"]

_RUN_COLUMNS = ["qid", "q0", "docid", "rank", "score", "tag"]
#: ``_MASKS[k]``: the low ``k`` bytes of a little-endian 8-byte word.
_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
Run = dict[str, dict[str, float]]


def read_table(source: InputBytes, start: int, columns: list[str]) -> Any:
    """The run's ``columns`` (from byte ``start``) parsed by pyarrow, or None when the fast
    path does not apply or finds anything wrong."""
    scanned = _scan(source.data, start)
    if scanned is None:
        return None
    delimiter, ascii_only = scanned
    return _parse(source.data, start, delimiter, ascii_only, columns)


def _scan(data: Any, start: int) -> tuple[str, bool] | None:
    """``(delimiter, ascii)`` of a run pyarrow splits as the line reader does, or None: the
    delimiter is the first line's (a tab, else a space); the other one, CR, VT, FF, NUL or an
    empty field (two separators in a row, a delimiter at either end) rules the run out."""
    if len(data) <= start:
        return None
    end = data.find(b"\n", start)
    first = data[start : end if end >= 0 else len(data)]
    d, other = (b"\t", b" ") if b"\t" in first else (b" ", b"\t")
    for byte in (other, b"\r", b"\x0b", b"\x0c", b"\x00"):
        if data.find(byte, start) >= 0:
            return None
    view = window = np.frombuffer(data, dtype=np.uint8)
    try:
        delimiter = ord(d)
        if view[start] == delimiter or view[-1] == delimiter:
            return None
        ascii_only = True
        step = limits.SCAN_WINDOW_BYTES
        for a in range(start, len(view), step):
            window = view[a : a + step + 1]  # one byte more: the pair across two windows
            separator = ((window == delimiter) | (window == 10)).view(np.uint8)
            if np.logical_and(separator[1:], separator[:-1]).any():
                return None
            ascii_only = ascii_only and int(window.max()) < 0x80
        return d.decode(), ascii_only
    finally:
        del view, window  # a memory map cannot close while a view of it lives


def _parse(data: Any, start: int, delimiter: str, ascii_only: bool, columns: list[str]) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    string = pa.large_string()
    try:
        table = pcsv.read_csv(
            pa.BufferReader(pa.py_buffer(memoryview(data)[start:])),
            read_options=pcsv.ReadOptions(
                column_names=_RUN_COLUMNS,
                block_size=limits.PYARROW_BLOCK_BYTES,
                # One block gains nothing from threads, and pyarrow's idle workers can abort
                # the process at exit ("terminate called without an active exception").
                use_threads=len(data) - start > limits.PYARROW_BLOCK_BYTES,
            ),
            parse_options=pcsv.ParseOptions(
                delimiter=delimiter,
                quote_char=False,  # TREC has no quoting: a " is part of an id
                double_quote=False,
                escape_char=False,
                ignore_empty_lines=False,  # an empty line: the line reader names it
            ),
            convert_options=pcsv.ConvertOptions(
                column_types={c: pa.float64() if c == "score" else string for c in _RUN_COLUMNS},
                # Non-ASCII bytes: every column is converted, so each is checked as UTF-8.
                include_columns=columns if ascii_only else _RUN_COLUMNS,
                null_values=[],
                strings_can_be_null=False,
                check_utf8=True,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowCapacityError, UnicodeDecodeError):
        return None
    if table.num_rows == 0:
        return None
    scores = table.column("score")
    if scores.null_count or not np.isfinite(arrow_to_numpy(scores)).all():
        return None  # NaN/inf: the line reader names the line
    return table.select(columns)


def _offsets(strings: Any) -> np.ndarray:
    """The ``len + 1`` offsets of a large_string array (a view of its buffer)."""
    return np.frombuffer(
        strings.buffers()[1], dtype=np.int64, count=len(strings) + 1, offset=strings.offset * 8
    )


_NUMPY_TYPES = {
    "double": "float64",
    "float": "float32",
    "int64": "int64",
    "uint64": "uint64",
    "int32": "int32",
    "uint32": "uint32",
    "uint8": "uint8",
    "int8": "int8",
}


def arrow_to_numpy(array: Any) -> np.ndarray:
    """A numpy view (booleans, or several chunks: a copy) of a null-free Arrow array (or
    chunked array) of numbers or booleans, without pyarrow's pandas import.

    >>> import pyarrow as pa
    >>> arrow_to_numpy(pa.array([1.5, 2.0])[1:]).tolist(), arrow_to_numpy(pa.array([True, False]))
    ([2.0], array([ True, False]))
    >>> arrow_to_numpy(pa.chunked_array([[1, 2], [3]])).tolist()
    [1, 2, 3]
    """
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        if array.num_chunks == 1:
            return arrow_to_numpy(array.chunk(0))
        parts = [arrow_to_numpy(chunk) for chunk in array.chunks]
        return np.concatenate(parts) if parts else arrow_to_numpy(array.combine_chunks())
    if array.null_count:
        raise ValueError("arrow_to_numpy: the array has nulls")
    if pa.types.is_boolean(array.type):  # bit-packed: widen to one byte a value first
        import pyarrow.compute as pc  # not free to import: only here

        return arrow_to_numpy(pc.cast(array, pa.uint8())).astype(np.bool_)
    dtype = np.dtype(_NUMPY_TYPES[str(array.type)])
    buffer = array.buffers()[1]
    if buffer is None:
        return np.empty(0, dtype=dtype)
    offset = array.offset * dtype.itemsize
    return np.frombuffer(buffer, dtype=dtype, count=len(array), offset=offset)


def run_from_table(table: Any, repeats_allowed: bool) -> Run | None:
    """The run dict of a parsed table, or None where a repeated (query, doc) pair must be
    named by the line reader (``repeats_allowed`` False)."""
    qids, starts = query_blocks(table.column("qid"))
    # Millions of new str/float objects would trigger useless full collections.
    with paused_gc():
        docids = table.column("docid").to_pylist()
        scores = table.column("score").to_pylist()
        run: Run = {}
        # Runs are grouped by query: build each query's dict from a slice at C speed.
        for qid, start, end in zip(qids, starts, [*starts[1:], len(docids)], strict=True):
            block = dict(zip(docids[start:end], scores[start:end], strict=True))
            if len(block) != end - start and not repeats_allowed:
                return None
            existing = run.get(qid)
            if existing is None:
                run[qid] = block
            else:  # the query appears in two separate blocks of the file
                if not repeats_allowed and not existing.keys().isdisjoint(block):
                    return None
                existing.update(block)
    return run


def query_blocks(column: Any) -> tuple[list[str], list[int]]:
    """The query id and first row of each block of consecutive rows with the same id, in a
    (chunked) large_string column; an id may come back in a later block.

    >>> import pyarrow as pa
    >>> query_blocks(pa.chunked_array([["q1", "q1", "q2"], ["q2", "q10", "q1"]], pa.large_string()))
    (['q1', 'q2', 'q10', 'q1'], [0, 2, 4, 5])
    """
    qids: list[str] = []
    starts: list[int] = []
    row = 0
    for chunk in column.chunks:
        if len(chunk):
            ids, firsts = _chunk_blocks(chunk)
            if qids and ids[0] == qids[-1]:  # the block goes on from the previous chunk
                ids, firsts = ids[1:], firsts[1:]
            qids += ids
            starts += [row + first for first in firsts]
        row += len(chunk)
    return qids, starts


def _chunk_blocks(ids: Any) -> tuple[list[str], list[int]]:
    """:func:`query_blocks` of one non-empty array: each id compared with the previous one
    as little-endian 8-byte words read at every byte offset of its (zero-padded) bytes."""
    offsets = _offsets(ids)
    lengths = np.diff(offsets)
    raw = ids.buffers()[2]
    size = 0 if raw is None else raw.size
    padded = np.zeros(size + 8, dtype=np.uint8)
    if size:
        padded[:size] = np.frombuffer(raw, dtype=np.uint8)
    words = np.ndarray((size + 1,), dtype="<u8", buffer=padded, strides=(1,))
    new = np.ones(len(ids), dtype=np.bool_)
    new[1:] = lengths[1:] != lengths[:-1]
    for j in range(0, int(lengths.max()), 8):
        # Word j of each id; past a shorter id's end the index is clipped and the mask empty.
        at = np.minimum(offsets[:-1] + j, size)
        differ = words[at[1:]] ^ words[at[:-1]]
        new[1:] |= (differ & _MASKS[np.clip(lengths[1:] - j, 0, 8)]) != 0
    firsts = np.flatnonzero(new)
    text = padded.data
    bounds = zip(offsets[firsts].tolist(), offsets[firsts + 1].tolist(), strict=True)
    ids_at = [str(text[a:b], "utf-8") for a, b in bounds]
    return ids_at, firsts.tolist()
