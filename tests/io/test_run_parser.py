"""The compiled run parser (heta_eval.io.run_parser) reads exactly what the
validating line reader reads, or hands the file back to it."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from heta_eval.io import limits, run_parser, trec
from heta_eval.io.grammar import fields
from heta_eval.io.run_parser import parse_run_file
from heta_eval.io.source import open_input


def _reference(path: Path) -> list[tuple[str, str, float]] | None:
    """(qid, doc id, score) per line by the line reader's own rules; None where it refuses
    the file."""
    rows = []
    for number, raw in open_input(path).lines():
        qid, _, docid, _, score, _ = fields(raw.decode("utf-8"))
        try:
            rows.append((qid, docid, trec.parse_score(score, path, number)))
        except trec.TrecFormatError:
            return None
    return rows


def _rows(run) -> list[tuple[str, str, float]]:
    out = []
    for q, qid in enumerate(run.query_ids):
        for i in range(run.offsets[q], run.offsets[q + 1]):
            doc = bytes(run.doc_data[run.doc_offsets[i] : run.doc_offsets[i + 1]]).decode()
            out.append((qid, doc, float(run.scores[i])))
    return out


def _bits(value: float) -> bytes:
    return struct.pack("<d", value)


@pytest.fixture(params=["one slice", "many slices"])
def slicing(request, monkeypatch):
    """Both sides of the parallel thresholds: one slice, or a slice per few lines."""
    if request.param == "many slices":
        monkeypatch.setattr(limits, "PARSE_SLICED_BYTES", 0)
        monkeypatch.setattr(limits, "COPY_SLICED_ROWS", 0)
        monkeypatch.setattr(run_parser, "_cores", lambda: 3)
    return request.param


ids = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters=" \t\n\r\x0b\x0c\x00\x1c\x1d\x1e\x1f\x85\xa0\u2028\u2029",
    ),
    min_size=1,
    max_size=6,
)
score_texts = st.one_of(
    st.integers(-(10**25), 10**25).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: f"{x:.6f}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.3e}"),
    st.sampled_from(["+.5", "-0", "1.", ".25E+2", "007.5000", "0.000000000000000000000001"]),
    st.from_regex(r"[+-]?[0-9]{1,25}(\.[0-9]{0,25})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    queries=st.lists(
        st.tuples(ids, st.lists(st.tuples(ids, score_texts), min_size=1, max_size=8)),
        min_size=1,
        max_size=6,
        unique_by=lambda q: q[0],
    ),
    tab=st.booleans(),
    bom=st.booleans(),
    final_newline=st.booleans(),
    self_hit=st.booleans(),
)
@example(
    queries=[("q", [("d", "0.12345678901234567"), ("q", "1e-400"), ("e", "9007199254740993")])],
    tab=False,
    bom=True,
    final_newline=False,
    self_hit=False,
)
def test_parser_reads_what_the_line_reader_reads(
    tmp_path, slicing, queries, tab, bom, final_newline, self_hit
):
    d = "\t" if tab else " "
    lines = []
    for qid, docs in queries:
        for rank, (doc, score) in enumerate(docs, 1):
            lines.append(
                d.join([qid, "Q0", qid if self_hit and rank == 2 else doc, str(rank), score, "t"])
            )
    text = "\n".join(lines) + ("\n" if final_newline else "")
    path = tmp_path / "run.trec"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    expected = _reference(path)
    run = parse_run_file(path)
    if expected is None:  # a score beyond float64
        assert run is None
        return
    assert run is not None
    got = _rows(run)
    assert [(q, doc) for q, doc, _ in got] == [(q, doc) for q, doc, _ in expected]
    assert [_bits(s) for *_, s in got] == [_bits(s) for *_, s in expected]  # bit for bit
    assert run.skip.tolist() == [q == doc for q, doc, _ in expected]


@given(value=st.floats(allow_nan=False, allow_infinity=False), digits=st.integers(0, 20))
@settings(max_examples=300, deadline=None)
def test_scores_are_python_floats_bit_for_bit(value, digits):
    for text in (repr(value), f"{value:.{digits}f}", f"{value:.{digits}e}"):
        ok, exact, parsed = run_parser._score(
            np.frombuffer(text.encode(), np.uint8), 0, len(text), run_parser._POW10
        )
        assert ok
        if exact:  # else the correctly rounded converter takes it
            assert _bits(parsed) == _bits(float(text)), text


@pytest.mark.parametrize(
    "text",
    [
        "q1 Q0 d1 1 1 t\r\nq1 Q0 d2 2 0.5 t\n",  # CR
        "q1 Q0 d1 1 1 t\nq1 Q0  d2 2 0.5 t\n",  # an empty field
        "q1 Q0 d1 1 1 t\n\nq1 Q0 d2 2 0.5 t\n",  # an empty line
        "q1 Q0 d1 1 1\n",  # five fields
        "q1 Q0 d1 1 1 t x\n",  # seven
        "q1 Q0 d1 1 1 t\nq1\tQ0 d2 2 0.5 t\n",  # a tab in a space-separated file
        "q1 Q0 d1 1 nan t\n",
        "q1 Q0 d1 1 inf t\n",
        "q1 Q0 d1 1 1e400 t\n",  # beyond float64
        "q1 Q0 d1 1 1_0 t\n",  # Python's float() takes it; the grammar does not
        "q1 Q0 d1 1 0x1p3 t\n",
        "q1 Q0 d\x001 1 1 t\n",  # NUL
        "q1 Q0 d1 1 1 t\nq2 Q0 d1 1 1 t\nq1 Q0 d2 2 0.5 t\n",  # a query in two blocks
    ],
)
def test_anything_unusual_goes_back_to_the_line_reader(tmp_path, slicing, text):
    path = tmp_path / "run.trec"
    path.write_text(text, encoding="utf-8")
    assert parse_run_file(path) is None


@pytest.mark.parametrize(
    "raw",
    [b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\xff", b"\x80"],
    ids=["overlong", "surrogate", "past U+10FFFF", "truncated", "0xff", "lone continuation"],
)
def test_invalid_utf8_goes_back_to_the_line_reader(tmp_path, raw):
    path = tmp_path / "run.trec"
    path.write_bytes(b"q1 Q0 d" + raw + b" 1 1 t\n")
    assert parse_run_file(path) is None
    with pytest.raises(trec.TrecFormatError, match="not UTF-8"):
        trec.read_run(path)


def test_valid_utf8_ids_are_read(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text(
        "q\u00e9 Q0 \u4e2d\U0001f600 1 2 t\nq\u00e9 Q0 q\u00e9 2 1 t\n", encoding="utf-8"
    )
    run = parse_run_file(path)
    assert run.query_ids == ["q\u00e9"]
    assert _rows(run) == [("q\u00e9", "\u4e2d\U0001f600", 2.0), ("q\u00e9", "q\u00e9", 1.0)]
    assert run.skip.tolist() == [False, True]


def test_real_scifact_run_equals_the_line_reader(scifact_run_file: Path):
    if not scifact_run_file.exists():
        pytest.skip("shared SciFact run not available")
    run = parse_run_file(scifact_run_file)
    expected = _reference(scifact_run_file)
    got = _rows(run)
    assert len(got) == 101231
    assert got == expected
