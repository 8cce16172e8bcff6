"""What an LLM judge spent and how it went: calls, tokens, cost, cache hits, failures and the
agreement of repeated judgments, per run.

Token counts come only from the server's OpenAI-compatible ``usage`` fields; a reply without
them is counted in ``calls_without_usage`` (the totals are then a lower bound), never as zero.
Cost = tokens x the price table's USD per million tokens for the judge model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["JudgeUsage", "Price", "estimate_tokens", "load_prices"]

#: Completion tokens a dry run assumes per judge call (one short JSON verdict).
DRY_RUN_COMPLETION_TOKENS = 60


@dataclass(frozen=True)
class Price:
    """USD per million prompt and completion tokens."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1e6


def load_prices(source: str | Path | Mapping[str, Any]) -> dict[str, Price]:
    """A price table: ``{"model": {"prompt": USD per 1M tokens, "completion": ...}}``, given
    as a mapping or a JSON file. Errors name the file and the model.

    >>> load_prices({"gpt-4o-mini": {"prompt": 0.15, "completion": 0.6}})["gpt-4o-mini"]
    Price(prompt=0.15, completion=0.6)
    """
    where = "price table"
    if not isinstance(source, Mapping):
        where = str(source)
        try:
            source = json.loads(Path(source).read_text(encoding="utf-8"))
        except OSError as error:
            raise ValueError(f"{where}: cannot read: {error.strerror}") from None
        except json.JSONDecodeError as error:
            raise ValueError(f"{where}: not valid JSON: {error}") from None
    if not isinstance(source, Mapping):
        raise ValueError(f"{where}: must be a JSON object of model -> prices")
    prices = {}
    for model, entry in source.items():
        values = entry if isinstance(entry, Mapping) else {}
        numbers = [values.get("prompt"), values.get("completion")]
        if not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
            for v in numbers
        ):
            raise ValueError(
                f"{where}: model {model!r} needs non-negative numbers 'prompt' and 'completion' "
                f"(USD per million tokens), got {entry!r}"
            )
        prices[str(model)] = Price(float(numbers[0]), float(numbers[1]))  # type: ignore[arg-type]
    return prices


def estimate_tokens(messages: list[dict[str, str]]) -> int:
    """A dry run's prompt-token estimate: about 4 characters per token, plus 4 per message.

    >>> estimate_tokens([{"role": "user", "content": "x" * 400}])
    104
    """
    return sum(math.ceil(len(m.get("content", "")) / 4) + 4 for m in messages)


_COUNTERS = (
    "calls",
    "cached_calls",
    "calls_without_usage",
    "prompt_tokens",
    "completion_tokens",
    "cached_prompt_tokens",
    "cached_completion_tokens",
    "judged_cases",
    "estimated_calls",
    "estimated_prompt_tokens",
    "estimated_completion_tokens",
    "repeated_cases",
    "unanimous_cases",
)


@dataclass
class JudgeUsage:
    """A judge's ledger: every call made or served from the cache, every failure.

    >>> usage = JudgeUsage(model="m", prices={"m": Price(1.0, 2.0)})
    >>> usage.record_call({"prompt_tokens": 1000, "completion_tokens": 50}, cached=False)
    >>> usage.record_failure("q7", "keyword_search", "timed out")
    >>> report = usage.report()
    >>> report["calls"], report["prompt_tokens"], report["cost_usd"], report["failed"]
    (1, 1000, 0.0011, 1)
    """

    model: str
    prices: Mapping[str, Price] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_COUNTERS, 0))
    agreement_sum: float = 0.0
    failures: list[dict[str, Any]] = field(default_factory=list)

    def record_call(self, usage: Mapping[str, int] | None, *, cached: bool) -> None:
        """One judge call: made (``cached=False``) or answered by the cache."""
        self.counts["cached_calls" if cached else "calls"] += 1
        if usage is None:
            if not cached:
                self.counts["calls_without_usage"] += 1
            return
        prefix = "cached_" if cached else ""
        self.counts[f"{prefix}prompt_tokens"] += usage["prompt_tokens"]
        self.counts[f"{prefix}completion_tokens"] += usage["completion_tokens"]

    def record_estimate(self, prompt_tokens: int) -> None:
        """A call a dry run would make."""
        self.counts["estimated_calls"] += 1
        self.counts["estimated_prompt_tokens"] += prompt_tokens
        self.counts["estimated_completion_tokens"] += DRY_RUN_COMPLETION_TOKENS

    def record_judged(self, agreement: float | None) -> None:
        """A case judged; ``agreement`` of its repeated verdicts when repeated."""
        self.counts["judged_cases"] += 1
        if agreement is not None:
            self.counts["repeated_cases"] += 1
            self.counts["unanimous_cases"] += agreement == 1.0
            self.agreement_sum += agreement

    def record_failure(self, case_id: str, mode: str, error: str) -> None:
        self.failures.append({"case_id": case_id, "mode": mode, "error": error})

    def report(self, previous: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The ledger as a plain dict; ``previous`` (an earlier report of a resumed run) is
        added in, so a resumed run's totals cover every invocation."""
        counts = dict(self.counts)
        agreement_sum = self.agreement_sum
        failures = list(self.failures)
        if previous:
            for key in _COUNTERS:
                counts[key] += int(previous.get(key) or 0)
            agreement_sum += float(previous.get("agreement_sum") or 0.0)
            failures = [*previous.get("failures", []), *failures]
        price = self.prices.get(self.model)
        report: dict[str, Any] = {"model": self.model, **counts}
        report["total_tokens"] = counts["prompt_tokens"] + counts["completion_tokens"]
        report["cost_usd"] = _cost(price, counts, "")
        report["estimated_cost_usd"] = _cost(price, counts, "estimated_")
        notes = []
        if price is None:
            notes.append(f"no price for model {self.model!r} in the price table")
        if counts["calls_without_usage"]:
            notes.append(
                f"{counts['calls_without_usage']} replies had no usage: totals are a lower bound"
            )
        report["notes"] = notes
        report["agreement_sum"] = agreement_sum
        report["mean_agreement"] = (
            round(agreement_sum / counts["repeated_cases"], 6) if counts["repeated_cases"] else None
        )
        report["failed"] = len(failures)
        report["failures"] = failures
        return report


def _cost(price: Price | None, counts: Mapping[str, int], prefix: str) -> float | None:
    if price is None:
        return None
    return round(
        price.cost(counts[f"{prefix}prompt_tokens"], counts[f"{prefix}completion_tokens"]), 6
    )
