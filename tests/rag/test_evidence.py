"""EvidenceRecallAtK: every matching path, non-English text, skips and bad input."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from heta_eval.evaluation import BenchmarkCase, EvidenceRecallAtK, QueryResponse


def case_with(*evidence) -> BenchmarkCase:
    return BenchmarkCase(id="q", query="?", expected={"evidence": list(evidence)})


def response_with(*results) -> QueryResponse:
    return QueryResponse(query="?", results=list(results))


async def score(evaluator, case, response):
    return await evaluator.evaluate(case=case, response=response)


async def test_locator_match_tolerates_numbers_as_strings():
    case = case_with({"locator": {"document_id": "d1", "page_index": 3}})
    response = response_with(
        {"text": "x", "source": {"document_id": "d1", "page_index": 2}},
        {"text": "y", "source": {"document_id": "d1", "page_index": "3"}},
    )
    result = await score(EvidenceRecallAtK(k=5), case, response)
    assert result.value == 1.0
    assert result.metadata["details"] == [{"index": 0, "method": "locator", "rank": 2}]


async def test_locator_needs_every_recognised_gold_field():
    # The chunk is in the right document but says nothing about the page: not a locator match.
    case = case_with({"locator": {"document_id": "d1", "page_index": 3}})
    response = response_with({"text": "x", "source": {"document_id": "d1"}})
    assert (await score(EvidenceRecallAtK(), case, response)).value == 0.0


async def test_open_fields_are_compared_when_both_sides_have_them():
    case = case_with({"locator": {"document_id": "d1", "sentence_index": 4}})
    wrong_sentences = response_with({"source": {"document_id": "d1", "sentence_index": [1, 2]}})
    right_sentences = response_with({"source": {"document_id": "d1", "sentence_index": [3, 4]}})
    no_sentences = response_with({"source": {"document_id": "d1"}})
    evaluator = EvidenceRecallAtK()
    assert (await score(evaluator, case, wrong_sentences)).value == 0.0
    assert (await score(evaluator, case, right_sentences)).value == 1.0
    assert (await score(evaluator, case, no_sentences)).value == 1.0


async def test_reference_id_match():
    case = case_with({"reference_id": "chunk-9"})
    response = response_with({"reference_id": "chunk-1"}, {"reference_id": "chunk-9"})
    result = await score(EvidenceRecallAtK(), case, response)
    assert result.metadata["details"][0] == {"index": 0, "method": "reference_id", "rank": 2}


async def test_text_match_is_normalized_containment():
    case = case_with({"text": "The  Eiffel tower is 330 m tall"})
    response = response_with({"text": "Facts: the eiffel Tower is 330 m tall! It is in Paris."})
    result = await score(EvidenceRecallAtK(), case, response)
    assert result.value == 1.0 and result.metadata["details"][0]["method"] == "text"


async def test_text_match_in_non_english_text():
    case = case_with({"text": "北京是中国的首都。"}, {"text": "Die Straße ist lang"})
    response = response_with(
        {"text": "众所周知，北京是中国的首都"}, {"text": "DIE STRASSE IST LANG."}
    )
    assert (await score(EvidenceRecallAtK(), case, response)).value == 1.0


async def test_token_overlap_threshold_catches_evidence_cut_by_a_chunk_boundary():
    gold = {"text": "aspirin reduces the risk of heart attack in adults"}
    case = case_with(gold)
    response = response_with({"text": "... trial showed aspirin reduces the risk of heart"})
    assert (await score(EvidenceRecallAtK(), case, response)).value == 0.0
    lenient = await score(EvidenceRecallAtK(min_token_overlap=0.6), case, response)
    assert lenient.value == 1.0 and lenient.metadata["details"][0]["method"] == "text_overlap"


async def test_a_chunk_of_another_document_does_not_match_by_text():
    case = case_with({"locator": {"document_id": "d1"}, "text": "shared sentence"})
    response = response_with({"text": "a shared sentence", "source": {"document_id": "d2"}})
    assert (await score(EvidenceRecallAtK(), case, response)).value == 0.0


async def test_only_the_top_k_results_count_and_each_gold_item_once():
    case = case_with({"text": "alpha"}, {"text": "beta"}, {"text": "alpha"})
    response = response_with({"text": "alpha beta"}, {"text": "gamma"}, {"text": "delta"})
    result = await score(EvidenceRecallAtK(k=1), case, response)
    assert result.value == 1.0  # one chunk satisfies all three gold items
    case = case_with({"text": "alpha"}, {"text": "delta"})
    result = await score(EvidenceRecallAtK(k=2), case, response)
    assert result.value == 0.5
    assert result.metadata["matched"] == 1 and result.metadata["expected"] == 2
    assert result.metadata["missing"] == [{"locator": {}, "text": "delta"}]


async def test_case_without_gold_evidence_is_skipped_not_scored():
    result = await score(EvidenceRecallAtK(), BenchmarkCase(id="q", query="?"), response_with())
    assert result.skipped and result.value is None


def test_bad_parameters_and_bad_evidence_give_clear_errors():
    with pytest.raises(ValueError, match="k must be a positive integer"):
        EvidenceRecallAtK(k=0)
    with pytest.raises(ValueError, match="min_token_overlap"):
        EvidenceRecallAtK(min_token_overlap=1.5)
    with pytest.raises(ValidationError) as raised:
        BenchmarkCase(id="q", query="?", expected={"evidence": [{"text": ["a"]}]})
    assert raised.value.errors()[0]["loc"] == ("expected", "evidence", 0, "text")
