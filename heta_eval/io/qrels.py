"""Reading qrels: TREC's ``qid iter docid rel`` or BEIR's tsv ``query-id corpus-id score``,
from a path, ``-`` (standard input), a pipe or FIFO, a stream or bytes (read once), or a
qrels already in memory (a mapping, a DataFrame, a ranx ``Qrels``: :func:`as_qrels`).

Layout (``"auto"``): a BEIR tsv when the first line is three tab-separated fields and
nothing else (``query-id\\tcorpus-id\\tscore``, ``q1\\td1\\t1``): its fields are split on
tabs, ASCII whitespace around a field dropped, CSV quotes removed as BEIR's ``csv.reader``
does, extra columns ignored. Anything else is TREC: four fields split on ASCII whitespace
(so ``q1 0\\td1\\t1``, mixing tabs and spaces, is a TREC line).

The library skips comment lines (first field ``#``) and a first judgment line naming its
columns (see :mod:`heta_eval.io.grammar`); ``mode="trec_eval"`` reads them as judgments,
as trec_eval 9.0.8 does (a three-column BEIR tsv, which trec_eval refuses, is still read,
its header dropped).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from heta_eval.io.grammar import (
    WHITESPACE,
    Mode,
    Reading,
    TrecFormatError,
    check_id,
    fields,
    is_comment,
    is_header,
    parse_label,
    shown,
)
from heta_eval.io.interop import as_qrels
from heta_eval.io.run import Duplicates, check_duplicates, decode_line, refuse_repeat
from heta_eval.io.source import InputBytes, is_in_memory, open_input

__all__ = ["as_qrels", "iter_qrels", "qrels_layout", "read_qrels"]

Qrels = dict[str, dict[str, int]]
Layout = Literal["auto", "beir", "trec"]


def read_qrels(
    source: Any,
    *,
    duplicates: Duplicates = "error",
    mode: Mode = "library",
    reading: Reading | None = None,
) -> Qrels:
    """Read qrels as ``{qid: {docid: int}}`` (see the module docstring).

    >>> read_qrels(b"# judged by hand\\nq1 0 d1 2\\nq1 0 d2 -2\\n")
    {'q1': {'d1': 2, 'd2': -2}}
    >>> read_qrels(b"# judged by hand\\nq1 0 d1 2\\n", mode="trec_eval")
    {'#': {'by': 0}, 'q1': {'d1': 2}}
    """
    check_duplicates(duplicates)
    if is_in_memory(source):
        return dict(as_qrels(source))
    data = open_input(source)
    qrels: Qrels = {}
    seen: dict[tuple[str, str], int] = {}
    for number, qid, docid, label in iter_qrels(data, reading=reading or Reading(mode)):
        if duplicates == "error":
            refuse_repeat(seen, qid, docid, number, data.name, "judgment")
        qrels.setdefault(qid, {})[docid] = label
    if not qrels:
        raise TrecFormatError("empty file: no judgments", data.name)
    return qrels


def qrels_layout(first_line: str) -> Literal["beir", "trec"]:
    """The layout a first line announces: BEIR tsv when it is exactly three tab-separated
    fields with no other whitespace, else TREC."""
    text = first_line.strip(WHITESPACE)
    tab_cells = text.split("\t")
    return "beir" if len(tab_cells) == 3 == len(fields(text)) else "trec"


def iter_qrels(
    source: Any,
    *,
    layout: Layout = "auto",
    skip_first_line: bool = False,
    errors: Literal["raise", "yield"] = "raise",
    reading: Reading | None = None,
) -> Iterator[Any]:
    """``(line number, qid, docid, label)`` of every judgment; a bad line raises a
    :class:`TrecFormatError` naming it (``errors="yield"``: yields the error, with a
    ``code``, and goes on). ``skip_first_line`` skips the first physical line whatever it
    holds (BEIR's loader rule)."""
    reading = reading or Reading()
    data = open_input(source)
    _note_bom(data, reading)
    beir_tsv: bool | None = None if layout == "auto" else layout == "beir"
    first_data_line = not skip_first_line
    for number, raw in data.lines(drop_bom=not reading.trec_eval):
        if skip_first_line and number == 1:
            continue
        line = decode_line(raw, data.name, number)
        if is_comment(fields(line)):
            if not reading.trec_eval:
                continue
            reading.note(
                "comment",
                f"{data.name}:{number}: a '#' line is read as a judgment, as trec_eval 9.0.8 "
                "reads it (the library skips it as a comment)",
            )
        if beir_tsv is None:
            beir_tsv = qrels_layout(line) == "beir"
        if first_data_line:
            first_data_line = False
            if _skip_header(line, beir_tsv, reading, data.name, number):
                continue
        try:
            yield _record(line, beir_tsv, data.name, number, reading)
        except TrecFormatError as error:
            if errors == "raise":
                raise
            yield error


def _note_bom(data: InputBytes, reading: Reading) -> None:
    if reading.trec_eval and data.start() > 0:
        reading.note(
            "bom",
            f"{data.name}: the byte-order mark is kept as part of the first "
            "query id, as trec_eval keeps it (the library drops it)",
        )


def _skip_header(line: str, beir_tsv: bool, reading: Reading, name: str, number: int) -> bool:
    """Whether the first judgment line is a header the reader skips (library: always;
    trec_eval: only a BEIR tsv's, a layout trec_eval itself cannot read)."""
    if not is_header(_fields(line, beir_tsv, name, number), beir_tsv):
        return False
    if reading.trec_eval and not beir_tsv:
        reading.note(
            "header",
            f"{name}:{number}: the header line is read as a judgment, as "
            "trec_eval 9.0.8 reads it (the library skips it)",
        )
        return False
    return True


def _record(
    line: str, beir_tsv: bool, name: str, number: int, reading: Reading
) -> tuple[int, str, str, int]:
    parts = _fields(line, beir_tsv, name, number)
    width = 3 if beir_tsv else 4
    if len(parts) < width or (not beir_tsv and len(parts) > 4):
        layout = "query-id corpus-id score" if beir_tsv else "qid 0 docid rel"
        code = "empty_qrels_line" if not parts else "malformed_qrels_line"
        message = (
            "empty line"
            if not parts
            else f"expected {width} columns '{layout}', got {len(parts)}: {shown(line.rstrip())}"
        )
        raise TrecFormatError(message, name, number, code)
    qid, docid, label_text = parts[0], parts[width - 2], parts[width - 1]
    check_id(qid, "query id", name, number, 1)
    check_id(docid, "doc id", name, number, width - 1)
    return number, qid, docid, parse_label(label_text, name, number, reading, width)


def _fields(line: str, beir_tsv: bool, name: str = "qrels", number: int = 0) -> list[str]:
    if not beir_tsv:
        return fields(line)
    text = line.rstrip("\r\n")
    if not text.strip(WHITESPACE):
        return []
    cells = _quoted_cells(text, name, number) if '"' in text else text.split("\t")
    return [cell.strip(WHITESPACE) for cell in cells][:3]


def _quoted_cells(text: str, name: str, number: int) -> list[str]:
    """A tsv line with quotes, read as BEIR's ``csv.reader`` reads it (``"d1"`` is ``d1``,
    ``d"1`` is ``d"1``). Refused in one line: a quote the line leaves open (BEIR's reader
    would read the following lines into that field, an id made of several lines and their
    judgments lost) and a field over csv's size limit (BEIR's reader stops there too)."""
    import csv

    def refuse(why: str) -> TrecFormatError:
        hint = "BEIR's csv reader misreads it; write the id without the quote, or close it"
        return TrecFormatError(f"{why}: {hint}", name, number, "malformed_qrels_line")

    try:
        cells = next(csv.reader([text], delimiter="\t", quoting=csv.QUOTE_MINIMAL))
    except csv.Error as error:
        raise refuse(f"a quoted field: {error}") from None
    try:
        next(csv.reader([text], delimiter="\t", quoting=csv.QUOTE_MINIMAL, strict=True))
    except csv.Error as error:
        if "unexpected end of data" in str(error):
            raise refuse("a field opens a '\"' quote the line does not close") from None
    return cells
