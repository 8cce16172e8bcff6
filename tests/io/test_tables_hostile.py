"""Every table, in every format, keeps its shape whatever its cells hold: names and texts
with pipes, line breaks, LaTeX's special characters, spreadsheet formulas, HTML, control and
bidi characters, lone surrogates. Each output is parsed back (Python's CSV reader, a
markdown table parser, LaTeX's tokens, Python's HTML parser) and every cell must come back
where it was written, as the text it was.

The real commands run in subprocesses (``leaderboard``, ``compare``, ``check``, ``run``'s
``table.md``) on run files, folders and queries named as a hostile user would name them."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from heta_eval.compare import leaderboard
from heta_eval.io.tables import Cell, Table, csv_text, latex_text, visible

REPO = Path(__file__).resolve().parents[2]

HOSTILE = [
    '=HYPERLINK("http://x","y")',
    "+1+1",
    "-2+3",
    "@SUM(A1)",
    "\tleading tab",
    "a|b|c",
    "back\\slash \\\\ two",
    "line\nbreak\r\nand\rreturn",
    "50% & $x$ #1 _u_ {b} ~t ^c <l> [o] *s*",
    "[starts bracket",
    "*starts star",
    "<script>alert(1)</script> &amp;",
    "bidi \u202eevil\u202c and nul \x00 and bell \x07",
    "para\u2028sep\u2029 vt\x0b ff\x0c fs\x1c nel\x85",
    "surrogate \udcff",
    "\\\\",
    "\\",
]

LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def as_read(text: str) -> str:
    """What a reader of a markdown table gets back: the text with its hidden characters
    visible and each line break one ``\\n``, the whitespace around it trimmed (GFM trims
    cells)."""
    return LINE_BREAK.sub("<br>", visible(text)).strip().replace("<br>", "\n")


def as_html(text: str) -> str:
    """What a reader of an HTML table gets back (no trimming)."""
    return LINE_BREAK.sub("\n", visible(text))


# ------------------------------------------------------------------ parsers


def markdown_rows(text: str) -> list[list[str]]:
    """Rows of the markdown tables in ``text``: split on unescaped pipes, ``\\|`` and
    ``<br>`` read back (GFM's rules); the separator rows left out."""
    rows = []
    for line in text.split("\n"):
        if not line.startswith("|") or re.fullmatch(r"\|(:?-+:?\|)+", line):
            continue
        assert line.endswith(" |"), line
        cells = re.split(r"(?<!\\)\|", line[1:-1])
        rows.append([cell.strip().replace("\\|", "|") for cell in cells])
    return rows


_TEX_TOKENS = {
    r"\textbackslash{}": "\\",
    r"\textasciitilde{}": "~",
    r"\textasciicircum{}": "^",
    r"\textbar{}": "|",
    "$<$": "<",
    "$>$": ">",
    r"\&": "&",
    r"\%": "%",
    r"\$": "$",
    r"\#": "#",
    r"\_": "_",
    r"\{": "{",
    r"\}": "}",
}
_TEX = re.compile("|".join(map(re.escape, _TEX_TOKENS)))


def md(cell: str) -> str:
    """A parsed markdown cell's text: trimmed, ``<br>`` a line break."""
    return cell.strip().replace("<br>", "\n")


def latex_rows(text: str) -> list[list[str]]:
    """The tabular's rows, each cell read back; asserts that no special character is left
    unescaped: a cell is plain text once the escapes are read."""
    body = text.split("\\midrule\n", 1)[1].split("\n\\bottomrule", 1)[0]
    header = text.split("\\toprule\n", 1)[1].split("\n\\midrule", 1)[0]
    rows = []
    for number, line in enumerate([header, *body.split("\n")]):
        assert line.endswith(r" \\"), line
        line = line[: -len(r" \\")]
        if line.startswith("{}"):
            line = line[2:]
        cells = []
        for cell in line.split(" & "):
            if cell.startswith(r"\textbf{") and cell.endswith("}"):
                cell = cell[len(r"\textbf{") : -1]
            plain = _TEX.sub("", cell)
            for special in "\\&%$#_{}~^" if number else "":  # the header: the project's math
                assert special not in plain, (special, cell)
            cells.append(_TEX.sub(lambda m: _TEX_TOKENS[m.group()], cell))
        rows.append(cells)
    return rows


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "br" and self.cell is not None:
            self.cell.append("\n")

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append("".join(self.cell or []))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def html_rows(text: str) -> list[list[str]]:
    parser = _Cells()
    parser.feed(text)
    return parser.rows


def csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


# ------------------------------------------------------------------ the writer


texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(texts, min_size=2, max_size=4))
def test_every_format_gives_every_cell_back(cells):
    assume(not any("<br>" in cell for cell in cells))  # markdown's own line break
    table = Table(["name", *cells[1:]], [cells, [Cell(c, bold=True) for c in cells]])
    markdown = [[md(c) for c in row] for row in markdown_rows(table.markdown())]
    assert markdown[0] == [as_read(c) for c in ["name", *cells[1:]]]
    assert [len(row) for row in markdown] == [len(cells)] * 3
    assert markdown[1] == [as_read(c) for c in cells]
    bold = [md(c.removeprefix("**").removesuffix("**")) for c in markdown_rows(table.markdown())[2]]
    assert bold == markdown[1]
    assert html_rows(table.html())[1:] == [[as_html(c) for c in cells]] * 2
    latex = latex_rows(table.latex())
    spaced = [LINE_BREAK.sub(" ", visible(c)) for c in cells]
    assert latex[1:] == [spaced, spaced]
    written = csv_rows(table.csv())
    assert written[1] == written[2] == [csv_text(c) for c in cells]


@settings(max_examples=300, deadline=None)
@given(texts)
def test_csv_never_leaves_a_formula_and_keeps_the_text(text):
    cell = csv_rows(Table(["x"], [[text]]).csv())[1][0]
    assert not re.match("[=+\\-@\t\r]", cell)
    shown = visible(text)
    if cell != shown:  # neutralised (or an odd line break made visible)
        assert cell.startswith("'") or "⟨U+" in cell


def test_each_hostile_text_in_each_format():
    table = Table(["system", "score"], [[name, 0.5] for name in HOSTILE], align="lr")
    shown = [md(row[0]) for row in markdown_rows(table.markdown())[1:]]
    assert shown == list(map(as_read, HOSTILE))
    assert [row[0] for row in html_rows(table.html())[1:]] == list(map(as_html, HOSTILE))
    spaced = [LINE_BREAK.sub(" ", visible(name)) for name in HOSTILE]
    assert [row[0] for row in latex_rows(table.latex())[1:]] == spaced
    rows = csv_rows(table.csv())
    assert [row[1] for row in rows[1:]] == ["0.5"] * len(HOSTILE)  # numbers: not neutralised
    assert rows[1][0] == '\'=HYPERLINK("http://x","y")' and rows[4][0] == "'@SUM(A1)"
    assert rows[5][0] == "'\tleading tab" and rows[3][0] == "'-2+3"
    for text in (table.markdown(), table.latex(), table.csv(), table.html()):
        text.encode("utf-8")  # a lone surrogate would not be written


def test_latex_keeps_a_row_break_out_of_the_cells():
    latex = latex_text("a\\\\b")
    assert "\\\\" not in latex and latex == r"a\textbackslash{}\textbackslash{}b"
    rows = Table(["[x]"], [["*y"], ["[z]"]]).latex().splitlines()
    assert rows[4] == r"{}[x] \\" and rows[6] == r"{}*y \\" and rows[7] == r"{}[z] \\"


def test_the_leaderboard_object_renders_hostile_names_in_every_format(tmp_path):
    names = {name: {"d|=x\\": 0.5, "plain": 0.25} for name in HOSTILE[:12]}
    board = leaderboard(names, "ndcg@10")
    for form, parse in (("markdown", markdown_rows), ("html", html_rows), ("latex", latex_rows)):
        rows = parse(board.render(form))
        assert len(rows) == 1 + len(names)
        assert all(len(row) == 4 for row in rows), form
        assert [row[1] for row in rows[1:]] == [
            "**0.5000**" if form == "markdown" else "0.5000"
        ] * len(names)
    csv_table = csv_rows(board.to_csv())
    assert csv_table[0] == ["system", "d|=x\\", "plain", "average"]
    assert [row[0] for row in csv_table[1:]] == [csv_text(name) for name in names]
    assert {row[3] for row in csv_table[1:]} == {"0.375"}
    # The chart shows every name as it is, with no mathtext read into a "$".
    png = board.plot(tmp_path / "board.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------ the commands

NAMES = ["=cmd|' calc'!A0", "+x_{1}^2 & 5% $ # ~", "back\\\\slash\\", "[br]\nline", "*star|ed"]


def heta(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """Run files named as above (their system names), and a BEIR folder whose name and
    query texts are as hostile."""
    root = tmp_path_factory.mktemp("hostile")
    for n, name in enumerate(NAMES):
        lines = [
            f"q{q} Q0 d{(q + d * (n + 1)) % 9} {d + 1} {9 - d} t\n"
            for q in range(6)
            for d in range(5)
        ]
        (root / f"{name}.trec").write_text("".join(lines), encoding="utf-8")
    data = root / "data|=set\\x"
    (data / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{d}", "title": "", "text": f"doc {d}"} for d in range(9)]
    (data / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [
        {"_id": f"q{q}", "text": f"query {q} | pipe\n| fake | row |\\ $x$ =1"} for q in range(6)
    ]
    (data / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    qrels = "".join(f"q{q}\td{(q * 2) % 9}\t1\n" for q in range(6))
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    return root


def runs(root: Path) -> list[str]:
    return [f"./{name}.trec" for name in NAMES]


@pytest.mark.parametrize("form", ["markdown", "latex", "csv", "html"])
def test_leaderboard_every_format_on_hostile_names(hostile, form):
    done = heta(
        "leaderboard", *runs(hostile), "--dataset", "./data|=set\\x", "--format", form, cwd=hostile
    )
    assert done.returncode == 0, done.stderr
    parse = {"markdown": markdown_rows, "latex": latex_rows, "csv": csv_rows, "html": html_rows}[
        form
    ]
    rows = parse(done.stdout)
    if form == "markdown":
        rows = [[md(cell) for cell in row] for row in rows]
    assert len(rows) == 1 + len(NAMES) and all(len(row) == 3 for row in rows), rows
    names = [row[0] for row in rows[1:]]
    if form == "csv":
        assert rows[0][1] == "./data|=set\\x"
        assert names == [csv_text(name) for name in NAMES]
        assert all(float(row[1]) == float(row[2]) for row in rows[1:])
    elif form == "latex":
        assert names == [name.replace("\n", " ") for name in NAMES]
    else:
        assert names == NAMES and rows[0][1] == "./data|=set\\x"


@pytest.mark.parametrize("form", ["markdown", "latex", "html"])
def test_compare_every_format_on_hostile_names_and_query_texts(hostile, form, tmp_path):
    out = tmp_path / "compare.out"
    done = heta(
        "compare",
        *runs(hostile)[:3],
        "--dataset",
        "./data|=set\\x",
        "--format",
        form,
        "--metric",
        "ndcg@10",
        "--resamples",
        "100",
        "-o",
        out,
        cwd=hostile,
    )
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    parse = {"markdown": markdown_rows, "latex": latex_rows, "html": html_rows}[form]
    rows = parse(text)
    if form == "markdown":
        rows = [[md(cell) for cell in row] for row in rows]
        main, rest = rows[:3], rows[3:]
        assert all(len(row) == 5 for row in rest), rest  # the query deltas' tables
        for row in rest:
            if row[0] != "query id":
                assert row[4].startswith("query ") and row[4].count("|") == 4
    else:
        main = rows
    assert [len(row) for row in main] == [11] * 3
    expected = NAMES[1:3] if form != "latex" else [n.replace("\n", " ") for n in NAMES[1:3]]
    assert [row[1] for row in main[1:]] == expected
    assert all(row[0] == "ndcg@10" for row in main[1:])
    # The caption and the titles stay on their lines: no row of a table is made of them.
    assert "\n| fake" not in text


def test_the_gates_markdown_on_hostile_names(hostile, tmp_path):
    out = tmp_path / "gate.md"
    done = heta(
        "compare",
        *runs(hostile)[2:],
        "--dataset",
        "./data|=set\\x",
        "--resamples",
        "100",
        "--fail-if-worse",
        "ndcg@10>0",
        "--gate-markdown",
        out,
        cwd=hostile,
    )
    assert done.returncode in (0, 1), done.stderr
    rows = [[md(cell) for cell in row] for row in markdown_rows(out.read_text(encoding="utf-8"))]
    assert [len(row) for row in rows] == [9] * 3
    assert [(row[2], row[3]) for row in rows[1:]] == [(name, NAMES[2]) for name in NAMES[3:]]
    # One line per failed condition on stderr, whatever the names hold.
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("gate: ") and len(lines) == 1 + sum(r[0] == "❌" for r in rows)


def test_check_markdown_on_a_hostile_name(tmp_path, scifact_dir, scifact_run_file):
    name = NAMES[2] + "|x"
    (tmp_path / f"{name}.trec").write_bytes(scifact_run_file.read_bytes())
    done = heta(
        "check",
        f"./{name}.trec",
        "--dataset",
        "scifact",
        "--data-dir",
        scifact_dir.parent,
        "--format",
        "markdown",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    rows = markdown_rows(done.stdout)
    assert len(rows) > 1 and all(len(row) == 8 for row in rows)
    assert {row[0] for row in rows[1:]} == {name}


def test_a_results_folders_table_keeps_its_shape_on_a_hostile_dataset_folder(hostile, tmp_path):
    run = hostile / f"{NAMES[0]}.trec"
    done = heta(
        "run",
        "--dataset",
        hostile / "data|=set\\x",
        "--kb-run",
        f"m={run}",
        "--output",
        tmp_path / "out",
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    table = (tmp_path / "out" / "table.md").read_text(encoding="utf-8")
    dataset_lines = [line for line in table.splitlines() if line.startswith("- dataset:")]
    assert len(dataset_lines) == 1 and "data|=set\\x" in dataset_lines[0]
    rows = markdown_rows(table)
    widths = {len(row) for row in rows}
    assert rows[0][:2] == ["mode", "metric"] and len(widths) == 1


def test_the_csv_rule_is_the_report_downloads():
    from heta_eval.io import tables

    script = (REPO / "heta_eval" / "report" / "assets" / "report.js").read_text()
    assert '/^[=+\\-@\\t\\r]/.test(t) && typeof v === "string"' in script
    assert tables._FORMULA.pattern == "[=+\\-@\t\r]"
