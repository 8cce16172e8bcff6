"""``heta-eval trec_eval -l N`` with N below 1 against trec_eval 9.0.8's own outputs, byte for
byte: seeded random cases (``tests/support/data/trec_eval_levels.json``) and trec_eval's test inputs
(``tests/support/data/trec_eval_levels_reference.json.gz``), both made with the C binary by
``tests/support/trec_eval_levels_corpus.py``. Where trec_eval refuses or crashes: one line on stderr,
exit status 2."""

from __future__ import annotations

import gzip
import json

import pytest
from support.paths import shared_path
from support.trec_eval_levels_corpus import CORPUS, REFERENCE, live
from support.trec_eval_pinned import BINARY, mismatch, needs_binary

from heta_eval.cli import main
from heta_eval.providers import backends
from heta_eval.trec_eval import evaluate_options, parse_options, report_lines

CASES = json.loads(CORPUS.read_text())
PINNED = json.loads(gzip.decompress(REFERENCE.read_bytes()))


def test_cases_cover_every_level_below_one_and_option():
    argvs = [" ".join(case["argv"]) for case in CASES]
    for needle in ("-l 0", "-l -1", "-l -2", "-q", "-c", "-J", "-M", "all_trec", "Rndcg."):
        assert sum(needle in argv for argv in argvs) >= 5, needle
    assert sum(case["c_stdout"] is not None for case in CASES) > 0.8 * len(CASES)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_random_case_prints_what_trec_eval_prints(index, tmp_path):
    assert mismatch(CASES[index], tmp_path) is None, CASES[index]["argv"]


@pytest.mark.parametrize("index", range(0, len(CASES), 3))
def test_random_case_read_into_arrays_prints_what_trec_eval_prints(index, tmp_path, monkeypatch):
    # Every run file read by the compiled parser, as a large one is (each query's dict built
    # from the arrays when it is evaluated).
    monkeypatch.setattr(backends, "COMPILED_MIN_BYTES", 0)
    assert mismatch(CASES[index], tmp_path) is None, CASES[index]["argv"]


@pytest.mark.parametrize("index", range(len(PINNED)), ids=lambda i: " ".join(PINNED[i]["argv"]))
def test_trec_eval_test_inputs_print_what_trec_eval_prints(index, capsysbinary, monkeypatch):
    case = PINNED[index]
    monkeypatch.chdir(shared_path("reference", "trec_eval-9.0.8"))
    code = main(["trec_eval", *case["argv"]])
    out, err = capsysbinary.readouterr()
    assert code == 0, err
    assert out.decode("latin-1") == case["c_stdout"]


def test_refusals_are_one_line_and_exit_2(tmp_path, capsysbinary):
    # The first query's labels are all negative: trec_eval stops, at every level.
    (tmp_path / "qrels").write_text("q1 0 d1 -1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1.0 t\n")
    code = main(["trec_eval", "-l", "-1", str(tmp_path / "qrels"), str(tmp_path / "run")])
    _, err = capsysbinary.readouterr()
    assert code == 2 and len(err.splitlines()) == 1 and b"every label is negative" in err


def test_level_zero_counts_every_judged_document_and_minus_one_every_retrieved(tmp_path):
    (tmp_path / "qrels").write_text("q 0 a 0\nq 0 b 1\nq 0 c -1\nq 0 z 0\n")
    (tmp_path / "run").write_text("q Q0 a 1 4 t\nq Q0 x 2 3 t\nq Q0 c 3 2 t\nq Q0 b 4 1 t\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]

    def values(level: str) -> dict[str, str]:
        options = parse_options(["-m", "P.4", "-m", "num_rel", "-l", level, *files])
        lines = report_lines(options, evaluate_options(options))
        return {text.split("\t")[0].strip(): text.split("\t")[2] for text in lines}

    assert values("1") == {"num_rel": "1", "P_4": "0.2500"}
    assert values("0") == {"num_rel": "3", "P_4": "0.5000"}  # a and b (labels 0 and 1)
    assert values("-1") == {"num_rel": "3", "P_4": "0.7500"}  # and x, outside the qrels
    assert values("-2") == {"num_rel": "3", "P_4": "1.0000"}  # and c, label -1


@needs_binary
def test_live_against_the_binary():
    assert live(BINARY, 40) == 0
