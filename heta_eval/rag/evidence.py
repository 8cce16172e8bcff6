"""Which chunks hold which gold evidence (``EvidenceMatcher``), and evidence recall at k.

The matching is shared by every evidence-based evaluator: ``EvidenceRecallAtK`` here,
``ContextPrecisionAtK`` and the citation metrics in ``rag.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from heta_eval.models.records import (
    RECOGNISED_LOCATOR_FIELDS,
    BenchmarkCase,
    EvaluationScore,
    GoldEvidence,
    QueryResponse,
    QueryResult,
)
from heta_eval.rag.normalize import contains_tokens, evidence_tokens

__all__ = ["EvidenceMatcher", "EvidenceRecallAtK", "locator_verdict"]


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


# When several chunks hold a gold item, the one matched by the strongest method is reported.
_METHOD_ORDER = {"locator": 0, "reference_id": 1, "text": 2, "text_overlap": 2}


def checked_evidence_options(k: Any, min_token_overlap: Any) -> tuple[int, float | None]:
    """``(k, min_token_overlap)`` of an evaluator over the top-k chunks, validated."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if min_token_overlap is not None and not 0 < min_token_overlap <= 1:
        raise ValueError(f"min_token_overlap must be in (0, 1], got {min_token_overlap!r}")
    return k, min_token_overlap


class EvidenceMatcher:
    """Decides, for gold evidence items and ranked chunks, which chunk holds which item.

    A chunk holds a gold item when, tried in order: its ``source`` confirms the gold
    ``locator`` (see ``locator_verdict``); or its ``reference_id`` equals the gold one; or the
    gold text's tokens occur contiguously in the chunk's (``evidence_tokens``), or, with
    ``min_token_overlap`` set, that share of them is present (evidence cut by a chunk
    boundary). A chunk whose locator contradicts the gold locator never holds the item.
    Texts are tokenized once, on first need.

    >>> matcher = EvidenceMatcher(
    ...     [GoldEvidence(locator={"document_id": "d1"}), GoldEvidence(text="The sky is blue.")],
    ...     [QueryResult(text="Grass is green.", source={"document_id": "d1"}),
    ...      QueryResult(text="Why is the sky blue?", source={"document_id": "d9"})])
    >>> matcher.method(0, 0), matcher.method(1, 1), matcher.held_by(0)
    ('locator', None, [0])
    """

    def __init__(
        self,
        gold: list[GoldEvidence],
        results: list[QueryResult] | Any,
        *,
        min_token_overlap: float | None = None,
    ) -> None:
        self.gold = list(gold)
        self.results = list(results)
        self.min_token_overlap = min_token_overlap
        self._gold_tokens: dict[int, list[str]] = {}
        self._result_tokens: dict[int, list[str]] = {}
        self._methods: dict[tuple[int, int], str | None] = {}

    def method(self, gold_index: int, result_index: int) -> str | None:
        """How result ``result_index`` holds gold item ``gold_index`` (None: it does not)."""
        key = (gold_index, result_index)
        if key not in self._methods:
            self._methods[key] = self._decide(self.gold[gold_index], gold_index, result_index)
        return self._methods[key]

    def held_by(self, result_index: int) -> list[int]:
        """Indices of the gold items that result ``result_index`` holds."""
        return [g for g in range(len(self.gold)) if self.method(g, result_index) is not None]

    def find(self, gold_index: int) -> tuple[str, int] | None:
        """The strongest match of a gold item among the results: (method, 1-based rank)."""
        best: tuple[str, int] | None = None
        for index in range(len(self.results)):
            found = self.method(gold_index, index)
            if found is None:
                continue
            if best is None or _METHOD_ORDER[found] < _METHOD_ORDER[best[0]]:
                best = (found, index + 1)
                if _METHOD_ORDER[found] == 0:
                    break
        return best

    def _decide(self, gold: GoldEvidence, gold_index: int, result_index: int) -> str | None:
        result = self.results[result_index]
        verdict = locator_verdict(gold.locator, result.source) if gold.locator else None
        if verdict is not None:
            return "locator" if verdict else None
        if gold.reference_id is not None and result.reference_id == gold.reference_id:
            return "reference_id"
        if not gold.text:
            return None
        if gold_index not in self._gold_tokens:
            self._gold_tokens[gold_index] = evidence_tokens(gold.text)
        gold_tokens = self._gold_tokens[gold_index]
        if not gold_tokens:
            return None
        if result_index not in self._result_tokens:
            self._result_tokens[result_index] = evidence_tokens(result.text)
        chunk = self._result_tokens[result_index]
        if contains_tokens(chunk, gold_tokens):
            return "text"
        if self.min_token_overlap is not None:
            common = Counter(gold_tokens) & Counter(chunk)
            if sum(common.values()) / len(gold_tokens) >= self.min_token_overlap:
                return "text_overlap"
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
        self.k, self.min_token_overlap = checked_evidence_options(k, min_token_overlap)

    @property
    def name(self) -> str:
        return f"evidence_recall@{self.k}"

    def __repr__(self) -> str:
        return f"EvidenceRecallAtK(k={self.k})"

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        gold_items = case.expected.evidence
        if not gold_items:
            return EvaluationScore.skip(self.name, "case has no gold evidence")
        matcher = EvidenceMatcher(
            gold_items, response.results[: self.k], min_token_overlap=self.min_token_overlap
        )
        details: list[dict[str, Any]] = []
        missing: list[dict[str, Any]] = []
        for index, gold in enumerate(gold_items):
            found = matcher.find(index)
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
