"""evaluate_responses: aggregation by value type, failures, missing responses, shared cost."""

from __future__ import annotations

import asyncio

import pytest
import pytrec_eval_ext

from heta_eval.evaluation import (
    AnswerExactMatch,
    BeirRetrievalMetric,
    BenchmarkCase,
    EvaluationScore,
    EvidenceRecallAtK,
    QueryResponse,
    beir_default_metrics,
    evaluate_responses,
)
from heta_eval.rag.aggregate import aevaluate_responses

CASES = [
    BenchmarkCase(id="q1", query="a", expected={"answers": ["x"], "relevance": {"d1": 1}}),
    BenchmarkCase(id="q2", query="b", expected={"answers": ["y"], "relevance": {"d2": 1}}),
    BenchmarkCase(id="q3", query="c", expected={"answers": []}),
]


def response(answer: str, *docs: str) -> QueryResponse:
    results = [{"score": 10.0 - i, "source": {"document_id": d}} for i, d in enumerate(docs)]
    return QueryResponse(query="?", answer=answer, results=results)


class Label:
    name = "label"

    async def evaluate(self, *, case, response):
        return EvaluationScore(name=self.name, value=response.answer.upper())


class Flaky:
    name = "flaky"

    async def evaluate(self, *, case, response):
        if case.id == "q2":
            raise RuntimeError("judge exploded")
        return EvaluationScore(name=self.name, value=0.5, passed=True)


class Slow:
    name = "slow"

    async def evaluate(self, *, case, response):
        await asyncio.sleep(0 if case.id == "q1" else 5)
        return EvaluationScore(name=self.name, value=1.0)


def test_aggregates_by_value_type_and_counts_skips():
    responses = {"q1": response("x", "d1"), "q2": response("z", "d9"), "q3": response("w")}
    report = evaluate_responses(
        CASES, responses, [AnswerExactMatch(), Label(), BeirRetrievalMetric("ndcg", 10)]
    )
    em = report.metrics["answer_exact_match"]
    assert (em.kind, em.value, em.pass_rate, em.scored, em.skipped) == ("boolean", 0.5, 0.5, 2, 1)
    label = report.metrics["label"]
    assert label.kind == "categorical" and label.counts == {"X": 1, "Z": 1, "W": 1}
    ndcg = report.metrics["ndcg@10"]
    assert (ndcg.kind, ndcg.value, ndcg.strict, ndcg.scored, ndcg.skipped) == (
        "retrieval",
        0.5,
        0.5,
        2,
        1,
    )
    assert report.scores["q3"]["ndcg@10"].skipped
    assert not report.partial
    assert "| ndcg@10 | 0.50000 | 0.50000 | 0.50000 | 2 | 1 | 0 | 0 |" in report.table()


def test_a_failing_evaluator_is_recorded_against_its_case_and_marks_the_aggregate_partial():
    responses = {cid: response("x", "d1") for cid in ("q1", "q2", "q3")}
    report = evaluate_responses(CASES, responses, [Flaky()], timeout=60)
    flaky = report.metrics["flaky"]
    assert (flaky.value, flaky.scored, flaky.failed, flaky.partial) == (0.5, 2, 1, True)
    assert [(f.case_id, f.error) for f in report.failures] == [
        ("q2", "RuntimeError: judge exploded")
    ]


def test_an_evaluator_that_times_out_is_a_failure_not_a_hang():
    responses = {"q1": response("x", "d1"), "q2": response("y", "d2")}
    report = evaluate_responses(CASES[:2], responses, [Slow()], timeout=0.2)
    assert report.metrics["slow"].failed == 1
    assert report.failures[0].error == "timed out after 0.2s"


def test_missing_response_is_dropped_by_beir_and_zero_in_strict():
    report = evaluate_responses(
        CASES, {"q1": response("x", "d1")}, [BeirRetrievalMetric("ndcg", 10)]
    )
    ndcg = report.metrics["ndcg@10"]
    assert (ndcg.beir, ndcg.strict, ndcg.missing, ndcg.partial) == (1.0, 0.5, 1, True)


def test_responses_may_be_a_sequence_or_plain_dicts():
    plain = [{"query": "a", "results": [{"score": 1, "source": {"document_id": "d1"}}]}, None, None]
    report = evaluate_responses(CASES, plain, [BeirRetrievalMetric("recall", 1)])
    assert report.metrics["recall@1"].beir == 1.0
    with pytest.raises(ValueError, match="got 1 responses for 3 cases"):
        evaluate_responses(CASES, plain[:1], [BeirRetrievalMetric("recall", 1)])
    with pytest.raises(ValueError, match="unknown case ids"):
        evaluate_responses(CASES, {"nope": plain[0]}, [BeirRetrievalMetric("recall", 1)])


def test_repeated_evaluator_names_are_rejected():
    with pytest.raises(ValueError, match="evaluator names must be unique"):
        evaluate_responses(CASES, {}, [EvidenceRecallAtK(5), EvidenceRecallAtK(5)])


async def test_sync_entry_point_works_inside_a_running_event_loop():
    responses = {"q1": response("x", "d1")}
    report = evaluate_responses(CASES, responses, [BeirRetrievalMetric("ndcg", 10)])
    assert report.metrics["ndcg@10"].beir == 1.0
    again = await aevaluate_responses(CASES, responses, [BeirRetrievalMetric("ndcg", 10)])
    assert again.metrics == report.metrics


class CountingEvaluator(pytrec_eval_ext.RelevanceEvaluator):
    created = 0

    def __init__(self, *args, **kwargs):
        type(self).created += 1
        super().__init__(*args, **kwargs)


def test_25_default_metrics_cost_one_pytrec_eval_pass(monkeypatch):
    # The provider calls pytrec_eval's C extension (trec_eval's code) directly.
    monkeypatch.setattr(pytrec_eval_ext, "RelevanceEvaluator", CountingEvaluator)
    cases = [
        BenchmarkCase(id=f"q{i}", query="?", expected={"relevance": {"d1": 1}}) for i in range(50)
    ]
    responses = {c.id: response("", "d2", "d1") for c in cases}
    CountingEvaluator.created = 0
    evaluate_responses(cases, responses, beir_default_metrics())
    assert CountingEvaluator.created == 1


async def test_per_case_calls_equal_the_batch_scores():
    # A per-case call goes through the same evaluator as the batch (no id()-keyed cache:
    # batches are scored by evaluate_responses and the runner).
    case, reply = CASES[0], response("", "d2", "d1")
    metrics = beir_default_metrics()
    values = [await m.evaluate(case=case, response=reply) for m in metrics]
    batch = evaluate_responses([case], {case.id: reply}, metrics).scores[case.id]
    assert {v.name: v for v in values} == dict(batch)
    assert {v.name: round(v.value, 5) for v in values}["ndcg@10"] == 0.63093


def test_scores_built_without_validation_equal_validated_ones():
    # The batch path builds 175k scores at MS MARCO size without re-validating them; a
    # pydantic upgrade that changed model internals must not go unnoticed.
    from heta_eval.retrieval.batch import _fast_score

    metadata = {"documents": 3, "unmapped_results": 0}
    fast = _fast_score("ndcg@10", 0.5, metadata)
    slow = EvaluationScore(name="ndcg@10", value=0.5, metadata=metadata)
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_fields_set == slow.model_fields_set
    assert EvaluationScore.model_validate(fast.model_dump()) == fast
