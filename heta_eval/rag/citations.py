"""Citation precision and recall: do the chunks an answer cites hold the gold evidence?

An answer cites results either with ``[n]`` markers in its text (``[1]``, ``[2, 3]``,
``[1][4]``; ``n`` is the 1-based position in ``response.results``, the numbering the
reference ``ChatAnswerer`` shows the model) or with a ``citations`` field in the response, a
list of 1-based positions (integers) and/or ``reference_id`` strings. The field, when present,
wins over the markers. A citation that resolves to no result (``[7]`` of 5 results, ``[0]``, an
unknown reference id) is *dangling*: it counts as a citation that holds no evidence and is
listed in ``metadata["dangling"]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from heta_eval.models.records import BenchmarkCase, EvaluationScore, QueryResponse
from heta_eval.rag.evidence import EvidenceMatcher

__all__ = ["CitationPrecision", "CitationRecall", "Citations", "resolve_citations"]

_MARKER = re.compile(r"\[(\s*\d+(?:\s*[,;]\s*\d+)*\s*)\]")


@dataclass
class Citations:
    """What a response cites: result indices (0-based, in citation order) and dangling ones."""

    source: str  # "field", "markers" or "none"
    positions: list[int] = field(default_factory=list)
    dangling: list[Any] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.positions) + len(self.dangling)


def resolve_citations(response: QueryResponse) -> Citations:
    """Resolve a response's citations to its results; repeated citations count once.

    >>> response = QueryResponse(query="?", answer="Paris [1][3], on the Seine [1, 2].",
    ...                          results=[{"text": "a"}, {"text": "b"}])
    >>> resolve_citations(response)
    Citations(source='markers', positions=[0, 1], dangling=[3])
    """
    raw = (response.model_extra or {}).get("citations")
    if raw is not None:
        if not isinstance(raw, list):
            raise ValueError(
                f"response field 'citations' must be a list of 1-based result positions or "
                f"reference ids, got {type(raw).__name__}"
            )
        source, items = "field", raw
    else:
        found = [
            int(n)
            for group in _MARKER.findall(response.answer or "")
            for n in re.split(r"[,;]", group)
        ]
        source, items = ("markers" if found else "none"), found
    by_reference = {}
    for index, result in enumerate(response.results):
        if result.reference_id is not None:
            by_reference.setdefault(result.reference_id, index)
    citations = Citations(source=source)
    for i, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise ValueError(
                f"response field 'citations[{i}]' must be a 1-based result position or a "
                f"reference id, got {item!r}"
            )
        if isinstance(item, int):
            index = item - 1 if 1 <= item <= len(response.results) else None
        else:
            index = by_reference.get(item)
        if index is None:
            if item not in citations.dangling:
                citations.dangling.append(item)
        elif index not in citations.positions:
            citations.positions.append(index)
    return citations


def _details(citations: Citations, matcher: EvidenceMatcher) -> dict[str, Any]:
    return {
        "citation_source": citations.source,
        "cited_ranks": [index + 1 for index in citations.positions],
        "dangling": citations.dangling,
        "supporting_ranks": [i + 1 for i in citations.positions if matcher.held_by(i)],
    }


class CitationPrecision:
    """Share of the answer's citations that point to a chunk holding gold evidence.

    Dangling citations count against it. Chunks and gold evidence are matched as
    ``EvidenceRecallAtK`` matches them. Skipped: a case without gold evidence, and an answer
    that cites nothing (precision is undefined there; ``CitationRecall`` scores it 0).

    >>> import asyncio
    >>> case = BenchmarkCase(id="q", query="?", expected={"evidence": [
    ...     {"locator": {"document_id": "d1"}}]})
    >>> response = QueryResponse(query="?", answer="Blue [1], says [2] and [9].", results=[
    ...     {"text": "The sky is blue.", "source": {"document_id": "d1"}},
    ...     {"text": "Grass is green.", "source": {"document_id": "d2"}}])
    >>> score = asyncio.run(CitationPrecision().evaluate(case=case, response=response))
    >>> round(score.value, 4), score.metadata["dangling"]
    (0.3333, [9])
    """

    name = "citation_precision"

    def __init__(self, *, min_token_overlap: float | None = None) -> None:
        self.min_token_overlap = min_token_overlap

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        if not case.expected.evidence:
            return EvaluationScore.skip(self.name, "case has no gold evidence")
        citations = resolve_citations(response)
        if citations.count == 0:
            return EvaluationScore.skip(
                self.name, "the answer cites nothing (citation_recall scores it 0)"
            )
        matcher = EvidenceMatcher(
            case.expected.evidence, response.results, min_token_overlap=self.min_token_overlap
        )
        details = _details(citations, matcher)
        return EvaluationScore(
            name=self.name,
            value=len(details["supporting_ranks"]) / citations.count,
            metadata={"citations": citations.count, **details},
        )


class CitationRecall:
    """Share of the gold evidence items held by at least one chunk the answer cites.

    An answer that cites nothing (or no answer) scores 0.0 with the reason in ``metadata``;
    a case without gold evidence is skipped.

    >>> import asyncio
    >>> case = BenchmarkCase(id="q", query="?", expected={"evidence": [
    ...     {"locator": {"document_id": "d1"}}, {"text": "Grass is green."}]})
    >>> response = QueryResponse(query="?", answer="Blue.", citations=[1],
    ...     results=[{"text": "The sky is blue.", "source": {"document_id": "d1"}},
    ...              {"text": "Grass is green.", "source": {"document_id": "d2"}}])
    >>> score = asyncio.run(CitationRecall().evaluate(case=case, response=response))
    >>> score.value, [item["text"] for item in score.metadata["missing"]]
    (0.5, ['Grass is green.'])
    """

    name = "citation_recall"

    def __init__(self, *, min_token_overlap: float | None = None) -> None:
        self.min_token_overlap = min_token_overlap

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        gold = case.expected.evidence
        if not gold:
            return EvaluationScore.skip(self.name, "case has no gold evidence")
        citations = resolve_citations(response)
        matcher = EvidenceMatcher(gold, response.results, min_token_overlap=self.min_token_overlap)
        cited_gold = {g for index in citations.positions for g in matcher.held_by(index)}
        metadata: dict[str, Any] = {
            "matched": len(cited_gold),
            "expected": len(gold),
            "missing": [
                item.model_dump(exclude_none=True)
                for g, item in enumerate(gold)
                if g not in cited_gold
            ],
            **_details(citations, matcher),
        }
        if citations.count == 0:
            no_answer = citations.source == "none" and not (response.answer or "").strip()
            reason = "response has no answer" if no_answer else "the answer cites nothing"
            metadata["reason"] = reason
        return EvaluationScore(name=self.name, value=len(cited_gold) / len(gold), metadata=metadata)
