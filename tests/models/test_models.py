"""Models validate plain dicts at the boundary and name the field when they reject input."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from heta_eval.evaluation import BenchmarkCase, Document, EvaluationScore, QueryResponse
from heta_eval.models.records import GoldEvidence


def error_locations(error: ValidationError) -> list[str]:
    return [".".join(str(part) for part in item["loc"]) for item in error.errors()]


def test_query_response_validates_json_from_another_system():
    payload = json.dumps(
        {
            "query": "q",
            "mode": "hybrid_search",
            "answer": "yes",
            "results": [
                {
                    "text": "t",
                    "score": 1,
                    "reference_id": 7,
                    "source": {"document_id": 12, "page_index": 2},
                }
            ],
            "metadata": {"latency_ms": 12.5},
        }
    )
    response = QueryResponse.model_validate_json(payload)
    assert response.results[0].score == 1.0
    assert response.results[0].reference_id == "7"
    assert response.results[0].source == {"document_id": 12, "page_index": 2}
    assert response.metadata["latency_ms"] == 12.5


@pytest.mark.parametrize(
    ("payload", "location"),
    [
        ({"query": "q", "results": "not a list"}, "results"),
        ({"query": "q", "results": [{"score": "high"}]}, "results.0.score"),
        ({"query": "q", "results": [{"score": float("nan")}]}, "results.0.score"),
        ({"query": "q", "results": [{"source": ["d1"]}]}, "results.0.source"),
        ({"query": ["q"]}, "query"),
        ({"results": []}, "query"),
    ],
)
def test_query_response_rejects_wrong_types_naming_the_field(payload, location):
    with pytest.raises(ValidationError) as raised:
        QueryResponse.model_validate(payload)
    assert location in error_locations(raised.value)


@pytest.mark.parametrize(
    ("payload", "location"),
    [
        ({"id": "1", "query": "q", "expected": {"relevance": {"d": 1.5}}}, "expected.relevance"),
        ({"id": "1", "query": "q", "expected": {"relevance": {"d": "1"}}}, "expected.relevance"),
        ({"id": "1", "query": "q", "expected": {"answers": "Paris"}}, "expected.answers"),
        ({"id": "1", "query": "q", "expected": {"evidence": [{}]}}, "expected.evidence.0"),
        (
            {"id": "1", "query": "q", "expected": {"evidence": [{"locator": "d1"}]}},
            "expected.evidence.0.locator",
        ),
        ({"id": None, "query": "q"}, "id"),
        ({"id": "1", "query": "q", "unknown": 1}, "unknown"),
    ],
)
def test_benchmark_case_rejects_wrong_types_naming_the_field(payload, location):
    with pytest.raises(ValidationError) as raised:
        BenchmarkCase.model_validate(payload)
    assert location in error_locations(raised.value)


def test_relevance_error_names_the_document():
    with pytest.raises(ValidationError, match="'doc-9' must be an integer"):
        BenchmarkCase(id="1", query="q", expected={"relevance": {"doc-9": 1.0}})


def test_numeric_ids_are_accepted_as_strings():
    case = BenchmarkCase(id=42, query="q", expected={"relevance": {"7": 1}})
    assert case.id == "42"


def test_evaluation_score_keeps_value_types():
    assert EvaluationScore(name="s", value=True).value is True
    assert EvaluationScore(name="s", value=0.5).value == 0.5
    assert EvaluationScore(name="s", value="SUPPORT").value == "SUPPORT"
    with pytest.raises(ValidationError) as raised:
        EvaluationScore(name="s", value=[1])
    assert "value" in error_locations(raised.value)[0]
    with pytest.raises(ValidationError, match="only be None for a skipped score"):
        EvaluationScore(name="s", value=None)


def test_skipped_score_has_no_value_and_a_reason():
    score = EvaluationScore.skip("answer_em", "no gold answers")
    assert score.skipped and score.value is None
    assert score.metadata["skip_reason"] == "no gold answers"


def test_gold_evidence_needs_something_to_match():
    assert GoldEvidence(text="x").text == "x"
    with pytest.raises(ValidationError, match="at least one of locator"):
        GoldEvidence()


def test_document_spans_must_lie_inside_the_text():
    with pytest.raises(ValidationError, match=r"sentences\[1\] = \(3, 99\)"):
        Document(id="d", text="abcdef", sentences=[(0, 3), (3, 99)])


def test_fast_scores_equal_pydantic_built_ones():
    # The batch scorer builds EvaluationScore without validation (_runtime.construct_valid):
    # the model must equal pydantic's own, and behave the same when dumped, copied, changed.
    from heta_eval._runtime import construct_valid

    fields = {"name": "ndcg@10", "value": 0.5, "passed": None, "metadata": {"documents": 3}}
    fields["skipped"] = False
    given = frozenset({"name", "value", "metadata"})
    fast = construct_valid(EvaluationScore, dict(fields), given)
    built = EvaluationScore(name="ndcg@10", value=0.5, metadata={"documents": 3})
    constructed = EvaluationScore.model_construct(set(given), **fields)
    assert fast == built == constructed
    assert fast.model_fields_set == built.model_fields_set == set(given)
    assert fast.model_dump_json() == built.model_dump_json()
    assert fast.model_dump(exclude_unset=True) == built.model_dump(exclude_unset=True)
    assert fast.model_copy(update={"value": 1.0}).value == 1.0
    assert EvaluationScore.model_validate(fast.model_dump()) == fast
