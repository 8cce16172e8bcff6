"""Reading and writing TREC runs and qrels (and BEIR's results JSON).

Formats
-------
* run, TREC: 6 whitespace-separated columns ``qid Q0 docid rank score tag``. The rank column
  is ignored on input (pytrec_eval and trec_eval rank by score). Also accepted: BEIR's results
  JSON ``{qid: {docid: score}}`` (detected by a leading ``{``).
* qrels: TREC 4 columns ``qid 0 docid rel`` (whitespace), or BEIR's tsv ``query-id corpus-id
  score`` with a header line (3 tab-separated columns; the first line is skipped when it is a
  header).

Duplicate (query, doc) pairs
----------------------------
``duplicates="error"`` (default): a :class:`TrecFormatError` naming both lines, as trec_eval
does for runs. ``duplicates="last"``: the last line's value wins and the pair keeps its first
position — BEIR's rule, both for qrels (``GenericDataLoader._load_qrels``) and for runs
(``beir.util.load_runfile`` assigns ``results[qid][doc_id] = float(score)`` line by line).

Speed
-----
Run dicts are parsed with :mod:`pyarrow.csv` (multi-threaded, correctly rounded floats,
equal to Python's ``float()``); the compiled engine's arrays come from the compiled parser
(:mod:`heta_eval.io.run_parser`, exact scores as well). Any parse failure falls back
to a line-by-line validating pass that reports the exact line, so errors cost time only when
there is an error. That pass also accepts runs whose columns are separated by several spaces
or mixed whitespace.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
>>> write_run({"q1": {"d1": 0.5, "d2": 0.5, "d3": 2.0}}, path, tag="demo")
>>> print(path.read_text(), end="")
q1 Q0 d3 1 2.0 demo
q1 Q0 d2 2 0.5 demo
q1 Q0 d1 3 0.5 demo
>>> read_run(path)
{'q1': {'d3': 2.0, 'd2': 0.5, 'd1': 0.5}}
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from heta_eval._runtime import HAVE_NUMBA, paused_gc

__all__ = [
    "TrecFormatError",
    "read_qrels",
    "read_run",
    "read_run_columnar",
    "write_qrels",
    "write_run",
    "write_run_json",
]

PathLike = str | os.PathLike[str]
Duplicates = Literal["error", "last"]
Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]

_RUN_COLUMNS = ["qid", "q0", "docid", "rank", "score", "tag"]


class TrecFormatError(ValueError):
    """A malformed run or qrels file; ``path`` and ``line`` (1-based, or None) say where."""

    def __init__(
        self, message: str, path: PathLike, line: int | None = None, code: str = "malformed"
    ):
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")
        self.reason = message
        self.code = code
        self.path = Path(path)
        self.line = line


def _check_duplicates(value: str) -> Duplicates:
    if value not in ("error", "last"):
        raise ValueError(f"duplicates must be 'error' or 'last', got {value!r}")
    return value  # type: ignore[return-value]


def _head(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(1 << 16)


# --------------------------------------------------------------------------- lines
#
# One set of rules for every reader and every size (the pyarrow path below must agree with
# the line reader, which is the reference): fields are separated by ASCII whitespace as
# trec_eval splits them (spaces, tabs, a CR before the newline), so a stray space never
# becomes part of an id; a UTF-8 byte-order mark at the start of a file is dropped; ids must
# not be empty or contain NUL; numbers follow one grammar and must fit int64 / float64.

_BOM = b"\xef\xbb\xbf"
_SCORE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_LABEL = re.compile(r"[+-]?\d+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _lines(path: Path) -> Any:
    """``(line number, decoded line)`` of a file, the BOM of the first line dropped."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
            yield number, _decode_line(raw, path, number)


_WS = " \t\n\r\x0b\x0c"
_ASCII_SPACE = re.compile(r"[ \t\n\r\x0b\x0c]+")


def _fields(line: str) -> list[str]:
    stripped = line.strip(_WS)
    return _ASCII_SPACE.split(stripped) if stripped else []


def _check_id(text: str, what: str, path: Path, number: int) -> str:
    if "\x00" in text:
        raise TrecFormatError(
            f"{what} {text!r} contains a NUL character", path, number, "malformed_qrels_line"
        )
    return text


def parse_score(text: str, path: PathLike, number: int | None) -> float:
    """A run score: a decimal number (``1``, ``-0.5``, ``2e-3``) that fits a float64."""
    if _SCORE.fullmatch(text) is None:
        if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise TrecFormatError(f"score {text!r} is not finite", path, number)
        raise TrecFormatError(f"score {text!r} is not a number", path, number)
    score = float(text)
    if not math.isfinite(score):
        raise TrecFormatError(f"score {text!r} is not finite (beyond float64)", path, number)
    return score


def parse_label(text: str, path: PathLike, number: int | None) -> int:
    """A relevance label: an integer (``2``, ``-1``) that fits int64."""
    if _LABEL.fullmatch(text) is None:
        raise TrecFormatError(f"relevance label {text!r} is not an integer", path, number)
    label = int(text)
    if not _INT64_MIN <= label <= _INT64_MAX:
        raise TrecFormatError(f"relevance label {text!r} is outside the int64 range", path, number)
    return label


# --------------------------------------------------------------------------- runs


def read_run(path: PathLike, *, duplicates: Duplicates = "error") -> Run:
    """Read a TREC run (or BEIR results JSON) as ``{qid: {docid: float}}`` in file order."""
    path = Path(path)
    _check_duplicates(duplicates)
    head = _head(path)
    if not head.strip():
        raise TrecFormatError("empty file: no run lines", path)
    if head.lstrip(_BOM + b" \t\r\n").startswith(b"{"):
        return _read_run_json(path, duplicates)
    table = _read_run_table(path, "qid docid score")
    if table is None:
        return _read_run_lines(path, duplicates)
    run = _run_from_table(table, duplicates)
    return _read_run_lines(path, duplicates) if run is None else run


_SMALL_FILE = 8 << 20


def _scan(path: Path) -> tuple[str, bool, bool] | None:
    """``(delimiter, ascii, large)`` of a run whose lines pyarrow splits exactly as the line
    reader does, or None (the line reader then reads it: mixed whitespace, CR, NUL, an empty
    field). One memory map and a few C-speed scans; no copy of the file. For a ``large``
    file the empty-field scan is left to :func:`_has_empty_field` (compiled, run after the
    parse so that numba loads while pyarrow reads)."""
    import mmap

    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        start = len(_BOM) if m[: len(_BOM)] == _BOM else 0
        end = m.find(b"\n")
        first = m[start : end if end >= 0 else len(m)]
        d, other = (b"\t", b" ") if b"\t" in first else (b" ", b"\t")
        for byte in (other, b"\r", b"\x0b", b"\x0c", b"\x00"):  # memchr scans
            if m.find(byte, start) >= 0:
                return None
        if len(m) < _SMALL_FILE:  # a regular expression; numba would take longer to load
            text = m[start:]
            ascii_only = text.isascii()
            # Substring searches (memchr speed) rather than one regular expression.
            empty = (
                d + d in text or b"\n" + d in text or d + b"\n" in text
                or text.startswith(d) or text.endswith(d)
            )  # fmt: skip
            return None if empty else (d.decode(), ascii_only, False)
        data = np.frombuffer(m, dtype=np.uint8)[start:]
        try:
            ascii_only = int(data.max()) < 0x80
        finally:
            del data  # the map cannot close while a view of it lives
    return d.decode(), ascii_only, True


def _has_empty_field(path: Path, delimiter: str) -> bool:
    """Two delimiters in a row, or one at a line's edge: an empty field to pyarrow, nothing
    at all to the line reader (compiled scan of a large file)."""
    import mmap

    from heta_eval.io._kernels import empty_field

    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        start = len(_BOM) if m[: len(_BOM)] == _BOM else 0
        data = np.frombuffer(m, dtype=np.uint8)[start:]
        try:
            return bool(empty_field(data, np.uint8(ord(delimiter))))
        finally:
            del data


def _scan_while_parsing(path: Path, delimiter: str, found: list[bool]) -> None:
    """Import numba, load the cached scan and run it, appending its answer to ``found``: run
    in a thread while pyarrow parses (which releases the GIL), so that a large file's
    start-up overlaps its parse. On failure ``found`` stays empty and the caller scans
    itself (and meets the same error in its own thread)."""
    with contextlib.suppress(Exception):  # reported when the caller runs the same code
        found.append(_has_empty_field(path, delimiter))


def _read_run_table(path: Path, columns: str) -> Any:
    """The run's ``columns`` parsed by pyarrow (six columns a line, no quoting), or None
    when the fast path does not apply or finds anything wrong: the callers then use the
    line reader, which names the bad line."""
    try:
        scanned = _scan(path) if path.stat().st_size else None
    except (OSError, ValueError):  # not a regular file (a pipe): the line reader reads it
        scanned = None
    if scanned is None:
        return None
    delimiter, ascii_only, large = scanned
    found: list[bool] = []
    scanning = None
    if large:
        import threading

        scanning = threading.Thread(
            target=_scan_while_parsing, args=(path, delimiter, found), daemon=True
        )
        scanning.start()
    try:
        table = _parse_run(path, delimiter, ascii_only, columns)
    finally:
        if scanning is not None:
            scanning.join()
    if table is None or (large and (found[0] if found else _has_empty_field(path, delimiter))):
        return None
    return table


def _parse_run(path: Path, delimiter: str, ascii_only: bool, columns: str) -> Any:
    """pyarrow's parse of a scanned run (multi-threaded, releases the GIL), or None."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    wanted = columns.split()
    string = pa.large_string()
    try:
        table = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(column_names=_RUN_COLUMNS, block_size=1 << 24),
            parse_options=pcsv.ParseOptions(
                delimiter=delimiter,
                quote_char=False,  # TREC has no quoting: a " is part of an id
                double_quote=False,
                escape_char=False,
                ignore_empty_lines=False,  # an empty line is an error, reported by the slow pass
            ),
            convert_options=pcsv.ConvertOptions(
                column_types={c: pa.float64() if c == "score" else string for c in _RUN_COLUMNS},
                # Non-ASCII bytes: every column is converted, so each is checked as UTF-8.
                include_columns=wanted if ascii_only else _RUN_COLUMNS,
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
        return None  # NaN/inf: let the slow pass name the line
    return table.select(wanted)


_NUMPY_TYPES = {"double": "float64", "float": "float32", "int64": "int64", "uint64": "uint64",
                "int32": "int32", "uint32": "uint32", "uint8": "uint8", "int8": "int8"}  # fmt: skip


def arrow_to_numpy(array: Any) -> np.ndarray:
    """A numpy view (booleans, or several chunks: a copy) of a null-free Arrow array (or
    chunked array) of numbers or booleans.

    pyarrow's ``Array.to_numpy`` imports pandas (a quarter second of start-up); this reads
    the values buffer directly.

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


def _run_from_table(table: Any, duplicates: Duplicates) -> Run | None:
    """The run dict of a parsed table, or None where the line reader must name a repeat."""
    # Millions of new str/float objects would trigger useless full collections.
    with paused_gc():
        qids = table.column("qid").to_pylist()
        docids = table.column("docid").to_pylist()
        scores = table.column("score").to_pylist()
        # Runs are grouped by query: build each query's dict from a slice at C speed.
        # (Comparing the ids here beats importing pyarrow.compute for a one-shot command.)
        ends = [i for i, (a, b) in enumerate(itertools.pairwise(qids), 1) if a != b]
        ends.append(len(qids))
        run: Run = {}
        start = 0
        for end in ends:
            block = dict(zip(docids[start:end], scores[start:end], strict=True))
            if len(block) != end - start and duplicates == "error":
                return None
            qid = qids[start]
            existing = run.get(qid)
            if existing is None:
                run[qid] = block
            else:  # the query appears in two separate blocks of the file
                if duplicates == "error" and not existing.keys().isdisjoint(block):
                    return None
                existing.update(block)
            start = end
    return run


def read_run_columnar(path: PathLike, *, ignore_identical_ids: bool = True) -> object | None:
    """Read a TREC run straight into arrays (a :class:`heta_eval.providers.engine.ColumnarRun`)
    with no per-line Python objects, for the compiled metric engine
    (:mod:`heta_eval.io.run_parser`).

    Returns None when the fast path does not apply (BEIR results JSON, any line not in the
    one shape every reader parses alike, non-finite scores, a query split over several
    blocks of the file, no numba): the caller then uses :func:`read_run`, which reports the
    file and line of a bad input. Duplicate (query, doc) rows are not checked here; the
    engine counts them (see ``evaluate_columnar_run``).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> write_run({"q1": {"d1": 0.5, "q1": 2.0}, "q2": {"d3": 1.0}}, path)
    >>> run = read_run_columnar(path)
    >>> run.query_ids, run.offsets.tolist(), run.scores.tolist(), run.skip.tolist()
    (['q1', 'q2'], [0, 2, 3], [2.0, 0.5, 1.0], [True, False, False])
    """
    path = Path(path)
    if not HAVE_NUMBA or not path.is_file():
        return None
    head = _head(path)
    if not head.strip() or head.lstrip(_BOM + b" \t\r\n").startswith(b"{"):
        return None
    from heta_eval.io.run_parser import parse_run_file

    return parse_run_file(path, ignore_identical_ids=ignore_identical_ids)


def _read_run_lines(path: Path, duplicates: Duplicates) -> Run:
    run: Run = {}
    seen: dict[tuple[str, str], int] = {}
    for number, line in _lines(path):
        fields = _fields(line)
        if not fields:
            raise TrecFormatError("empty line", path, number)
        if len(fields) != 6:
            raise TrecFormatError(
                f"expected 6 columns 'qid Q0 docid rank score tag', got {len(fields)}: "
                f"{line.rstrip()!r}",
                path,
                number,
            )
        qid, _, docid, _, score_text, _ = fields
        _check_id(qid, "query id", path, number)
        _check_id(docid, "doc id", path, number)
        score = parse_score(score_text, path, number)
        if duplicates == "error":
            _refuse_repeat(seen, qid, docid, number, path, "(query, doc) pair")
        run.setdefault(qid, {})[docid] = score
    if not run:
        raise TrecFormatError("empty file: no run lines", path)
    return run


def _json_id(value: str, what: str, path: Path) -> str:
    if not value or "\x00" in value:
        raise TrecFormatError(f"{what} {value!r} is empty or contains a NUL character", path)
    return value


def _read_run_json(path: Path, duplicates: Duplicates) -> Run:
    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        out: dict[str, object] = {}
        for key, value in items:
            if key in out and duplicates == "error":
                raise TrecFormatError(f"duplicate key {key!r} in results JSON", path)
            out[key] = value
        return out

    raw = path.read_bytes()
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=pairs)
    except UnicodeDecodeError as error:
        raise TrecFormatError(f"not UTF-8 (at byte {error.start})", path) from None
    except json.JSONDecodeError as error:
        raise TrecFormatError(f"invalid JSON: {error.msg}", path, error.lineno) from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise TrecFormatError(f"invalid JSON: {error}", path) from None
    if not isinstance(data, dict) or not data:
        raise TrecFormatError("expected a non-empty object {qid: {docid: score}}", path)
    run: Run = {}
    for qid, docs in data.items():
        _json_id(qid, "query id", path)
        if not isinstance(docs, dict):
            raise TrecFormatError(f"query {qid!r}: expected an object {{docid: score}}", path)
        scores: dict[str, float] = {}
        for docid, score in docs.items():
            _json_id(docid, f"query {qid!r}: doc id", path)
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise TrecFormatError(
                    f"query {qid!r}, doc {docid!r}: score {score!r} is not a number", path
                )
            try:
                value = float(score)
            except OverflowError:
                value = math.inf
            if not math.isfinite(value):
                raise TrecFormatError(
                    f"query {qid!r}, doc {docid!r}: score is not finite (beyond float64)", path
                )
            scores[docid] = value
        run[qid] = scores
    return run


def ranked(docs: Mapping[str, float]) -> list[tuple[str, float]]:
    """A query's documents in pytrec_eval's rank order: float32 score desc, then doc id desc.

    >>> ranked({"a": 1.0, "b": 1.0, "c": 2.0})
    [('c', 2.0), ('b', 1.0), ('a', 1.0)]
    """
    ids = list(docs)
    values = list(docs.values())
    # trec_eval stores scores as C floats: rank on the float32 value, as it does.
    with np.errstate(over="ignore"):  # |score| > 3.4e38 becomes +-inf in float32, as in C
        keys = np.asarray(values, dtype=np.float32).tolist() if values else []
    order = sorted(zip(keys, ids, values, strict=True), reverse=True)
    return [(doc, value) for _, doc, value in order]


def write_run(
    run: Mapping[str, Mapping[str, float]],
    path: PathLike,
    *,
    tag: str = "heta-eval",
    top_k: int | None = None,
    sort: bool = True,
) -> None:
    """Write a TREC run with real ranks 1..n in pytrec_eval's order (BEIR's ``save_runfile``
    writes rank 0 and breaks ties by insertion order). Scores keep full precision (``repr``).

    ``sort=False`` keeps each query's documents in the given order (a system's own ranking,
    as the benchmark runner writes it), so tied scores keep the system's order when read back.
    """
    if not tag or any(c.isspace() for c in tag):
        raise ValueError(f"tag must be a non-empty word without whitespace, got {tag!r}")
    path = Path(path)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for qid, docs in run.items():
            rows = ranked(docs) if sort else list(docs.items())
            if top_k is not None:
                rows = rows[:top_k]
            handle.write(
                "".join(
                    f"{qid} Q0 {doc} {rank} {score!r} {tag}\n"
                    for rank, (doc, score) in enumerate(rows, start=1)
                )
            )


def write_run_json(run: Mapping[str, Mapping[str, float]], path: PathLike) -> None:
    """Write BEIR's results JSON ``{qid: {docid: score}}``."""
    Path(path).write_text(json.dumps(run) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- qrels


def read_qrels(path: PathLike, *, duplicates: Duplicates = "error") -> Qrels:
    """Read TREC qrels (``qid 0 docid rel``) or a BEIR qrels tsv as ``{qid: {docid: int}}``.

    Lines starting with ``#`` are comments (trec_eval 10 accepts them); the first other line
    is skipped when it is a header (its label field is not an integer). BEIR's loader skips
    the first line even when it is data (:func:`heta_eval.data.beir_loader.load_qrels`);
    ``heta-eval datasets validate`` warns about such files. See :func:`iter_qrels`.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("# judged by hand\\nq1 0 d1 2\\nq1 0 d2 -2\\n")
    >>> read_qrels(path)
    {'q1': {'d1': 2, 'd2': -2}}
    """
    path = Path(path)
    _check_duplicates(duplicates)
    qrels: Qrels = {}
    seen: dict[tuple[str, str], int] = {}
    for number, qid, docid, label in iter_qrels(path):
        if duplicates == "error":
            _refuse_repeat(seen, qid, docid, number, path, "judgment")
        qrels.setdefault(qid, {})[docid] = label
    if not qrels:
        raise TrecFormatError("empty file: no judgments", path)
    return qrels


def iter_qrels(
    path: PathLike,
    *,
    layout: Literal["auto", "beir", "trec"] = "auto",
    skip_first_line: bool = False,
    errors: Literal["raise", "yield"] = "raise",
) -> Any:
    """``(line number, qid, docid, label)`` of every judgment of a qrels file; a bad line
    raises a :class:`TrecFormatError` naming it (``errors="yield"``: yields the error, with
    a ``code``, and goes on). The project's one qrels reader.

    Layout (``"auto"``): a first data line of exactly three tab-separated fields makes a BEIR tsv
    (``query-id corpus-id score``: fields split on tabs, ASCII whitespace around a field
    dropped, CSV quotes removed as BEIR's ``csv.reader`` does, extra columns ignored);
    otherwise TREC's four whitespace-separated columns ``qid iter docid rel``. ``#``
    comment lines are skipped; the first other line is skipped when it is a header (its
    label is not an integer and it names a column: ``query-id``, ``qid``, ``score``, ``rel``,
    ...), or always with ``skip_first_line`` (BEIR's rule, which counts the
    first physical line).
    """
    path = Path(path)
    beir_tsv: bool | None = None if layout == "auto" else layout == "beir"
    first_data_line = not skip_first_line
    for number, line in _lines(path):
        if skip_first_line and number == 1:
            continue
        if line.lstrip(_WS).startswith("#"):
            continue
        if beir_tsv is None:
            beir_tsv = len(line.rstrip("\r\n").split("\t")) == 3
        if first_data_line:
            first_data_line = False
            if _is_header(_qrels_fields(line, beir_tsv), beir_tsv):
                continue
        try:
            yield _qrels_record(line, beir_tsv, path, number)
        except TrecFormatError as error:
            if errors == "raise":
                raise
            yield error


_HEADER_WORDS = {
    "query-id", "query_id", "qid", "query", "topic", "corpus-id", "docid", "docno",
    "score", "rel", "relevance", "label", "judgment", "judgement", "grade",
}  # fmt: skip


def _is_header(fields: list[str], beir_tsv: bool) -> bool:
    """A first line naming its columns (``query-id corpus-id score``, ``qid iter docno rel``):
    its label field is not an integer and it uses a column name; ``q1 0 d1 x`` is data."""
    if len(fields) < 3:
        return False
    label = fields[2 if beir_tsv else -1]
    named = {f.lower() for f in fields} & _HEADER_WORDS
    return _LABEL.fullmatch(label) is None and bool(named)


def _qrels_record(line: str, beir_tsv: bool, path: Path, number: int) -> tuple[int, str, str, int]:
    fields = _qrels_fields(line, beir_tsv)
    width = 3 if beir_tsv else 4
    if len(fields) < width or (not beir_tsv and len(fields) > 4):
        layout = "query-id corpus-id score" if beir_tsv else "qid 0 docid rel"
        code = "empty_qrels_line" if not fields else "malformed_qrels_line"
        raise TrecFormatError(_columns_message(line, width, layout), path, number, code)
    qid, docid, label_text = fields[0], fields[width - 2], fields[width - 1]
    for what, text in (("query id", qid), ("doc id", docid)):
        if not text:
            raise TrecFormatError(
                f"empty {what}: {line.rstrip()!r}", path, number, "malformed_qrels_line"
            )
        _check_id(text, what, path, number)
    try:
        label = parse_label(label_text, path, number)
    except TrecFormatError as error:
        error.code = "non_integer_label"
        raise
    return number, qid, docid, label


def _qrels_fields(line: str, beir_tsv: bool) -> list[str]:
    if not beir_tsv:
        return _fields(line)
    text = line.rstrip("\r\n")
    if not text.strip(_WS):
        return []
    if '"' in text:
        import csv

        cells = next(csv.reader([text], delimiter="\t", quoting=csv.QUOTE_MINIMAL))
    else:
        cells = text.split("\t")
    return [cell.strip(_WS) for cell in cells][:3]


def _decode_line(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TrecFormatError(
            f"not UTF-8 (byte {raw[error.start]:#04x} at column {error.start + 1})", path, number
        ) from None


def _refuse_repeat(
    seen: dict[tuple[str, str], int], qid: str, docid: str, number: int, path: Path, what: str
) -> None:
    """Raise when ``(qid, docid)`` was already on an earlier line (``duplicates="error"``)."""
    first = seen.setdefault((qid, docid), number)
    if first != number:
        raise TrecFormatError(
            f"duplicate {what} ({qid!r}, {docid!r}), first on line {first}; pass "
            "duplicates='last' for BEIR's rule (last line wins)",
            path,
            number,
        )


def _columns_message(line: str, expected: int, layout: str) -> str:
    if not line.strip():
        return "empty line"
    return f"expected {expected} columns '{layout}', got {len(line.split())}: {line.rstrip()!r}"


def write_qrels(
    qrels: Mapping[str, Mapping[str, int]],
    path: PathLike,
    *,
    format: Literal["trec", "beir"] = "trec",
) -> None:
    """Write qrels as TREC (``qid 0 docid rel``) or BEIR tsv (with its header)."""
    with Path(path).open("w", encoding="utf-8", newline="\n") as handle:
        if format == "beir":
            handle.write("query-id\tcorpus-id\tscore\n")
        for qid, docs in qrels.items():
            for docid, label in docs.items():
                if format == "beir":
                    handle.write(f"{qid}\t{docid}\t{int(label)}\n")
                else:
                    handle.write(f"{qid} 0 {docid} {int(label)}\n")
