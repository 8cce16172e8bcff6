"""One reader for runs and one for qrels: trec_eval's whitespace rules on every path and at
every size (the pyarrow path must agree with the line reader), BOM, comments, header, and a
one-line error naming the file and line for empty fields and over-range numbers."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heta_eval.cli import main
from heta_eval.data.beir_loader import DatasetFormatError, load_qrels
from heta_eval.io.grammar import Reading
from heta_eval.io.run import _read_lines
from heta_eval.io.source import open_input
from heta_eval.io.trec import TrecFormatError, read_qrels, read_run, read_run_columnar

# Besides ASCII, characters Python's str.split() takes for whitespace but trec_eval does not.
IDS = st.text(alphabet="abcXYZ019_-.:é\"'\u00a0\u0085\u2028\x1c\x1f", min_size=1, max_size=6)
SEPARATORS = st.sampled_from([" ", "\t", "  ", " \t", "\t ", "\t\t"])


@st.composite
def run_files(draw):
    """Runs written with uniform or mixed whitespace, optional CRLF, BOM, trailing spaces."""
    uniform = draw(st.booleans())
    sep = draw(st.sampled_from([" ", "\t"]))
    rows = draw(
        st.lists(
            st.tuples(IDS, IDS, st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)),
            min_size=1,
            max_size=12,
            unique_by=lambda r: (r[0], r[1]),
        )
    )
    lines = []
    for qid, doc, score in rows:
        fields = [qid, "Q0", doc, "1", repr(score), "tag"]
        if uniform:
            lines.append(sep.join(fields))
        else:
            seps = [draw(SEPARATORS) for _ in range(5)]
            line = "".join(f + s for f, s in zip(fields, seps, strict=False)) + fields[-1]
            lines.append(line + draw(st.sampled_from(["", " ", "\t"])))
    newline = draw(st.sampled_from(["\n", "\r\n"])) if not uniform else "\n"
    text = newline.join(lines) + newline
    bom = "\ufeff" if draw(st.booleans()) else ""
    expected: dict[str, dict[str, float]] = {}
    for qid, doc, score in rows:
        expected.setdefault(qid, {})[doc] = score
    return bom + text, expected


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=run_files())
def test_fast_and_line_paths_read_every_run_alike(tmp_path, case):
    text, expected = case
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode("utf-8"))
    fast = read_run(path)
    slow = _read_lines(open_input(path), "error", Reading())[0]
    assert fast == slow == expected
    assert [list(d) for d in fast.values()] == [list(d) for d in slow.values()]
    if not text.startswith("\ufeff"):  # trec_eval keeps a BOM in the first query id
        assert read_run(path, mode="trec_eval") == expected
    columnar = read_run_columnar(path, ignore_identical_ids=False)
    if columnar is not None:  # arrays where it applies, with the same ids and scores
        data, offsets = bytes(columnar.doc_data), columnar.doc_offsets.tolist()
        ids = [data[offsets[i] : offsets[i + 1]].decode() for i in range(columnar.rows)]
        assert columnar.query_ids == list(expected)
        assert ids == [d for q in expected for d in expected[q]]
        assert columnar.scores.tolist() == [v for q in expected for v in expected[q].values()]


def test_space_before_a_tab_never_becomes_part_of_an_id(tmp_path, capsys):
    path = tmp_path / "run.trec"
    path.write_text("q1\tQ0\td1 \t1\t2.0\tt\n", encoding="utf-8")
    assert read_run(path) == {"q1": {"d1": 2.0}}
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    assert main(["evaluate", "--run", str(path), "--qrels", str(qrels), "--json"]) == 0
    assert '"NDCG@10": 1.0' in capsys.readouterr().out


def test_a_bom_is_dropped_by_every_reader(tmp_path):
    run = tmp_path / "run.trec"
    run.write_bytes("\ufeffq1 Q0 d1 1 2.0 t\n".encode())
    assert (
        read_run(run) == _read_lines(open_input(run), "error", Reading())[0] == {"q1": {"d1": 2.0}}
    )
    assert read_run_columnar(run).query_ids == ["q1"]
    as_json = tmp_path / "run.json"
    as_json.write_bytes('\ufeff{"q1": {"d1": 2}}'.encode())
    assert read_run(as_json) == {"q1": {"d1": 2.0}}
    qrels = tmp_path / "qrels.tsv"
    qrels.write_bytes("\ufeffq1\td1\t1\n".encode())
    assert read_qrels(qrels) == {"q1": {"d1": 1}}


def test_qrels_comments_header_and_whitespace(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text(
        "# TREC Web qrels\nqid iter docno rel\n q1  0\td1 \t-2\n# junk below\nq1 0 d2 1\n",
        encoding="utf-8",
    )
    assert read_qrels(path) == {"q1": {"d1": -2, "d2": 1}}


def test_quoted_beir_ids_read_alike_by_qrels_and_dataset_readers(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text('query-id\tcorpus-id\tscore\n"q1"\t"d 1"\t1\nq2 \t d2\t2\n', encoding="utf-8")
    expected = {"q1": {"d 1": 1}, "q2": {"d2": 2}}
    assert read_qrels(path) == load_qrels(path) == expected


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("q1 0 d1 1\nq1 0 d2 99999999999999999999\n", 2, "is above 1,000,000"),
        ("q1\td1\t1\nq1\t\t1\n", 2, "empty doc id"),
        ("q1 0 d1 1\nq1 0 d\x002 1\n", 2, "NUL"),
        ("q1 0 d1 1\nq1 0 d2 1_0\n", 2, "not an integer"),
    ],
)
def test_bad_qrels_are_one_line_errors(tmp_path, text, line, message):
    path = tmp_path / "q.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TrecFormatError, match=message) as info:
        read_qrels(path)
    assert info.value.line == line and str(info.value).startswith(f"{path}:{line}:")


def test_dataset_qrels_errors_name_the_line(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1e3\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"test.tsv:2: relevance label '1e3'"):
        load_qrels(path)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("q1 Q0 d1 1 1e400 t\n", 1, "not finite"),
        ("q1\tQ0\t\t1\t1.0\tt\n", 1, "expected 6 columns"),
        ("q1 Q0 d\x001 1 1.0 t\n", 1, "NUL"),
        ("q1 Q0 d1 1 1_0 t\n", 1, "not a number"),
        ("q1 Q0 d1 1 0x10 t\n", 1, "not a number"),
    ],
)
def test_bad_runs_are_one_line_errors_on_every_path(tmp_path, text, line, message):
    path = tmp_path / "run.trec"
    path.write_text(text, encoding="utf-8")
    assert read_run_columnar(path) is None  # the fast path defers to the line reader
    with pytest.raises(TrecFormatError, match=message) as info:
        read_run(path)
    assert info.value.line == line


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"q": {"d": ' + "9" * 400 + "}}", "not finite"),
        ('{"q": {"": 1.0}}', "empty"),
        ('{"q": {"d\\u0000": 1.0}}', "NUL"),
    ],
)
def test_bad_json_runs_are_one_line_errors(tmp_path, capsys, text, message):
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TrecFormatError, match=message):
        read_run(path)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 d 1\n", encoding="utf-8")
    assert main(["evaluate", "--run", str(path), "--qrels", str(qrels)]) != 0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
