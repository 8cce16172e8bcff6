"""The one grammar of run and qrels text: fields, numbers, ids, and the lines a reader skips.

Every reader (the line reader, the pyarrow and compiled fast paths, BEIR results JSON,
DataFrames) reads the same bytes the same way, as trec_eval 9.0.8 reads them in the C locale:

* **Fields** are separated by ASCII whitespace only: space, ``\\t``, ``\\n``, ``\\r``,
  ``\\v``, ``\\f`` (C's ``isspace``). Every other byte belongs to a field, so an id may hold
  U+00A0, U+0085, U+2028 or the control characters ``\\x1c``-``\\x1f``.
* **Numbers** are ASCII. In the library (``mode="library"``) a score must be a decimal
  number (``[+-]?(digits[.digits]|.digits)([eE][+-]?digits)?``) that fits a float64, and a
  relevance label an integer from int64's lowest up to :data:`MAX_LABEL` (1,000,000);
  anything else (``abc``, ``1.0`` as a label,
  Arabic-Indic or full-width digits, ``0x10``, ``nan``) is refused with the file, line and
  field named. ``mode="trec_eval"`` reads them as trec_eval does, with C's ``atof`` / ``atol``:
  the longest ASCII number at the start of the field, 0 when there is none (``abc`` and
  ``١`` read 0, ``1.0`` as a label reads 1). A score that is not finite is refused in both
  modes (trec_eval's ranking of NaN is not defined).
* **Ids** in run and qrels text are non-empty UTF-8 without NUL (any other byte that is not
  ASCII whitespace, as trec_eval reads them). Ids the project takes in from elsewhere and
  writes (corpus and case ids, a service's document and chunk ids, :func:`write_run`'s ids)
  follow the stricter :func:`id_problem` rule, so that no id can split a field or a line of
  a file it is written to; every id that reaches the scorer is free of NUL and lone
  surrogates (:func:`unscorable_id`), which C code cannot hold.
* **A leading UTF-8 byte-order mark** is dropped by the library; trec_eval keeps it as part
  of the first query id, and so does ``mode="trec_eval"`` (with a note, see :class:`Reading`).
* **Qrels comments and header**: the library skips a line whose first field is ``#`` and a
  first judgment line that names its columns (``query-id corpus-id score``,
  ``qid iter docno rel``); trec_eval 9.0.8 has neither, and ``mode="trec_eval"`` reads such
  lines as judgments (with a note).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = [
    "BOM",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_LABEL",
    "NUMBER",
    "Mode",
    "Reading",
    "TrecFormatError",
    "atof",
    "atol",
    "check_id",
    "fields",
    "is_comment",
    "is_header",
    "label_problem",
    "parse_label",
    "parse_score",
    "shown",
]

PathLike = str | os.PathLike[str]
Mode = Literal["library", "trec_eval"]

#: C's isspace in the C locale: the only field separators.
WHITESPACE = " \t\n\r\x0b\x0c"
BOM = b"\xef\xbb\xbf"
_SPLIT = re.compile(r"[ \t\n\r\x0b\x0c]+")
#: A decimal number, ASCII digits only (``\d`` would also match Arabic-Indic or full-width
#: digits, which C's atof/atol read as 0): scores, levels, every numeric parameter.
NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_SCORE = re.compile(NUMBER)
_LABEL = re.compile(r"[+-]?[0-9]+")
# glibc strtod's prefixes (C locale): infinity, nan(...), hexadecimal and decimal numbers.
_ATOF = re.compile(
    r"[+-]?(?:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)",
    re.IGNORECASE,
)
#: C's ``long`` on x86-64: where atol saturates.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: The largest relevance label every backend scores exactly. pytrec_eval (trec_eval 9.0.8)
#: reads a label into a C ``int`` (2**32 reads as 0: every query scores 0; 2**62 crashes
#: the process) and keeps one counter per label value up to a query's largest (2**31 - 1
#: allocates 16 GiB); the compiled engine takes int64. Labels above are refused where
#: they enter: :func:`parse_label`, :func:`heta_eval.io.validate.validate_qrels`, cases'
#: ``relevance``, the drop-in's qrels.
MAX_LABEL = 1_000_000
_LEADING_INTEGER = re.compile(r"[ \t\n\r\x0b\x0c]*([+-]?[0-9]+)")


class TrecFormatError(ValueError):
    """A malformed run or qrels input; ``path`` and ``line`` (1-based, or None) say where,
    ``field`` (1-based, or None) which field of the line."""

    def __init__(
        self,
        message: str,
        path: PathLike,
        line: int | None = None,
        code: str = "malformed",
        field: int | None = None,
    ):
        where = f"{path}:{line}" if line is not None else f"{path}"
        text = f"{message} (field {field})" if field is not None else message
        super().__init__(f"{where}: {text}")
        self.reason = text
        self.code = code
        self.path = Path(path)
        self.line = line
        self.field = field


@dataclass
class Reading:
    """How a reader reads: ``mode`` (see the module docstring) and ``warn``, called with one
    line each time ``mode="trec_eval"`` keeps something the library would drop or refuse (a
    BOM, a header or comment line, a number read as trec_eval's ``atof``/``atol`` read it).
    Each kind of note is given once per ``Reading`` (use one per input); every note is also
    kept in ``notes``."""

    mode: Mode = "library"
    warn: Callable[[str], None] | None = None
    notes: list[str] = field(default_factory=list)
    _kinds: set[str] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in ("library", "trec_eval"):
            raise ValueError(f"mode must be 'library' or 'trec_eval', got {self.mode!r}")

    @property
    def trec_eval(self) -> bool:
        return self.mode == "trec_eval"

    def note(self, kind: str, message: str) -> None:
        if kind in self._kinds:
            return
        self._kinds.add(kind)
        self.notes.append(message)
        if self.warn is not None:
            self.warn(message)


def fields(line: str) -> list[str]:
    """The fields of a line, split on ASCII whitespace only.

    >>> fields(" q1\\tQ0 d\\u00a0x\\x1c 1 2.5 t\\r\\n")
    ['q1', 'Q0', 'd\\xa0x\\x1c', '1', '2.5', 't']
    """
    stripped = line.strip(WHITESPACE)
    return _SPLIT.split(stripped) if stripped else []


def is_comment(line_fields: list[str]) -> bool:
    """A qrels comment line (library only): its first field is ``#``. ``#1 0 d 1`` is a
    judgment of query ``#1``."""
    return bool(line_fields) and line_fields[0] == "#"


_HEADER_WORDS = {
    "query-id",
    "query_id",
    "qid",
    "query",
    "topic",
    "corpus-id",
    "docid",
    "docno",
    "score",
    "rel",
    "relevance",
    "label",
    "judgment",
    "judgement",
    "grade",
}


def is_header(line_fields: list[str], beir_tsv: bool) -> bool:
    """A first qrels line naming its columns (``query-id corpus-id score``, ``qid iter docno
    rel``): its label field is not an integer and it uses a column name; ``q1 0 d1 x`` is
    data."""
    if len(line_fields) < 3:
        return False
    label = line_fields[2 if beir_tsv else -1]
    named = {f.lower() for f in line_fields} & _HEADER_WORDS
    return _LABEL.fullmatch(label) is None and bool(named)


def shown(text: str, limit: int = 200) -> str:
    """``repr`` of a line for an error message, cut after ``limit`` characters (a 100,000
    character line stays a readable one-line error).

    >>> shown("q1 d1"), shown("[" * 1000, limit=5)
    ("'q1 d1'", "'[[[[['... (1,000 characters)")
    """
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def check_id(text: str, what: str, path: PathLike, line: int | None, column: int) -> str:
    if not text:
        raise TrecFormatError(f"empty {what}", path, line, "malformed_qrels_line", column)
    if "\x00" in text:
        raise TrecFormatError(
            f"{what} {text!r} contains a NUL character", path, line, "malformed_qrels_line", column
        )
    return text


def atof(text: str) -> float:
    """C's ``atof`` (glibc, C locale): the longest number at the start of ``text``, else 0.

    >>> atof("2.5abc"), atof("abc"), atof("\\u0661"), atof("1e"), atof("0x1p3"), atof("-inf")
    (2.5, 0.0, 0.0, 1.0, 8.0, -inf)
    """
    match = _ATOF.match(text.lstrip(WHITESPACE))  # strtod skips leading whitespace
    if match is None:
        return 0.0
    number = match.group()
    body = number.lstrip("+-").lower()
    negative = number.startswith("-")
    if body.startswith(("inf", "nan")):
        value = math.inf if body.startswith("inf") else math.nan
    elif body.startswith("0x"):
        try:
            value = float.fromhex(body)
        except OverflowError:
            value = math.inf  # strtod: HUGE_VAL
    else:
        value = float(body)
    return -value if negative else value


def atol(text: str) -> int:
    """C's ``atol`` (``strtol``, base 10, 64-bit ``long``): the integer at the start of
    ``text``, else 0; beyond the range, the nearest end of it.

    >>> atol("1.0"), atol("abc"), atol("\\uff11"), atol("-7x"), atol("9" * 30) == 2**63 - 1
    (1, 0, 0, -7, True)
    """
    match = _LEADING_INTEGER.match(text)  # strtol skips leading whitespace
    if match is None:
        return 0
    return min(max(int(match.group(1)), INT64_MIN), INT64_MAX)


def parse_score(
    text: str, path: PathLike, line: int | None, reading: Reading | None = None, column: int = 5
) -> float:
    """A run score: ASCII decimal, finite (library), or trec_eval's ``atof`` (finite)."""
    if reading is not None and reading.trec_eval:
        value = atof(text)
        if _SCORE.fullmatch(text) is None and math.isfinite(value):
            reading.note(
                "score",
                f"{path}:{line}: score {text!r} read as {value!r}, as trec_eval's "
                "atof reads it (the library refuses it)",
            )
        if not math.isfinite(value):
            raise TrecFormatError(f"score {text!r} is not finite", path, line, field=column)
        return value
    if _SCORE.fullmatch(text) is None:
        if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise TrecFormatError(f"score {text!r} is not finite", path, line, field=column)
        raise TrecFormatError(
            f"score {text!r} is not a number (ASCII decimal)", path, line, field=column
        )
    score = float(text)
    if not math.isfinite(score):
        raise TrecFormatError(
            f"score {text!r} is not finite (beyond float64)", path, line, field=column
        )
    return score


def parse_label(
    text: str, path: PathLike, line: int | None, reading: Reading | None = None, column: int = 4
) -> int:
    """A relevance label: an ASCII integer from int64's lowest up to :data:`MAX_LABEL`
    (library), or ``atol``'s value up to :data:`MAX_LABEL` (trec_eval mode)."""
    if reading is not None and reading.trec_eval:
        value = atol(text)
        if _LABEL.fullmatch(text) is None or value != int(text):
            reading.note(
                "label",
                f"{path}:{line}: relevance label {text!r} read as {value}, as "
                "trec_eval's atol reads it (the library refuses it)",
            )
        if value > MAX_LABEL:  # trec_eval would ask for a counter per label value up to it
            raise TrecFormatError(
                label_problem(value) or "", path, line, "non_integer_label", column
            )
        return value
    if _LABEL.fullmatch(text) is None:
        raise TrecFormatError(
            f"relevance label {text!r} is not an integer", path, line, "non_integer_label", column
        )
    label = int(text)
    problem = label_problem(label)
    if problem is not None:
        raise TrecFormatError(problem, path, line, "non_integer_label", column)
    return label


def label_problem(label: int) -> str | None:
    """Why a relevance label cannot be scored exactly by every backend, or None.

    >>> label_problem(1_000_000), label_problem(2**32)[:45]
    (None, 'relevance label 4294967296 is above 1,000,000')
    """
    if label > MAX_LABEL:
        return (
            f"relevance label {label} is above {MAX_LABEL:,}, the largest every backend scores "
            "exactly (trec_eval keeps a counter per label value, pytrec_eval reads a C int)"
        )
    if label < INT64_MIN:
        return f"relevance label {label} is outside the int64 range"
    return None
