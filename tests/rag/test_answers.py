"""Answer evaluators and their shared normalization."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from heta_eval.evaluation import AnswerContains, AnswerExactMatch, BenchmarkCase, QueryResponse
from heta_eval.rag.answers import AnswerF1
from heta_eval.rag.normalize import answer_tokens, normalize_answer


def case(*answers: str) -> BenchmarkCase:
    return BenchmarkCase(id="q", query="?", expected={"answers": list(answers)})


def reply(answer: str | None) -> QueryResponse:
    return QueryResponse(query="?", answer=answer)


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("The Eiffel Tower.", "eiffel tower"),
        ("ＡＢＣ １２３", "abc 123"),  # NFKC full-width
        ("Straße", "strasse"),  # casefold
        ("北京。", "北京"),  # CJK punctuation
        ("«Bonjour», dit-il!", "bonjour ditil"),  # deleted, as SQuAD deletes ASCII punctuation
        ("Eiffel-Tower", "eiffeltower"),
        ("U.S. Army", "us army"),
        ("$5 < 6 | ~x", "5 6 x"),  # ASCII symbols are in SQuAD's set too
        ("an apple a day", "apple day"),
        ("  many \t spaces\n", "many spaces"),
    ],
)
def test_normalization(raw, normalized):
    assert normalize_answer(raw) == normalized


def test_cjk_is_tokenized_per_character():
    assert answer_tokens("东京 Tower") == ["东", "京", "tower"]


async def test_exact_match_after_normalization_names_the_gold_answer():
    score = await AnswerExactMatch().evaluate(
        case=case("Paris", "City of Paris"), response=reply("paris!")
    )
    assert score.value is True and score.passed is True
    assert score.metadata["matched_answer"] == "Paris"
    miss = await AnswerExactMatch().evaluate(case=case("Paris"), response=reply("It is Paris"))
    assert miss.value is False and miss.metadata["matched_answer"] is None


async def test_contains_matches_whole_tokens_only():
    assert (
        await AnswerContains().evaluate(case=case("Paris"), response=reply("It is PARIS."))
    ).value
    assert not (
        await AnswerContains().evaluate(case=case("cat"), response=reply("concatenate"))
    ).value
    assert (
        await AnswerContains().evaluate(case=case("北京"), response=reply("首都是北京。"))
    ).value


async def test_f1_is_squad_token_f1_with_the_best_gold_answer():
    score = await AnswerF1().evaluate(case=case("Marie Curie", "Curie"), response=reply("Curie"))
    assert score.value == 1.0 and score.metadata["matched_answer"] == "Curie"
    partial = await AnswerF1().evaluate(
        case=case("the big red dog"), response=reply("red dog barks")
    )
    # tokens: [big, red, dog] vs [red, dog, barks] -> P = R = 2/3
    assert partial.value == pytest.approx(2 / 3)
    cjk = await AnswerF1(threshold=0.5).evaluate(case=case("北京大学"), response=reply("北京"))
    assert cjk.value == pytest.approx(2 * 1.0 * 0.5 / 1.5) and cjk.passed is True


@pytest.mark.parametrize("evaluator", [AnswerContains(), AnswerExactMatch(), AnswerF1()])
async def test_no_answer_scores_false_with_a_reason(evaluator):
    score = await evaluator.evaluate(case=case("x"), response=reply(None))
    assert score.value in (False, 0.0) and not score.skipped
    assert score.metadata["reason"] == "response has no answer"


@pytest.mark.parametrize("evaluator", [AnswerContains(), AnswerExactMatch(), AnswerF1()])
async def test_case_without_gold_answers_is_skipped(evaluator):
    score = await evaluator.evaluate(case=case(), response=reply("anything"))
    assert score.skipped and score.value is None


def test_answer_of_the_wrong_type_is_rejected_naming_the_field():
    with pytest.raises(ValidationError) as raised:
        QueryResponse.model_validate({"query": "?", "answer": {"text": "Paris"}})
    assert raised.value.errors()[0]["loc"] == ("answer",)


def test_evidence_tokens_split_at_punctuation_where_answers_delete_it():
    from heta_eval.rag.normalize import evidence_tokens

    assert evidence_tokens("IL-2+ cells.The end") == ["il", "2+", "cells", "end"]
    assert answer_tokens("IL-2+ cells.The end") == ["il2", "cellsthe", "end"]
