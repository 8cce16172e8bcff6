"""The knowledge base protocol: what the harness needs from a system under evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from heta_eval.models.records import Document, QueryResponse

__all__ = ["BatchKnowledgeBase", "IngestingKnowledgeBase", "KnowledgeBase"]


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


@runtime_checkable
class BatchKnowledgeBase(KnowledgeBase, Protocol):
    """A knowledge base that also answers many queries in one call (optional): the runner
    then hands it ``batch_size`` cases at a time, their texts and ids in order, and expects
    one response per query, in order. A batch that fails (or answers another number of
    queries) is asked again case by case through ``query``, so a failure costs only its own
    case. The reference knowledge base searches a batch in one pass over its indexes.

    >>> class Batched:
    ...     modes = ("default",)
    ...     batch_size = 64
    ...     async def query(self, text, *, mode="default", top_k=10):
    ...         return QueryResponse(query=text, mode=mode)
    ...     async def query_batch(self, texts, *, mode="default", top_k=10, query_ids=None):
    ...         return [QueryResponse(query=text, mode=mode) for text in texts]
    >>> isinstance(Batched(), BatchKnowledgeBase)
    True
    """

    #: Queries per ``query_batch`` call.
    batch_size: int

    async def query_batch(
        self,
        texts: Sequence[str],
        *,
        mode: str,
        top_k: int,
        query_ids: Sequence[str] | None = None,
    ) -> Sequence[QueryResponse]: ...
