"""``heta-eval trec_eval -R qrels_jg`` against trec_eval 9.0.8's own outputs, byte for byte:
seeded random cases (``tests/support/data/trec_eval_qrels_jg.json``, made with the C binary by
``tests/support/trec_eval_levels_corpus.py --qrels-jg``) and cases chosen by hand (their outputs
printed by the binary). Where trec_eval refuses or stops: one line on stderr, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.trec_eval_levels_corpus import JG_CORPUS, jg_corpus
from support.trec_eval_pinned import BINARY, mismatch, needs_binary, ours

from heta_eval.cli import main

CASES = json.loads(JG_CORPUS.read_text())


def test_cases_cover_the_options_and_the_measures():
    argvs = [" ".join(case["argv"]) for case in CASES]
    for needle in (
        "-q",
        "-c",
        "-J",
        "-M 0",
        "-M ",
        "-l 0",
        "-l -",
        "-l 2",
        "-D 0.",
        "P_avgjg.",
        "Rprec_mult_avgjg.",
        "map_avgjg",
        "-m qrels_jg",
        "-Z ",
    ):
        assert sum(needle in argv for argv in argvs) >= 3, needle
    printed = [case for case in CASES if case["c_stdout"] is not None]
    assert len(printed) > 0.65 * len(CASES)
    assert sum(case["c_status"] == 2 for case in CASES) >= 3  # a bad qrels_jg line
    several = [c for c in printed if len({ln.split()[1] for ln in c["qrels"].splitlines()}) > 1]
    assert len(several) > 0.5 * len(printed)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_random_case_prints_what_trec_eval_prints(index, tmp_path):
    assert mismatch(CASES[index], tmp_path) is None, CASES[index]["argv"]


@needs_binary
def test_live_against_the_binary():
    assert jg_corpus(BINARY, 60, fresh=True) == 0


# Two judges of query q1 who disagree (tied scores among d2, d3), one of q2 whose labels are
# all negative, q3 only in the run, q4 only in the judgments.
QRELS_JG = (
    "q1 alice d1 1\nq1 alice d2 0\nq1 bob d1 0\nq1 bob d3 2\nq1 bob d4 1\n"
    "q2 carol d5 -1\nq2 carol d6 -2\nq4 alice d1 1\n"
)
RUN = (
    "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\nq1 Q0 d3 3 0.8 r\nq1 Q0 d9 4 0.1 r\n"
    "q2 Q0 d5 1 1 r\nq2 Q0 d7 2 0.5 r\nq3 Q0 d1 1 1 r\n"
)
# Printed by trec_eval 9.0.8 for QRELS_JG and RUN.
EXPECTED_Q_C = """\
map_avgjg             \tq1\t0.6250
P_avgjg_1             \tq1\t0.5000
P_avgjg_3             \tq1\t0.3333
Rprec_mult_avgjg_1.00 \tq1\t0.7500
map_avgjg             \tq2\t0.0000
P_avgjg_1             \tq2\t0.0000
P_avgjg_3             \tq2\t0.0000
Rprec_mult_avgjg_1.00 \tq2\t0.0000
runid                 \tall\tr
num_q                 \tall\t3
map_avgjg             \tall\t0.2083
P_avgjg_1             \tall\t0.1667
P_avgjg_3             \tall\t0.1111
Rprec_mult_avgjg_1.00 \tall\t0.2500
"""


def write(folder: Path, qrels: str = QRELS_JG, run: str = RUN) -> list[str]:
    (folder / "qrels").write_text(qrels)
    (folder / "run").write_text(run)
    return [str(folder / "qrels"), str(folder / "run")]


def test_groups_averaged_per_query_and_over_every_judged_query_with_c(tmp_path):
    argv = [
        "-q",
        "-c",
        "-R",
        "qrels_jg",
        "-m",
        "qrels_jg",
        "-m",
        "P_avgjg.3,1",
        "-m",
        "Rprec_mult_avgjg.1",
    ]
    write(tmp_path)
    assert ours(argv, tmp_path) == EXPECTED_Q_C


def test_judged_only_ranks_each_group_by_its_own_judgments(tmp_path):
    write(tmp_path)
    text = ours(["-J", "-R", "qrels_jg", "-m", "P_avgjg.1,2", "-m", "map_avgjg"], tmp_path)
    # q1: alice ranks d1 d2 (P@1 1, P@2 .5), bob d1 d3 (P@1 0, P@2 .5); q2 has none judged.
    assert text.splitlines()[1:] == [
        "P_avgjg_1             \tall\t0.2500",
        "P_avgjg_2             \tall\t0.2500",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-R", "qrels_jg"], "-m official (the default set) is not computed from judgment"),
        (["-R", "qrels_jg", "-m", "map"], "-m map is not computed from judgment groups"),
        (["-m", "map_avgjg"], "-m map_avgjg needs judgment groups (-R qrels_jg)"),
        (["-m", "qrels_jg"], "-m qrels_jg needs judgment groups (-R qrels_jg)"),
        (["-R", "prefs"], "-m official (the default set) is not computed from preference"),
        (["-R", "qrels_prefs", "-m", "map_avgjg"], "-m map_avgjg needs judgment groups"),
        (["-R", "qrels_jg", "-m", "prefs_simp"], "-m prefs_simp needs preference judgments"),
        (["-R", "bogus"], "-R bogus: not a trec_eval 9.0.8 rel_info format"),
    ],
)
def test_measures_and_formats_trec_eval_stops_on_are_refused(argv, message, tmp_path, capsys):
    files = write(tmp_path)
    assert main(["trec_eval", *argv, *files]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("qrels", "where"),
    [
        ("q1 a d1 1\nq1 a d2\n", "qrels:2: expected 4 fields 'qid group docno rel', got 3"),
        ("q1 a d1 1\nq1 a d2 1 x\n", "qrels:2: expected 4 fields"),
        ("q1 a d1 1\n\nq1 a d2 1\n", "qrels:2: expected 4 fields 'qid group docno rel', got an"),
        ("q1 a d1 1\nq1 b d1 0\nq1 a d1 2\n", "qrels:3: document 'd1' judged twice in group"),
        ("", "qrels: empty file"),
        ("q1 a d1 2000000\n", "qrels:1: relevance label 2000000 is above 1,000,000"),
    ],
)
def test_bad_qrels_jg_is_one_line_naming_file_and_line(qrels, where, tmp_path, capsys):
    files = write(tmp_path, qrels=qrels)
    assert main(["trec_eval", "-R", "qrels_jg", "-m", "map_avgjg", *files]) == 2
    err = capsys.readouterr().err.strip()
    assert where in err and "\n" not in err


def test_a_document_judged_by_two_groups_is_not_a_repeat(tmp_path):
    write(tmp_path, qrels="q1 a d1 1\nq1 b d1 1\n", run="q1 Q0 d1 1 1 r\n")
    assert ours(["-R", "qrels_jg", "-m", "map_avgjg"], tmp_path) == (
        "map_avgjg             \tall\t1.0000\n"
    )


def test_unjudged_documents_count_as_relevant_below_level_minus_one(tmp_path):
    # -l -1: trec_eval's rank list marks d9 (not judged) -1, so it counts as relevant;
    # alice's R is 2 (labels 0 and 1): AP = (1/1 + 2/2 + 3/3) / 2 = 1.5, as trec_eval prints.
    write(
        tmp_path,
        qrels="q1 alice d1 1\nq1 alice d2 0\n",
        run="q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d9 3 1 r\n",
    )
    assert ours(["-R", "qrels_jg", "-l", "-1", "-m", "map_avgjg"], tmp_path) == (
        "map_avgjg             \tall\t1.5000\n"
    )


def test_a_group_with_no_relevant_judgment_gives_inf_where_trec_eval_divides_by_zero(tmp_path):
    # -l -1: group a judged d1 -1 (R 0) but d2, unjudged, counts as relevant: trec_eval's
    # sum / R is x / 0, printed "inf" (as the binary prints it).
    write(tmp_path, qrels="q1 a d1 -1\nq1 b d1 1\n", run="q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\n")
    argv = ["-q", "-R", "qrels_jg", "-l", "-1", "-m", "map_avgjg", "-m", "Rprec_mult_avgjg.1"]
    assert ours(argv, tmp_path) == (
        "map_avgjg             \tq1\t   inf\nRprec_mult_avgjg_1.00 \tq1\t0.0000\n"
        "map_avgjg             \tall\t   inf\nRprec_mult_avgjg_1.00 \tall\t0.0000\n"
    )
