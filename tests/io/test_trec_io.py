"""TREC run / qrels reading and writing: formats, BEIR's duplicate rule, bad input, speed path."""

from __future__ import annotations

import itertools
import json
import math
import mmap
from pathlib import Path

import pyarrow as pa
import pytest
from beir.datasets.data_loader import GenericDataLoader
from beir.util import load_runfile
from hypothesis import given, settings
from hypothesis import strategies as st

from heta_eval.io import limits, trec
from heta_eval.io.grammar import Reading
from heta_eval.io.run import _read_lines
from heta_eval.io.run_table import query_blocks, read_table
from heta_eval.io.source import open_input
from heta_eval.io.trec import TrecFormatError, read_qrels, read_run, write_qrels, write_run


def write(tmp_path: Path, text: str | bytes, name: str = "run.trec") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def line_reader(path: Path) -> dict:
    """The reference line reader alone (no fast path)."""
    return _read_lines(open_input(path), "error", Reading())[0]


# ---------------------------------------------------------------- runs: good input


def test_reads_space_and_tab_separated_runs(tmp_path):
    expected = {"q1": {"d1": 2.5, "d2": 1.0}, "q2": {"d1": -3.0}}
    spaces = write(tmp_path, "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1 t\nq2 Q0 d1 1 -3e0 t\n", "a")
    tabs = write(
        tmp_path, "q1\tQ0\td1\t1\t2.5\tt\nq1\tQ0\td2\t2\t1\tt\nq2\tQ0\td1\t1\t-3\tt\n", "b"
    )
    mixed = write(tmp_path, "q1  Q0 d1\t1 2.5 t \r\nq1 Q0 d2 2 1 t\nq2 Q0 d1 1 -3 t", "c")
    for path in (spaces, tabs, mixed):
        run = read_run(path)
        assert run == expected
        assert all(type(s) is float for docs in run.values() for s in docs.values())


def test_query_split_over_two_blocks_is_merged(tmp_path):
    path = write(tmp_path, "q1 Q0 a 1 1 t\nq2 Q0 a 1 1 t\nq1 Q0 b 2 0.5 t\n")
    assert read_run(path) == {"q1": {"a": 1.0, "b": 0.5}, "q2": {"a": 1.0}}


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("q1 Q0 d1 1 1 t\nq1  d2 2 1 t\n", 2),  # an empty field in place of a missing one
        ("q1 Q0 d1 1 1 t\n q1 d2 2 1 t\n", 2),
        ("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 1 \n", 2),
        ("q1\tQ0\td1\t1\t1\tt\nq1\tQ0\td2\t\t1\tt\n", 2),
        (" q1 d1 1 1 t\nq1 Q0 d2 2 1 t\n", 1),  # the delimiter first or last in the file
        ("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 1 ", 2),
    ],
)
@pytest.mark.parametrize("window", [limits.SCAN_WINDOW_BYTES, 7, 1])
def test_an_empty_field_sends_the_run_to_the_line_reader(tmp_path, monkeypatch, text, line, window):
    # pyarrow reads an empty field as an empty string where the line reader sees one field
    # fewer: the scan finds it in any window (small ones: two separators across a window's
    # edge too) and the line reader names the line.
    monkeypatch.setattr(limits, "SCAN_WINDOW_BYTES", window)
    path = write(tmp_path, text)
    assert read_table(open_input(path), 0, ["qid", "docid", "score"]) is None
    assert trec.read_run_columnar(path) is None
    with pytest.raises(TrecFormatError, match="expected 6 columns") as info:
        read_run(path)
    assert info.value.line == line
    good = write(tmp_path, "q1 Q0 d1 1 1 t\nq1 Q0 q1 2 0.5 t\nq2 Q0 d2 1 2 t\n", "good")
    assert read_table(open_input(good), 0, ["qid", "docid", "score"]) is not None
    assert read_run(good) == {"q1": {"d1": 1.0, "q1": 0.5}, "q2": {"d2": 2.0}}
    columnar = trec.read_run_columnar(good)
    assert columnar.query_ids == ["q1", "q2"] and columnar.skip.tolist() == [False, True, False]


@pytest.mark.parametrize("block_bytes", [limits.PYARROW_BLOCK_BYTES, 64, 40])
def test_query_blocks_across_pyarrow_blocks_equal_the_line_reader(
    tmp_path, monkeypatch, block_bytes
):
    # Ids that share their first 8 bytes or differ only in length, a query going on across
    # a block boundary and one coming back later: the same dict as the line reader's.
    monkeypatch.setattr(limits, "PYARROW_BLOCK_BYTES", block_bytes)
    ids = ["query-00001", "query-00001", "query-00002", "q", "query-00001x", "query-00002"]
    ids += ["query-000011", "query-000011", "\u00e9t\u00e9", "\u00e9t\u00e9", "q", "q-2024-1"]
    ids += ["q-2024-2", "q-2024-2"]
    text = "".join(f"{q} Q0 d{i} {i} {i / 8} t\n" for i, q in enumerate(ids))
    path = write(tmp_path, text)
    table = read_table(open_input(path), 0, ["qid", "docid", "score"])
    assert table is not None  # read by the fast path
    assert (table.column("qid").num_chunks > 1) == (block_bytes < 100)
    fast = read_run(path)
    assert fast == line_reader(path)
    assert list(fast) == [
        "query-00001",
        "query-00002",
        "q",
        "query-00001x",
        "query-000011",
        "\u00e9t\u00e9",
        "q-2024-1",
        "q-2024-2",
    ]
    assert list(fast["q"]) == ["d3", "d10"] and list(fast["query-00002"]) == ["d2", "d5"]


_IDS = st.lists(
    st.sampled_from(["", "a", "b", "1234567", "\u00e9", "\u00a0"]),
    min_size=1,
    max_size=3,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_IDS, st.integers(1, 3)), min_size=1, max_size=12), st.data())
def test_query_blocks_equal_a_comparison_of_each_id_with_the_previous(runs, data):
    ids = [qid for qid, repeat in runs for _ in range(repeat)]
    cuts = sorted(data.draw(st.sets(st.integers(1, len(ids)), max_size=3)) | {0, len(ids)})
    column = pa.chunked_array(
        [ids[a:b] for a, b in itertools.pairwise(cuts)] or [[]], pa.large_string()
    )
    firsts = [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]
    assert query_blocks(column) == ([ids[i] for i in firsts], firsts)


def test_a_mapped_run_reads_the_same_again_after_its_pages_are_handed_back(tmp_path):
    # The reader hands a memory-mapped file's pages back once read; the map stays valid, so
    # the same opened input reads again (as evaluate_run_file does after the compiled parser).
    path = write(tmp_path, "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1 t\nq2 Q0 d1 1 -3 t\n")
    data = open_input(path)
    assert isinstance(data.data, mmap.mmap)
    first = read_run(data)
    assert first == {"q1": {"d1": 2.5, "d2": 1.0}, "q2": {"d1": -3.0}}
    assert read_run(data) == first and data.data[:2] == b"q1"
    assert trec.read_run_columnar(data).query_ids == ["q1", "q2"]


def test_fast_path_equals_line_by_line_pass_on_the_real_run(scifact_run_file):
    fast = read_run(scifact_run_file)
    slow = line_reader(scifact_run_file)
    assert fast == slow
    assert [list(d) for d in fast.values()] == [list(d) for d in slow.values()]
    assert len(fast) == 1109 and sum(map(len, fast.values())) == 101231


def test_scores_are_parsed_like_python_float(tmp_path):
    texts = [
        "0.87277570",
        "1e-300",
        "123456789.123456789",
        "-0.0",
        "5",
        "0.1",
        "2.2250738585072014e-308",
    ]
    path = write(tmp_path, "".join(f"q Q0 d{i} {i} {t} x\n" for i, t in enumerate(texts)))
    run = read_run(path)["q"]
    assert [run[f"d{i}"] for i in range(len(texts))] == [float(t) for t in texts]


def test_results_json_is_accepted(tmp_path):
    path = write(tmp_path, json.dumps({"q1": {"d1": 1, "d2": 0.5}}), "run.json")
    assert read_run(path) == {"q1": {"d1": 1.0, "d2": 0.5}}
    trec.write_run_json({"q": {"d": 0.25}}, tmp_path / "out.json")
    assert read_run(tmp_path / "out.json") == {"q": {"d": 0.25}}


# ---------------------------------------------------------------- duplicates: BEIR's rule


def test_duplicate_run_pair_is_an_error_naming_both_lines(tmp_path):
    path = write(tmp_path, "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq1 Q0 d1 3 0.5 t\n")
    with pytest.raises(TrecFormatError, match=r"run.trec:3: duplicate .* first on line 1"):
        read_run(path)


def test_duplicates_last_matches_beir_load_runfile(tmp_path):
    # BEIR's load_runfile splits on single spaces and assigns line by line: last value wins,
    # the pair keeps its first position.
    text = "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq2 Q0 d9 1 1 t\nq1 Q0 d1 3 0.5 t\n"
    path = write(tmp_path, text)
    ours = read_run(path, duplicates="last")
    beirs = load_runfile(str(path))
    assert ours == beirs == {"q1": {"d1": 0.5, "d2": 1.0}, "q2": {"d9": 1.0}}
    assert [list(d) for d in ours.values()] == [list(d) for d in beirs.values()]


def test_duplicate_qrels_error_or_last_like_beir(tmp_path):
    folder = tmp_path / "ds"
    (folder / "qrels").mkdir(parents=True)
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq1\td1\t2\n", encoding="utf-8"
    )
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n', encoding="utf-8")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "y"}\n', encoding="utf-8")
    qrels_path = folder / "qrels" / "test.tsv"
    with pytest.raises(TrecFormatError, match=r"test.tsv:4: duplicate judgment"):
        read_qrels(qrels_path)
    _, _, beir_qrels = GenericDataLoader(str(folder)).load("test")
    assert read_qrels(qrels_path, duplicates="last") == beir_qrels == {"q1": {"d1": 2, "d2": 0}}


# ---------------------------------------------------------------- bad input, with line numbers


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 1\n", 2, "expected 6 columns"),
        ("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 1 t extra\n", 2, "expected 6 columns"),
        ("q1 Q0 d1 1 abc t\n", 1, "score 'abc' is not a number"),
        ("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 nan t\n", 2, "not finite"),
        ("q1 Q0 d1 1 inf t\n", 1, "not finite"),
        ("q1 Q0 d1 1 -Infinity t\n", 1, "not finite"),
        ("q1 Q0 d1 1 1 t\n\nq1 Q0 d2 2 1 t\n", 2, "empty line"),
        ('q1 Q0 d1 1 1 t\nq1 Q0 d2 2 "1" t\n', 2, "not a number"),
    ],
)
def test_bad_run_lines_name_file_and_line(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(TrecFormatError, match=message) as info:
        read_run(path)
    assert info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}:")
    assert isinstance(info.value, ValueError)


def test_wrong_encoding_is_reported_with_its_line(tmp_path):
    path = write(tmp_path, "q1 Q0 d1 1 1 t\nq1 Q0 caf\xe9 2 1 t\n".encode("latin-1"))
    with pytest.raises(TrecFormatError, match="not UTF-8") as info:
        read_run(path)
    assert info.value.line == 2
    tag_only = write(tmp_path, "q1 Q0 d1 1 1 t\xe9\n".encode("latin-1"), "tag.trec")
    with pytest.raises(TrecFormatError, match="not UTF-8"):
        read_run(tag_only)


@pytest.mark.parametrize("text", ["", "\n\n", "   "])
def test_empty_run_file_is_an_error(tmp_path, text):
    with pytest.raises(TrecFormatError, match="empty file"):
        read_run(write(tmp_path, text))


def test_bad_json_runs(tmp_path):
    for text, message in [
        ('{"q": {"d": "x"}}', "not a number"),
        ('{"q": {"d": NaN}}', "not finite"),
        ('{"q": {"d": 1, "d": 2}}', "duplicate key"),
        ('{"q": [1]}', "expected an object"),
        ('{"q": ', "invalid JSON"),
        ("{}", "non-empty"),
    ]:
        with pytest.raises(TrecFormatError, match=message):
            read_run(write(tmp_path, text, "r.json"))


# ---------------------------------------------------------------- qrels


def test_reads_trec_and_beir_qrels(tmp_path):
    trec_path = write(tmp_path, "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n", "q.txt")
    beir_path = write(
        tmp_path, "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td3\t2\n", "q.tsv"
    )
    expected = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    assert read_qrels(trec_path) == read_qrels(beir_path) == expected
    assert all(type(v) is int for d in read_qrels(trec_path).values() for v in d.values())


def test_real_scifact_qrels_match_beir(scifact_dir):
    _, _, beir_qrels = GenericDataLoader(str(scifact_dir)).load("test")
    assert read_qrels(scifact_dir / "qrels" / "test.tsv") == beir_qrels


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("q1 0 d1 1\nq1 0 d2 1.0\n", 2, "'1.0' is not an integer"),
        ("q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 columns"),
        ("q1 0 d1 1\n\n", 2, "empty line"),
        ("query-id\tcorpus-id\tscore\nq1\td1\n", 2, "expected 3 columns"),
        ("query-id\tcorpus-id\tscore\nq1\td1\tyes\n", 2, "not an integer"),
    ],
)
def test_bad_qrels_lines(tmp_path, text, line, message):
    with pytest.raises(TrecFormatError, match=message) as info:
        read_qrels(write(tmp_path, text, "q.txt"))
    assert info.value.line == line


def test_empty_or_badly_encoded_qrels(tmp_path):
    with pytest.raises(TrecFormatError, match="empty file"):
        read_qrels(write(tmp_path, "", "q.txt"))
    with pytest.raises(TrecFormatError, match="not UTF-8"):
        read_qrels(write(tmp_path, "q1 0 d\xe9 1\n".encode("latin-1"), "q.txt"))


def test_qrels_round_trip_both_formats(tmp_path):
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    for fmt in ("trec", "beir"):
        write_qrels(qrels, tmp_path / fmt, format=fmt)
        assert read_qrels(tmp_path / fmt) == qrels


# ---------------------------------------------------------------- writing runs


def test_write_run_uses_real_ranks_in_pytrec_eval_order(tmp_path):
    # Ties broken by doc id descending; scores equal in float32 tie, as in trec_eval.
    run = {"q": {"a": 1.0, "c": 1.0, "b": 1.0 + 1e-9, "z": 0.5, "top": 3.0}}
    write_run(run, tmp_path / "r.trec", tag="t", top_k=4)
    rows = [line.split() for line in (tmp_path / "r.trec").read_text().splitlines()]
    assert [(r[2], r[3]) for r in rows] == [("top", "1"), ("c", "2"), ("b", "3"), ("a", "4")]
    assert read_run(tmp_path / "r.trec")["q"]["b"] == 1.0 + 1e-9  # full precision kept


def test_write_run_rejects_a_bad_tag(tmp_path):
    with pytest.raises(ValueError, match="tag"):
        write_run({"q": {"d": 1.0}}, tmp_path / "r", tag="two words")


ids = st.text(alphabet="abcdefghij0123456789_-.:", min_size=1, max_size=8)
scores = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        ids, st.dictionaries(ids, scores, min_size=1, max_size=6), min_size=1, max_size=5
    )
)
def test_write_then_read_is_lossless(tmp_path_factory, run):
    path = tmp_path_factory.mktemp("rt") / "run.trec"
    write_run(run, path)
    back = read_run(path)
    assert back == run
    assert all(not math.isnan(s) for d in back.values() for s in d.values())
