"""Evidence recall at k: how much of the gold evidence the top-k chunks hold."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from .models import (
    RECOGNISED_LOCATOR_FIELDS,
    BenchmarkCase,
    EvaluationScore,
    GoldEvidence,
    QueryResponse,
    QueryResult,
)
from .normalize import answer_tokens, contains_tokens

__all__ = ["EvidenceRecallAtK", "locator_verdict"]


def _same(gold: Any, found: Any) -> bool:
    # 3 and "3" are the same locator value; a list on the result side (a chunk holding
    # sentences [2, 3, 4]) matches any of its members.
    if isinstance(found, (list, tuple, set, frozenset)):
        return any(_same(gold, item) for item in found)
    return str(gold).strip() == str(found).strip()


def locator_verdict(gold: Mapping[str, Any], source: Mapping[str, Any]) -> bool | None:
    """Compare a gold locator with a result's ``source``.

    True: every recognised field of the gold locator is present and equal in ``source`` and
    every other shared field agrees. False: some shared field disagrees (the chunk is
    elsewhere). None: nothing to compare, or agreement that cannot be confirmed.

    >>> locator_verdict({"document_id": "d1", "page_index": 3},
    ...                 {"document_id": "d1", "page_index": "3"})
    True
    >>> locator_verdict({"document_id": "d1"}, {"document_id": "d2"})
    False
    >>> locator_verdict({"document_id": "d1", "sentence_index": 4},
    ...                 {"document_id": "d1", "sentence_index": [3, 4]})
    True
    """
    shared = [key for key in gold if key in source]
    if not shared:
        return None
    if not all(_same(gold[key], source[key]) for key in shared):
        return False
    recognised = [key for key in RECOGNISED_LOCATOR_FIELDS if key in gold]
    if all(key in source for key in recognised):
        return True
    return None


class EvidenceRecallAtK:
    """Share of the gold evidence found in ``response.results[:k]`` (chunk level).

    Each gold item is tried, in order, by locator (see ``locator_verdict``), by
    ``reference_id``, then by text: the normalized gold text contained in the normalized
    chunk text, or, with ``min_token_overlap`` set, at least that share of the gold tokens
    present in the chunk (for evidence cut by a chunk boundary). A chunk whose locator
    contradicts the gold locator never matches it by id or text. Each gold item counts once;
    one chunk may satisfy several. A case without gold evidence is skipped.

    >>> import asyncio
    >>> case = BenchmarkCase(id="q", query="?", expected={"evidence": [
    ...     {"locator": {"document_id": "d1"}}, {"text": "The sky is blue."}]})
    >>> response = QueryResponse(query="?", results=[
    ...     {"text": "Grass is green.", "source": {"document_id": "d1"}},
    ...     {"text": "Why is the sky blue?", "source": {"document_id": "d9"}}])
    >>> score = asyncio.run(EvidenceRecallAtK(k=5).evaluate(case=case, response=response))
    >>> score.value, score.metadata["matched"], score.metadata["expected"]
    (0.5, 1, 2)
    """

    def __init__(self, k: int = 5, *, min_token_overlap: float | None = None) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        if min_token_overlap is not None and not 0 < min_token_overlap <= 1:
            raise ValueError(f"min_token_overlap must be in (0, 1], got {min_token_overlap!r}")
        self.k = k
        self.min_token_overlap = min_token_overlap

    @property
    def name(self) -> str:
        return f"evidence_recall@{self.k}"

    def __repr__(self) -> str:
        return f"EvidenceRecallAtK(k={self.k})"

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        gold_items = case.expected.evidence
        if not gold_items:
            return EvaluationScore.skip(self.name, "case has no gold evidence")
        top = response.results[: self.k]
        result_tokens: list[list[str] | None] = [None] * len(top)  # tokenized lazily
        details: list[dict[str, Any]] = []
        missing: list[dict[str, Any]] = []
        for index, gold in enumerate(gold_items):
            found = self._match(gold, top, result_tokens)
            if found is None:
                missing.append(gold.model_dump(exclude_none=True))
                details.append({"index": index, "method": None, "rank": None})
            else:
                method, rank = found
                details.append({"index": index, "method": method, "rank": rank})
        matched = len(gold_items) - len(missing)
        return EvaluationScore(
            name=self.name,
            value=matched / len(gold_items),
            metadata={
                "matched": matched,
                "expected": len(gold_items),
                "missing": missing,
                "details": details,
            },
        )

    def _match(
        self,
        gold: GoldEvidence,
        results: list[QueryResult],
        tokens: list[list[str] | None],
    ) -> tuple[str, int] | None:
        verdicts = [
            locator_verdict(gold.locator, r.source) if gold.locator else None for r in results
        ]
        for rank, verdict in enumerate(verdicts, 1):
            if verdict is True:
                return "locator", rank
        allowed = [i for i, verdict in enumerate(verdicts) if verdict is not False]
        if gold.reference_id is not None:
            for i in allowed:
                if results[i].reference_id == gold.reference_id:
                    return "reference_id", i + 1
        if gold.text:
            gold_tokens = answer_tokens(gold.text)
            if not gold_tokens:
                return None
            for i in allowed:
                if tokens[i] is None:
                    tokens[i] = answer_tokens(results[i].text)
                chunk = tokens[i] or []
                if contains_tokens(chunk, gold_tokens):
                    return "text", i + 1
                if self.min_token_overlap is not None:
                    common = Counter(gold_tokens) & Counter(chunk)
                    if sum(common.values()) / len(gold_tokens) >= self.min_token_overlap:
                        return "text_overlap", i + 1
        return None
