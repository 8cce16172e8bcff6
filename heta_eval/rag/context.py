"""Context precision at k: how much of what the top-k chunks pass on is gold evidence."""

from __future__ import annotations

from typing import Any

from heta_eval.models.records import BenchmarkCase, EvaluationScore, QueryResponse
from heta_eval.rag.evidence import EvidenceMatcher, checked_evidence_options

__all__ = ["ContextPrecisionAtK"]


class ContextPrecisionAtK:
    """Share of the top-k chunks that hold gold evidence, out of ``k`` (like P@k).

    A chunk holds gold evidence when it matches any gold item by the matching
    ``EvidenceRecallAtK`` uses (locator, then ``reference_id``, then text; see
    :class:`~heta_eval.rag.evidence.EvidenceMatcher`). The denominator is ``k`` even
    when fewer chunks came back, as trec_eval's and BEIR's P@k do: an empty result list
    scores 0. ``metadata`` lists each chunk's rank and the gold items it holds. A case
    without gold evidence is skipped (never scored 0).

    >>> import asyncio
    >>> case = BenchmarkCase(id="q", query="?", expected={"evidence": [
    ...     {"locator": {"document_id": "d1"}}, {"text": "The sky is blue."}]})
    >>> response = QueryResponse(query="?", results=[
    ...     {"text": "Grass is green.", "source": {"document_id": "d1"}},
    ...     {"text": "Off topic.", "source": {"document_id": "d5"}},
    ...     {"text": "As we know, the sky is blue.", "source": {"document_id": "d9"}}])
    >>> score = asyncio.run(ContextPrecisionAtK(k=4).evaluate(case=case, response=response))
    >>> score.value, score.metadata["relevant_ranks"]
    (0.5, [1, 3])
    """

    def __init__(self, k: int = 5, *, min_token_overlap: float | None = None) -> None:
        self.k, self.min_token_overlap = checked_evidence_options(k, min_token_overlap)

    @property
    def name(self) -> str:
        return f"context_precision@{self.k}"

    def __repr__(self) -> str:
        return f"ContextPrecisionAtK(k={self.k})"

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        if not case.expected.evidence:
            return EvaluationScore.skip(self.name, "case has no gold evidence")
        top = response.results[: self.k]
        matcher = EvidenceMatcher(
            case.expected.evidence, top, min_token_overlap=self.min_token_overlap
        )
        held = [(index + 1, matcher.held_by(index)) for index in range(len(matcher.results))]
        relevant: list[dict[str, Any]] = [{"rank": r, "gold": g} for r, g in held if g]
        return EvaluationScore(
            name=self.name,
            value=len(relevant) / self.k,
            metadata={
                "relevant": len(relevant),
                "retrieved": len(held),
                "k": self.k,
                "relevant_ranks": [chunk["rank"] for chunk in relevant],
                "relevant_chunks": relevant,  # rank and the indices of the gold items held
            },
        )
