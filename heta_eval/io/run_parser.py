"""The compiled TREC run parser: a run file's bytes straight into a :class:`ColumnarRun`.

:func:`heta_eval.io.run.read_run_columnar` uses it for the metric engine. It reads the bytes
(a memory map of a file, or a buffered pipe) in slices, one thread each (the kernels release
the GIL), and keeps only what the engine needs: doc ids, float64 scores, query blocks and
self-hits. It accepts exactly the lines on which every reader agrees — six non-empty
fields separated by one delimiter (a space or a tab, the same one throughout), ``\\n`` line
ends, valid UTF-8, no other ASCII whitespace or NUL, scores in the reader's number grammar
(:mod:`heta_eval.io.grammar`) — and answers None for anything else, so that the validating
line reader (:func:`heta_eval.io.run.read_run`) names the line. Nothing is scored from a
line it would not parse the same way.

Scores are exact: a score of at most 19 significant digits whose value is ``w * 10**e`` with
``w <= 2**53`` and ``|e| <= 22`` is one correctly rounded IEEE operation on exact operands
(Clinger's fast path), which covers the fixed-point scores search engines write; any other
score is converted by pyarrow's correctly rounded parser. Both equal Python's ``float()``.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval._runtime import njit
from heta_eval._runtime import run_in_threads as _run_parallel
from heta_eval._runtime import usable_cpus as _cores
from heta_eval.io import limits
from heta_eval.io._kernels import at
from heta_eval.io.columnar import ColumnarRun
from heta_eval.io.source import open_input

__all__ = ["parse_run_bytes", "parse_run_file"]

_NL = 10


# -- the grammar's number and text rules, compiled (:mod:`heta_eval.io.grammar`): strict
# UTF-8, and scores in ``[+-]?(digits[.digits]|.digits)([eE][+-]?digits)?`` with ASCII digits
# only, converted exactly where one IEEE operation can (Clinger's fast path).

# Exact powers of ten (10**22 is the largest a float64 holds exactly).
POW10 = np.array([10.0**i for i in range(23)], dtype=np.float64)


@njit(cache=True, nogil=True, inline="always")
def utf8_ok(data, a, b):  # pragma: no cover - compiled
    """Strict UTF-8 (as Python decodes it): no overlongs, surrogates or code points past
    U+10FFFF."""
    i = a
    while i < b:
        c = at(data, i)
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            need, lo, hi = 1, 0x80, 0xBF
        elif c == 0xE0:
            need, lo, hi = 2, 0xA0, 0xBF
        elif 0xE1 <= c <= 0xEC or 0xEE <= c <= 0xEF:
            need, lo, hi = 2, 0x80, 0xBF
        elif c == 0xED:
            need, lo, hi = 2, 0x80, 0x9F
        elif c == 0xF0:
            need, lo, hi = 3, 0x90, 0xBF
        elif 0xF1 <= c <= 0xF3:
            need, lo, hi = 3, 0x80, 0xBF
        elif c == 0xF4:
            need, lo, hi = 3, 0x80, 0x8F
        else:
            return False
        if i + need > b - 1:
            return False
        if not lo <= at(data, i + 1) <= hi:
            return False
        for j in range(i + 2, i + 1 + need):
            if not 0x80 <= at(data, j) <= 0xBF:
                return False
        i += need + 1
    return True


@njit(cache=True, nogil=True, inline="always")
def _digit_run(data, b, fraction, i, mantissa, significant, scale, digits):  # pragma: no cover
    """Read the digits from ``i`` into (the first 19 significant ones) ``mantissa``; ``scale``
    is the decimal exponent that corrects for the digits left out of the integer part or
    read after the point. Returns the updated ``(i, mantissa, significant, scale, digits)``."""
    while i < b and 48 <= at(data, i) <= 57:
        d = at(data, i) - 48
        if significant > 0 or d != 0:
            significant += 1
            if significant <= 19:
                mantissa = mantissa * np.uint64(10) + np.uint64(d)
                if fraction:
                    scale -= 1
            elif not fraction:
                scale += 1
        elif fraction:
            scale -= 1  # a leading zero after the point
        digits += 1
        i += 1
    return i, mantissa, significant, scale, digits


@njit(cache=True, nogil=True, inline="always")
def _score(data, a, b, pow10):  # pragma: no cover - compiled
    """(ok, exact, value) of the score text ``data[a:b]`` in the grammar
    ``[+-]?(digits[.digits]|.digits)([eE][+-]?digits)?``; ``exact`` False: leave it to the
    correctly rounded converter (too many digits or too large an exponent)."""
    i = a
    negative = False
    if i < b and (at(data, i) == 43 or at(data, i) == 45):
        negative = at(data, i) == 45
        i += 1
    i, mantissa, significant, scale, digits = _digit_run(data, b, False, i, np.uint64(0), 0, 0, 0)
    if i < b and at(data, i) == 46:
        i, mantissa, significant, scale, digits = _digit_run(
            data, b, True, i + 1, mantissa, significant, scale, digits
        )
    if digits == 0:
        return False, False, 0.0
    exponent = 0
    if i < b and (at(data, i) == 101 or at(data, i) == 69):
        i += 1
        exp_negative = False
        if i < b and (at(data, i) == 43 or at(data, i) == 45):
            exp_negative = at(data, i) == 45
            i += 1
        exp_digits = 0
        while i < b and 48 <= at(data, i) <= 57:
            if exponent < 100_000:
                exponent = exponent * 10 + (at(data, i) - 48)
            exp_digits += 1
            i += 1
        if exp_digits == 0:
            return False, False, 0.0
        if exp_negative:
            exponent = -exponent
    if i != b:
        return False, False, 0.0
    if significant == 0:
        return True, True, -0.0 if negative else 0.0
    if significant > 19 or mantissa > np.uint64(9007199254740992):
        return True, False, 0.0
    e = exponent + scale
    if e < -22 or e > 22:
        return True, False, 0.0
    value = float(mantissa)
    value = value * pow10[e] if e >= 0 else value / pow10[-e]
    return True, True, -value if negative else value


_POW10 = POW10


def parse_run_bytes(
    buffer: Any, *, start: int = 0, ignore_identical_ids: bool = True
) -> ColumnarRun | None:
    """The run in ``buffer[start:]`` (bytes or a memory map; ``start`` skips what the caller
    drops, a byte-order mark) as a :class:`ColumnarRun`, or None when it is not in the shape
    described in the module docstring (the caller then uses the line reader).

    >>> run = parse_run_bytes(b"q1 Q0 d1 1 2.5 t\\nq1 Q0 q1 2 1e-3 t\\nq2 Q0 d3 1 7 t\\n")
    >>> run.query_ids, run.offsets.tolist(), run.scores.tolist(), run.skip.tolist()
    (['q1', 'q2'], [0, 2, 3], [2.5, 0.001, 7.0], [False, True, False])
    >>> parse_run_bytes(b"q1 Q0 d1 1 2.5 t\\nq1 Q0  d2 2 1 t\\n") is None  # an empty field
    True
    """
    if len(buffer) <= start:
        return None
    data = np.frombuffer(buffer, dtype=np.uint8)
    try:
        return _parse(data, start, ignore_identical_ids)
    finally:
        del data  # a memory map cannot close while a view of it lives


def parse_run_file(path: Path, *, ignore_identical_ids: bool = True) -> ColumnarRun | None:
    """:func:`parse_run_bytes` on the file at ``path`` (opened as every reader opens it)."""
    source = open_input(path)
    return parse_run_bytes(
        source.data, start=source.start(), ignore_identical_ids=ignore_identical_ids
    )


def _parse(data: np.ndarray, start: int, ignore_identical_ids: bool) -> ColumnarRun | None:
    end = len(data)
    line_end = _find(data, _NL, start, end)
    first = bytes(data[start : line_end if line_end >= 0 else end])
    delimiter = np.uint8(9 if b"\t" in first else 32)
    slices = _slices(data, start, end)
    counts = _run_parallel(_count_lines, [(data, a, b) for a, b in slices])
    firsts = np.zeros(len(slices) + 1, dtype=np.int64)
    np.cumsum(counts, out=firsts[1:])
    rows = int(firsts[-1])
    doc_start = np.empty(rows, dtype=np.int64)
    doc_len = np.empty(rows, dtype=np.int32)
    scores = np.empty(rows, dtype=np.float64)  # NaN: left to the exact converter
    new_query = np.zeros(rows, dtype=np.bool_)
    skip = np.zeros(rows, dtype=np.bool_)
    out = (doc_start, doc_len, scores, new_query, skip)
    errors = _run_parallel(
        _parse_lines,
        [
            (data, a, b, int(firsts[i]), start, delimiter, _POW10, *out)
            for i, (a, b) in enumerate(slices)
        ],
    )
    if rows == 0 or any(errors):
        return None
    hard = np.flatnonzero(np.isnan(scores))
    if len(hard) and not _convert_hard(data, hard, doc_start, doc_len, scores, delimiter):
        return None
    blocks = np.flatnonzero(new_query)
    spans = _query_spans(data, doc_start[blocks], start, delimiter)
    query_ids = [bytes(data[a:b]).decode("utf-8") for a, b in spans.tolist()]
    if len(set(query_ids)) != len(query_ids):
        return None  # a query in several blocks: the dict reader merges them
    offsets = np.empty(len(blocks) + 1, dtype=np.int64)
    offsets[:-1] = blocks
    offsets[-1] = rows
    doc_offsets = np.empty(rows + 1, dtype=np.int64)
    _offsets(doc_len, doc_offsets)
    doc_data = np.empty(int(doc_offsets[-1]), dtype=np.uint8)
    row_slices = _row_slices(rows)
    _run_parallel(
        _copy_ids, [(data, doc_start, doc_offsets, doc_data, a, b) for a, b in row_slices]
    )
    return ColumnarRun(
        query_ids,
        offsets,
        doc_data,
        doc_offsets,
        scores,
        None,
        skip if ignore_identical_ids else None,
    )


def _find(data: np.ndarray, byte: int, start: int, end: int) -> int:
    hits = np.flatnonzero(data[start : min(end, start + (1 << 16))] == byte)
    if len(hits):
        return start + int(hits[0])
    return _find_far(data, np.uint8(byte), start, end)


def _slices(data: np.ndarray, start: int, end: int) -> list[tuple[int, int]]:
    """About two byte ranges per core, each starting at a line start."""
    parts = 2 * _cores() if end - start >= limits.PARSE_SLICED_BYTES else 1
    cuts = [start]
    for i in range(1, parts):
        guess = max(start + (end - start) * i // parts, cuts[-1])
        line_end = _find(data, _NL, guess, end)
        if line_end < 0:
            break
        cuts.append(line_end + 1)
    cuts.append(end)
    return [(a, b) for a, b in pairwise(cuts) if b > a]


def _row_slices(rows: int) -> list[tuple[int, int]]:
    parts = 2 * _cores() if rows >= limits.COPY_SLICED_ROWS else 1
    cuts = np.linspace(0, rows, parts + 1).astype(np.int64).tolist()
    return [(a, b) for a, b in pairwise(cuts) if b > a]


def _convert_hard(
    data: np.ndarray,
    rows: np.ndarray,
    doc_start: np.ndarray,
    doc_len: np.ndarray,
    scores: np.ndarray,
    delimiter: np.uint8,
) -> bool:
    """The scores of ``rows`` (left by the fast path) converted by pyarrow's correctly
    rounded parser; False when one is not finite."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text, offsets = _score_texts(data, doc_start[rows] + doc_len[rows], delimiter)
    array = pa.Array.from_buffers(
        pa.large_string(), len(rows), [None, pa.py_buffer(offsets), pa.py_buffer(text)]
    )
    try:
        values = pc.cast(array, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    converted = np.frombuffer(values.buffers()[1], dtype=np.float64)
    converted = converted[values.offset : values.offset + len(rows)]
    if not np.isfinite(converted).all():
        return False
    scores[rows] = converted
    return True


# ------------------------------------------------------------------------------ kernels


@njit(cache=True, nogil=True)
def _find_far(data, byte, start, end):  # pragma: no cover - compiled
    for i in range(start, end):
        if at(data, i) == byte:
            return i
    return -1


@njit(cache=True, nogil=True)
def _count_lines(data, start, end):  # pragma: no cover - compiled
    """Lines in ``data[start:end]`` (a last line without ``\\n`` counts)."""
    # Over a slice from index 0: numba then knows no index is negative, drops its
    # wrap-around test and LLVM vectorizes the loop (range(start, end) does not).
    view = data[start:end]
    n = 0
    for i in range(len(view)):
        n += view[i] == 10
    if end > start and at(data, end - 1) != 10:
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _previous_query(data, start, file_start, delimiter):  # pragma: no cover - compiled
    """``[a, b)`` of the query id on the line before ``start`` (for the first row's block
    flag), or ``(-1, -1)`` at the start of the file."""
    if start <= file_start:
        return -1, -1
    p = start - 1
    while p > file_start and at(data, p - 1) != 10:
        p -= 1
    q = p
    while q < start and at(data, q) != delimiter:
        q += 1
    return p, q


@njit(cache=True, nogil=True)
def _parse_lines(
    data,
    start,
    end,
    row,
    file_start,
    delimiter,
    pow10,
    doc_start,
    doc_len,
    scores,
    new_query,
    skip,
):  # pragma: no cover - compiled
    """Parse the lines of ``data[start:end]`` into rows ``row..``; 0 when every line is
    in the accepted shape, else 1 (the caller falls back to the line reader)."""
    prev_a, prev_b = _previous_query(data, start, file_start, delimiter)
    pos = start
    field_a = np.empty(6, dtype=np.int64)
    field_b = np.empty(6, dtype=np.int64)
    while pos < end:
        f = 0
        a = pos
        nonascii = False
        while True:
            # Printable ASCII but the space: nearly every byte of every field. One unsigned
            # compare a byte here; the tests below run at field and line ends only.
            while pos < end and np.uint8(at(data, pos) - 33) < 94:
                pos += 1
            if pos == end or at(data, pos) == 10:
                if pos == a or f != 5:
                    return 1  # an empty field or a wrong number of fields
                field_a[5] = a
                field_b[5] = pos
                pos += 1
                break
            c = at(data, pos)
            if c == delimiter:
                if pos == a or f == 5:
                    return 1
                field_a[f] = a
                field_b[f] = pos
                f += 1
                pos += 1
                a = pos
                continue
            if c <= 32 and (c == 0 or c == 9 or c == 11 or c == 12 or c == 13 or c == 32):
                return 1  # other whitespace, CR or NUL: the line reader decides
            if c >= 128:
                nonascii = True
            pos += 1
        if nonascii:
            for t in range(6):
                if not utf8_ok(data, field_a[t], field_b[t]):
                    return 1
        qa = field_a[0]
        qb = field_b[0]
        da = field_a[2]
        db = field_b[2]
        ok, exact, value = _score(data, field_a[4], field_b[4], pow10)
        if not ok:
            return 1
        scores[row] = value if exact else np.nan
        doc_start[row] = da
        doc_len[row] = db - da
        same = prev_a >= 0 and prev_b - prev_a == qb - qa
        if same:
            for t in range(qb - qa):
                if at(data, prev_a + t) != at(data, qa + t):
                    same = False
                    break
        new_query[row] = not same
        if qb - qa == db - da:
            hit = True
            for t in range(qb - qa):
                if at(data, qa + t) != at(data, da + t):
                    hit = False
                    break
            skip[row] = hit
        prev_a = qa
        prev_b = qb
        row += 1
    return 0


@njit(cache=True, nogil=True)
def _score_texts(data, doc_ends, delimiter):  # pragma: no cover - compiled
    """The score fields of the lines whose doc ids end at ``doc_ends`` (the field after
    the rank), as one buffer with offsets."""
    n = len(doc_ends)
    starts = np.empty(n, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        s = doc_ends[i] + 1
        while at(data, s) != delimiter:
            s += 1
        s += 1
        e = s
        while at(data, e) != delimiter:
            e += 1
        starts[i] = s
        offsets[i + 1] = offsets[i] + e - s
    out = np.empty(offsets[n], dtype=np.uint8)
    for i in range(n):
        for j in range(offsets[i + 1] - offsets[i]):
            out[offsets[i] + j] = data[starts[i] + j]
    return out, offsets


@njit(cache=True, nogil=True)
def _query_spans(data, doc_starts, file_start, delimiter):  # pragma: no cover - compiled
    """``[start, end)`` of the query id on each line whose doc id starts at ``doc_starts``:
    back over the delimiter, the Q0 field and the delimiter before it."""
    spans = np.empty((len(doc_starts), 2), dtype=np.int64)
    for i in range(len(doc_starts)):
        e = doc_starts[i] - 2  # the Q0 field's last byte
        while at(data, e) != delimiter:
            e -= 1
        s = e
        while s > file_start and at(data, s - 1) != 10:
            s -= 1
        spans[i, 0] = s
        spans[i, 1] = e
    return spans


@njit(cache=True, nogil=True)
def _offsets(lengths, out):  # pragma: no cover - compiled
    # numpy's cumsum from int32 into int64 takes a slow casting loop (docs/install.md).
    # ``out`` comes from numpy, whose large buffers ask for huge pages: fresh memory then
    # costs less at first touch than a buffer numba allocates.
    out[0] = 0
    for i in range(len(lengths)):
        out[i + 1] = out[i] + lengths[i]


@njit(cache=True, nogil=True)
def _copy_ids(data, doc_start, doc_offsets, doc_data, a, b):  # pragma: no cover - compiled
    for i in range(a, b):
        s = doc_start[i]
        o = doc_offsets[i]
        for j in range(doc_offsets[i + 1] - o):
            doc_data[np.uint64(o + j)] = at(data, s + j)
    return 0
