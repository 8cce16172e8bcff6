"""``LLMJudge``: grades a knowledge base's answer against the gold answers with an LLM.

The prompt (:data:`JUDGE_PROMPT`) gives the judge the question, the gold answers, the
candidate answer and (optionally) the retrieved evidence, and asks for one JSON object::

    {"score": <number in [0, 1]>, "passed": <true|false>, "reason": "<one sentence>"}

A case without gold answers is skipped. A judgement that fails (transport errors after the
client's retries, or a reply that is not that JSON object after ``attempts`` tries) raises
:class:`JudgeError`, so the harness records the case as failed instead of a made-up score.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..llm import LLMClient, LLMError
from .models import BenchmarkCase, EvaluationScore, QueryResponse

__all__ = ["JUDGE_PROMPT", "JudgeError", "LLMJudge"]

JUDGE_PROMPT = """You are grading the answer of a question-answering system.

Question:
{question}

Gold answer(s) (any one of them is correct):
{gold}

Candidate answer:
{answer}
{evidence}
Decide whether the candidate answer is correct: it must convey the same meaning as a gold
answer (wording, paraphrases, extra correct detail and formatting do not matter; a wrong,
contradictory, partial or evasive answer is not correct). Give partial credit in "score"
for partially correct answers.

Reply with ONLY one JSON object, no other text:
{{"score": <number from 0 to 1>, "passed": <true or false>, "reason": "<one short sentence>"}}
"""

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class JudgeError(RuntimeError):
    """The judge could not produce a valid judgement for a case."""


def parse_judgement(content: str) -> dict[str, Any]:
    """Parse the judge's reply into ``{"score", "passed", "reason"}`` or raise ``ValueError``.

    >>> parse_judgement('```json\\n{"score": 1, "passed": true, "reason": "same"}\\n```')
    {'score': 1.0, 'passed': True, 'reason': 'same'}
    """
    match = _OBJECT.search(content)
    if not match:
        raise ValueError(f"no JSON object in the judge's reply: {content[:200]!r}")
    data = json.loads(match.group(0))
    if not isinstance(data, dict):
        raise ValueError("the judge's reply is not a JSON object")
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
        raise ValueError(f"'score' must be a number in [0, 1], got {score!r}")
    passed = data.get("passed")
    if not isinstance(passed, bool):
        raise ValueError(f"'passed' must be true or false, got {passed!r}")
    reason = data.get("reason", "")
    return {"score": float(score), "passed": passed, "reason": str(reason)}


class LLMJudge:
    """Scores ``response.answer`` against ``case.expected.answers`` with an LLM.

    ``value`` is the judge's score in [0, 1], ``passed`` its verdict, and ``metadata`` keeps
    its ``reason`` (and the model). Configure the model with ``HETA_EVAL_LLM_*`` env vars or
    pass an :class:`~heta_eval.llm.LLMClient`.

    >>> judge = LLMJudge(LLMClient(base_url="http://127.0.0.1:9/v1", model="judge-model"))
    >>> judge.name
    'llm_judge'
    """

    def __init__(
        self,
        client: LLMClient | None = None,
        *,
        name: str = "llm_judge",
        include_evidence: bool = True,
        max_evidence: int = 3,
        max_evidence_chars: int = 1000,
        attempts: int = 2,
        prompt: str = JUDGE_PROMPT,
    ) -> None:
        self.client = client or LLMClient.from_env()
        self.name = name
        self.include_evidence = include_evidence
        self.max_evidence = max_evidence
        self.max_evidence_chars = max_evidence_chars
        self.attempts = attempts
        self.prompt = prompt

    def render(self, case: BenchmarkCase, response: QueryResponse) -> str:
        """The exact prompt sent for this case."""
        evidence = ""
        if self.include_evidence and response.results:
            passages = "\n".join(
                f"[{i}] {r.text[: self.max_evidence_chars]}"
                for i, r in enumerate(response.results[: self.max_evidence], 1)
            )
            evidence = f"\nRetrieved evidence the system used (for context only):\n{passages}\n"
        return self.prompt.format(
            question=case.query,
            gold="\n".join(f"- {a}" for a in case.expected.answers),
            answer=response.answer or "",
            evidence=evidence,
        )

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        if not case.expected.answers:
            return EvaluationScore.skip(self.name, "case has no gold answers")
        if not (response.answer or "").strip():
            # No answer is a wrong answer; there is nothing to ask the judge.
            return EvaluationScore(
                name=self.name,
                value=0.0,
                passed=False,
                metadata={"reason": "the knowledge base gave no answer", "judged": False},
            )
        messages = [{"role": "user", "content": self.render(case, response)}]
        problems = []
        for _ in range(self.attempts):
            try:
                content = await self.client.chat(messages)
            except LLMError as exc:
                # The client already retried transient failures; this one is final.
                raise JudgeError(f"LLM judge failed on case {case.id!r}: {exc}") from exc
            try:
                verdict = parse_judgement(content)
            except ValueError as exc:
                problems.append(str(exc))
                continue
            return EvaluationScore(
                name=self.name,
                value=verdict["score"],
                passed=verdict["passed"],
                metadata={"reason": verdict["reason"], "model": self.client.model, "judged": True},
            )
        raise JudgeError(
            f"LLM judge ({self.client.url}) gave no valid judgement for case "
            f"{case.id!r} after {self.attempts} attempts: {'; '.join(problems)}"
        )
