"""Answer evaluators: contains, exact match and token F1, by the official SQuAD v1.1 rules.

All three normalize with ``normalize_answer`` (SQuAD v1.1's normalization, extended to
Unicode; see ``normalize.py``), compare against every gold answer and keep the best, as
SQuAD's ``metric_max_over_ground_truths`` does. On ASCII text exact match and F1 equal the
official ``evaluate-v1.1.py`` numbers. A response without an answer (``None`` or blank)
scores False (or 0.0) with the reason in ``metadata``; a case without gold answers is skipped.
"""

from __future__ import annotations

from collections import Counter

from heta_eval.models.records import BenchmarkCase, EvaluationScore, QueryResponse
from heta_eval.rag.normalize import answer_tokens, contains_tokens, normalize_answer

__all__ = ["AnswerContains", "AnswerExactMatch", "AnswerF1"]


def _token_f1(prediction: list[str], gold: list[str]) -> tuple[float, float, float]:
    common = Counter(prediction) & Counter(gold)
    overlap = sum(common.values())
    if overlap == 0:
        # SQuAD v1.1: no shared token scores 0, even when both normalize to nothing
        # ("The" against "a"); exact match still calls those equal.
        return 0.0, 0.0, 0.0
    precision = overlap / len(prediction)
    recall = overlap / len(gold)
    return 2 * precision * recall / (precision + recall), precision, recall


class _AnswerEvaluator:
    name = "answer"

    def _precheck(self, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore | None:
        if not case.expected.answers:
            return EvaluationScore.skip(self.name, "case has no gold answers")
        if response.answer is None or not response.answer.strip():
            return self._no_answer()
        return None

    def _no_answer(self) -> EvaluationScore:
        return EvaluationScore(
            name=self.name,
            value=False,
            passed=False,
            metadata={"reason": "response has no answer"},
        )


class AnswerContains(_AnswerEvaluator):
    """True when the normalized answer contains a normalized gold answer (as whole tokens).

    >>> import asyncio
    >>> case = BenchmarkCase(id="1", query="Capital of France?", expected={"answers": ["Paris"]})
    >>> response = QueryResponse(query=case.query, answer="It is Paris, of course.")
    >>> score = asyncio.run(AnswerContains().evaluate(case=case, response=response))
    >>> score.value, score.metadata["matched_answer"]
    (True, 'Paris')
    """

    name = "answer_contains"

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        early = self._precheck(case, response)
        if early is not None:
            return early
        answer = answer_tokens(response.answer or "")
        matched = next(
            (
                gold
                for gold in case.expected.answers
                if contains_tokens(answer, answer_tokens(gold))
            ),
            None,
        )
        return EvaluationScore(
            name=self.name,
            value=matched is not None,
            passed=matched is not None,
            metadata={
                "matched_answer": matched,
                "normalized_answer": normalize_answer(response.answer or ""),
            },
        )


class AnswerExactMatch(_AnswerEvaluator):
    """True when the normalized answer equals a normalized gold answer.

    >>> import asyncio
    >>> case = BenchmarkCase(id="1", query="Label?", expected={"answers": ["SUPPORT"]})
    >>> response = QueryResponse(query=case.query, answer=" support. ")
    >>> asyncio.run(AnswerExactMatch().evaluate(case=case, response=response)).value
    True
    """

    name = "answer_exact_match"

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        early = self._precheck(case, response)
        if early is not None:
            return early
        answer = normalize_answer(response.answer or "")
        matched = next(
            (gold for gold in case.expected.answers if normalize_answer(gold) == answer), None
        )
        return EvaluationScore(
            name=self.name,
            value=matched is not None,
            passed=matched is not None,
            metadata={"matched_answer": matched, "normalized_answer": answer},
        )


class AnswerF1(_AnswerEvaluator):
    """SQuAD v1.1 token F1 against the best-matching gold answer (CJK per character).

    F1 over the whitespace tokens of the normalized answers with multiset overlap;
    no shared token scores 0.0 (SQuAD v1.1, not v2.0's "two empty answers agree").

    ``threshold`` (optional) sets ``passed`` to ``value >= threshold``.

    >>> import asyncio
    >>> case = BenchmarkCase(id="1", query="Who?", expected={"answers": ["Marie Curie"]})
    >>> response = QueryResponse(query=case.query, answer="Curie")
    >>> round(asyncio.run(AnswerF1().evaluate(case=case, response=response)).value, 4)
    0.6667
    """

    name = "answer_f1"

    def __init__(self, threshold: float | None = None) -> None:
        self.threshold = threshold

    def _no_answer(self) -> EvaluationScore:
        return EvaluationScore(
            name=self.name,
            value=0.0,
            passed=False if self.threshold is not None else None,
            metadata={"reason": "response has no answer"},
        )

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        early = self._precheck(case, response)
        if early is not None:
            return early
        prediction = answer_tokens(response.answer or "")
        best = max(
            ((_token_f1(prediction, answer_tokens(gold)), gold) for gold in case.expected.answers),
            key=lambda item: item[0][0],
        )
        (f1, precision, recall), gold = best
        return EvaluationScore(
            name=self.name,
            value=f1,
            passed=None if self.threshold is None else f1 >= self.threshold,
            metadata={"matched_answer": gold, "precision": precision, "recall": recall},
        )
