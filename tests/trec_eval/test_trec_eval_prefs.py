"""``heta-eval trec_eval -R prefs`` and ``-R qrels_prefs`` against trec_eval 9.0.8's own
outputs, byte for byte: seeded random cases (``tests/support/data/trec_eval_prefs.json``, made with
the C binary by ``tests/support/trec_eval_levels_corpus.py --prefs``) and cases chosen by hand (their
outputs printed by the binary). Where trec_eval stops, aborts or reads memory it never set:
one line on stderr, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.trec_eval_pinned import BINARY, needs_binary
from support.trec_eval_pinned import prefs_mismatch as mismatch
from support.trec_eval_prefs_corpus import PREFS_CORPUS, prefs_corpus

from heta_eval.cli import main

CASES = json.loads(PREFS_CORPUS.read_text())


def _column(case: dict, index: int) -> set[str]:
    """The values of one field of a case's judgment lines (\\v and \\f split fields)."""
    return {line.split()[index] for line in case["qrels"].split("\n") if line}


def test_cases_cover_the_formats_options_and_measures():
    argvs = [" ".join(case["argv"]) for case in CASES]
    for needle in (
        "-R prefs",
        "-R qrels_prefs",
        "-q",
        "-c",
        "-J",
        "-M ",
        "-l ",
        "-D 0.",
        "-m all_prefs",
        "-m prefs ",
        "prefs_avgjg_Rnonrel",
        "prefs_pair",
        "-Z ",
    ):
        assert sum(needle in argv for argv in argvs) >= 3, needle
    printed = [case for case in CASES if case["c_stdout"] is not None]
    assert len(printed) > 0.65 * len(CASES)
    assert sum(case["c_status"] == 4 for case in CASES) >= 3  # inconsistent judgments
    assert sum(case["c_status"] == 2 for case in CASES) >= 3  # a malformed line
    groups = [c for c in printed if len(_column(c, 1)) > 1]
    assert len(groups) > 0.5 * len(printed)
    subgroups = [c for c in printed if "-R prefs" in " ".join(c["argv"]) and len(_column(c, 2)) > 1]
    assert len(subgroups) > 0.3 * len(printed)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_random_case_prints_what_trec_eval_prints(index, tmp_path):
    assert mismatch(CASES[index], tmp_path) is None, CASES[index]["argv"]


@needs_binary
def test_live_against_the_binary():
    assert prefs_corpus(BINARY, 60, fresh=True) == 0


# Query q1: group a ranks d1 > d2 > d3 (d3 nonrelevant), group b prefers d4 to d1 and d2
# (both nonrelevant); d4 is not retrieved, d9 is not judged; q2 is judged, its document
# not retrieved; q3 is only in the run.
QRELS_PREFS = "q1 a d1 2\nq1 a d2 1\nq1 a d3 0\nq1 b d1 0\nq1 b d2 0\nq1 b d4 1\nq2 a d1 1\n"
RUN = (
    "q1 Q0 d1 1 0.9 r\nq1 Q0 d9 2 0.8 r\nq1 Q0 d2 3 0.8 r\nq1 Q0 d3 4 0.5 r\n"
    "q2 Q0 d7 1 1 r\nq3 Q0 d1 1 1 r\n"
)
# Printed by trec_eval 9.0.8 for QRELS_PREFS and RUN with -q -c -R qrels_prefs -m prefs
# -m prefs_avgjg_Rnonrel -m prefs_pair_imp.
EXPECTED_Q_C = """\
prefs_num_prefs_poss  \tq1\t5
prefs_num_prefs_ful   \tq1\t3
prefs_num_prefs_ful_ret\tq1\t3
prefs_simp            \tq1\t0.6000
prefs_pair            \tq1\t0.6000
prefs_avgjg           \tq1\t0.5000
prefs_avgjg_Rnonrel   \tq1\t0.5000
prefs_pair_imp        \tq1\t0.6000
prefs_num_prefs_poss  \tq2\t0
prefs_num_prefs_ful   \tq2\t0
prefs_num_prefs_ful_ret\tq2\t0
prefs_simp            \tq2\t0.0000
prefs_pair            \tq2\t0.0000
prefs_avgjg           \tq2\t0.0000
prefs_avgjg_Rnonrel   \tq2\t0.0000
prefs_pair_imp        \tq2\t0.0000
runid                 \tall\tr
num_q                 \tall\t2
prefs_num_prefs_poss  \tall\t5
prefs_num_prefs_ful   \tall\t3
prefs_num_prefs_ful_ret\tall\t3
prefs_simp            \tall\t0.3000
prefs_pair            \tall\t0.3000
prefs_avgjg           \tall\t0.2500
prefs_avgjg_Rnonrel   \tall\t0.2500
prefs_pair_imp        \tall\t0.3000
"""


def write(folder: Path, prefs: str = QRELS_PREFS, run: str = RUN) -> list[str]:
    (folder / "prefs").write_text(prefs)
    (folder / "run").write_text(run)
    return [str(folder / "prefs"), str(folder / "run")]


def test_counts_sum_and_ratios_average_over_every_judged_query_with_c(tmp_path, capsys):
    files = write(tmp_path)
    argv = [
        "-q",
        "-c",
        "-R",
        "qrels_prefs",
        "-m",
        "prefs",
        "-m",
        "prefs_avgjg_Rnonrel",
        "-m",
        "prefs_pair_imp",
    ]
    assert main(["trec_eval", *argv, *files]) == 0
    assert capsys.readouterr().out == EXPECTED_Q_C


def test_prefs_file_with_one_sub_group_a_group_scores_as_qrels_prefs(tmp_path, capsys):
    lines = [line.split() for line in QRELS_PREFS.splitlines()]
    files = write(tmp_path, "".join(f"{q} {g} s {d} {r}\n" for q, g, d, r in lines))
    argv = [
        "-q",
        "-c",
        "-R",
        "prefs",
        "-m",
        "prefs",
        "-m",
        "prefs_avgjg_Rnonrel",
        "-m",
        "prefs_pair_imp",
    ]
    assert main(["trec_eval", *argv, *files]) == 0
    assert capsys.readouterr().out == EXPECTED_Q_C


@pytest.mark.parametrize(
    ("prefs", "fmt", "message"),
    [
        # trec_eval 9.0.8 aborts (SIGABRT) on a cycle.
        ("q1 a s1 d1 2\nq1 a s1 d2 1\nq1 a s2 d2 2\nq1 a s2 d1 1\n", "prefs", "form a cycle"),
        # It stops ("Can't calculate measure", exit 4) on these two.
        ("q1 a s1 d1 2\nq1 a s2 d1 0\nq1 a s2 d2 1\n", "prefs", "both 0 and non-0"),
        ("q1 a d1 2\nq1 a d1 1\n", "qrels_prefs", "two different rel_levels in one sub-group"),
        # It reads past the end of the nonrelevant class (levels below 0 only).
        (
            "q1 a d1 2\nq1 a d2 1\nq1 a d3 -1\nq1 a d5 -1\nq1 a d6 -1\nq1 a d9 -2\n",
            "qrels_prefs",
            "past its end",
        ),
        ("q1 a d1 1\nq1 a d2\n", "qrels_prefs", ":2: expected 4 fields 'qid jg docno rel'"),
        ("q1 a s d1 1\nq1 a d2 1\n", "prefs", ":2: expected 5 fields"),
        ("q1 a s d1 nan\n", "prefs", "rel_level 'nan' is not a number"),
        ("q1 a s d1 1\x00\n", "prefs", "NUL byte"),
        ("", "prefs", "empty file"),
    ],
)
def test_judgments_trec_eval_cannot_score_are_refused_in_one_line(
    prefs, fmt, message, tmp_path, capsys
):
    files = write(tmp_path, prefs)
    assert main(["trec_eval", "-R", fmt, "-m", "all_prefs", *files]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_inconsistent_judgments_of_a_query_not_evaluated_are_not_refused(tmp_path, capsys):
    files = write(tmp_path, QRELS_PREFS + "q9 a d1 2\nq9 a d1 1\n")
    assert main(["trec_eval", "-c", "-R", "qrels_prefs", "-m", "prefs_simp", *files]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "prefs_simp            \tall\t0.2000"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-R", "prefs", "-m", "map"], "-m map is not computed from preference judgments"),
        (["-R", "qrels_prefs", "-m", "qrels_jg"], "-m qrels_jg needs judgment groups"),
        (["-m", "all_prefs"], "-m all_prefs needs preference judgments"),
        (["-R", "qrels_jg", "-m", "prefs_pair"], "-m prefs_pair needs preference judgments"),
        (["-R", "prefs", "-D", "3", "-m", "prefs_simp"], "debugging trace"),
    ],
)
def test_measures_and_formats_trec_eval_stops_on_are_refused(argv, message, tmp_path, capsys):
    files = write(tmp_path)
    assert main(["trec_eval", *argv, *files]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
