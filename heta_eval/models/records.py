"""Data models shared by benchmarks, knowledge bases and evaluators.

Every model validates at the boundary: a plain dict (for example a JSON response from
another system) is accepted, and a wrong type fails with a ``ValidationError`` that names
the field (``results.0.score``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import (
    ConfigDict,
    Field,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_serializer,
    field_validator,
    model_validator,
)

from heta_eval.io.grammar import label_problem
from heta_eval.models.columns import ResultColumns
from heta_eval.models.query_result import QueryResult, Record

__all__ = [
    "RECOGNISED_LOCATOR_FIELDS",
    "BenchmarkCase",
    "Document",
    "EvaluationScore",
    "ExpectedOutput",
    "GoldEvidence",
    "QueryResponse",
    "QueryResult",
]

#: Locator fields that evaluators understand; locators may carry any other field too.
RECOGNISED_LOCATOR_FIELDS: tuple[str, ...] = (
    "document_id",
    "source_key",
    "object_key",
    "page_index",
    "chunk_id",
)


class Document(Record):
    """A benchmark document, the unit a knowledge base ingests and qrels judge.

    ``sentences`` and ``pages`` are optional ``(start, end)`` character spans into ``text``
    (end exclusive), so chunks can say which sentences and which page they hold.

    >>> doc = Document(id="d1", title="Paris", text="Paris is big. It is old.",
    ...                sentences=[(0, 13), (14, 24)])
    >>> doc.text[slice(*doc.sentences[1])]
    'It is old.'
    """

    id: str
    text: str
    title: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    sentences: list[tuple[int, int]] = Field(default_factory=list)
    pages: list[tuple[int, int]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _spans_inside_text(self) -> Document:
        for field in ("sentences", "pages"):
            for i, (start, end) in enumerate(getattr(self, field)):
                if not 0 <= start <= end <= len(self.text):
                    raise ValueError(
                        f"{field}[{i}] = ({start}, {end}) is not a span of the "
                        f"{len(self.text)}-character text of document {self.id!r}"
                    )
        return self


class GoldEvidence(Record):
    """One piece of gold evidence: where it lives (``locator``) and/or what it says (``text``).

    >>> gold = GoldEvidence(locator={"document_id": "d1", "page_index": 3}, text="Paris is big.")
    >>> gold.locator["page_index"], gold.text
    (3, 'Paris is big.')
    """

    locator: dict[str, Any] = Field(default_factory=dict)
    reference_id: str | None = None
    text: str | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> GoldEvidence:
        if not self.locator and self.reference_id is None and not self.text:
            raise ValueError("gold evidence needs at least one of locator, reference_id or text")
        return self


class ExpectedOutput(Record):
    """The gold labels of a case: answers, evidence and document-level relevance judgments.

    >>> ExpectedOutput(answers=["Paris"], relevance={"doc-1": 2, "doc-7": 0}).relevance
    {'doc-1': 2, 'doc-7': 0}
    """

    answers: list[str] = Field(default_factory=list)
    evidence: list[GoldEvidence] = Field(default_factory=list)
    relevance: dict[str, int] = Field(default_factory=dict)

    @field_validator("relevance", mode="before")
    @classmethod
    def _integer_labels(cls, value: Any) -> Any:
        # pytrec_eval and BEIR require integer labels; 1.0 or "1" in a qrels file is a bug upstream.
        if isinstance(value, dict):
            for doc_id, label in value.items():
                if isinstance(label, bool) or not isinstance(label, int):
                    raise ValueError(
                        f"relevance label of document {doc_id!r} must be an integer, "
                        f"got {label!r} ({type(label).__name__})"
                    )
                problem = label_problem(label)
                if problem is not None:
                    raise ValueError(f"document {doc_id!r}: {problem}")
        return value


class BenchmarkCase(Record):
    """One benchmark question with its gold answers, evidence and relevance judgments.

    >>> case = BenchmarkCase(id="q1", query="What is the capital of France?",
    ...                      expected={"answers": ["Paris"], "relevance": {"d1": 1}})
    >>> case.expected.answers
    ['Paris']
    """

    id: str
    query: str
    expected: ExpectedOutput = Field(default_factory=ExpectedOutput)
    metadata: dict[str, Any] = Field(default_factory=dict)


def _keep_columns(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    # ResultColumns is already valid (checked when built): keep it, arrays and all. Any
    # other sequence is validated item by item into a list, as before.
    if isinstance(value, ResultColumns):
        return value
    results = handler(value)
    return results if isinstance(results, list) else list(results)


class QueryResponse(Record):
    """What ``kb.query(...)`` returns: ranked chunk-level results and an optional answer.

    >>> response = QueryResponse.model_validate({
    ...     "query": "capital of France?", "mode": "keyword_search",
    ...     "results": [{"text": "Paris ...", "score": 3.2, "source": {"document_id": "d1"}}],
    ...     "answer": "Paris"})
    >>> response.results[0].score
    3.2

    ``results`` is a list of ``QueryResult`` or, from a knowledge base that keeps its chunks
    in a table, a read-only :class:`~heta_eval.models.columns.ResultColumns` (the same
    results, built on access; the retrieval metrics read its arrays directly).
    """

    model_config = ConfigDict(coerce_numbers_to_str=True, extra="allow")

    query: str
    mode: str = "default"
    results: Annotated[Sequence[QueryResult], WrapValidator(_keep_columns)] = Field(
        default_factory=list
    )
    answer: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_serializer("results", mode="wrap")
    def _serialize_results(self, value: Any, handler: Any) -> Any:
        return handler(value.to_list() if isinstance(value, ResultColumns) else value)


class EvaluationScore(Record):
    """The score one evaluator gives one case.

    ``value`` is a float, bool or str; ``passed`` an optional pass/fail; ``metadata`` keeps
    debugging detail (matched and missing evidence, judge reasons, ...). A case the
    evaluator cannot score (no gold evidence, no judgments) is *skipped*: ``skipped=True``
    and ``value=None``, so it is never averaged in as a fake 0 or 1.

    >>> score = EvaluationScore(name="evidence_recall@5", value=0.8,
    ...                         metadata={"matched": 4, "expected": 5})
    >>> score.value, score.passed, score.metadata["matched"]
    (0.8, None, 4)
    >>> EvaluationScore.skip("answer_em", "case has no gold answers").skipped
    True
    """

    model_config = ConfigDict(coerce_numbers_to_str=False, extra="forbid")

    name: str
    # bool before float: with smart unions True stays a bool and 0.5 stays a float.
    value: bool | float | str | None
    passed: bool | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    skipped: bool = False

    @model_validator(mode="after")
    def _value_unless_skipped(self) -> EvaluationScore:
        if self.value is None and not self.skipped:
            raise ValueError("value may only be None for a skipped score (skipped=True)")
        return self

    @classmethod
    def skip(cls, name: str, reason: str, **metadata: Any) -> EvaluationScore:
        """A score for a case the evaluator does not apply to, with the reason why."""
        return cls(
            name=name, value=None, skipped=True, metadata={"skip_reason": reason, **metadata}
        )
