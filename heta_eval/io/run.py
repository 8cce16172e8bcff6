"""Reading runs: one entry for every form a run comes in.

* :func:`read_run` — a TREC run (6 whitespace-separated columns ``qid Q0 docid rank score
  tag``; the rank column is ignored, as pytrec_eval and trec_eval rank by score) or BEIR's
  results JSON ``{qid: {docid: score}}`` (told by a leading ``{``), from a path, ``-``
  (standard input), a pipe or FIFO, a stream or bytes, read once;
* :func:`read_run_columnar` — the same input straight into arrays for the compiled engine
  (the compiled parser, :mod:`heta_eval.io.run_parser`), or None where it does not apply;
* :func:`as_run` — a run already in memory (a mapping, a pandas DataFrame, a ranx ``Run``),
  :mod:`heta_eval.io.interop`; :func:`read_run` hands such objects to it.

Every path reads by :mod:`heta_eval.io.grammar`. ``mode="trec_eval"`` reads as trec_eval
9.0.8 does (more than six fields and blank lines allowed, numbers as ``atof``, a BOM kept);
:func:`read_run_and_tag` also gives trec_eval's ``runid``.

Duplicate (query, doc) pairs: ``duplicates="error"`` (default) raises a
:class:`TrecFormatError` naming both lines, as trec_eval does; ``duplicates="last"``: the
last line's value wins and the pair keeps its first position (BEIR's ``load_runfile``).
"""

from __future__ import annotations

import json
import math
from itertools import chain
from typing import Any, Literal

from heta_eval._runtime import HAVE_NUMBA
from heta_eval.io import json_text
from heta_eval.io.grammar import (
    Mode,
    Reading,
    TrecFormatError,
    check_id,
    fields,
    parse_score,
    shown,
)
from heta_eval.io.ids import unscorable_id
from heta_eval.io.interop import as_run
from heta_eval.io.run_table import read_table, run_from_table
from heta_eval.io.source import InputBytes, is_in_memory, open_input

__all__ = ["as_run", "read_run", "read_run_and_tag", "read_run_columnar"]

Duplicates = Literal["error", "last"]
Run = dict[str, dict[str, float]]


def check_duplicates(value: str) -> Duplicates:
    if value not in ("error", "last"):
        raise ValueError(f"duplicates must be 'error' or 'last', got {value!r}")
    return value  # type: ignore[return-value]


def read_run(
    source: Any,
    *,
    duplicates: Duplicates = "error",
    mode: Mode = "library",
    reading: Reading | None = None,
) -> Run:
    """Read a run (see the module docstring) as ``{qid: {docid: float}}`` in file order.
    ``reading`` (a :class:`~heta_eval.io.grammar.Reading`, with its ``warn`` callback)
    replaces ``mode``.

    >>> read_run(b"q1 Q0 d3 1 2.0 demo\\nq1 Q0 d1 2 0.5 demo\\n")
    {'q1': {'d3': 2.0, 'd1': 0.5}}
    """
    return read_run_and_tag(source, duplicates=duplicates, reading=reading or Reading(mode))[0]


def read_run_and_tag(
    source: Any, *, duplicates: Duplicates = "error", reading: Reading | None = None
) -> tuple[Run, str | None]:
    """The run and the tag of its last line (trec_eval's ``runid``; None for JSON)."""
    check_duplicates(duplicates)
    if is_in_memory(source):  # a mapping, a DataFrame, a ranx Run
        return dict(as_run(source)), None
    data = open_input(source)
    try:
        return _read(data, duplicates, reading or Reading())
    finally:
        data.release()


def _read(data: InputBytes, duplicates: Duplicates, reading: Reading) -> tuple[Run, str | None]:
    if data.is_blank():
        raise TrecFormatError("empty file: no run lines", data.name)
    if data.is_json() and not (reading.trec_eval and _has_six_fields(data)):
        if reading.trec_eval:
            raise TrecFormatError("trec_eval reads TREC runs, not BEIR results JSON", data.name)
        return _read_json(data, duplicates), None
    start = data.start(drop_bom=not reading.trec_eval)
    if reading.trec_eval and start == 0 and data.start() > 0:
        reading.note(
            "bom",
            f"{data.name}: the byte-order mark is kept as part of the first "
            "query id, as trec_eval keeps it (the library drops it)",
        )
    if data.start() == start:  # the fast path never sees a BOM
        run, tag = _read_fast(data, start, duplicates, reading.trec_eval)
        if run is not None:
            return run, tag
    return _read_lines(data, duplicates, reading)


def _has_six_fields(data: InputBytes) -> bool:
    first = next((raw for _, raw in data.lines() if raw.strip()), b"")
    return len(fields(first.decode("utf-8", "replace"))) >= 6


def _read_fast(
    data: InputBytes, start: int, duplicates: Duplicates, with_tag: bool
) -> tuple[Run | None, str | None]:
    columns = ["qid", "docid", "score"] + (["tag"] if with_tag else [])
    table = read_table(data, start, columns)
    if table is None:
        return None, None
    run = run_from_table(table, duplicates == "last")
    tag = table.column("tag")[-1].as_py() if with_tag and run is not None else None
    return run, tag


def _read_lines(
    data: InputBytes, duplicates: Duplicates, reading: Reading
) -> tuple[Run, str | None]:
    """The reference reader: line by line, naming the first bad line."""
    run: Run = {}
    seen: dict[tuple[str, str], int] = {}
    tag = None
    for number, raw in data.lines(drop_bom=not reading.trec_eval):
        line = decode_line(raw, data.name, number)
        parts = fields(line)
        if not parts and reading.trec_eval:
            continue  # trec_eval skips blank lines
        if not parts:
            raise TrecFormatError("empty line", data.name, number)
        if len(parts) != 6 and not (reading.trec_eval and len(parts) > 6):
            raise TrecFormatError(
                f"expected 6 columns 'qid Q0 docid rank score tag', got {len(parts)}: "
                f"{shown(line.rstrip())}",
                data.name,
                number,
            )
        qid, _, docid, _, score_text, tag = parts[:6]
        check_id(qid, "query id", data.name, number, 1)
        check_id(docid, "doc id", data.name, number, 3)
        score = parse_score(score_text, data.name, number, reading)
        if duplicates == "error":
            refuse_repeat(seen, qid, docid, number, data.name, "(query, doc) pair")
        run.setdefault(qid, {})[docid] = score
    if not run:
        raise TrecFormatError("empty file: no run lines", data.name)
    return run, tag


def decode_line(raw: bytes, name: str, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TrecFormatError(
            f"not UTF-8 (byte {raw[error.start]:#04x} at column {error.start + 1})", name, number
        ) from None


def refuse_repeat(
    seen: dict[tuple[str, str], int], qid: str, docid: str, number: int, name: str, what: str
) -> None:
    """Raise when ``(qid, docid)`` was already on an earlier line (``duplicates="error"``)."""
    first = seen.setdefault((qid, docid), number)
    if first != number:
        raise TrecFormatError(
            f"duplicate {what} ({qid!r}, {docid!r}), first on line {first}; pass "
            "duplicates='last' for BEIR's rule (last line wins)",
            name,
            number,
        )


def read_run_columnar(source: Any, *, ignore_identical_ids: bool = True) -> object | None:
    """Read a TREC run straight into arrays (a :class:`heta_eval.io.columnar.ColumnarRun`)
    with no per-line Python objects, for the compiled metric engine.

    Returns None when the fast path does not apply (BEIR results JSON, any line not in the
    one shape every reader parses alike, a query split over several blocks, no numba): the
    caller then uses :func:`read_run` on the same opened input, which names a bad line.
    Duplicate (query, doc) rows are not checked here; the engine counts them.

    >>> run = read_run_columnar(b"q1 Q0 d1 1 0.5 t\\nq1 Q0 q1 2 0.25 t\\nq2 Q0 d3 1 1 t\\n")
    >>> run.query_ids, run.offsets.tolist(), run.scores.tolist(), run.skip.tolist()
    (['q1', 'q2'], [0, 2, 3], [0.5, 0.25, 1.0], [False, True, False])
    """
    data = open_input(source)
    if not HAVE_NUMBA or not len(data) or data.is_json():
        return None
    from heta_eval.io.run_parser import parse_run_bytes

    return parse_run_bytes(data.data, start=data.start(), ignore_identical_ids=ignore_identical_ids)


def _read_json(data: InputBytes, duplicates: Duplicates) -> Run:
    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        out: dict[str, object] = {}
        for key, value in items:
            if key in out and duplicates == "error":
                raise TrecFormatError(f"duplicate key {key!r} in results JSON", data.name)
            out[key] = value
        return out

    raw = bytes(data.data[data.start() :])
    try:
        parsed = json_text.loads(raw.decode("utf-8"), object_pairs_hook=pairs)
    except UnicodeDecodeError as error:
        raise TrecFormatError(f"not UTF-8 (at byte {error.start})", data.name) from None
    except json.JSONDecodeError as error:
        raise TrecFormatError(f"invalid JSON: {error.msg}", data.name, error.lineno) from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise TrecFormatError(f"invalid JSON: {error}", data.name) from None
    if not isinstance(parsed, dict) or not parsed:
        raise TrecFormatError("expected a non-empty object {qid: {docid: score}}", data.name)
    run = {
        _json_id(qid, "query id", data.name): _json_scores(qid, docs, data.name)
        for qid, docs in parsed.items()
    }
    # A surrogate gets in only through a JSON escape: look only when the text has one.
    return _refuse_surrogates(run, data.name) if b"\\ud" in raw or b"\\uD" in raw else run


def _json_id(value: str, what: str, name: str) -> str:
    if not value or "\x00" in value:
        raise TrecFormatError(f"{what} {value!r} is empty or contains a NUL character", name)
    return value


def _refuse_surrogates(run: Run, name: str) -> Run:
    """A lone surrogate (JSON's ``"\\ud800"``) in an id is refused: it is not text, and C
    code ends the interpreter on one. One pass over the joined ids; per id only on a find."""
    joined = "".join(run) + "".join(chain.from_iterable(run.values()))
    if not unscorable_id(joined):
        return run
    for qid, docs in run.items():
        for what, value in [("query id", qid), *((f"query {qid!r}: doc id", d) for d in docs)]:
            if unscorable_id(value):
                raise TrecFormatError(f"{what} {value!r} contains a lone surrogate", name)
    return run


def _json_scores(qid: str, docs: object, name: str) -> dict[str, float]:
    if not isinstance(docs, dict):
        raise TrecFormatError(f"query {qid!r}: expected an object {{docid: score}}", name)
    scores: dict[str, float] = {}
    for docid, score in docs.items():
        _json_id(docid, f"query {qid!r}: doc id", name)
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise TrecFormatError(
                f"query {qid!r}, doc {docid!r}: score {score!r} is not a number", name
            )
        try:
            value = float(score)
        except OverflowError:
            value = math.inf
        if not math.isfinite(value):
            raise TrecFormatError(
                f"query {qid!r}, doc {docid!r}: score is not finite (beyond float64)", name
            )
        scores[docid] = value
    return scores
