"""``heta-eval trec_eval``: trec_eval 9.0.8's own outputs byte for byte, its command line,
its input rules and one-line errors."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import shared_path

from heta_eval.cli import main
from heta_eval.trec_eval import parse_options
from heta_eval.trec_eval.options import TrecEvalUsageError


def reference_commands() -> list[tuple[list[str], str]]:
    """(arguments, output file) for each line of the reference folder's COMMANDS file."""
    folder = shared_path("reference", "trec_eval-9.0.8")
    commands = []
    for text in (folder / "COMMANDS").read_text().splitlines():
        if text.startswith("#") or not text.strip():
            continue
        command, output = text.split(">")
        words = shlex.split(command)
        assert words[0] == "trec_eval"
        commands.append((words[1:], output.strip()))
    assert len(commands) == 6
    return commands


def cli(argv: list[str], capsysbinary) -> tuple[int, bytes, bytes]:
    code = main(["trec_eval", *argv])
    out, err = capsysbinary.readouterr()
    return code, out, err


@pytest.mark.parametrize("index", range(6))
def test_reproduces_trec_eval_9_0_8_output_byte_for_byte(index, capsysbinary, monkeypatch):
    folder = shared_path("reference", "trec_eval-9.0.8")
    argv, output = reference_commands()[index]
    monkeypatch.chdir(folder)
    code, out, err = cli(argv, capsysbinary)
    assert code == 0 and err == b""
    assert out == (folder / output).read_bytes()


def test_python_m_heta_eval_trec_eval_is_byte_identical_as_a_process():
    folder = shared_path("reference", "trec_eval-9.0.8")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "heta_eval",
            "trec_eval",
            "-m",
            "all_trec",
            "-q",
            "-c",
            "-M100",
            "qrels.test",
            "results.trunc",
        ],
        cwd=folder,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == (folder / "out.test.aqcM").read_bytes()


def test_pyserini_2cr_command_on_the_real_scifact_run(scifact_dir, scifact_run_file, tmp_path):
    qrels = tmp_path / "scifact-test.qrels"
    rows = (scifact_dir / "qrels" / "test.tsv").read_text().splitlines()[1:]
    qrels.write_text(
        "".join(f"{q} 0 {d} {label}\n" for q, d, label in (r.split("\t") for r in rows))
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "heta_eval",
            "trec_eval",
            "-c",
            "-m",
            "ndcg_cut.10",
            "-m",
            "recall.100,1000",
            str(qrels),
            str(scifact_run_file),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line.split("\t") for line in proc.stdout.splitlines()]
    assert [(name.rstrip(), qid) for name, qid, _ in lines] == [
        ("recall_100", "all"),
        ("recall_1000", "all"),
        ("ndcg_cut_10", "all"),
    ]
    values = {name.rstrip(): value for name, _, value in lines}
    assert values["ndcg_cut_10"] == "0.5701"
    assert values["recall_100"] == "0.8523"


# ----------------------------------------------------------------------------- options


def test_glued_clustered_long_and_trailing_options_read_as_getopt_does():
    a = parse_options(["-qcmndcg_cut.10", "-M100", "-l2", "qrels", "run", "-J", "-n"])
    b = parse_options(
        [
            "--query_eval_wanted",
            "--complete",
            "--measure=ndcg_cut.10",
            "--Max_retrieved_per_topic",
            "100",
            "--level_for_rel=2",
            "--Judged",
            "--nosummary",
            "qrels",
            "run",
        ]
    )
    assert a == b
    assert (a.per_query, a.complete, a.judged_only, a.summary) == (True, True, True, False)
    assert (a.max_per_topic, a.relevance_level, a.qrels, a.run) == (100, 2, "qrels", "run")
    assert [m.printed_names() for m in a.measures] == [("ndcg_cut_10",)]
    assert parse_options(["--", "-qrels", "run"]).qrels == "-qrels"


def test_default_measures_are_official_and_nicknames_expand_in_print_order():
    names = [m.family.name for m in parse_options(["q", "r"]).measures]
    assert names == [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
    ]
    mixed = parse_options(["-m", "ndcg_cut.10", "-m", "map", "-m", "set", "q", "r"]).measures
    assert [m.family.name for m in mixed][:6] == [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
    ]


def test_parameters_follow_trec_eval_naming():
    measures = parse_options(
        [
            "-m",
            "P.100,5",
            "-m",
            "iprec_at_recall.0.25,.5",
            "-m",
            "utility.2,-1,0,0",
            "-m",
            "set_F.0.5",
            "-m",
            "ndcg.0=0,1=1,2=3",
            "-m",
            "relstring.4",
            "q",
            "r",
        ]
    ).measures
    assert [m.printed_names() for m in measures] == [
        ("iprec_at_recall_0.25", "iprec_at_recall_0.50"),
        ("P_5", "P_100"),
        ("relstring_4",),
        ("utility_2,-1,0,0",),
        ("ndcg_0=0,1=1,2=3",),
        ("set_F_0.5",),
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-x", "q", "r"], "unknown option -x"),
        (["-m"], "option -m needs a value"),
        (["q"], "expected 2 files"),
        (["-m", "P.0", "q", "r"], "cutoffs must be positive"),
        (["-m", "P.5,5", "q", "r"], "duplicate cutoffs"),
        (["-m", "P.5x", "q", "r"], "comma-separated numbers"),
        (["-m", "P.", "q", "r"], "no parameters after the dot"),
        (["-m", "iprec_at_recall.0.1,0.10", "q", "r"], "duplicate cutoffs"),
        (["-m", "utility.1,2", "q", "r"], "exactly 4 coefficients"),
        (["-m", "ndcg.1,2", "q", "r"], "label=gain pairs"),
        (["-m", "nDCG@10", "q", "r"], "unknown trec_eval measure 'nDCG@10'"),
        (["-m", "prefs", "q", "r"], "needs preference judgments"),
        (["-m", "yaap", "q", "r"], "pytrec_eval does not compute it"),
        (["-l", "two", "q", "r"], "must be a number"),
        (["-M", "-1", "q", "r"], "0 or more"),
        (["-N", "x", "q", "r"], "-N .* must be a number"),
        (["-R", "prefs", "q", "r"], "-m official .* is not computed from preference judgments"),
        (["--meas", "map", "--Re", "x", "q", "r"], "ambiguous option --Re"),
    ],
)
def test_bad_command_lines_are_refused_with_the_reason(argv, message):
    with pytest.raises(TrecEvalUsageError, match=message):
        parse_options(argv)


def test_a_later_parameter_list_for_the_same_measure_is_ignored_with_a_note(tmp_path, capsysbinary):
    qrels, run = write_pair(tmp_path, "q1 0 d1 1\n", "q1 Q0 d1 1 1.0 tag\n")
    code, out, err = cli(["-m", "P.10", "-m", "P.5", str(qrels), str(run)], capsysbinary)
    assert code == 0
    assert out == b"P_10                  \tall\t0.1000\n"
    assert b"note: trec_eval uses the first '-m P." in err


def test_help_lists_options_and_examples(capsysbinary):
    code, out, _ = cli(["--help"], capsysbinary)
    assert code == 0
    assert b"-c -m ndcg_cut.10 -m recall.100,1000" in out and b"-M" in out


# ------------------------------------------------------------------------------ inputs


def write_pair(folder: Path, qrels_text: str, run_text: str) -> tuple[Path, Path]:
    qrels, run = folder / "qrels", folder / "run"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    return qrels, run


def test_run_tag_is_the_last_lines_and_blank_lines_and_extra_fields_are_ignored(
    tmp_path, capsysbinary
):
    qrels, run = write_pair(
        tmp_path,
        "q1 0 d1 1\nq2 0 d9 1\n",
        "q1 Q0 d1 1 2.0 first trailing words\n\n  \nq2\tQ0\td8\t1\t1.0\tlast\n\n",
    )
    code, out, _ = cli(
        ["-m", "runid", "-m", "num_ret", "-m", "P.1", str(qrels), str(run)], capsysbinary
    )
    assert code == 0
    assert out.decode().splitlines() == [
        "runid                 \tall\tlast",
        "num_ret               \tall\t2",
        "P_1                   \tall\t0.5000",
    ]


def test_ties_rank_by_doc_id_descending_and_float32_equal_scores_tie(tmp_path, capsysbinary):
    # 1.0 and 1.00000001 are the same float32: trec_eval ranks d2 above d1 by doc id.
    qrels, run = write_pair(
        tmp_path, "q1 0 d1 1\nq1 0 d2 0\n", "q1 Q0 d1 1 1.00000001 t\nq1 Q0 d2 2 1.0 t\n"
    )
    code, out, _ = cli(
        ["-q", "-n", "-m", "recip_rank", "-m", "relstring", str(qrels), str(run)], capsysbinary
    )
    assert code == 0
    assert out.decode().splitlines() == [
        "recip_rank            \tq1\t0.5000",
        "relstring             \tq1\t'01'",
    ]


def test_relstring_marks_unjudged_negative_and_high_labels(tmp_path, capsysbinary):
    qrels, run = write_pair(
        tmp_path,
        "q1 0 a 12\nq1 0 b -1\nq1 0 c 0\nq1 0 e -4\n",
        "q1 Q0 a 1 5 t\nq1 Q0 b 2 4 t\nq1 Q0 c 3 3 t\nq1 Q0 d 4 2 t\nq1 Q0 e 5 1 t\n",
    )
    _, out, _ = cli(["-q", "-n", "-m", "relstring.4", str(qrels), str(run)], capsysbinary)
    assert out == b"relstring_4           \tq1\t'>.0-'\n"
    _, out, _ = cli(["-q", "-n", "-J", "-m", "relstring", str(qrels), str(run)], capsysbinary)
    assert out == b"relstring             \tq1\t'>0'\n"


def test_a_query_whose_labels_are_all_negative_is_refused_where_trec_eval_fails(tmp_path):
    # trec_eval 9.0.8 sizes a query's counters by its highest label: it stops on a first
    # query with none >= 0 ("Can't calculate measure"), and dies with SIGSEGV on a later one
    # whose labels are all <= -2. A later query of -1 labels computes (pinned by the fuzz).
    run_text = "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 c 1 1 t\nq2 Q0 d 2 0.5 t\n"
    for qrels_text, message in [
        ("q1 0 a 1\nq1 0 b -5\nq2 0 c -5\nq2 0 d -2\n", b"9.0.8 crashes on it"),
        ("q1 0 a -1\nq2 0 c 1\n", b"9.0.8 stops"),
    ]:
        qrels, run = write_pair(tmp_path, qrels_text, run_text)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "heta_eval",
                "trec_eval",
                "-q",
                "-c",
                "-m",
                "all_trec",
                str(qrels),
                str(run),
            ],
            capture_output=True,
            timeout=120,
        )
        assert proc.returncode == 2 and proc.stdout == b""
        assert proc.stderr.count(b"\n") == 1 and message in proc.stderr, proc.stderr


def test_a_gain_for_a_negative_label_on_an_all_negative_query_is_refused(tmp_path):
    # On a later query whose labels are all -1, trec_eval 9.0.8 reads the previous query's
    # label counters. A gain for label -1 then makes that memory the value: the binary prints
    # 1.0000 for q9 below (2.0000 and 0.5000 for the others), a value of no definition.
    qrels, run = write_pair(
        tmp_path,
        "1 0 d1 1\n1 0 d4 1\n2 0 d0 2\nq9 0 d5 -1\n",
        "1 Q0 d3 1 7 t\n1 Q0 d5 2 1 t\n2 Q0 d7 1 -1.5 t\n2 Q0 d2 2 1 t\nq9 Q0 d3 1 5 t\n",
    )
    for measure, refused in [
        ("ndcg_rel.-1=2", True),
        ("ndcg.1=3,-1=0.5", True),
        ("ndcg_rel.1=2", False),
        ("ndcg_rel", False),
    ]:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "heta_eval",
                "trec_eval",
                "-q",
                "-m",
                measure,
                str(qrels),
                str(run),
            ],
            capture_output=True,
            timeout=600,
        )
        if refused:
            assert proc.returncode == 2 and proc.stdout == b"", proc.stderr
            assert proc.stderr.count(b"\n") == 1
            assert b"qrels query q9: every label is negative" in proc.stderr
            assert measure.encode() in proc.stderr
        else:  # no gain for a negative label: computed (pinned against the binary by the fuzz)
            assert proc.returncode == 0 and b"\tq9\t" in proc.stdout, proc.stderr


def test_M_keeps_each_querys_top_documents_in_trec_eval_order(tmp_path, capsysbinary):
    qrels, run = write_pair(
        tmp_path, "q1 0 a 1\nq1 0 z 1\n", "q1 Q0 a 1 1.0 t\nq1 Q0 z 2 1.0 t\nq1 Q0 m 3 2.0 t\n"
    )
    _, out, _ = cli(
        ["-M2", "-m", "num_ret", "-m", "num_rel_ret", str(qrels), str(run)], capsysbinary
    )
    # Ranking: m (2.0), then the tie a/z by doc id descending: z. So a is cut.
    assert out == b"num_ret               \tall\t2\nnum_rel_ret           \tall\t1\n"


@pytest.mark.parametrize(
    ("qrels_text", "run_text", "message"),
    [
        ("q1 0 d1 1\n", "q1 Q0 d1 1 nan t\n", "not finite"),
        ("q1 0 d1 1\n", "q1 Q0 d1 1 1.0\n", "expected 6 columns"),
        ("q1 0 d1 1\n", "q1 Q0 d1 1 1.0 t\nq1 Q0 d1 2 0.5 t\n", "duplicate"),
        ("q1 0 d1 1\n", '{"q1": {"d1": 1.0}}', "not BEIR results JSON"),
        ("q1 0 d1 1\n", "q2 Q0 d1 1 1.0 t\n", "no query has both results and relevance"),
        ("q1 0 d1 5000000\n", "q1 Q0 d1 1 1.0 t\n", "above 1,000,000"),
    ],
)
def test_bad_inputs_fail_with_one_line_and_status_2(
    tmp_path, qrels_text, run_text, message, capsysbinary
):
    qrels, run = write_pair(tmp_path, qrels_text, run_text)
    code, out, err = cli([str(qrels), str(run)], capsysbinary)
    assert (code, out) == (2, b"")
    assert len(err.splitlines()) == 1, err
    assert err.startswith(b"heta-eval trec_eval: error: ") and message.encode() in err


def test_a_missing_file_is_one_line_without_traceback_from_the_process(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "heta_eval", "trec_eval", str(tmp_path / "nope"), "run"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert (
        proc.stderr
        == f"heta-eval trec_eval: error: {tmp_path / 'nope'}: No such file or directory\n"
    )


def test_a_query_with_only_negative_labels_scores_as_one_without_relevant_documents(
    tmp_path, capsysbinary
):
    qrels, run = write_pair(
        tmp_path,
        "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 x -1\nq2 0 y -3\n",
        "q1 Q0 a 1 2 t\nq1 Q0 c 2 1 t\nq2 Q0 z 1 2 t\nq2 Q0 x 2 1 t\n",
    )
    code, out, _ = cli(["-q", "-n", "-m", "all_trec", str(qrels), str(run)], capsysbinary)
    assert code == 0
    q2 = {
        name.rstrip(): value
        for name, qid, value in (line.split("\t") for line in out.decode().splitlines())
        if qid == "q2"
    }
    nonzero = {"num_ret": "2", "utility": "-2.0000", "relstring": "'-.'"}
    assert {k: v for k, v in q2.items() if k in nonzero} == nonzero
    assert all(float(v) == 0 for k, v in q2.items() if k not in nonzero), q2


def test_repeated_evaluations_with_negative_only_queries_never_crash():
    # pytrec_eval frees trec_eval's label counters after each evaluate; a later query with
    # no label >= 0 read them again (SIGSEGV within a few hundred such cases before the fix).
    script = """
import random
from heta_eval.trec_eval import per_query_values
from heta_eval.measures.trec_catalogue import ALL_TREC
measures = set(ALL_TREC) - {"runid", "relstring", "num_q"}
rnd = random.Random(7)
docs = ["d0", "d1", "d2", "d3"]
for _ in range(1500):
    qrels = {q: {d: rnd.randint(-5, 3) for d in rnd.sample(docs, rnd.randint(1, 3))}
             for q in rnd.sample(["1", "2", "3"], rnd.randint(1, 3))}
    run = {q: {d: rnd.choice([0.0, 1.0]) for d in rnd.sample(docs, rnd.randint(0, 3))}
           for q in rnd.sample(["1", "2", "3"], rnd.randint(1, 3))}
    per_query_values(qrels, run, measures, rnd.choice([1, 2]), rnd.random() < 0.5)
print("ok")
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert (proc.returncode, proc.stdout) == (0, "ok\n"), proc.stderr[-2000:]
