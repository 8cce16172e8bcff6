"""The fast path of the run dict reader: pyarrow's multi-threaded CSV parser (correctly rounded
floats, equal to Python's ``float()``) on runs whose lines it splits exactly as the line
reader does — one delimiter (a space or a tab) throughout, no other ASCII whitespace, no
CR or NUL, no empty field. Anything else returns None and the line reader
(:mod:`heta_eval.io.run`), which names the bad line, reads the input.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from typing import Any

import numpy as np

from heta_eval._runtime import paused_gc
from heta_eval.io import limits
from heta_eval.io.source import InputBytes

__all__ = ["arrow_to_numpy", "read_table", "run_from_table"]

_RUN_COLUMNS = ["qid", "q0", "docid", "rank", "score", "tag"]
Run = dict[str, dict[str, float]]


def read_table(source: InputBytes, start: int, columns: list[str]) -> Any:
    """The run's ``columns`` (from byte ``start``) parsed by pyarrow, or None when the fast
    path does not apply or finds anything wrong."""
    scanned = _scan(source.data, start)
    if scanned is None:
        return None
    delimiter, ascii_only, large = scanned
    found: list[bool] = []
    scanning = None
    if large:  # numba loads and scans while pyarrow parses (both release the GIL)
        scanning = threading.Thread(
            target=_scan_while_parsing, args=(source.data, start, delimiter, found), daemon=True
        )
        scanning.start()
    try:
        table = _parse(source.data, start, delimiter, ascii_only, columns)
    finally:
        if scanning is not None:
            scanning.join()
    if table is None:
        return None
    if large and (found[0] if found else _has_empty_field(source.data, start, delimiter)):
        return None
    return table


def _scan(data: Any, start: int) -> tuple[str, bool, bool] | None:
    """``(delimiter, ascii, large)`` of a run pyarrow splits as the line reader does, or None.
    A few memchr-speed scans; for a large input the empty-field scan is left to
    :func:`_has_empty_field` (compiled)."""
    if len(data) <= start:
        return None
    end = data.find(b"\n", start)
    first = data[start : end if end >= 0 else len(data)]
    d, other = (b"\t", b" ") if b"\t" in first else (b" ", b"\t")
    for byte in (other, b"\r", b"\x0b", b"\x0c", b"\x00"):
        if data.find(byte, start) >= 0:
            return None
    if len(data) < limits.SCAN_COMPILED_BYTES:
        text = data[start:]
        empty = (
            d + d in text or b"\n" + d in text or d + b"\n" in text
            or text.startswith(d) or text.endswith(d)
        )  # fmt: skip
        return None if empty else (d.decode(), text.isascii(), False)
    view = np.frombuffer(data, dtype=np.uint8)[start:]
    try:
        ascii_only = int(view.max()) < 0x80
    finally:
        del view
    return d.decode(), ascii_only, True


def _has_empty_field(data: Any, start: int, delimiter: str) -> bool:
    from heta_eval.io._kernels import empty_field

    view = np.frombuffer(data, dtype=np.uint8)[start:]
    try:
        return bool(empty_field(view, np.uint8(ord(delimiter))))
    finally:
        del view


def _scan_while_parsing(data: Any, start: int, delimiter: str, found: list[bool]) -> None:
    # On failure ``found`` stays empty and the caller scans itself (and meets the error).
    with contextlib.suppress(Exception):
        found.append(_has_empty_field(data, start, delimiter))


def _parse(data: Any, start: int, delimiter: str, ascii_only: bool, columns: list[str]) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    string = pa.large_string()
    try:
        table = pcsv.read_csv(
            pa.BufferReader(pa.py_buffer(memoryview(data)[start:])),
            read_options=pcsv.ReadOptions(
                column_names=_RUN_COLUMNS, block_size=limits.PYARROW_BLOCK_BYTES
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


_NUMPY_TYPES = {"double": "float64", "float": "float32", "int64": "int64", "uint64": "uint64",
                "int32": "int32", "uint32": "uint32", "uint8": "uint8", "int8": "int8"}  # fmt: skip


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
        import pyarrow.compute as pc  # 30 ms to import: only here

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
    # Millions of new str/float objects would trigger useless full collections.
    with paused_gc():
        qids = table.column("qid").to_pylist()
        docids = table.column("docid").to_pylist()
        scores = table.column("score").to_pylist()
        # Runs are grouped by query: build each query's dict from a slice at C speed.
        ends = [i for i, (a, b) in enumerate(itertools.pairwise(qids), 1) if a != b]
        ends.append(len(qids))
        run: Run = {}
        start = 0
        for end in ends:
            block = dict(zip(docids[start:end], scores[start:end], strict=True))
            if len(block) != end - start and not repeats_allowed:
                return None
            qid = qids[start]
            existing = run.get(qid)
            if existing is None:
                run[qid] = block
            else:  # the query appears in two separate blocks of the file
                if not repeats_allowed and not existing.keys().isdisjoint(block):
                    return None
                existing.update(block)
            start = end
    return run
