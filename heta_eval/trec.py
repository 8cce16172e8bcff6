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
Runs are parsed with :mod:`pyarrow.csv` (multi-threaded, correctly rounded floats, equal to
Python's ``float()``); any parse failure falls back to a line-by-line validating pass that
reports the exact line, so errors cost time only when there is an error. That pass also
accepts runs whose columns are separated by several spaces or mixed whitespace.

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

import gc
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

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

    def __init__(self, message: str, path: PathLike, line: int | None = None):
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")
        self.path = Path(path)
        self.line = line


def _check_duplicates(value: str) -> Duplicates:
    if value not in ("error", "last"):
        raise ValueError(f"duplicates must be 'error' or 'last', got {value!r}")
    return value  # type: ignore[return-value]


def _head(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(1 << 16)


# --------------------------------------------------------------------------- runs


def read_run(path: PathLike, *, duplicates: Duplicates = "error") -> Run:
    """Read a TREC run (or BEIR results JSON) as ``{qid: {docid: float}}`` in file order."""
    path = Path(path)
    _check_duplicates(duplicates)
    head = _head(path)
    if not head.strip():
        raise TrecFormatError("empty file: no run lines", path)
    if head.lstrip()[:1] == b"{":
        return _read_run_json(path, duplicates)
    try:
        return _read_run_arrow(path, _delimiter(head), duplicates)
    except _FastPathFailed:
        return _read_run_lines(path, duplicates)


class _FastPathFailed(Exception):
    pass


def _delimiter(head: bytes) -> str:
    return "\t" if b"\t" in head.split(b"\n", 1)[0] else " "


def _read_run_table(
    path: Path, delimiter: str, column_types: dict[str, Any], include: list[str]
) -> Any:
    """The run's ``include`` columns parsed by pyarrow (six columns a line, no quoting), or
    None when Arrow cannot parse them, there are no lines, or a score is missing or not
    finite: the callers then use the line reader, which names the bad line."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

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
                column_types=column_types,
                include_columns=include,
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
    if scores.null_count or not pc.all(pc.is_finite(scores)).as_py():
        return None  # NaN/inf: let the slow pass name the line
    return table


def _block_offsets(qid_arr: Any) -> np.ndarray:
    """Where each run of equal query ids (an Arrow array) starts, plus the row count."""
    import pyarrow.compute as pc

    changes = pc.indices_nonzero(pc.not_equal(qid_arr[1:], qid_arr[:-1])).to_numpy() + 1
    offsets = np.empty(len(changes) + 2, dtype=np.int64)
    offsets[0] = 0
    offsets[1:-1] = changes
    offsets[-1] = len(qid_arr)
    return offsets


def _read_run_arrow(path: Path, delimiter: str, duplicates: Duplicates) -> Run:
    import pyarrow as pa

    string = pa.string()
    table = _read_run_table(
        path,
        delimiter,
        {"qid": string, "q0": string, "docid": string, "rank": string,
         "score": pa.float64(), "tag": string},
        _RUN_COLUMNS,
    )  # fmt: skip
    if table is None:
        raise _FastPathFailed
    qid_arr = table.column("qid").combine_chunks()
    # Runs are grouped by query: build each query's dict from a slice at C speed.
    offsets = _block_offsets(qid_arr).tolist()
    starts, ends = offsets[:-1], offsets[1:]
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of new str/float objects would trigger useless full collections
    try:
        docids = table.column("docid").to_pylist()
        scores = table.column("score").to_pylist()
        run: Run = {}
        for start, end in zip(starts, ends, strict=True):
            block = dict(zip(docids[start:end], scores[start:end], strict=True))
            if len(block) != end - start and duplicates == "error":
                raise _FastPathFailed
            qid = qid_arr[start].as_py()
            existing = run.get(qid)
            if existing is None:
                run[qid] = block
            else:  # the query appears in two separate blocks of the file
                if duplicates == "error" and not existing.keys().isdisjoint(block):
                    raise _FastPathFailed
                existing.update(block)
    finally:
        if gc_was_enabled:
            gc.enable()
    return run


def read_run_columnar(path: PathLike, *, ignore_identical_ids: bool = True) -> object | None:
    """Read a TREC run straight into arrays (a :class:`heta_eval.evaluation.engine.ColumnarRun`)
    with no per-line Python objects, for the compiled metric engine.

    Returns None when the fast path does not apply (BEIR results JSON, any parse problem,
    non-finite scores, a query split over several blocks of the file): the caller then uses
    :func:`read_run`, which reports the file and line of a bad input. Duplicate (query, doc)
    rows are not checked here; the engine counts them (see ``evaluate_columnar_run``).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> write_run({"q1": {"d1": 0.5, "q1": 2.0}, "q2": {"d3": 1.0}}, path)
    >>> run = read_run_columnar(path)
    >>> run.query_ids, run.offsets.tolist(), run.scores.tolist(), run.skip.tolist()
    (['q1', 'q2'], [0, 2, 3], [2.0, 0.5, 1.0], [True, False, False])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from heta_eval.evaluation.engine import ColumnarRun, string_buffers

    path = Path(path)
    head = _head(path)
    if not head.strip() or head.lstrip()[:1] == b"{":
        return None
    table = _read_run_table(
        path,
        _delimiter(head),
        {"qid": pa.large_string(), "docid": pa.large_string(), "score": pa.float64()},
        ["qid", "docid", "score"],
    )
    if table is None:
        return None
    try:
        qid_arr = table.column("qid").combine_chunks()
        doc_arr = table.column("docid").combine_chunks()
        offsets = _block_offsets(qid_arr)
        query_ids = qid_arr.take(pa.array(offsets[:-1])).to_pylist()
        if len(set(query_ids)) != len(query_ids):
            return None  # a query in several blocks: the dict reader merges them
        skip = (
            pc.equal(qid_arr, doc_arr).to_numpy(zero_copy_only=False)
            if ignore_identical_ids
            else None
        )
        data, doc_offsets = string_buffers(doc_arr)
        scores = table.column("score").combine_chunks().to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowCapacityError, UnicodeDecodeError):
        return None
    return ColumnarRun(query_ids, offsets, data, doc_offsets, scores, None, skip)


def _parse_score(text: str, path: Path, number: int) -> float:
    try:
        score = float(text)
    except ValueError:
        raise TrecFormatError(f"score {text!r} is not a number", path, number) from None
    if not math.isfinite(score):
        raise TrecFormatError(f"score {text!r} is not finite", path, number)
    return score


def _read_run_lines(path: Path, duplicates: Duplicates) -> Run:
    run: Run = {}
    seen: dict[tuple[str, str], int] = {}
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            line = _decode_line(raw, path, number)
            fields = line.split()
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
            score = _parse_score(score_text, path, number)
            if duplicates == "error":
                _refuse_repeat(seen, qid, docid, number, path, "(query, doc) pair")
            run.setdefault(qid, {})[docid] = score
    if not run:
        raise TrecFormatError("empty file: no run lines", path)
    return run


def _read_run_json(path: Path, duplicates: Duplicates) -> Run:
    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        out: dict[str, object] = {}
        for key, value in items:
            if key in out and duplicates == "error":
                raise TrecFormatError(f"duplicate key {key!r} in results JSON", path)
            out[key] = value
        return out

    try:
        data = json.loads(path.read_bytes().decode("utf-8"), object_pairs_hook=pairs)
    except UnicodeDecodeError as error:
        raise TrecFormatError(f"not UTF-8 (at byte {error.start})", path) from None
    except json.JSONDecodeError as error:
        raise TrecFormatError(f"invalid JSON: {error.msg}", path, error.lineno) from None
    if not isinstance(data, dict) or not data:
        raise TrecFormatError("expected a non-empty object {qid: {docid: score}}", path)
    run: Run = {}
    for qid, docs in data.items():
        if not isinstance(docs, dict):
            raise TrecFormatError(f"query {qid!r}: expected an object {{docid: score}}", path)
        scores: dict[str, float] = {}
        for docid, score in docs.items():
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise TrecFormatError(
                    f"query {qid!r}, doc {docid!r}: score {score!r} is not a number", path
                )
            if not math.isfinite(score):
                raise TrecFormatError(f"query {qid!r}, doc {docid!r}: score is not finite", path)
            scores[docid] = float(score)
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

    A BEIR tsv's first line is skipped when it is a header (its third field is not an
    integer). BEIR's loader skips it even when it is data; ``heta-eval datasets validate``
    warns about such files.
    """
    path = Path(path)
    _check_duplicates(duplicates)
    qrels: Qrels = {}
    seen: dict[tuple[str, str], int] = {}
    beir_tsv: bool | None = None
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            line = _decode_line(raw, path, number)
            if beir_tsv is None:
                fields = line.rstrip("\r\n").split("\t")
                beir_tsv = len(fields) == 3
                if beir_tsv and not _is_int(fields[2]):
                    continue  # header line
            if beir_tsv:
                fields = line.rstrip("\r\n").split("\t")
                if len(fields) < 3:
                    raise TrecFormatError(
                        _columns_message(line, 3, "query-id corpus-id score"), path, number
                    )
                qid, docid, label_text = fields[0], fields[1], fields[2]
            else:
                fields = line.split()
                if len(fields) != 4:
                    raise TrecFormatError(
                        _columns_message(line, 4, "qid 0 docid rel"), path, number
                    )
                qid, _, docid, label_text = fields
            try:
                label = int(label_text)
            except ValueError:
                raise TrecFormatError(
                    f"relevance label {label_text!r} is not an integer", path, number
                ) from None
            if duplicates == "error":
                _refuse_repeat(seen, qid, docid, number, path, "judgment")
            qrels.setdefault(qid, {})[docid] = label
    if not qrels:
        raise TrecFormatError("empty file: no judgments", path)
    return qrels


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


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


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
