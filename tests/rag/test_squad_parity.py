"""AnswerExactMatch / AnswerF1 equal the official SQuAD v1.1 evaluation on ASCII text.

The reference below implements the published rules of SQuAD v1.1's ``evaluate-v1.1.py``
(normalize: lower case, delete ``string.punctuation``, drop a/an/the, collapse whitespace;
F1 over whitespace tokens with multiset overlap, 0 when nothing overlaps; the best score over
the gold answers). It is written here from that description, not imported from the package.
"""

from __future__ import annotations

import re
import string
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heta_eval.evaluation import AnswerContains, AnswerExactMatch, BenchmarkCase, QueryResponse
from heta_eval.rag.answers import AnswerF1
from heta_eval.rag.normalize import normalize_answer


def squad_normalize(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def squad_f1(prediction: str, ground_truth: str) -> float:
    prediction_tokens = squad_normalize(prediction).split()
    ground_truth_tokens = squad_normalize(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def squad_em(prediction: str, ground_truth: str) -> bool:
    return squad_normalize(prediction) == squad_normalize(ground_truth)


# Words that exercise every rule: articles (also glued to punctuation), hyphens, apostrophes,
# periods, commas, ASCII symbols SQuAD deletes, repeated tokens, odd whitespace.
WORDS = st.sampled_from(
    [
        "a",
        "an",
        "the",
        "The",
        "A",
        "AN",
        "Eiffel",
        "tower",
        "Tower",
        "U.S.",
        "US",
        "don't",
        "dont",
        "well-known",
        "well",
        "known",
        "a.",
        "(the)",
        "an-",
        "x+y",
        "$5",
        "5",
        "100%",
        "e-mail",
        "email",
        "O'Neil",
        "oneil",
        "...",
        "--",
        "a,b",
        "ab",
        "C++",
        "c",
        "Army",
        "army",
        "i.e.",
        "ie",
        "rock'n'roll",
        "<tag>",
        "tag",
        "_",
        "x_y",
        "xy",
        "the-end",
        "theend",
        "dog",
        "dog,",
        "Dog!",
        "#1",
        "1",
    ]
)
SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\t", "\n", "", ",", " - ", "'"])
NOISE = st.text(
    alphabet=string.ascii_letters + string.digits + string.punctuation + " \t\n", max_size=30
)


@st.composite
def ascii_answer(draw) -> str:
    if draw(st.integers(0, 4)) == 0:
        return draw(NOISE)
    words = draw(st.lists(WORDS, min_size=0, max_size=7))
    text = ""
    for word in words:
        text += word + draw(SEPARATORS)
    return text


def score(evaluator, prediction: str, golds: list[str]):
    case = BenchmarkCase(id="q", query="?", expected={"answers": golds})
    response = QueryResponse(query="?", answer=prediction)
    # The answer evaluators never suspend: drive the coroutine directly, no event loop per call.
    coroutine = evaluator.evaluate(case=case, response=response)
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("an answer evaluator suspended")


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prediction=ascii_answer(), golds=st.lists(ascii_answer(), min_size=1, max_size=3))
def test_exact_match_and_f1_equal_squad_v1_1_on_ascii(prediction, golds):
    assert normalize_answer(prediction) == squad_normalize(prediction)
    if not prediction.strip():
        return  # a blank answer is "no answer" here (scored False / 0.0 with a reason)
    em = score(AnswerExactMatch(), prediction, golds)
    f1 = score(AnswerF1(), prediction, golds)
    assert em.value is max(squad_em(prediction, g) for g in golds)
    assert f1.value == max(squad_f1(prediction, g) for g in golds)  # exactly, not approx


def test_the_issue_examples_score_as_squad_does():
    assert score(AnswerExactMatch(), "Eiffel-Tower", ["Eiffel Tower"]).value is False
    assert score(AnswerF1(), "don't know", ["dont know"]).value == 1.0
    assert score(AnswerF1(), "U.S. Army", ["US Army"]).value == 1.0
    # Both normalize to nothing: SQuAD v1.1 says EM 1, F1 0.
    assert score(AnswerExactMatch(), "The", ["a"]).value is True
    assert score(AnswerF1(), "The", ["a"]).value == 0.0


def test_contains_uses_the_same_normalization():
    assert score(AnswerContains(), "It was the U.S. Army.", ["US army"]).value is True
    assert score(AnswerContains(), "the well-known tower", ["well known"]).value is False


def test_unicode_extension_deletes_unicode_punctuation_and_splits_cjk():
    assert normalize_answer("ＡＢＣ！") == "abc"  # NFKC, then SQuAD's set
    assert normalize_answer("«Straße»—Berlin") == "strasseberlin"
    assert score(AnswerF1(), "首都是北京。", ["北京"]).value == 2 * (2 / 5) * 1 / (2 / 5 + 1)
