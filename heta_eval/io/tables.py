"""Tables, written in one place: every table a command prints or writes (leaderboard,
compare, sweep's ``leaderboard.md``, a results folder's ``table.md``, check, evaluate) goes
through :class:`Table`, as markdown, LaTeX, CSV or HTML, and each format's escaping lives
here and nowhere else.

Whatever a cell holds (a system named after a folder, a query text, a dataset path), the
table keeps its shape and a reader gets the text back:

* every format: control characters (C0 but tab and line breaks, DEL, C1), the bidi controls
  that reorder what follows them and lone surrogates (a file name that is not UTF-8) are
  written as ``⟨U+XXXX⟩``, as the report shows them (:mod:`heta_eval.report.text`);
* markdown: ``|`` as ``\\|`` (a pipe would split the cell, so scores would sit under the
  wrong column), each line break as ``<br>`` (one would end the row);
* LaTeX: ``\\ & % $ # _ { } ~ ^ < > |`` as the commands that print them, a line break as a
  space (a blank line ends a tabular's row with an error), a row that starts with ``[`` or
  ``*`` behind ``{}`` (the last row's ``\\\\`` would read it as its own argument);
* CSV: a text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
  gets a leading ``'``, so no spreadsheet runs it as a formula (the rule of the report's
  CSV download); numbers are written as numbers, in full;
* HTML: ``& < > " '`` as entities, a line break as ``<br>``.

>>> table = Table(["system", "ndcg@10"], [["bm25|v2", Cell("0.6650", bold=True)],
...                                       ["=cmd()", "0.6400"]], align="lr")
>>> print(table.markdown())
| system | ndcg@10 |
|---|---:|
| bm25\\|v2 | **0.6650** |
| =cmd() | 0.6400 |
<BLANKLINE>
>>> print(table.csv(), end="")
system,ndcg@10
bm25|v2,0.6650
'=cmd(),0.6400
>>> latex_text("50% of a_b & ~x")
'50\\\\% of a\\\\_b \\\\& \\\\textasciitilde{}x'
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "Cell",
    "Table",
    "csv_text",
    "latex_text",
    "markdown_cell",
    "markdown_text",
    "visible",
]

# Characters that hide or reorder text, or cannot be encoded: the report's body rule
# (heta_eval/report/text.py) for everything that is not a line break.
_HIDDEN = re.compile(
    "[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f\u061c\u200e\u200f"
    "\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
# What str.splitlines splits on: each ends a line in some reader.
_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# Line breaks a CSV reader does not quote for: written as codes (CR and LF are quoted).
_ODD_BREAK = re.compile("[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# A cell a spreadsheet would evaluate (report.js's csvCell has the same rule).
_FORMULA = re.compile("[=+\\-@\t\r]")

#: LaTeX's special characters, and the project's own symbols, as LaTeX source.
TEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": "$<$",
    ">": "$>$",
    "|": r"\textbar{}",
    "Δ": r"$\Delta$",
    "−": "-",
    "–": "--",
}
_TEX = re.compile("|".join(map(re.escape, TEX_ESCAPES)))


def _code(match: re.Match[str]) -> str:
    return f"⟨U+{ord(match.group()):04X}⟩"


def visible(text: str) -> str:
    """``text`` with every character that hides or reorders text, or that no file can
    hold (a lone surrogate), written as ``⟨U+XXXX⟩``; line breaks and tabs stay.

    >>> visible("a\\u202eb\\x00c\\nd")
    'a⟨U+202E⟩b⟨U+0000⟩c\\nd'
    """
    return _HIDDEN.sub(_code, text) if _HIDDEN.search(text) else text


def markdown_cell(text: str) -> str:
    """``text`` as one markdown table cell: pipes escaped, line breaks as ``<br>``.

    >>> markdown_cell("a|b\\nc")
    'a\\\\|b<br>c'
    """
    return _LINE_BREAK.sub("<br>", visible(text)).replace("|", "\\|")


def markdown_text(text: str) -> str:
    """``text`` inside a markdown paragraph or list item: on one line, so it can start
    no table row, heading or item of its own.

    >>> markdown_text("baseline\\n| x | y |")
    'baseline | x | y |'
    """
    return _LINE_BREAK.sub(" ", visible(text))


def latex_text(text: str) -> str:
    """``text`` as LaTeX source that prints it (in a tabular cell or a caption)."""
    text = _LINE_BREAK.sub(" ", visible(text))
    return _TEX.sub(lambda match: TEX_ESCAPES[match.group()], text)


def csv_text(text: str) -> str:
    """A CSV text cell a spreadsheet shows as text, never runs: a leading ``'`` on one
    that starts like a formula.

    >>> csv_text("=HYPERLINK(1)"), csv_text("-0.5"), csv_text("bm25")
    ("'=HYPERLINK(1)", "'-0.5", 'bm25')
    """
    text = visible(text)
    if _ODD_BREAK.search(text):
        text = _ODD_BREAK.sub(_code, text)
    return "'" + text if _FORMULA.match(text) else text


@dataclass(frozen=True)
class Cell:
    """A cell with more than its text: ``bold`` (markdown, LaTeX, HTML; CSV writes the text
    plain), or ``latex``, the project's own LaTeX for it (``$p_t$``), written as it is
    (never text from outside)."""

    text: str
    bold: bool = False
    latex: str | None = None


CellValue = str | int | float | Cell | None


def _text(value: CellValue) -> str:
    if value is None:
        return ""
    if isinstance(value, Cell):
        return value.text
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    return str(value)


def _bold(value: CellValue) -> bool:
    return isinstance(value, Cell) and value.bold


@dataclass(frozen=True)
class Table:
    """A header and rows of cells: text (escaped for each format), numbers (CSV writes
    them as numbers, the others as ``repr``; format them first where a table shows
    fewer digits), ``None`` (empty) or :class:`Cell`. ``align``: one letter per column,
    ``l``, ``r`` or ``c`` (missing ones: ``l``)."""

    header: Sequence[CellValue]
    rows: Sequence[Sequence[CellValue]]
    align: str = ""

    def __post_init__(self) -> None:
        width = len(self.header)
        for number, row in enumerate(self.rows, 1):
            if len(row) != width:
                raise ValueError(f"row {number} has {len(row)} cells, the header {width}")

    def _align(self, column: int) -> str:
        return self.align[column] if column < len(self.align) else "l"

    def markdown(self) -> str:
        """A GitHub-flavoured markdown table."""
        rule = {"l": "---", "r": "---:", "c": ":---:"}

        def line(cells: Sequence[CellValue]) -> str:
            shown = [markdown_cell(_text(c)) for c in cells]
            shown = [f"**{s}**" if _bold(c) and s else s for c, s in zip(cells, shown, strict=True)]
            return "| " + " | ".join(shown) + " |"

        lines = [
            line(self.header),
            "|" + "".join(rule[self._align(i)] + "|" for i in range(len(self.header))),
        ]
        lines += [line(row) for row in self.rows]
        return "\n".join(lines) + "\n"

    def latex(self, *, spec: str | None = None, caption: str | None = None) -> str:
        """A booktabs ``table`` (needs ``\\usepackage{booktabs}``); ``spec``: the column
        specification (default: from ``align``); ``caption``: plain text, escaped."""

        def cell(value: CellValue) -> str:
            if isinstance(value, Cell) and value.latex is not None:
                return value.latex
            text = latex_text(_text(value))
            return f"\\textbf{{{text}}}" if _bold(value) and text else text

        def line(values: Sequence[CellValue]) -> str:
            text = " & ".join(map(cell, values))
            # A row's first cell follows the last row's \\, which would read "[" or "*".
            return ("{}" + text if text[:1] in ("[", "*") else text) + r" \\"

        spec = spec or "".join(self._align(i) for i in range(len(self.header)))
        lines = [
            r"\begin{table}[t]",
            r"\centering",
            f"\\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            line(self.header),
            r"\midrule",
        ]
        lines += [line(row) for row in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        if caption is not None:
            lines.append(f"\\caption{{{latex_text(caption)}}}")
        lines.append(r"\end{table}")
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        """CSV (RFC 4180 quoting, ``\\n`` line ends): text cells neutralised
        (:func:`csv_text`), numbers in full, ``None`` empty."""

        def cell(value: CellValue) -> str:
            if isinstance(value, int | float) and not isinstance(value, bool):
                return _text(value) if math.isfinite(value) else ""
            text = csv_text(_text(value))
            # Quoted when it holds a separator, a quote or a line break: a CR too, which
            # Python's csv.writer leaves bare when lines end in LF.
            if any(char in text for char in ',"\r\n'):
                return '"' + text.replace('"', '""') + '"'
            return text

        def line(values: Sequence[CellValue]) -> str:
            text = ",".join(map(cell, values))
            return text or '""'  # one empty cell: an empty line would be no row at all

        return "".join(line(values) + "\n" for values in [self.header, *self.rows])

    def html(self, *, caption: str | None = None) -> str:
        """An HTML ``<table>`` (a fragment to place in a page)."""
        style = {"l": "", "r": ' style="text-align:right"', "c": ' style="text-align:center"'}

        def cell(tag: str, column: int, value: CellValue) -> str:
            text = _LINE_BREAK.sub("<br>", html.escape(visible(_text(value))))
            if _bold(value) and text:
                text = f"<strong>{text}</strong>"
            return f"<{tag}{style[self._align(column)]}>{text}</{tag}>"

        def row(tag: str, values: Sequence[CellValue]) -> str:
            return "<tr>" + "".join(cell(tag, i, v) for i, v in enumerate(values)) + "</tr>"

        lines = ["<table>"]
        if caption is not None:
            lines.append(f"<caption>{html.escape(visible(caption))}</caption>")
        lines += ["<thead>", row("th", self.header), "</thead>", "<tbody>"]
        lines += [row("td", values) for values in self.rows]
        lines += ["</tbody>", "</table>"]
        return "\n".join(lines) + "\n"

    def render(self, format: str, **options: str | None) -> str:
        """The table in ``format``: ``markdown``, ``latex``, ``csv`` or ``html``."""
        renderers = {
            "markdown": self.markdown,
            "latex": self.latex,
            "csv": self.csv,
            "html": self.html,
        }
        if format not in renderers:
            raise ValueError(f"unknown table format {format!r}; choose from {', '.join(renderers)}")
        return renderers[format](**options)  # type: ignore[operator]
