"""One grammar for every reader: ASCII whitespace only between fields, ASCII numbers, the
library's BOM/header/comment rule, and trec_eval mode reading every byte as trec_eval 9.0.8
does (its outputs pinned in tests/support/data/trec_eval_reading.json, made by the C binary)."""

from __future__ import annotations

import ctypes
import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.paths import DATA
from support.trec_eval_pinned import BINARY, needs_binary

from heta_eval.io.grammar import Reading, TrecFormatError, atof, atol
from heta_eval.io.interop import FrameFormatError, as_run
from heta_eval.io.qrels import read_qrels
from heta_eval.io.run import read_run, read_run_and_tag, read_run_columnar
from heta_eval.trec_eval import trec_eval_lines
from heta_eval.trec_eval.inputs import read_trec_eval_qrels, read_trec_eval_run

PINNED = json.loads((DATA / "trec_eval_reading.json").read_text(encoding="utf-8"))
ODD_SPACES = ["\u00a0", "\u0085", "\u2028", "\x1c", "\x1d", "\x1e", "\x1f"]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


# ------------------------------------------------------------ trec_eval mode, as the binary


@pytest.mark.parametrize("case", list(PINNED))
def test_drop_in_reads_every_byte_as_trec_eval_9_0_8(tmp_path, case):
    pinned = PINNED[case]
    qrels = write(tmp_path, "qrels", pinned["qrels"])
    run = write(tmp_path, "run", pinned["run"])
    lines = list(trec_eval_lines([*pinned["args"], qrels, run]))
    assert "\n".join(lines) + "\n" == pinned["stdout"]


@needs_binary
def test_pinned_outputs_are_the_binarys(tmp_path):
    for pinned in PINNED.values():
        qrels = write(tmp_path, "qrels", pinned["qrels"])
        run = write(tmp_path, "run", pinned["run"])
        done = subprocess.run([BINARY, *pinned["args"], qrels, run], capture_output=True)
        assert done.stdout.decode("utf-8") == pinned["stdout"]


def test_trec_eval_mode_notes_what_the_library_would_have_done(tmp_path):
    notes: list[str] = []
    qrels = write(tmp_path, "qrels", "\ufeffqid iter docno rel\nq1 0 d1 1\n# 0 d2 x\n")
    assert read_trec_eval_qrels(qrels, notes.append) == {
        "\ufeffqid": {"docno": 0},
        "q1": {"d1": 1},
        "#": {"d2": 0},
    }
    assert len(notes) == 4 and all(len(n.splitlines()) == 1 for n in notes)
    assert "library drops it" in notes[0] and "header" in notes[1]
    assert "'rel' read as 0" in notes[2] and "comment" in notes[3]  # each kind once
    notes.clear()
    run = write(tmp_path, "run", "\ufeffq1 Q0 d1 1 abc t\n")
    assert read_trec_eval_run(run, notes.append) == ({"\ufeffq1": {"d1": 0.0}}, "t")
    assert len(notes) == 2 and "byte-order mark" in notes[0] and "atof" in notes[1]


def test_the_drop_in_prints_each_note_as_one_line_on_stderr(tmp_path, capsysbinary):
    from heta_eval.cli import main

    qrels = write(tmp_path, "qrels", "qid iter docno rel\nq1 0 d1 1\n")
    run = write(tmp_path, "run", "q1 Q0 d1 1 2 t\n")
    assert main(["trec_eval", "-m", "num_q", str(qrels), str(run)]) == 0
    captured = capsysbinary.readouterr()
    assert captured.out == b"num_q                 \tall\t1\n"
    notes = captured.err.decode().splitlines()  # the header, its label read as 0
    assert len(notes) == 2 and all(n.startswith("heta-eval trec_eval: note: ") for n in notes)


def test_atof_and_atol_are_cs():
    assert [atof(t) for t in ["\u0662", "\uff11", "1e", "-.5x", "0x1P-1", "1e999"]] == [
        0.0,
        0.0,
        1.0,
        -0.5,
        0.5,
        float("inf"),
    ]
    # strtol and strtod skip leading C whitespace, nothing else
    assert [atol(t) for t in ["\u0661", "\uff12", "+3", " 3", "\t-4", "\xa03", "-0"]] == [
        0,
        0,
        3,
        3,
        -4,
        0,
        0,
    ]
    assert atof(" 2.5") == 2.5 and atof("\u00a02.5") == 0.0


# ------------------------------------------------------------ the library: loud refusals


@pytest.mark.parametrize("space", ODD_SPACES)
def test_only_ascii_whitespace_separates_fields_on_every_path(tmp_path, space):
    text = f"q1 Q0 d{space}x 1 2.0 tag\nq1 Q0 e 2 1.0 tag\n"
    expected = {"q1": {f"d{space}x": 2.0, "e": 1.0}}
    path = write(tmp_path, "run", text)
    assert read_run(path) == expected
    columnar = read_run_columnar(path)
    assert bytes(columnar.doc_data).decode() == f"d{space}xe"
    seventh = write(tmp_path, "run7", text.replace("tag\n", "tag extra\n", 1))
    with pytest.raises(TrecFormatError, match="run7:1: expected 6 columns"):
        read_run(seventh)
    assert read_run(seventh, mode="trec_eval") == expected
    blank = write(tmp_path, "blank", text.replace("\n", "\n\n", 1))
    assert read_run(blank, mode="trec_eval") == expected


@pytest.mark.parametrize("digit", ["\u0662", "\uff11", "\u0967", "1\u0660"])
def test_non_ascii_digits_are_refused_naming_file_line_and_field(tmp_path, digit):
    run = write(tmp_path, "run", f"q1 Q0 a 1 1 t\nq1 Q0 b 2 {digit} t\n")
    with pytest.raises(TrecFormatError, match=r"run:2: score .* not a number.*\(field 5\)"):
        read_run(run)
    assert read_run(run, mode="trec_eval")["q1"]["b"] == atof(digit)
    qrels = write(tmp_path, "qrels", f"q1 0 a 1\nq1 0 b {digit}\n")
    with pytest.raises(TrecFormatError, match=r"qrels:2: relevance label .*\(field 4\)"):
        read_qrels(qrels)
    tsv = write(tmp_path, "qrels.tsv", f"query-id\tcorpus-id\tscore\nq1\tb\t{digit}\n")
    with pytest.raises(TrecFormatError, match=r"qrels.tsv:2: relevance label .*\(field 3\)"):
        read_qrels(tsv)
    frame = pd.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "score": [digit]})
    with pytest.raises(FrameFormatError, match="row 0: score"):
        as_run(frame)


def test_a_query_id_starting_with_hash_is_a_judgment(tmp_path):
    path = write(tmp_path, "qrels", "# judged by hand\n#1 0 d1 1\nq2 0 d2 1\n")
    assert read_qrels(path) == {"#1": {"d1": 1}, "q2": {"d2": 1}}


def test_qrels_mixing_tabs_and_spaces_split_on_any_ascii_whitespace(tmp_path):
    path = write(tmp_path, "qrels", "q1 0\td1\t1\nq1\t0 d2 1\n")
    assert read_qrels(path) == {"q1": {"d1": 1, "d2": 1}}
    tsv = write(tmp_path, "qrels.tsv", "q1\td1\t1\nq1\td2\t0\n")  # BEIR tsv, no header
    assert read_qrels(tsv) == {"q1": {"d1": 1, "d2": 0}}


def test_a_carriage_return_inside_the_last_tag(tmp_path):
    path = write(tmp_path, "run", "q1 Q0 d1 1 2 t1\nq1 Q0 d2 2 1 ta\rg")
    with pytest.raises(TrecFormatError, match="run:2: expected 6 columns"):
        read_run(path)
    assert read_run_and_tag(path, reading=Reading("trec_eval"))[1] == "ta"


def test_the_library_drops_a_bom_and_a_header_everywhere(tmp_path):
    run = write(tmp_path, "run", "\ufeffq1 Q0 d1 1 2.0 t\n")
    assert read_run(run) == {"q1": {"d1": 2.0}}
    assert read_run_columnar(run).query_ids == ["q1"]
    assert read_run(write(tmp_path, "r.json", '\ufeff{"q1": {"d1": 2}}')) == {"q1": {"d1": 2.0}}
    for text in [
        "\ufeffqid iter docno rel\nq1 0 d1 1\n",
        "\ufeffquery-id\tcorpus-id\tscore\nq1\td1\t1\n",
    ]:
        assert read_qrels(write(tmp_path, "qrels", text)) == {"q1": {"d1": 1}}


# ------------------------------------------------------------ atof / atol against the C library

NUMBERISH = st.text(alphabet="0123456789+-.eExXpPaAfFinINtyY()_ \u0661\uff11", max_size=12)


@pytest.fixture(scope="module")
def libc():
    if sys.platform != "linux":
        pytest.skip("compares with glibc's atof and atol")
    lib = ctypes.CDLL(None)
    lib.atof.restype, lib.atof.argtypes = ctypes.c_double, [ctypes.c_char_p]
    lib.atol.restype, lib.atol.argtypes = ctypes.c_long, [ctypes.c_char_p]
    return lib


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=NUMBERISH)
@example(text="0x1.8p3x")
@example(text="1e400")
@example(text="nan(123)")
@example(text="9" * 25)
def test_atof_and_atol_equal_the_c_librarys(libc, text):
    # A field holds no whitespace (trec_eval splits on it first), which C would skip.
    text = text.strip(" ")
    if " " in text:
        return
    c_value = libc.atof(text.encode())
    ours = atof(text)
    assert (math.isnan(c_value) and math.isnan(ours)) or ours == c_value, text
    assert atol(text) == libc.atol(text.encode()), text


@pytest.mark.parametrize("text", ["1_0", " 2", "\u0661", "\uff11.5", "0x10", "nan"])
def test_dataframe_text_cells_follow_the_file_grammar(text):
    # Python's float() takes every one of these; a file's reader refuses them, and so do
    # DataFrame inputs holding them as text.
    from heta_eval.io.interop import as_qrels

    with pytest.raises(FrameFormatError, match="row 0"):
        as_run(pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [text]}))
    with pytest.raises(FrameFormatError, match="row 0"):
        as_qrels(pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [text]}))
    assert as_run(pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": ["2.5e0"]})) == {
        "q": {"d": 2.5}
    }
