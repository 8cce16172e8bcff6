"""trec_eval's preference judgments: ``-R prefs`` and ``-R qrels_prefs`` files, read as
trec_eval 9.0.8 reads them.

``-R prefs`` lines are ``qid jg jsg docno rel_level``: within a judgment sub-group (``jsg``)
of a judgment group (``jg``), a document with a higher ``rel_level`` is preferred to one with
a lower level (only the order of the levels counts, except that 0 means nonrelevant). A
``-R qrels_prefs`` file is a qrels file, ``qid jg docno rel_level``, every line of a group in
one sub-group. Fields are split on ASCII whitespace; ``rel_level`` is read by C's ``atof``
and kept as a C ``float``. A line with another number of fields is an error, as in
trec_eval; so is a level of ``nan`` (trec_eval's sort is undefined with it) and a NUL byte.

>>> prefs = read_prefs(b"q1 u1 s1 d1 2\\nq1 u1 s1 d2 1\\n", subgroups=True)
>>> prefs["q1"][0]
PrefLine(jg='u1', jsg='s1', docno='d1', level=2.0)
>>> read_prefs(b"q1 u1 d1 0.5\\n", subgroups=False)["q1"][0].level
0.5
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from heta_eval.io.grammar import TrecFormatError, atof, check_id, fields
from heta_eval.io.run import decode_line
from heta_eval.io.source import open_input

__all__ = ["PrefLine", "Prefs", "read_prefs"]


class PrefLine(NamedTuple):
    """One judgment: the group, sub-group, document and its level (a C float's value)."""

    jg: str
    jsg: str
    docno: str
    level: float


# qid -> its judgment lines, in file order.
Prefs = dict[str, list[PrefLine]]

_PREFS_FIELDS = ("query id", "judgment group", "judgment sub-group", "doc id")
_QRELS_PREFS_FIELDS = ("query id", "judgment group", "doc id")


def read_prefs(source: Any, *, subgroups: bool) -> Prefs:
    """A ``-R prefs`` file (``subgroups``) or a ``-R qrels_prefs`` file (every line in
    sub-group ``0``); a TrecFormatError names the file, line and field."""
    data = open_input(source)
    names = _PREFS_FIELDS if subgroups else _QRELS_PREFS_FIELDS
    found: Prefs = {}
    for number, raw in data.lines(drop_bom=False):  # trec_eval keeps a BOM in the first qid
        if b"\x00" in raw:
            raise TrecFormatError(
                "contains a NUL byte (trec_eval 9.0.8 reads past it into the next lines)",
                data.name,
                number,
            )
        parts = fields(decode_line(raw, data.name, number))
        if len(parts) != len(names) + 1:
            what = "an empty line" if not parts else f"{len(parts)} fields"
            layout = "qid jg jsg docno rel" if subgroups else "qid jg docno rel"
            raise TrecFormatError(
                f"expected {len(names) + 1} fields '{layout}', got {what} (trec_eval 9.0.8: "
                "Malformed line)",
                data.name,
                number,
            )
        for column, (value, what) in enumerate(zip(parts, names, strict=False), start=1):
            check_id(value, what, data.name, number, column)
        level = _c_float(atof(parts[-1]))
        if math.isnan(level):
            raise TrecFormatError(
                f"rel_level {parts[-1]!r} is not a number (trec_eval 9.0.8's sort is undefined "
                "with it)",
                data.name,
                number,
                field=len(parts),
            )
        jsg = parts[2] if subgroups else "0"
        found.setdefault(parts[0], []).append(PrefLine(parts[1], jsg, parts[-2], level))
    if not found:
        raise TrecFormatError("empty file: no judgments (trec_eval cannot read it)", data.name)
    return found


def _c_float(value: float) -> float:
    """The value as a C ``float`` holds it (trec_eval keeps levels as floats)."""
    with np.errstate(over="ignore"):
        return float(np.float32(value))
