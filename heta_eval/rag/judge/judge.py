"""``LLMJudge``: grades a knowledge base's answer against the gold answers with an LLM.

The prompt (:data:`JUDGE_PROMPT`) gives the judge the question, the gold answers, the
candidate answer and (optionally) the retrieved evidence, and asks for one JSON object::

    {"score": <number in [0, 1]>, "passed": <true|false>, "reason": "<one sentence>"}

A case without gold answers is skipped. A judgement that fails (transport errors or timeouts
after the client's retries, or a reply that is not that JSON object after ``attempts`` tries)
raises :class:`JudgeError`, so the harness records the case as failed instead of a made-up
score; the judge's ledger (:class:`~heta_eval.rag.judge.usage.JudgeUsage`) lists it too.

What a run costs is kept in ``judge.usage``: calls made and served from the persistent cache
(:class:`~heta_eval.rag.judge.cache.JudgeCache`), the server's token counts, the cost by
a price table, failures, and the agreement of repeated judgments (``repeats=N``). With
``dry_run=True`` the judge calls nothing: it counts the calls and prompt tokens it would spend.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt

from heta_eval.llm import ChatReply, LLMClient, LLMError
from heta_eval.models.records import BenchmarkCase, EvaluationScore, QueryResponse
from heta_eval.rag.judge.cache import JudgeCache, default_judge_cache_path
from heta_eval.rag.judge.usage import JudgeUsage, Price, estimate_tokens, load_prices

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

    ``value`` is the judge's score in [0, 1] (the mean over ``repeats`` judgments), ``passed``
    its verdict (the strict majority of the repeats), and ``metadata`` keeps its ``reason``,
    the model, the tokens the case cost and, when repeated, every score and verdict with their
    ``agreement`` (share of repeats agreeing with the majority). Configure the model with
    ``HETA_EVAL_LLM_*`` env vars or pass an :class:`~heta_eval.llm.LLMClient`.

    ``cache``: a path, a :class:`JudgeCache`, None for the default
    (``~/.cache/heta-eval/llm/judge.sqlite``) or False for none. ``prices``: a mapping or JSON
    file, ``{"model": {"prompt": USD per 1M tokens, "completion": ...}}``.

    >>> judge = LLMJudge(LLMClient(base_url="http://127.0.0.1:9/v1", model="judge-model"),
    ...                  cache=False, dry_run=True)
    >>> import asyncio
    >>> case = BenchmarkCase(id="1", query="Capital of France?", expected={"answers": ["Paris"]})
    >>> score = asyncio.run(judge.evaluate(case=case, response=QueryResponse(
    ...     query=case.query, answer="Paris")))
    >>> score.skipped, judge.usage.report()["estimated_calls"], judge.usage.report()["calls"]
    (True, 1, 0)
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
        repeats: int = 1,
        temperature: float = 0.0,
        cache: str | Path | JudgeCache | bool | None = None,
        prices: str | Path | Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> None:
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
        if attempts < 1:
            raise ValueError(f"attempts must be positive, got {attempts!r}")
        self.client = client or LLMClient.from_env()
        self.name = name
        self.include_evidence = include_evidence
        self.max_evidence = max_evidence
        self.max_evidence_chars = max_evidence_chars
        self.attempts = attempts
        self.prompt = prompt
        self.repeats = repeats
        self.temperature = temperature
        self.dry_run = dry_run
        if cache is None or cache is True:
            cache = default_judge_cache_path()
        self.cache = cache if isinstance(cache, JudgeCache) or cache is False else JudgeCache(cache)
        table: dict[str, Price] = (
            {}
            if prices is None
            else dict(prices)
            if isinstance(prices, Mapping) and all(isinstance(v, Price) for v in prices.values())
            else load_prices(prices)
        )
        self.usage = JudgeUsage(model=self.client.model, prices=table)

    def usage_report(self, previous: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The run's ledger as a dict (what the runner puts in ``summary.json``)."""
        report = self.usage.report(previous)
        report["dry_run"] = self.dry_run
        report["repeats"] = self.repeats
        return report

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
        if self.dry_run:
            return self._estimate(messages)
        try:
            outcomes = await asyncio.gather(
                *(self._judge_once(case, messages, r) for r in range(self.repeats)),
                return_exceptions=True,
            )
        except asyncio.CancelledError:
            # The harness gave up on this case (its evaluation timeout): still list it.
            self.usage.record_failure(case.id, response.mode, "cancelled (evaluation timeout)")
            raise
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        if errors:
            message = "; ".join(dict.fromkeys(str(e) for e in errors))
            if len(errors) < len(outcomes):
                message = f"{len(errors)} of {len(outcomes)} repeats failed: {message}"
            self.usage.record_failure(case.id, response.mode, message)
            raise JudgeError(message) from errors[0]
        return self._score([o for o in outcomes if not isinstance(o, BaseException)])

    def _estimate(self, messages: list[dict[str, str]]) -> EvaluationScore:
        tokens = estimate_tokens(messages)
        cached = calls = 0
        for repeat in range(self.repeats):
            key = self._key(messages, repeat, 0)
            hit = self.cache.get(key) if self.cache is not False else None
            if hit is not None:
                cached += 1
                self.usage.record_call(hit.usage, cached=True)  # a real run would pay nothing
            else:
                calls += 1
                self.usage.record_estimate(tokens)
        return EvaluationScore.skip(
            self.name,
            "dry run: not judged",
            estimated_calls=calls,
            cached_calls=cached,
            estimated_prompt_tokens=tokens * calls,
        )

    def _score(
        self, verdicts: list[tuple[dict[str, Any], dict[str, int] | None, bool]]
    ) -> EvaluationScore:
        scores = [v["score"] for v, _, _ in verdicts]
        passes = [v["passed"] for v, _, _ in verdicts]
        passed = sum(passes) * 2 > len(passes)  # strict majority; a tie does not pass
        agreement = sum(p == passed for p in passes) / len(passes)
        usages = [u for _, u, _ in verdicts if u is not None]
        metadata: dict[str, Any] = {
            "reason": verdicts[0][0]["reason"],
            "model": self.client.model,
            "judged": True,
            "cached": all(c for _, _, c in verdicts),
            "prompt_tokens": sum(u["prompt_tokens"] for u in usages),
            "completion_tokens": sum(u["completion_tokens"] for u in usages),
        }
        if self.repeats > 1:
            metadata.update(
                scores=scores,
                verdicts=passes,
                reasons=[v["reason"] for v, _, _ in verdicts],
                agreement=agreement,
            )
        self.usage.record_judged(agreement if self.repeats > 1 else None)
        return EvaluationScore(
            name=self.name, value=sum(scores) / len(scores), passed=passed, metadata=metadata
        )

    def _key(self, messages: list[dict[str, str]], repeat: int, attempt: int) -> str:
        params = {"temperature": self.temperature, "repeat": repeat, "attempt": attempt}
        return JudgeCache.key(self.client.model, messages, params)

    async def _call(self, messages: list[dict[str, str]], key: str) -> tuple[ChatReply, bool]:
        if self.cache is not False:
            hit = self.cache.get(key)
            if hit is not None:
                self.usage.record_call(hit.usage, cached=True)
                # A stored reply enters too: one cached before the key was redacted (or under
                # another key) must not bring it back.
                secrets = getattr(self.client, "secrets", None)
                if secrets:
                    hit = dataclasses.replace(hit, content=secrets.redact(hit.content))
                return hit, True
        reply = await self.client.complete(messages, temperature=self.temperature)
        self.usage.record_call(reply.usage, cached=False)
        if self.cache is not False:
            self.cache.put(key, reply, model=self.client.model)
        return reply, False

    async def _judge_once(
        self, case: BenchmarkCase, messages: list[dict[str, str]], repeat: int
    ) -> tuple[dict[str, Any], dict[str, int] | None, bool]:
        problems: list[str] = []
        # An unparseable reply is asked again at once (a new cache key per attempt, so a
        # cached bad reply is not served twice); transport failures were already retried by
        # the client and are final here.
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.attempts),
            retry=retry_if_exception_type(_Unparseable),
            reraise=True,
        )
        try:
            async for trial in retrying:
                with trial:
                    key = self._key(messages, repeat, trial.retry_state.attempt_number - 1)
                    try:
                        reply, cached = await self._call(messages, key)
                    except LLMError as exc:
                        raise JudgeError(f"LLM judge failed on case {case.id!r}: {exc}") from exc
                    try:
                        return parse_judgement(reply.content), reply.usage, cached
                    except ValueError as exc:
                        problems.append(str(exc))
                        raise _Unparseable from None
        except _Unparseable:
            pass
        raise JudgeError(
            f"LLM judge ({self.client.url}) gave no valid judgement for case "
            f"{case.id!r} after {self.attempts} attempts: {'; '.join(problems)}"
        )


class _Unparseable(Exception):
    """The judge's reply was not the JSON object asked for (``problems`` says why)."""
