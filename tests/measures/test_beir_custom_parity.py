"""R_cap@k, Hole@k and Accuracy@k (with MRR@k, the other ``evaluate_custom`` measure) equal the
``beir`` package's ``custom_metrics`` functions: random runs with ties, zero and negative labels,
empty rankings, queries without a relevant document, self-hits and unjudged queries, on the
pytrec path and the compiled engine, below and above the engine threshold, chunk-level
batches, run files, the command line and the real SciFact run."""

from __future__ import annotations

import copy
import json
import random

import pytest
from beir.retrieval.custom_metrics import hole, recall_cap, top_k_accuracy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.beir_reference import beir_custom_numbers
from support.parity_strategies import (
    DOCS,
    QIDS,
    WIDE_K,
    chunked_response,
    run_strategy,
    wide_run_strategy,
)

from heta_eval.cli import main
from heta_eval.evaluation import BenchmarkCase, QueryResponse, evaluate_responses, evaluate_run
from heta_eval.io.trec import read_qrels, read_run, write_qrels, write_run
from heta_eval.providers import backends
from heta_eval.rag.aggregate import score_retrieval_batch
from heta_eval.retrieval.metric import BeirRetrievalMetric, beir_default_metrics
from heta_eval.retrieval.run_file import evaluate_run_file

CUSTOM = ("mrr", "r_cap", "hole", "accuracy")
# Negative and zero labels: not relevant for R_cap and Accuracy, judged for Hole.
signed_qrels = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOCS), st.integers(min_value=-2, max_value=3), max_size=6),
    max_size=5,
)


def _flat(evaluation) -> dict[str, float | None]:
    return {key: agg.beir for key, agg in evaluation.aggregates.items()}


def _check(qrels, run, k_values, ours) -> None:
    expected = beir_custom_numbers(qrels, run, k_values)
    if expected is None:  # no qrels: BEIR divides by zero, heta-eval has no number
        assert all(value is None for value in _flat(ours).values())
    else:
        assert _flat(ours) == expected


@settings(max_examples=400, deadline=None)
@given(qrels=signed_qrels, run=st.one_of(run_strategy, wide_run_strategy), k_values=WIDE_K)
def test_custom_measures_equal_beir_on_both_backends(qrels, run, k_values):
    before = copy.deepcopy(run)
    slow = evaluate_run(qrels, run, k_values, metrics=CUSTOM, engine="pytrec")
    fast = evaluate_run(qrels, run, k_values, metrics=CUSTOM, engine="fast")
    assert run == before
    _check(qrels, run, k_values, slow)
    assert fast.per_query == slow.per_query
    assert fast.aggregates == slow.aggregates
    # Self-hits kept: still one number on both backends.
    kept = [
        evaluate_run(
            qrels, run, k_values, metrics=CUSTOM, engine=engine, ignore_identical_ids=False
        )
        for engine in ("pytrec", "fast")
    ]
    assert kept[0].per_query == kept[1].per_query and kept[0].aggregates == kept[1].aggregates


@settings(max_examples=60, deadline=None)
@given(qrels=signed_qrels, run=wide_run_strategy, k_values=WIDE_K)
def test_below_and_above_the_engine_threshold_the_numbers_are_beirs(qrels, run, k_values):
    measures = [f"{name}@{k}" for name in ("R_cap", "Hole", "Accuracy") for k in k_values]
    below = evaluate_run(qrels, run, measures=measures)  # a small run: pytrec path
    original = backends.ENGINE_MIN_ROWS
    backends.ENGINE_MIN_ROWS = 0  # every run is large: engine="auto" takes the engine
    try:
        parsed = [m for m in below.measures.values()]
        assert backends.choose_backend("auto", parsed, large=True) == "fast"
        above = evaluate_run(qrels, run, measures=measures)
    finally:
        backends.ENGINE_MIN_ROWS = original
    assert above.per_query == below.per_query and above.aggregates == below.aggregates
    expected = beir_custom_numbers(qrels, run, k_values)
    if expected is not None:
        assert {k: v.beir for k, v in above.aggregates.items()} == {
            k: v for k, v in expected.items() if not k.startswith("MRR")
        }


def test_equal_scores_keep_the_runs_order_as_beirs_stable_sort_does():
    # trec_eval's ranking puts "b" first (ties by doc id descending); BEIR's sort keeps "a".
    qrels = {"q": {"b": 1, "z": 0}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    ours = evaluate_run(qrels, run, (1,), metrics=["ndcg", *CUSTOM])
    assert ours.beir_dict() == {
        "ndcg": {"NDCG@1": 1.0},
        "mrr": {"MRR@1": 0.0},
        "r_cap": {"R_cap@1": 0.0},
        "hole": {"Hole@1": 1.0},
        "accuracy": {"Accuracy@1": 0.0},
    }
    assert {k: v for k, v in _flat(ours).items() if k != "NDCG@1"} == beir_custom_numbers(
        qrels, run, (1,)
    )


def test_r_cap_of_a_query_without_a_relevant_document_is_zero_where_beir_divides_by_zero():
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    with pytest.raises(ZeroDivisionError):
        recall_cap(qrels, run, [10])
    for engine in ("pytrec", "fast"):
        ours = evaluate_run(qrels, run, (10,), metrics=["r_cap"], engine=engine)
        assert ours.per_query["q2"] == {"R_cap@10": 0.0}
        assert ours.beir_dict()["r_cap"] == {"R_cap@10": 0.5}  # counted: 1 / 2 queries
        assert ours.strict_dict()["r_cap"] == {"R_cap@10": 0.5}


def test_hole_counts_against_every_document_any_query_judges():
    # "x" is judged (label 0) by q2 only: not a hole for q1. "y" is judged by no one.
    qrels = {"q1": {"a": 1}, "q2": {"x": 0}, "q3": {"b": -1}}
    run = {"q1": {"x": 3.0, "y": 2.0, "a": 1.0, "b": 0.5}}
    assert hole(qrels, run, [4]) == {"Hole@4": round(1 / 4 / 3, 5)}
    for engine in ("pytrec", "fast"):
        ours = evaluate_run(qrels, run, (4,), metrics=["hole"], engine=engine)
        assert ours.per_query["q1"] == {"Hole@4": 0.25}
        assert ours.beir_dict()["hole"] == hole(qrels, run, [4])
        # BEIR divides by every qrels query; the strict mean by the judged ones (q3 too).
        assert ours.aggregates["Hole@4"].beir_unrounded == 0.25 / 3


def test_accuracy_needs_a_label_above_zero_and_divides_by_every_qrels_query():
    qrels = {"q1": {"a": 0}, "q2": {"b": 2}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"x": 2.0, "b": 1.0}}
    for engine in ("pytrec", "fast"):
        ours = evaluate_run(qrels, run, (1, 2), metrics=["accuracy"], engine=engine)
        assert ours.beir_dict()["accuracy"] == top_k_accuracy(qrels, run, [1, 2])
        assert ours.beir_dict()["accuracy"] == {"Accuracy@1": 0.0, "Accuracy@2": 0.33333}


@settings(max_examples=120, deadline=None)
@given(qrels=signed_qrels, run=run_strategy, k_values=WIDE_K, seed=st.integers(0, 10**6))
def test_chunk_responses_score_as_beir_on_the_collapsed_run(qrels, run, k_values, seed):
    rng = random.Random(seed)
    cases = [
        BenchmarkCase(id=qid, query=qid, expected={"relevance": qrels.get(qid, {})})
        for qid in dict.fromkeys([*qrels, *run])
    ]
    responses = {qid: chunked_response(qid, docs, rng) for qid, docs in run.items()}
    metrics = beir_default_metrics(k_values, metrics=CUSTOM)
    # Both batch backends give the same per-case scores (Hole against every case's judgments).
    fast = score_retrieval_batch(metrics, cases, responses, engine="fast")
    assert fast == score_retrieval_batch(metrics, cases, responses, engine="pytrec")
    report = evaluate_responses(cases, responses, metrics)
    judged = {qid: docs for qid, docs in qrels.items() if docs}  # a case without judgments: skipped
    expected = beir_custom_numbers(judged, run, k_values)
    ours = {summary.name: summary.beir for summary in report.metrics.values()}
    if expected is None:
        assert all(value is None for value in ours.values())
        return
    names = {"MRR": "mrr", "R_cap": "r_cap", "Hole": "hole", "Accuracy": "accuracy"}
    assert ours == {f"{names[k.split('@')[0]]}@{k.split('@')[1]}": v for k, v in expected.items()}


def test_hole_scored_on_one_case_alone_is_refused_and_the_others_are_its_batch_value():
    import asyncio

    case = BenchmarkCase(id="q", query="?", expected={"relevance": {"d1": 1, "d3": 0}})
    response = QueryResponse(
        query="?",
        results=[
            {"score": 2.0, "source": {"document_id": "d2"}},
            {"score": 1.0, "source": {"document_id": "d1"}},
        ],
    )
    with pytest.raises(ValueError, match="hole@10 counts documents that no case judges"):
        asyncio.run(BeirRetrievalMetric("hole", 10).evaluate(case=case, response=response))
    for name, value in (("r_cap", 1.0), ("accuracy", 1.0), ("mrr", 0.5)):
        metric = BeirRetrievalMetric(name, 10)
        score = asyncio.run(metric.evaluate(case=case, response=response))
        assert (score.name, score.value) == (f"{name}@10", value)
    report = evaluate_responses([case], {"q": response}, [BeirRetrievalMetric("hole", 10)])
    assert report.metrics["hole@10"].beir == 0.1


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(qrels=signed_qrels, run=run_strategy, columnar=st.booleans())
def test_cli_measures_equal_beir_on_the_run_file(
    tmp_path, capsys, monkeypatch, qrels, run, columnar
):
    qrels = {
        q: {d: max(label, 0) for d, label in docs.items()} for q, docs in qrels.items() if docs
    }
    run = {q: docs for q, docs in run.items() if docs}
    if not qrels or not run:
        return  # a file needs at least one line
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run(run, tmp_path / "run.trec", sort=False)  # BEIR's sort keeps the file's order
    if columnar:  # the file is read into arrays and scored by the engine
        monkeypatch.setattr(backends, "COMPILED_MIN_BYTES", 0)
        monkeypatch.setattr(backends, "ENGINE_MIN_ROWS", 0)
    argv = [
        "evaluate",
        "--run",
        str(tmp_path / "run.trec"),
        "--qrels",
        str(tmp_path / "qrels.txt"),
        "--measures",
        "R_cap@10,Hole@10,Accuracy@10",
        "--json",
        "--per-query",
    ]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    expected = beir_custom_numbers(qrels, read_run(tmp_path / "run.trec"), (10,))
    assert {name: value["beir"] for name, value in out["measures"].items()} == {
        "R_cap@10": expected["R_cap@10"],
        "Hole@10": expected["Hole@10"],
        "Accuracy@10": expected["Accuracy@10"],
    }


def test_cli_table_shows_beir_beside_strict(tmp_path, capsys):
    write_qrels({"q1": {"a": 1}, "q2": {"b": 1}}, tmp_path / "qrels.txt")
    write_run({"q1": {"a": 2.0, "x": 1.0}}, tmp_path / "run.trec")
    argv = [
        "evaluate",
        "--run",
        str(tmp_path / "run.trec"),
        "--qrels",
        str(tmp_path / "qrels.txt"),
        "--measures",
        "R_cap@10,Hole@10,Accuracy@10",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    # BEIR divides by both qrels queries; strict counts q2 (not in the run) as 0 too.
    for line in (
        "| R_cap@10 | 0.50000 | 0.50000 |",
        "| Hole@10 | 0.05000 | 0.05000 |",
        "| Accuracy@10 | 0.50000 | 0.50000 |",
    ):
        assert line in out, out


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("R_cap@10", "R_cap@10"),
        ("r_cap@10", "R_cap@10"),
        ("recall_cap@10", "R_cap@10"),
        ("Hole@10", "Hole@10"),
        ("hole@10", "Hole@10"),
        ("Accuracy@10", "Accuracy@10"),
        ("accuracy@10", "Accuracy@10"),
        ("acc@10", "Accuracy@10"),
        ("top_k_acc@10", "Accuracy@10"),
        ("top_k_accuracy@10", "Accuracy@10"),
    ],
)
def test_beirs_spellings_parse_to_one_measure_with_one_name_per_context(spelling, name):
    from heta_eval.measures.measure import Measure, canonical_metric, parse_measure

    measure = Measure.parse(spelling)
    assert (str(measure), measure.beir_name, measure.trec_name) == (name, name, None)
    assert measure.evaluator_name == canonical_metric(spelling) == name.lower()
    assert measure.rule == f"beir_{measure.family}"
    assert parse_measure(spelling) == measure.legacy
    assert canonical_metric(name.lower().replace("@", "_")) == name.lower()


def test_success_stays_trec_eval_and_rr_stays_ir_measures():
    from heta_eval.measures.measure import Measure

    assert Measure.parse("Success@10").rule == "trec_eval"  # trec_eval's order, not BEIR's
    assert Measure.parse("RR@10").rule == "rr_cut"


def test_real_scifact_run_equals_beir(scifact_dir, scifact_run_file):
    qrels = read_qrels(scifact_dir / "qrels" / "test.tsv")
    run = read_run(scifact_run_file)
    k_values = (1, 3, 5, 10, 100)
    expected = beir_custom_numbers(qrels, run, k_values)
    slow = evaluate_run(qrels, run, k_values, metrics=CUSTOM, engine="pytrec")
    fast = evaluate_run(qrels, run, k_values, metrics=CUSTOM, engine="fast")
    assert _flat(slow) == expected
    assert fast.per_query == slow.per_query and fast.aggregates == slow.aggregates
    # The file read straight into arrays (as a large file is) gives the same numbers.
    original = backends.COMPILED_MIN_BYTES, backends.ENGINE_MIN_ROWS
    backends.COMPILED_MIN_BYTES, backends.ENGINE_MIN_ROWS = 0, 0
    try:
        from_file = evaluate_run_file(qrels, scifact_run_file, k_values, metrics=CUSTOM)
    finally:
        backends.COMPILED_MIN_BYTES, backends.ENGINE_MIN_ROWS = original
    assert from_file.aggregates == slow.aggregates


def test_runner_compare_leaderboard_and_report_carry_the_measures(tmp_path, capsys):
    from support.kb_fixtures import AnimalBenchmark, KeywordOverlapKB

    from heta_eval.runner import BenchmarkRunner

    class Animals(AnimalBenchmark):
        def evaluators(self):
            return beir_default_metrics((1, 10), metrics=["r_cap", "hole", "accuracy"])

    benchmark = Animals()
    folder = tmp_path / "out"
    BenchmarkRunner(progress=False).run(
        benchmark=benchmark,
        knowledge_base=KeywordOverlapKB(),
        query_modes=("keyword_search",),
        output_dir=folder,
    )
    summary = json.loads((folder / "summary.json").read_text())
    metrics = summary["modes"]["keyword_search"]["metrics"]
    # The run's file scored by evaluate_run over the benchmark's qrels: the same numbers.
    qrels = {case.id: case.expected.relevance for case in benchmark.cases()}
    run = read_run(folder / "runs" / "keyword_search.trec")
    expected = evaluate_run(qrels, run, (1, 10), metrics=["r_cap", "hole", "accuracy"])
    for name, aggregate in expected.aggregates.items():
        assert metrics[name.lower()]["beir"] == aggregate.beir, name
        assert metrics[name.lower()]["strict"] == aggregate.strict, name
    assert "| keyword_search | hole |" in (folder / "table.md").read_text()

    write_qrels(qrels, tmp_path / "qrels.txt")
    shuffled = {q: dict(reversed(list(docs.items()))) for q, docs in run.items()}
    write_run(shuffled, tmp_path / "other.trec", sort=False)
    runs = [str(folder / "runs" / "keyword_search.trec"), str(tmp_path / "other.trec")]
    capsys.readouterr()
    for metric in ("R_cap@10", "hole@10", "Accuracy@1"):
        argv = ["compare", *runs, "--qrels", str(tmp_path / "qrels.txt"), "--metric", metric]
        assert main([*argv, "--format", "json"]) == 0, capsys.readouterr().err
        assert metric.lower() in capsys.readouterr().out
    assert main(["leaderboard", str(folder), "--metric", "hole@10"]) == 0
    assert f"{metrics['hole@10']['beir']:.4f}" in capsys.readouterr().out
    assert main(["report", str(folder)]) == 0
    assert "hole@10" in (folder / "report.html").read_text(encoding="utf-8")


def test_bench_custom_quick_times_the_same_numbers_as_beir(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import bench_custom

    out = tmp_path / "rows.json"
    assert bench_custom.main(["--quick", "--repeats", "1", "--output", str(out)]) == 0
    (bench_row,) = json.loads(out.read_text())
    assert bench_row["identical"] is True and bench_row["ratio"] > 0
