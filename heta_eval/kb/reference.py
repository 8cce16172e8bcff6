"""The reference knowledge base: chunks + BM25 + dense vectors + RRF, with an answerer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_eval.kb.bm25 import BM25Index, top_indices
from heta_eval.kb.chunking import Chunk
from heta_eval.kb.dense import DenseEncoder
from heta_eval.kb.hybrid import reciprocal_rank_fusion
from heta_eval.kb.lucene.index import LuceneBM25Index
from heta_eval.models.columns import ChunkTable, ResultColumns
from heta_eval.models.records import Document, QueryResponse
from heta_eval.retrieval.first_chunks import first_chunks

if TYPE_CHECKING:
    from heta_eval.kb.answerers import Answerer
    from heta_eval.kb.recipe import Recipe

__all__ = ["MODES", "ReferenceKnowledgeBase"]

MODES: tuple[str, ...] = ("keyword_search", "vector_search", "hybrid_search")

Ranker = Callable[[int], tuple[np.ndarray, np.ndarray]]


class ReferenceKnowledgeBase:
    """Searches chunks by BM25 (``keyword_search``), dense vectors (``vector_search``) or
    their RRF fusion (``hybrid_search``). Build one with :meth:`Recipe.build`.

    With ``distinct_documents=True`` (the default) results hold the best chunk of each of
    the ``top_k`` best documents: chunks are over-fetched until ``top_k`` distinct documents
    are found or the corpus is exhausted.

    Results come as :class:`~heta_eval.models.columns.ResultColumns` over :attr:`chunk_table`:
    ``QueryResult`` objects are built only when read, and the retrieval metrics never need
    them.

    >>> import asyncio
    >>> from heta_eval.kb.recipe import Recipe
    >>> kb = Recipe(modes=["keyword_search"]).build(
    ...     "demo", [Document(id="d1", text="Paris is in France."),
    ...              Document(id="d2", text="Rome is in Italy.")], cache_dir=False, progress=False)
    >>> response = asyncio.run(kb.query("Italy", mode="keyword_search", top_k=1))
    >>> response.results[0].source["document_id"]
    'd2'
    """

    def __init__(
        self,
        name: str,
        *,
        recipe: Recipe,
        documents: Sequence[Document],
        chunks: list[Chunk],
        bm25: BM25Index | LuceneBM25Index | None,
        embeddings: np.ndarray | None,
        encoder: DenseEncoder | None,
        answerer: Answerer | None,
        build_info: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.recipe = recipe
        self.documents = list(documents)
        self.chunks = chunks
        self.bm25 = bm25
        self.embeddings = embeddings
        self.encoder = encoder
        self.answerer = answerer
        #: How each artifact was obtained: ``{"bm25": "built" | "cache", ...}`` and timings.
        self.build_info = build_info or {}
        self.modes: tuple[str, ...] = tuple(m for m in MODES if m in recipe.modes)
        self._chunk_table: ChunkTable | None = None

    @property
    def chunk_table(self) -> ChunkTable:
        """The chunks as a :class:`~heta_eval.models.columns.ChunkTable` (built on first use)."""
        if self._chunk_table is None:
            chunks = self.chunks
            self._chunk_table = ChunkTable(
                [chunk.document_id for chunk in chunks],
                texts=[chunk.text for chunk in chunks],
                reference_ids=[chunk.chunk_id for chunk in chunks],
                sources=_ChunkSources(chunks),
            )
        return self._chunk_table

    def __repr__(self) -> str:
        return (
            f"ReferenceKnowledgeBase(name={self.name!r}, documents={len(self.documents)}, "
            f"chunks={len(self.chunks)}, modes={self.modes})"
        )

    # -- ingestion -------------------------------------------------------------------------
    async def ingest(self, documents: Sequence[Document]) -> None:
        """Add documents and rebuild the indexes (cached artifacts are reused when possible)."""
        rebuilt = await asyncio.to_thread(
            self.recipe.build,
            self.name,
            [*self.documents, *documents],
            progress=False,
            cache_dir=self.build_info.get("cache_dir", False),
        )
        self.__dict__.update(rebuilt.__dict__)

    # -- search ----------------------------------------------------------------------------
    def search(self, queries: Sequence[str], *, mode: str, top_k: int = 10) -> list[ResultColumns]:
        """Synchronous batch search (query vectors are encoded in one batch)."""
        if mode not in self.modes:
            raise ValueError(
                f"unknown mode {mode!r} for knowledge base {self.name!r}; "
                f"available modes: {', '.join(self.modes)}"
            )
        if top_k <= 0:
            return [self.chunk_table.columns([], []) for _ in queries]
        dense: Iterator[Ranker] = iter(())
        if mode in ("vector_search", "hybrid_search"):
            assert self.encoder is not None
            depth = self._first_depth(top_k)
            if mode == "hybrid_search":
                depth = max(depth, min(self.recipe.rrf_depth, len(self.chunks)))
            dense = self._dense_rankers(self.encoder.encode(list(queries)), depth)
        out = []
        for query in queries:
            if mode == "keyword_search":
                # Like Lucene, BM25 returns only chunks that match at least one query term.
                ranker = self._score_ranker(
                    self._bm25_scores(query), positive_only=True, ties=self._bm25_ties
                )
            elif mode == "vector_search":
                ranker = next(dense)
            else:
                ranker = self._rrf_ranker(self._bm25_scores(query), next(dense))
            rows, scores = self._collect(ranker, top_k)
            out.append(self.chunk_table.columns(rows, scores))
        return out

    async def query(self, text: str, *, mode: str | None = None, top_k: int = 10) -> QueryResponse:
        """Search ``text`` in ``mode`` (default: the first of ``modes``) and answer it."""
        mode = mode or self.modes[0]
        results = (await asyncio.to_thread(self.search, [text], mode=mode, top_k=top_k))[0]
        answer = await self.answerer.answer(text, results) if self.answerer is not None else None
        return QueryResponse(query=text, mode=mode, results=results, answer=answer)

    def _bm25_scores(self, query: str) -> np.ndarray:
        assert self.bm25 is not None
        return self.bm25.scores(query)

    @property
    def _bm25_ties(self) -> np.ndarray | None:
        # The Lucene index ranks equal scores by document id (as Anserini); bm25s by row.
        return getattr(self.bm25, "tie_ranks", None)

    @staticmethod
    def _score_ranker(
        scores: np.ndarray, *, positive_only: bool = False, ties: np.ndarray | None = None
    ) -> Ranker:
        def ranked(n: int) -> tuple[np.ndarray, np.ndarray]:
            idx = top_indices(scores, n, ties)
            if positive_only:
                idx = idx[scores[idx] > 0]
            return idx, scores[idx]

        return ranked

    def _dense_rankers(self, query_vectors: np.ndarray, depth: int) -> Iterator[Ranker]:
        """One exact inner-product ranker per query vector, made as it is consumed; ``depth``
        is how deep the first ranking goes (a sharded index fetches that much at once)."""
        assert self.embeddings is not None
        for vector in query_vectors:
            yield self._score_ranker(self.embeddings @ vector)

    def _rrf_ranker(self, keyword: np.ndarray, dense: Ranker) -> Ranker:
        def ranked(n: int) -> tuple[np.ndarray, np.ndarray]:
            # Each list is fused at depth max(n, rrf_depth) so shallow top_k still fuse fairly.
            depth = max(n, self.recipe.rrf_depth)
            # Chunks sharing no term with the query get no BM25 rank (as in keyword_search).
            keyword_top = top_indices(keyword, depth, self._bm25_ties)
            fused = reciprocal_rank_fusion(
                [
                    keyword_top[keyword[keyword_top] > 0].tolist(),
                    dense(depth)[0].tolist(),
                ],
                k=self.recipe.rrf_k,
            )[:n]
            return (
                np.array([i for i, _ in fused], dtype=np.int64),
                np.array([s for _, s in fused], dtype=np.float64),
            )

        return ranked

    def _first_depth(self, top_k: int) -> int:
        """How many chunks :meth:`_collect` ranks first for ``top_k`` results."""
        total = len(self.chunks)
        if not self.recipe.distinct_documents:
            return min(top_k, total)
        return min(total, top_k * self.recipe.overfetch)

    def _collect(self, ranked: Ranker, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        total = len(self.chunks)
        n = self._first_depth(top_k)
        if not self.recipe.distinct_documents:
            return ranked(n)
        # Over-fetch chunks, doubling until top_k distinct documents (or the whole corpus).
        codes = self.chunk_table.codes
        n_documents = len(self.chunk_table.documents)
        no_self_hits = np.full(1, -1, dtype=np.int64)  # a search knows no query id
        while True:
            idx, scores = ranked(n)
            # Each document's best chunk, in rank order: the collapse's rule.
            keep, _ = first_chunks(
                codes[idx], np.array([0, len(idx)], dtype=np.int64), no_self_hits, n_documents
            )
            first = np.flatnonzero(keep)[:top_k]
            if len(first) == top_k or n >= total:
                return idx[first], scores[first]
            n = min(total, n * 2)


class _ChunkSources:
    """Row -> the chunk's locator, built on demand (a class, not a lambda: picklable)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = chunks

    def __call__(self, row: int) -> dict[str, Any]:
        return self.chunks[row].source()
