"""A report's per-case scores (``ScoreTable``) are built on first read and equal the eager ones."""

from __future__ import annotations

import asyncio
import pickle
import random

import pytest

from heta_eval.evaluation import (
    AnswerContains,
    BenchmarkCase,
    QueryResponse,
    beir_default_metrics,
    evaluate_responses,
)
from heta_eval.models.columns import ChunkTable
from heta_eval.models.report import EvaluationReport
from heta_eval.providers import backends
from heta_eval.rag.aggregate import ScoreTable, score_retrieval_batch
from heta_eval.retrieval import batch as retrieval_batch


def _columnar_batch(n_cases: int, depth: int, seed: int = 0):
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(400)] + ["q3"]  # q3 is also a document: a self-hit
    table = ChunkTable([d for d in docs for _ in range(2)])
    cases, responses = [], {}
    for i in range(n_cases):
        qid = f"q{i}"
        judged = {rng.choice(docs): rng.randint(0, 2) for _ in range(3)} if i % 7 else {}
        cases.append(
            BenchmarkCase(id=qid, query=qid, expected={"relevance": judged, "answers": ["d1"]})
        )
        rows = rng.sample(range(len(table)), depth)
        scores = [round(rng.random(), 2) for _ in rows]  # rounded: many exact ties
        if i % 5 != 4:  # every fifth case has no response: missing
            responses[qid] = QueryResponse(
                query=qid, results=table.columns(rows, scores), answer=f"d{i % 3}"
            )
    return cases, responses


@pytest.mark.parametrize("fast", [True, False])
def test_report_scores_equal_the_per_case_evaluators(monkeypatch, fast):
    if fast:  # the compiled batch path, at a size where "auto" would not pick it
        monkeypatch.setattr(backends, "ENGINE_MIN_ROWS", 0)
    cases, responses = _columnar_batch(40, 60)
    evaluators = [*beir_default_metrics((1, 5, 10)), AnswerContains()]
    report = evaluate_responses(cases, responses, evaluators)

    async def one_by_one():
        out = {}
        for case in cases:
            if case.id in responses:
                for ev in evaluators:
                    out[case.id, ev.name] = await ev.evaluate(
                        case=case, response=responses[case.id]
                    )
        return out

    expected = asyncio.run(one_by_one())
    got = {(cid, name): s for cid, scores in report.scores.items() for name, s in scores.items()}
    unjudged_missing = {c.id for c in cases if not c.expected.relevance and c.id not in responses}
    # Unjudged cases without a response still get their retrieval skips, as before.
    assert {cid for cid, _ in got} == {cid for cid, _ in expected} | unjudged_missing
    for key, score in expected.items():
        assert got[key] == score, key
    # Each case's scores: retrieval metrics first, then the others, in evaluator order.
    assert list(report.scores["q1"]) == [ev.name for ev in evaluators]
    assert report.metrics["ndcg@10"].scored == sum(
        1 for c in cases if c.expected.relevance and c.id in responses
    )


def test_scores_are_built_once_on_first_read(monkeypatch):
    monkeypatch.setattr(backends, "ENGINE_MIN_ROWS", 0)
    cases, responses = _columnar_batch(10, 20)
    calls = []
    original = retrieval_batch._fill_scores

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(retrieval_batch, "_fill_scores", counting)
    report = evaluate_responses(cases, responses, beir_default_metrics((1, 10)))
    assert calls == [], "no per-case score is built until someone reads one"
    assert report.metrics["ndcg@10"].beir is not None
    first = report.scores["q1"]["ndcg@10"]
    assert report.scores["q1"]["ndcg@10"] is first
    with_scores = [c.id for c in cases if c.id in responses or not c.expected.relevance]
    assert list(report.scores) == with_scores and calls == [1]


def test_reports_serialize_pickle_and_compare_as_plain_dicts(monkeypatch):
    monkeypatch.setattr(backends, "ENGINE_MIN_ROWS", 0)
    cases, responses = _columnar_batch(12, 15)
    report = evaluate_responses(cases, responses, beir_default_metrics((3,)))
    again = EvaluationReport.model_validate_json(report.model_dump_json())
    assert isinstance(again.scores, ScoreTable)
    assert again == report
    assert pickle.loads(pickle.dumps(report)) == report
    plain = report.model_dump()["scores"]
    assert (
        type(plain) is dict
        and plain["q1"]["ndcg@3"]["value"] == report.scores["q1"]["ndcg@3"].value
    )
    assert report.scores == score_retrieval_batch(beir_default_metrics((3,)), cases, responses)
    with pytest.raises(TypeError):
        report.scores["q1"] = {}  # type: ignore[index]


def test_a_report_built_by_hand_validates_its_scores():
    report = EvaluationReport(
        metrics={}, scores={"q1": {"x": {"name": "x", "value": 0.5}}}, cases=1, responses=1
    )
    assert report.scores["q1"]["x"].value == 0.5
    with pytest.raises(ValueError, match=r"scores\.q1\.x\.value"):
        EvaluationReport(metrics={}, scores={"q1": {"x": {"name": "x", "value": [1]}}})
