"""Chunk-level responses that collapse to a document-level run score exactly like BEIR on it."""

from __future__ import annotations

import copy
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from support.beir_reference import beir_numbers
from support.parity_strategies import (
    K_VALUES,
    chunked_response,
    qrels_strategy,
    run_strategy,
)

from heta_eval.evaluation import (
    BenchmarkCase,
    beir_default_metrics,
    evaluate_responses,
)


@settings(max_examples=250, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy, k_values=K_VALUES, seed=st.integers(0, 10**6))
def test_chunk_level_responses_equal_beir_on_the_collapsed_run(qrels, run, k_values, seed):
    rng = random.Random(seed)
    judged = {qid: docs for qid, docs in qrels.items() if docs}
    cases = [
        BenchmarkCase(id=qid, query=qid, expected={"relevance": qrels.get(qid, {})})
        for qid in dict.fromkeys([*qrels, *run])
    ]
    responses = {qid: chunked_response(qid, docs, rng) for qid, docs in run.items()}
    snapshot = copy.deepcopy(responses)
    report = evaluate_responses(cases, responses, beir_default_metrics(k_values))
    assert responses == snapshot, "evaluation must not mutate the responses"

    expected = beir_numbers(judged, run, k_values)
    ours = {summary.name: summary.beir for summary in report.metrics.values()}
    if expected is None:
        assert all(v is None for name, v in ours.items() if not name.startswith("mrr"))
        return
    for key, value in expected.items():
        metric, k = key.split("@")
        name = (
            {"NDCG": "ndcg", "MAP": "map", "Recall": "recall", "P": "precision", "MRR": "mrr"}[
                metric
            ]
            + "@"
            + k
        )
        assert ours[name] == value, name


@settings(max_examples=100, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy, seed=st.integers(0, 10**6))
def test_per_case_evaluate_equals_the_batch_values(qrels, run, seed):
    """Calling each evaluator on its own gives the same per-case values as the batch path."""
    import asyncio

    rng = random.Random(seed)
    evaluators = beir_default_metrics((1, 3, 10))
    cases = [BenchmarkCase(id=q, query=q, expected={"relevance": qrels.get(q, {})}) for q in run]
    responses = {qid: chunked_response(qid, docs, rng) for qid, docs in run.items()}
    report = evaluate_responses(cases, responses, evaluators)

    async def one_by_one():
        return {
            (case.id, ev.name): await ev.evaluate(case=case, response=responses[case.id])
            for case in cases
            for ev in evaluators
        }

    for (case_id, name), score in asyncio.run(one_by_one()).items():
        batch = report.scores[case_id][name]
        assert (score.skipped, score.value) == (batch.skipped, batch.value)
