"""Values that reach C code (pytrec_eval, numba, numpy) are checked where they enter: a
relevance label beyond what every backend scores exactly, a cutoff beyond int64, a deeply
nested JSON document, a CSV quote BEIR's reader would run across lines. Each is one line
(exit 2) or a ``ValueError``, never a signal or a traceback; no cutoff makes the engine's
memory grow beyond the ranked documents.

Crash cases run the real command in a subprocess, so a segmentation fault fails the test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from heta_eval import BeirRetrievalMetric, evaluate_run
from heta_eval.io.grammar import MAX_LABEL
from heta_eval.io.validate import InputError
from heta_eval.models.records import BenchmarkCase

REPO = Path(__file__).resolve().parents[2]


def heta(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_one_line(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n"


@pytest.mark.parametrize("label", [MAX_LABEL + 1, 2**31 - 1, 2**32, 2**62, 2**63 - 1, 10**30])
def test_evaluate_refuses_a_label_no_backend_scores_exactly_naming_file_and_line(tmp_path, label):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"q1 0 d2 0\nq1 0 d1 {label}\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text(RUN, encoding="utf-8")
    assert_one_line(
        heta("evaluate", "--qrels", qrels, "--run", run),
        f"{qrels}:2:",
        f"relevance label {label} is above 1,000,000",
    )


def test_a_beir_tsv_label_beyond_the_bound_is_refused_too(tmp_path):
    qrels = tmp_path / "test.tsv"
    qrels.write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t{2**32}\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text(RUN, encoding="utf-8")
    assert_one_line(heta("evaluate", "--qrels", qrels, "--run", run), f"{qrels}:2:", "1,000,000")


def test_the_largest_label_allowed_scores_the_same_in_both_backends():
    qrels = {"q1": {"d1": MAX_LABEL, "d2": 1, "d3": 0}}
    run = {"q1": {"d3": 3.0, "d2": 2.0, "d1": 1.0}}
    fast = evaluate_run(qrels, run, k_values=(1, 3), engine="fast").beir_dict()
    pytrec = evaluate_run(qrels, run, k_values=(1, 3), engine="pytrec").beir_dict()
    assert fast == pytrec
    assert 0 < fast["ndcg"]["NDCG@3"] < 1  # the big label counts: not a silent 0


@pytest.mark.parametrize("engine", ["pytrec", "fast"])
@pytest.mark.parametrize("label", [2**32, 2**62, 2**63])
def test_the_api_refuses_the_label_naming_query_and_doc(engine, label):
    with pytest.raises(InputError, match=r"query 'q1', doc 'd1': relevance label .* 1,000,000"):
        evaluate_run({"q1": {"d1": label}}, {"q1": {"d1": 1.0}}, engine=engine)


def test_a_case_whose_judgment_beir_retrieval_metric_would_score_refuses_the_label():
    with pytest.raises(ValueError, match="document 'd1': relevance label 1099511627776 is above"):
        BenchmarkCase(id="q1", query="?", expected={"relevance": {"d1": 2**40}})


def test_the_runner_refuses_a_case_label_before_anything_runs(tmp_path):
    cases = tmp_path / "cases.jsonl"
    good = {"id": "c1", "query": "paris", "expected": {"relevance": {"d1": 1}}}
    bad = {"id": "c2", "query": "rome", "expected": {"relevance": {"d2": 2**62}}}
    cases.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "Paris"}\n{"id": "d2", "text": "Rome"}\n', "utf-8")
    proc = heta(
        "run",
        "--benchmark",
        cases,
        "--documents",
        docs,
        "--modes",
        "keyword_search",
        "--output",
        tmp_path / "out",
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    error = proc.stderr.splitlines()[-1]  # after the run's heading line
    assert error.startswith("heta-eval run: error: ") and f"{cases}:2" in error, error
    assert "relevance label 4611686018427387904 is above 1,000,000" in error
    assert not (tmp_path / "out" / "summary.json").exists()


def test_the_drop_in_refuses_the_label_in_one_line(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"q1 0 d1 {2**62}\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text(RUN, encoding="utf-8")
    proc = heta("trec_eval", qrels, run)
    assert_one_line(proc, "label 4611686018427387904 is above 1,000,000")


@pytest.mark.parametrize(
    "args",
    [
        ["--k", "99999999999999999999"],
        ["--k", "10,9223372036854775808"],
        ["--measures", "P@99999999999999999999"],
        ["--measures", "nDCG@1e20"],
        ["--measures", "ndcg_cut.99999999999999999999"],
        ["--measures", "map_cut.9223372036854775808"],
    ],
)
def test_evaluate_refuses_a_cutoff_beyond_int64_in_one_line(tmp_path, args):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text(RUN, encoding="utf-8")
    proc = heta("evaluate", "--qrels", qrels, "--run", run, *args)
    assert_one_line(proc, args[1].split(",")[-1])


def test_a_cutoff_at_int64s_end_is_scored(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text(RUN, encoding="utf-8")
    proc = heta("evaluate", "--qrels", qrels, "--run", run, "--k", "9223372036854775807")
    assert proc.returncode == 0, proc.stderr
    assert "| NDCG@9223372036854775807 | 1.00000 | 1.00000 |" in proc.stdout


@pytest.mark.parametrize("k", [10**20, 2**63, 0, -1])
def test_the_api_refuses_a_cutoff_outside_int64_with_value_error(k):
    with pytest.raises(ValueError, match=f"positive integer up to 2\\*\\*63 - 1, got {k}"):
        BeirRetrievalMetric(k=k)
    with pytest.raises(ValueError, match="2\\*\\*63 - 1"):
        evaluate_run({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, k_values=(1, k))


_PEAK = """
import random, sys, tracemalloc
from heta_eval import evaluate_run
random.seed(7)
run = {f"q{i}": {f"d{j}": random.random() for j in range(300)} for i in range(50)}
qrels = {f"q{i}": {f"d{j}": random.randint(0, 2) for j in range(0, 900, 5)} for i in range(50)}
names = [f"{m}@{sys.argv[1]}" for m in ("nDCG", "P", "R", "MAP")]
evaluate_run(qrels, run, measures=["nDCG@1"], engine="fast")  # the kernel loaded
tracemalloc.start()
result = evaluate_run(qrels, run, measures=names, engine="fast")
peak = tracemalloc.get_traced_memory()[1]
print(peak, *(a.strict_unrounded for a in result.aggregates.values()))
"""


def test_a_huge_cutoff_costs_the_engine_no_memory_and_changes_no_number():
    def peak_and_values(k: int) -> tuple[int, list[float]]:
        proc = subprocess.run(
            [sys.executable, "-c", _PEAK, str(k)],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        peak, *values = proc.stdout.split()
        return int(peak), [float(v) for v in values]

    big_peak, big = peak_and_values(10**8)
    _, deepest = peak_and_values(900)  # past every ranking (300) and ideal ranking (180)
    assert big_peak < 20 * 2**20, big_peak  # one float per rank would be 800 MB
    # nDCG, R and MAP at 10**8 equal their value past every ranking; P divides by k.
    assert big[0] == deepest[0] and big[2:] == deepest[2:]
    assert big[1] == pytest.approx(deepest[1] * 900 / 10**8)


DEEP = {
    "lists": '{"q1": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "object": '{"q":' * 100_000 + "1" + "}" * 100_000,
    "scores": '{"q1": {"d1": ' + "[" * 100_000 + "]" * 100_000 + "}}",
}


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_a_deeply_nested_json_run_is_one_line_naming_the_file(tmp_path, shape):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    run = tmp_path / "run.json"
    run.write_text(DEEP[shape], encoding="utf-8")
    proc = heta("evaluate", "--qrels", qrels, "--run", run)
    assert_one_line(proc, f"{run}:1: invalid JSON: nested deeper than 500 levels")


def test_the_api_reads_a_deep_json_run_as_a_format_error(tmp_path):
    from heta_eval.io.trec import TrecFormatError, read_run

    run = tmp_path / "run.json"
    run.write_text(DEEP["object"], encoding="utf-8")
    with pytest.raises(TrecFormatError, match=r"run.json:1: invalid JSON: nested deeper"):
        read_run(run)


def test_a_deeply_nested_case_line_is_one_line_naming_file_and_line(tmp_path):
    cases = tmp_path / "cases.jsonl"
    deep = '{"a":' * 50_000 + "1" + "}" * 50_000
    cases.write_text(
        '{"id": "c1", "query": "x"}\n{"id": "c2", "query": "y", "metadata": ' + deep + "}\n",
        encoding="utf-8",
    )
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "Paris"}\n', "utf-8")
    proc = heta(
        "run",
        "--benchmark",
        cases,
        "--documents",
        docs,
        "--modes",
        "keyword_search",
        "--output",
        tmp_path / "out",
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.splitlines()[-1].startswith(
        f"heta-eval run: error: {cases}:2: invalid JSON: nested deeper than 500 levels"
    )


def test_a_deep_hits_file_in_a_results_folder_is_a_value_error_naming_its_line(tmp_path):
    from heta_eval.runner.hits import read_hits

    path = tmp_path / "hits.jsonl"
    good = json.dumps({"case_id": "c1", "mode": "m", "hits": []})
    path.write_text(
        good
        + "\n"
        + '{"case_id": "c2", "mode": "m", "hits": '
        + "[" * 100_000
        + "]" * 100_000
        + "}\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"hits.jsonl:2: not a hits record \(nested deeper"):
        read_hits(path)


def _beir_qrels(path: Path) -> dict:
    from beir.datasets.data_loader import GenericDataLoader

    loader = GenericDataLoader(data_folder=str(path.parent))
    loader.qrels_file = str(path)
    loader._load_qrels()
    return loader.qrels


@pytest.mark.parametrize("line", ['q1\t"d1"x\t1', 'q1\t"d1"\t1', 'q1\td"1\t1', '"q1"\td1\t2'])
def test_quoted_ids_in_a_beir_tsv_read_as_beirs_own_loader_reads_them(tmp_path, line):
    from heta_eval.io.trec import read_qrels

    path = tmp_path / "test.tsv"
    path.write_text(f"query-id\tcorpus-id\tscore\n{line}\nq2\td2\t1\n", encoding="utf-8")
    assert read_qrels(path) == _beir_qrels(path)


@pytest.mark.parametrize("line", ['q1\t"d1\t1', '"q1\td1\t1', 'q1\t"' + "x" * 200_000 + "\t1"])
def test_a_quote_beirs_reader_would_misread_is_one_line_naming_file_and_line(tmp_path, line):
    qrels = tmp_path / "test.tsv"
    qrels.write_text(f"query-id\tcorpus-id\tscore\n{line}\nq2\td2\t1\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text(RUN, encoding="utf-8")
    proc = heta("evaluate", "--qrels", qrels, "--run", run)
    assert_one_line(proc, f"{qrels}:2: a ", "BEIR's csv reader misreads it")


def test_a_trec_qrels_id_starting_with_a_quote_is_read_literally(tmp_path):
    from heta_eval.io.trec import read_qrels

    path = tmp_path / "qrels.txt"
    path.write_text('q1 0 "d1 1\n"q2 0 d2" 0\n', encoding="utf-8")
    assert read_qrels(path) == {"q1": {'"d1': 1}, '"q2': {'d2"': 0}}


# trec_eval's bytes for these files (its build of m_iprec_at_recall.c and get_float_cutoffs,
# run by hand): levels 0.106 and 0.112 both print "0.11", and each keeps its value.
_TEN_RELEVANT = "".join(f"q1 0 d{i} 1\n" for i in range(10)) + "q2 0 d1 1\n"
_RANKING = (
    "q1 Q0 d0 1 100 t\n"
    + "".join(f"q1 Q0 x{i} {i} {30 - i} t\n" for i in range(2, 11))
    + "q1 Q0 d1 11 1 t\nq2 Q0 x 1 2 t\nq2 Q0 d1 2 1 t\n"
)
_IPREC_Q = (
    "iprec_at_recall_0.11  \tq1\t1.0000\n"
    "iprec_at_recall_0.11  \tq1\t0.1818\n"
    "iprec_at_recall_0.11  \tq2\t0.5000\n"
    "iprec_at_recall_0.11  \tq2\t0.5000\n"
    "iprec_at_recall_0.11  \tall\t0.7500\n"
    "iprec_at_recall_0.11  \tall\t0.3409\n"
)


@pytest.mark.parametrize("levels", ["0.112,0.106", "0.106,0.112"])
def test_levels_that_print_alike_each_print_their_own_line_as_trec_eval_does(tmp_path, levels):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(_TEN_RELEVANT, encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text(_RANKING, encoding="utf-8")
    proc = heta("trec_eval", "-q", "-m", f"iprec_at_recall.{levels}", qrels, run)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == _IPREC_Q


def test_levels_that_print_alike_keep_their_values_beside_other_levels_and_measures(tmp_path):
    from heta_eval.trec_eval import trec_eval_lines

    qrels = tmp_path / "qrels.txt"
    qrels.write_text(_TEN_RELEVANT, encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text(_RANKING, encoding="utf-8")
    lines = list(
        trec_eval_lines(
            [
                "-m",
                "iprec_at_recall.0.5,0.106,0.112",
                "-m",
                "P.5",
                "-m",
                "Rprec_mult.0.3,0.304",
                str(qrels),
                str(run),
            ]
        )
    )
    assert lines == [  # trec_eval's output, byte for byte
        "iprec_at_recall_0.11  \tall\t0.7500",
        "iprec_at_recall_0.11  \tall\t0.3409",
        "iprec_at_recall_0.50  \tall\t0.2500",
        "P_5                   \tall\t0.2000",
        "Rprec_mult_0.30       \tall\t0.1667",
        "Rprec_mult_0.30       \tall\t0.1667",
    ]


@pytest.mark.parametrize("measure", ["iprec_at_recall.0.1,0.10", "P.5,5.5", "ndcg_cut.10,10"])
def test_levels_or_cutoffs_trec_eval_reads_as_the_same_number_are_refused(tmp_path, measure):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(_TEN_RELEVANT, encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text(_RANKING, encoding="utf-8")
    assert_one_line(heta("trec_eval", "-m", measure, qrels, run), "duplicate cutoffs")


@pytest.mark.parametrize("name", ["Rprec_mult.1e18", "iprec_at_recall.1e300", "IPrec@1e300"])
def test_a_huge_level_is_scored_under_the_key_trec_eval_cuts_to_its_buffer(tmp_path, name):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text(RUN, encoding="utf-8")
    proc = heta("evaluate", "--qrels", qrels, "--run", run, "--measures", name)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stdout.count("\n| ") >= 2  # the header and the measure's row


def test_the_runner_refuses_a_k_beyond_int64_before_anything_runs(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"id": "c1", "query": "paris", "expected": {"relevance": {"d1": 1}}}\n', encoding="utf-8"
    )
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "Paris"}\n', "utf-8")
    proc = heta(
        "run",
        "--benchmark",
        cases,
        "--documents",
        docs,
        "--modes",
        "keyword_search",
        "--k",
        "10,99999999999999999999",
        "--output",
        tmp_path / "out",
    )
    assert_one_line(proc, "--k: every k must be a positive integer up to 2**63 - 1")
    assert not (tmp_path / "out").exists()


def test_a_malformed_line_of_200000_characters_is_a_short_line_naming_file_and_line(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text("[" * 200_000 + "\n", encoding="utf-8")
    proc = heta("evaluate", "--qrels", qrels, "--run", run)
    assert_one_line(proc, f"{run}:1: expected 6 columns", "... (200,000 characters)")
    assert len(proc.stderr) < 600
