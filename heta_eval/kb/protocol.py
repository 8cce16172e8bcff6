"""The knowledge base protocol: what the harness needs from a system under evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from heta_eval.models.records import Document, QueryResponse

__all__ = ["IngestingKnowledgeBase", "KnowledgeBase"]


@runtime_checkable
class KnowledgeBase(Protocol):
    """Anything with ``modes`` and an async ``query`` can be evaluated. No base class needed:

    >>> class Echo:
    ...     modes = ("default",)
    ...     async def query(self, text, *, mode="default", top_k=10):
    ...         return QueryResponse(query=text, mode=mode)
    >>> isinstance(Echo(), KnowledgeBase)
    True
    """

    #: The query modes this knowledge base answers, e.g. ``("keyword_search", ...)``.
    modes: tuple[str, ...]

    async def query(self, text: str, *, mode: str, top_k: int) -> QueryResponse: ...


@runtime_checkable
class IngestingKnowledgeBase(KnowledgeBase, Protocol):
    """A knowledge base the harness can also load a benchmark's documents into.

    >>> class Store:
    ...     modes = ("default",)
    ...     async def ingest(self, documents): self.docs = list(documents)
    ...     async def query(self, text, *, mode="default", top_k=10):
    ...         return QueryResponse(query=text, mode=mode)
    >>> isinstance(Store(), IngestingKnowledgeBase)
    True
    """

    async def ingest(self, documents: Sequence[Document]) -> None: ...
