"""On the real SciFact test qrels and a real run, our numbers equal BEIR's and trec_eval's."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from beir.datasets.data_loader import GenericDataLoader
from support.beir_reference import beir_numbers

from heta_eval.evaluation import (
    BenchmarkCase,
    QueryResponse,
    beir_default_metrics,
    evaluate_responses,
    evaluate_run,
)

K_VALUES = (1, 3, 5, 10, 100)
# trec_eval (-m ndcg_cut.10 -m recall.100 -m map_cut.10 -m P.10) on this run, from the
# README of ../shared/datasets.
TREC_EVAL = {"NDCG@10": 0.5701, "Recall@100": 0.8523, "MAP@10": 0.5165, "P@10": 0.0783}


def read_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
    return run


@pytest.fixture(scope="module")
def scifact(scifact_dir: Path, scifact_run_file: Path):
    _, _, qrels = GenericDataLoader(data_folder=str(scifact_dir)).load(split="test")
    return qrels, read_run(scifact_run_file)


def test_real_run_equals_beir_and_trec_eval(scifact):
    qrels, run = scifact
    ours = evaluate_run(qrels, run, K_VALUES)
    expected = beir_numbers(qrels, run, K_VALUES)
    assert {key: agg.beir for key, agg in ours.aggregates.items()} == expected
    for key, value in TREC_EVAL.items():
        assert round(ours.aggregates[key].beir_unrounded, 4) == value
        assert round(ours.aggregates[key].strict_unrounded, 4) == value
    assert ours.counts["judged_queries"] == 300
    assert ours.counts["missing_queries"] == 0
    assert ours.counts["unjudged_queries"] == 809  # the train queries in the run


def test_strict_aggregate_counts_missing_queries_as_zero(scifact):
    qrels, run = scifact
    dropped = sorted(qrels)[:30]
    partial_run = {qid: docs for qid, docs in run.items() if qid not in dropped}
    ours = evaluate_run(qrels, partial_run, K_VALUES)
    full = evaluate_run(qrels, run, K_VALUES)
    ndcg = ours.aggregates["NDCG@10"]
    assert ndcg.beir == beir_numbers(qrels, partial_run, K_VALUES)["NDCG@10"]
    kept_sum = sum(full.per_query[q]["NDCG@10"] for q in qrels if q not in dropped)
    assert ndcg.strict_unrounded == pytest.approx(kept_sum / 300, abs=1e-12)
    assert ndcg.beir_unrounded == pytest.approx(kept_sum / 270, abs=1e-12)
    assert ndcg.differs
    assert ours.counts["missing_queries"] == 30


def test_real_run_as_chunk_responses_gives_the_same_numbers(scifact, scifact_dir):
    qrels, run = scifact
    queries = {}
    with (scifact_dir / "queries.jsonl").open(encoding="utf-8") as handle:
        import json

        for line in handle:
            row = json.loads(line)
            queries[row["_id"]] = row["text"]
    cases = [
        BenchmarkCase(id=qid, query=queries[qid], expected={"relevance": docs})
        for qid, docs in qrels.items()
    ]
    # Each document becomes two chunks: the document's score, then a lower-ranked duplicate.
    responses = {}
    for qid in qrels:
        ranked = sorted(run[qid].items(), key=lambda item: -item[1])
        results = [
            {"score": s, "source": {"document_id": d, "chunk_id": f"{d}#0"}} for d, s in ranked
        ]
        results += [
            {"score": s - 1000, "source": {"document_id": d, "chunk_id": f"{d}#1"}}
            for d, s in ranked
        ]
        responses[qid] = QueryResponse(query=queries[qid], results=results)
    report = evaluate_responses(cases, responses, beir_default_metrics(K_VALUES))
    expected = evaluate_run(qrels, run, K_VALUES)
    for evaluator in beir_default_metrics(K_VALUES):
        summary = report.metrics[evaluator.name]
        assert summary.beir == expected.aggregates[evaluator.key].beir
        assert summary.strict == expected.aggregates[evaluator.key].strict
        assert summary.scored == 300 and summary.missing == 0


def test_qrels_reader_matches_header_skipping(scifact_dir):
    # Sanity check on the data the tests rely on: 339 judgments for 300 queries.
    with (scifact_dir / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))[1:]
    assert len(rows) == 339 and len({r[0] for r in rows}) == 300
