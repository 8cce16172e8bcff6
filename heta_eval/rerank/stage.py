"""A second stage over any knowledge base: for each of its modes ``M`` a mode ``M+rerank``,
the first ``depth`` results of ``M`` rescored by a cross-encoder, as BEIR's ``Rerank`` does
(:mod:`heta_eval.rerank.reranker`).

``level="document"`` (BEIR's): a reply's chunks collapse to documents first (each document
at its best chunk, as ``M`` is scored), and each document is paired with the query as
``(title + " " + text).strip()`` of the benchmark's own document. ``level="chunk"``: each
hit is paired with the text the first stage returned for it (a service's chunks), and the
reranked reply holds those chunks. Either way the reply holds only the reranked results,
with the model's scores, best first (equal scores in the first stage's order); it has no
answer (the first stage's answer is about other results).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from heta_eval.io.ids import RERANK_SUFFIX, rerank_mode
from heta_eval.models.records import QueryResponse, QueryResult
from heta_eval.rerank.cross_encoder import model_fingerprint
from heta_eval.rerank.reranker import CrossEncoderReranker, document_text, top_documents
from heta_eval.retrieval.collapse import collapse_to_documents
from heta_eval.sizes import MAX_HITS

__all__ = ["RERANK_SUFFIX", "RerankSpec", "RerankingKnowledgeBase", "rerank_mode"]


class RerankSpec(BaseModel):
    """A second stage: the cross-encoder ``model`` (a ``CrossEncoder`` name or folder), the
    first-stage results it rescores per query (``depth``, BEIR's ``top_k``: 100), its
    precision and device (as the encoder's: ``auto``), the output it scores by where it has
    several (``label``) and whether documents or the first stage's chunks are paired with
    the query (``level``).

    >>> RerankSpec(model="cross-encoder/ms-marco-MiniLM-L-6-v2").depth
    100
    """

    model_config = ConfigDict(extra="forbid")

    model: str
    depth: int = Field(default=100, gt=0, le=MAX_HITS)
    precision: Literal["auto", "float32", "bfloat16", "float16", "int8", "onnxruntime-int8"] = (
        "auto"
    )
    device: str = Field(default="auto", pattern=r"^(auto|cpu|mps|cuda(:[0-9]+)?)$")
    label: str | None = None
    level: Literal["document", "chunk"] = "document"

    def reranker(self, cache_dir: Any = None) -> CrossEncoderReranker:
        """The :class:`CrossEncoderReranker` of this spec (the model checked, not loaded)."""
        return CrossEncoderReranker(
            self.model,
            precision=self.precision,
            device=self.device,
            label=self.label,
            cache_dir=cache_dir,
        )

    def identity(self) -> dict[str, Any]:
        """What a results folder records of it (the model a folder by its files' SHA-256)."""
        return {**self.model_dump(), "fingerprint": model_fingerprint(self.model)}


class RerankingKnowledgeBase:
    """``first_stage``'s modes and, for each mode ``M``, ``M+rerank``. ``documents``: the
    benchmark's documents (a :class:`~heta_eval.data.corpus_store.CorpusStore` or a mapping
    of id to ``{"title", "text"}``; default: the first stage's ``store``), needed at
    document level.

    >>> import asyncio, tempfile
    >>> from heta_eval.rerank.cross_encoder import demo_cross_encoder
    >>> from heta_eval.reference.recipe import Recipe
    >>> from heta_eval.models.records import Document
    >>> kb = Recipe(modes=["keyword_search"]).build(
    ...     "demo", [Document(id="d1", text="Paris is in France."),
    ...              Document(id="d2", text="Rome is in Italy, not France.")],
    ...     cache_dir=False, progress=False)
    >>> reranker = CrossEncoderReranker(demo_cross_encoder(tempfile.mkdtemp()), cache_dir=False)
    >>> reranked = RerankingKnowledgeBase(kb, reranker, depth=10)
    >>> reranked.modes
    ('keyword_search', 'keyword_search+rerank')
    >>> reply = asyncio.run(reranked.query("France", mode="keyword_search+rerank", top_k=10))
    >>> sorted(result.source["document_id"] for result in reply.results)
    ['d1', 'd2']
    """

    def __init__(
        self,
        first_stage: Any,
        reranker: CrossEncoderReranker,
        *,
        depth: int = 100,
        level: Literal["document", "chunk"] = "document",
        documents: Any = None,
        progress: bool = False,
        identity: dict[str, Any] | None = None,
    ) -> None:
        if depth < 1:
            raise ValueError(f"depth must be positive, got {depth}")
        self.first_stage = first_stage
        self.reranker = reranker
        self.depth = depth
        self.level = level
        self.progress = progress
        self._documents = (
            documents if documents is not None else getattr(first_stage, "store", None)
        )
        base = tuple(first_stage.modes)
        self.modes: tuple[str, ...] = (*base, *(rerank_mode(mode) for mode in base))
        self.takes_query_id = bool(getattr(first_stage, "takes_query_id", False))
        self.batch_size = int(getattr(first_stage, "batch_size", None) or 64)
        #: What a results folder records of the second stage (``run.json``'s ``rerank``).
        self.rerank_identity = identity or {
            "model": reranker.model_name,
            "depth": depth,
            "level": level,
        }
        rerank = {
            **self.rerank_identity,
            "route": reranker.route,
            "route_reason": reranker.route_choice.reason,
        }
        self.build_info = {**(getattr(first_stage, "build_info", None) or {}), "rerank": rerank}

    def __getattr__(self, name: str) -> Any:
        # The first stage's own attributes (a service's url, a run file's identity, ...).
        if name in ("first_stage", "__setstate__"):
            raise AttributeError(name)
        return getattr(self.first_stage, name)

    async def query(
        self, text: str, *, mode: str, top_k: int, query_id: str | None = None
    ) -> QueryResponse:
        ids = None if query_id is None else [query_id]
        return (await self.query_batch([text], mode=mode, top_k=top_k, query_ids=ids))[0]

    async def query_batch(
        self,
        texts: Sequence[str],
        *,
        mode: str,
        top_k: int,
        query_ids: Sequence[str] | None = None,
    ) -> list[QueryResponse]:
        """``mode``'s replies; a reranked mode's first stage is asked ``depth`` results."""
        first = mode.removesuffix(RERANK_SUFFIX)
        if mode == first or first not in self.first_stage.modes:
            return await self._first(texts, mode, top_k, query_ids)
        replies = await self._first(texts, first, self.depth, query_ids)
        return await asyncio.to_thread(self._rerank, replies, texts, mode, query_ids)

    async def _first(
        self, texts: Sequence[str], mode: str, top_k: int, query_ids: Sequence[str] | None
    ) -> list[QueryResponse]:
        stage = self.first_stage
        if callable(getattr(stage, "query_batch", None)):
            raws = await stage.query_batch(texts, mode=mode, top_k=top_k, query_ids=query_ids)
        else:
            ids = list(query_ids) if query_ids is not None else [None] * len(texts)
            limit = asyncio.Semaphore(8)

            async def one(text: str, query_id: str | None) -> Any:
                by_id = {"query_id": query_id} if self.takes_query_id else {}
                async with limit:
                    return await stage.query(text, mode=mode, top_k=top_k, **by_id)

            raws = await asyncio.gather(*(one(t, q) for t, q in zip(texts, ids, strict=True)))
        return [
            r if isinstance(r, QueryResponse) else QueryResponse.model_validate(r) for r in raws
        ]

    def _rerank(
        self,
        replies: list[QueryResponse],
        texts: Sequence[str],
        mode: str,
        query_ids: Sequence[str] | None,
    ) -> list[QueryResponse]:
        """Every reply's pairs scored in one call (sorted by length across the batch)."""
        chosen = [self._candidates(reply) for reply in replies]
        pairs = [
            (text, pair_text)
            for text, found in zip(texts, chosen, strict=True)
            for _, pair_text in found
        ]
        scores = iter(self.reranker.score(pairs, progress=self.progress).tolist())
        out = []
        for text, found in zip(texts, chosen, strict=True):
            scored = [
                (next(scores), position, result) for position, (result, _) in enumerate(found)
            ]
            scored.sort(key=lambda item: (-item[0], item[1]))  # equal scores: first-stage order
            results = [result.model_copy(update={"score": s}) for s, _, result in scored]
            out.append(QueryResponse(query=text, mode=mode, results=results))
        return out

    def _candidates(self, reply: QueryResponse) -> list[tuple[QueryResult, str]]:
        """The first stage's results to rerank and the text each is paired with."""
        if self.level == "document":
            ranking = collapse_to_documents(reply, ignore_identical_ids=False)
            chosen = top_documents(ranking.scores, self.depth)
            return [
                (
                    QueryResult(score=ranking.scores[doc], source={"document_id": doc}),
                    self._document_text(doc),
                )
                for doc in chosen
            ]
        results = list(reply.results)
        if all(result.score is not None for result in results):  # BEIR's cut, over the hits
            positions = top_documents({str(i): r.score for i, r in enumerate(results)}, self.depth)
        else:  # a reply without scores: its order
            positions = [str(i) for i in range(min(len(results), self.depth))]
        found = []
        for position in map(int, positions):
            result = results[position]
            if not result.text.strip():
                raise ValueError(
                    f"rerank at chunk level: hit {position + 1} of the first "
                    "stage has no text to pair with the query"
                )
            found.append((result, result.text))
        return found

    def _document_text(self, doc: str) -> str:
        documents = self._documents
        if documents is None:
            raise ValueError("rerank at document level needs the benchmark's documents")
        if isinstance(documents, Mapping):
            found = documents.get(doc)
            if found is None:
                raise ValueError(
                    f"rerank: the first stage names document {doc!r}, which the "
                    "benchmark does not hold"
                )
            return document_text(found)
        rows = documents.id_index.rows(doc)
        if not rows:
            raise ValueError(
                f"rerank: the first stage names document {doc!r}, which the benchmark does not hold"
            )
        document = documents.document(rows[-1])  # as BEIR's corpus dict: the last line wins
        return document_text({"title": document.title, "text": document.text})
