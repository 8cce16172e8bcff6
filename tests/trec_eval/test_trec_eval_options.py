"""``heta-eval trec_eval`` with ``-N``, ``-o``, ``-Z`` and ``-D`` against trec_eval 9.0.8's
own outputs, byte for byte: seeded random cases (``tests/support/data/trec_eval_options.json``,
made with the C binary by ``tests/support/trec_eval_levels_corpus.py --options``) and cases chosen
by hand. Where trec_eval refuses or crashes: one line on stderr, exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.trec_eval_levels_corpus import OPTIONS_CORPUS, options_corpus
from support.trec_eval_pinned import BINARY, UNDEFINED, needs_binary
from support.trec_eval_pinned import options_mismatch as mismatch

from heta_eval.cli import main
from heta_eval.providers import backends
from heta_eval.trec_eval import parse_options
from heta_eval.trec_eval.options import TrecEvalUsageError

CASES = json.loads(OPTIONS_CORPUS.read_text())


def test_cases_cover_every_option():
    argvs = [" ".join(case["argv"]) for case in CASES]
    for needle in ("-N ", "-Z ", "-D ", "-o", "--Out", "utility.", "-D 0.", "-q", "-c", "-J"):
        assert sum(needle in argv for argv in argvs) >= 5, needle
    zscored = [case for case in CASES if "zscores" in case]
    assert sum(case["c_stdout"] is not None for case in zscored) > 0.5 * len(zscored)
    assert sum(case["c_status"] < 0 for case in zscored) >= 3  # crashed: lookups past the end


@pytest.mark.parametrize("index", range(len(CASES)))
def test_random_case_prints_what_trec_eval_prints(index, tmp_path):
    problem = mismatch(CASES[index], tmp_path)
    assert problem is None or problem.startswith(UNDEFINED), (CASES[index]["argv"], problem)


@pytest.mark.parametrize("index", range(0, len(CASES), 3))
def test_random_case_read_into_arrays_prints_what_trec_eval_prints(index, tmp_path, monkeypatch):
    monkeypatch.setattr(backends, "COMPILED_MIN_BYTES", 0)  # read as a large run is
    problem = mismatch(CASES[index], tmp_path)
    assert problem is None or problem.startswith(UNDEFINED), (CASES[index]["argv"], problem)


@needs_binary
def test_live_against_the_binary():
    assert options_corpus(BINARY, 40, fresh=True) == 0


QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\nq3 0 d3 1\n"
RUN = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d2 1 0.4 r\nq3 Q0 d3 1 0.3 r\n"


def _command(tmp_path: Path, capsysbinary, argv: list[str], zscores: bytes | None = None):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    if zscores is not None:
        (tmp_path / "z").write_bytes(zscores)
        argv = ["-Z", str(tmp_path / "z"), *argv]
    code = main(["trec_eval", *argv, str(tmp_path / "qrels"), str(tmp_path / "run")])
    out, err = capsysbinary.readouterr()
    return code, out.decode(), err.decode()


def test_num_docs_enters_utility_fourth_coefficient(tmp_path, capsysbinary):
    # q1: 2 retrieved, 1 relevant, 1 relevant retrieved; d = 100 + 1 - 2 - 1 = 98.
    code, out, _ = _command(tmp_path, capsysbinary, ["-q", "-N", "100", "-m", "utility.2,-1,0,0.5"])
    assert code == 0
    assert out.splitlines()[0] == "utility_2,-1,0,0.5    \tq1\t50.0000"


def test_zscores_use_the_next_query_entry_past_a_query_own_names(tmp_path, capsysbinary):
    # Bytes from trec_eval 9.0.8: q1 has no 'map' entry, but its search for it reads one
    # place past q1's entries, q2's 'map' (mean 0.2, sd 0.1): (1 - 0.2) / 0.1 = 8.
    table = b"q1 a 0.5 0.25\nq2 map 0.2 0.1\nq3 map 0.2 0.1\nq4 map 0.1 0.1\n"
    code, out, _ = _command(tmp_path, capsysbinary, ["-q", "-m", "map"], table)
    assert code == 0
    assert out == (
        "Zmap                   \tq1\t8.0000\nZmap                   \tq2\t-2.0000\n"
        "Zmap                   \tq3\t8.0000\nZmap                   \tall\t4.6667\n"
    )


def test_zscores_of_missing_queries_and_measures_are_minus_a_million(tmp_path, capsysbinary):
    table = b"q1 zzz 0.5 0.25\nq2 map 0.2 0.1\nq3 map 0.2 0\nq4 map 0.1 0.1\n"
    code, out, _ = _command(tmp_path, capsysbinary, ["-q", "-m", "map", "-m", "num_q"], table)
    assert code == 0  # q3's sd is 0 and its map (1) is not the mean: missing too
    assert out.splitlines() == [
        "Zmap                   \tq1\t-1000000.0000",
        "Zmap                   \tq2\t-2.0000",
        "Zmap                   \tq3\t-1000000.0000",
        "Znum_q                 \tall\t3.0000",
        "Zmap                   \tall\t-666667.3333",
    ]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (b"q1 map 0.5 0.25\n\nq3 map 0.2 0.1\n", "z: line 2: malformed"),
        (b"q1 map 0.5\n", "z: line 1: malformed"),
        (b"q1 map 0.5 0.1 extra\n", "z: line 1: malformed"),
        (b"", "empty zscore file"),
        (b"q1 map 0 1\nq2 m\0ap 1 1\n", "z: line 2: a NUL byte"),
        (b"q1 map 0.5 0.25\nq2 map 0.2 0.1\n", "reads past the end of its zscore table"),
    ],
)
def test_bad_zscore_files_are_refused_in_one_line(tmp_path, capsysbinary, table, message):
    code, out, err = _command(tmp_path, capsysbinary, ["-m", "map"], table)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and message in err


def test_debug_level_keeps_standard_output_and_its_query_filters(tmp_path, capsysbinary):
    plain = _command(tmp_path, capsysbinary, ["-q", "-m", "map"])
    assert _command(tmp_path, capsysbinary, ["-D", "3", "-q", "-m", "map"]) == plain
    code, out, _ = _command(tmp_path, capsysbinary, ["-D", "0.q2", "-q", "-m", "map"])
    assert code == 0 and {line.split("\t")[1] for line in out.splitlines()} == {"q2", "all"}


def test_debug_level_with_a_measure_that_prints_its_trace_is_refused(tmp_path, capsysbinary):
    code, out, err = _command(tmp_path, capsysbinary, ["-D", "1", "-m", "ndcg"])
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and "ndcg computation's debugging trace" in err


def test_old_output_format_changes_nothing_and_its_long_form_takes_a_value(tmp_path, capsysbinary):
    plain = _command(tmp_path, capsysbinary, ["-m", "map"])
    assert _command(tmp_path, capsysbinary, ["-o", "-m", "map"]) == plain
    assert _command(tmp_path, capsysbinary, ["--Output_old=x", "-m", "map"]) == plain
    with pytest.raises(TrecEvalUsageError, match="needs a value"):
        parse_options(["q", "r", "--Output_old_results_format"])
