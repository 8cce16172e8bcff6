"""The base of every record model, and ``QueryResult``: one hit of a knowledge base (its own
module so that :mod:`heta_eval.models.columns` builds hits without the other records)."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from heta_eval.models.document_id import alias_document_id

__all__ = ["QueryResult", "Record"]


class Record(BaseModel):
    """A validated record: ids given as numbers become strings; unknown fields are errors."""

    # Ids often arrive as numbers (SciFact doc ids are ints); accept them as strings.
    model_config = ConfigDict(coerce_numbers_to_str=True, extra="forbid")


class QueryResult(Record):
    """One ranked, chunk-level hit returned by a knowledge base.

    ``source`` is an open locator dict; ``document_id`` in it maps the chunk to a benchmark
    document (``doc_id`` / ``document_id`` on the result itself, or ``source.doc_id``, are
    read as ``source.document_id``; :mod:`heta_eval.models.document_id` has the whole rule).

    >>> QueryResult(text="Paris is the capital of France.", score=12.5,
    ...             source={"document_id": "d1", "chunk_id": "d1#0"}).source["document_id"]
    'd1'
    """

    model_config = ConfigDict(coerce_numbers_to_str=True, extra="allow")

    text: str = ""
    score: float | None = None
    reference_id: str | None = None
    source: dict[str, Any] = Field(default_factory=dict)

    @field_validator("score")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError(f"score must be a finite number, got {value!r}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _document_id_aliases(cls, data: Any) -> Any:
        # Replies from other systems name the document as `doc_id` or `document_id`, at the
        # result's top level or in `source`; all mean source["document_id"].
        if not isinstance(data, dict):
            return data
        source = data.get("source")
        if source is not None and not isinstance(source, dict):
            return data  # refused by the field's own validation
        value = alias_document_id(data)
        if value is None:
            return data
        return {**data, "source": {**(source or {}), "document_id": value}}
