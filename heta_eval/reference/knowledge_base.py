"""The reference knowledge base: passages + BM25 + dense vectors + RRF, with an answerer.

Queries are searched in batches: BM25's compiled kernel scores a batch in parallel, and dense
search multiplies a batch of query vectors by the corpus a block at a time
(:func:`~heta_eval.ann.exact_search.exact_search`), where one product per query would read the
whole corpus once per query.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_eval import interrupts
from heta_eval.ann import AnnIndex, ann_mode
from heta_eval.ann.exact_search import exact_search
from heta_eval.data.corpus_store import CorpusStore
from heta_eval.encoding.dense import DenseEncoder
from heta_eval.lucene.index import LuceneBM25Index
from heta_eval.models.columns import ChunkTable, ResultColumns
from heta_eval.models.records import Document, QueryResponse
from heta_eval.reference.bm25 import BM25Index
from heta_eval.reference.hybrid import reciprocal_rank_fusion
from heta_eval.reference.passages import Passages
from heta_eval.retrieval.first_chunks import first_chunks

if TYPE_CHECKING:
    from heta_eval.reference.answerers import Answerer
    from heta_eval.reference.recipe import Recipe

__all__ = ["MODES", "QueryVectors", "ReferenceKnowledgeBase"]

MODES: tuple[str, ...] = ("keyword_search", "vector_search", "hybrid_search")

#: ``rank(positions, depth)``: the best ``depth`` passages of each query at ``positions`` of
#: the batch, as ``(rows, scores)``, best first (fewer rows: nothing more matches).
Ranker = Callable[[list[int], int], list[tuple[np.ndarray, np.ndarray]]]
Hits = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class QueryVectors:
    """Query vectors given with the run: ``matrix`` rows, the row of each query id, and
    whether cosine is asked (each vector is then divided by its length)."""

    matrix: np.ndarray
    rows: Mapping[str, int]
    cosine: bool = True

    def of(self, query_ids: Sequence[str | None]) -> np.ndarray:
        """The float32 vectors of ``query_ids``; an id without a row is a ``KeyError``."""
        missing = [q for q in query_ids if q not in self.rows]
        if missing:
            raise KeyError(
                f"no query vector for query id {missing[0]!r} (the query vectors "
                "hold one row per line of queries.jsonl)"
            )
        vectors = np.asarray(self.matrix[[self.rows[q] for q in query_ids]], dtype=np.float32)
        if self.cosine:
            vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors


class ReferenceKnowledgeBase:
    """Searches passages (whole documents or chunks) by BM25 (``keyword_search``), dense
    vectors (``vector_search``) or their RRF fusion (``hybrid_search``). Build one with
    :meth:`Recipe.build`.

    With ``distinct_documents=True`` (the default) results hold the best passage of each of
    the ``top_k`` best documents: passages are over-fetched until ``top_k`` distinct
    documents are found or nothing more matches.

    Results come as :class:`~heta_eval.models.columns.ResultColumns` over :attr:`chunk_table`:
    ``QueryResult`` objects are built only when read, and the retrieval metrics never need
    them. :meth:`query_batch` answers many queries in one search (the runner's way);
    :meth:`query` one.

    >>> import asyncio
    >>> from heta_eval.reference.recipe import Recipe
    >>> kb = Recipe(modes=["keyword_search"]).build(
    ...     "demo", [Document(id="d1", text="Paris is in France."),
    ...              Document(id="d2", text="Rome is in Italy.")], cache_dir=False, progress=False)
    >>> response = asyncio.run(kb.query("Italy", mode="keyword_search", top_k=1))
    >>> response.results[0].source["document_id"]
    'd2'
    """

    #: Queries the runner hands :meth:`query_batch` at once: dense search reads the corpus
    #: once per batch (and widens float16 vectors once), so a batch is large.
    batch_size = 1024

    def __init__(
        self,
        name: str,
        *,
        recipe: Recipe,
        store: CorpusStore,
        passages: Passages,
        bm25: BM25Index | LuceneBM25Index | None,
        embeddings: np.ndarray | None,
        encoder: DenseEncoder | None,
        answerer: Answerer | None,
        build_info: dict[str, Any] | None = None,
        row_scale: np.ndarray | None = None,
        query_vectors: QueryVectors | None = None,
        ann_index: AnnIndex | None = None,
    ) -> None:
        self.name = name
        self.recipe = recipe
        self.store = store
        self.passages = passages
        self.bm25 = bm25
        #: The passages' vectors (memory-mapped where they come from a file), and per row a
        #: factor of its scores (inverse lengths: cosine of given vectors), or ``None``.
        self.embeddings = embeddings
        self.row_scale = row_scale
        self.encoder = encoder
        self.query_vectors = query_vectors
        self.answerer = answerer
        #: How each artifact was obtained: ``{"bm25": "built" | "cache", ...}`` and timings.
        self.build_info = build_info or {}
        #: The approximate index that searches the vectors (``None``: exact search); the
        #: modes that use it are named after it (``vector_search+faiss-hnsw``).
        self.ann_index = ann_index
        spec = ann_index.spec if ann_index is not None else None
        self._base_modes = {ann_mode(m, spec): m for m in MODES if m in recipe.modes}
        self.modes: tuple[str, ...] = tuple(self._base_modes)
        table = passages.table
        # Whole documents with distinct ids: a passage's document is its own, no over-fetching.
        self._one_per_document = len(table.documents) == len(table)

    @property
    def takes_query_id(self) -> bool:
        """Whether queries are searched by id (their vectors were given with the run)."""
        return self.query_vectors is not None

    @property
    def chunk_table(self) -> ChunkTable:
        """The passages as a :class:`~heta_eval.models.columns.ChunkTable`."""
        return self.passages.table

    @property
    def chunks(self) -> Sequence[Any]:
        """The passages as :class:`~heta_eval.reference.chunking.Chunk` objects."""
        return self.passages.chunks

    @property
    def documents(self) -> Sequence[Document]:
        """The corpus's documents (built from the store when read)."""
        return [self.store.document(i) for i in range(len(self.store))]

    def __repr__(self) -> str:
        return (
            f"ReferenceKnowledgeBase(name={self.name!r}, documents={len(self.store)}, "
            f"chunks={len(self.passages)}, modes={self.modes})"
        )

    # -- ingestion -------------------------------------------------------------------------
    async def ingest(self, documents: Sequence[Document]) -> None:
        """Add documents and rebuild the indexes (cached artifacts are reused when possible)."""
        rebuilt = await asyncio.to_thread(
            self.recipe.build,
            self.name,
            [*self.store.documents(), *documents],
            progress=False,
            cache_dir=self.build_info.get("cache_dir", False),
        )
        self.__dict__.update(rebuilt.__dict__)

    # -- search ----------------------------------------------------------------------------
    def search(
        self,
        queries: Sequence[str],
        *,
        mode: str,
        top_k: int = 10,
        query_ids: Sequence[str] | None = None,
    ) -> list[ResultColumns]:
        """Search ``queries`` (one batch; ``query_ids`` where the query vectors were given)."""
        if mode not in self.modes:
            raise ValueError(
                f"unknown mode {mode!r} for knowledge base {self.name!r}; "
                f"available modes: {', '.join(self.modes)}"
            )
        mode = self._base_modes[mode]
        queries = list(queries)
        if top_k <= 0:
            return [self.chunk_table.columns([], []) for _ in queries]
        if mode == "keyword_search":
            rank = self._keyword_ranker(queries)
        elif mode == "vector_search":
            rank = self._dense_ranker(self._query_vectors(queries, query_ids))
        else:
            rank = self._hybrid_ranker(queries, self._query_vectors(queries, query_ids))
        return [self.chunk_table.columns(r, s) for r, s in self._collect(rank, len(queries), top_k)]

    async def query(
        self, text: str, *, mode: str | None = None, top_k: int = 10, query_id: str | None = None
    ) -> QueryResponse:
        """Search ``text`` in ``mode`` (default: the first of ``modes``) and answer it."""
        ids = None if query_id is None else [query_id]
        return (await self.query_batch([text], mode=mode, top_k=top_k, query_ids=ids))[0]

    async def query_batch(
        self,
        texts: Sequence[str],
        *,
        mode: str | None = None,
        top_k: int = 10,
        query_ids: Sequence[str] | None = None,
    ) -> list[QueryResponse]:
        """:meth:`query` for many queries in one search."""
        mode = mode or self.modes[0]
        # Texts read since the last batch (the answers', and the caller's from the results)
        # are scattered pages of the corpus file: let them go, before and after each batch.
        self.store.release_pages()
        ranked = await asyncio.to_thread(
            self.search, texts, mode=mode, top_k=top_k, query_ids=query_ids
        )
        responses = []
        for number, (text, results) in enumerate(zip(texts, ranked, strict=True), 1):
            answer = None
            if self.answerer is not None:
                answer = await self.answerer.answer(text, results)
                if number % 64 == 0:
                    self.store.release_pages()  # each text read maps ~64 KB around it
            responses.append(QueryResponse(query=text, mode=mode, results=results, answer=answer))
        self.store.release_pages()
        return responses

    def query_vectors_of(
        self, queries: Sequence[str], query_ids: Sequence[str] | None = None
    ) -> np.ndarray:
        """The vectors dense search searches ``queries`` by: given ones (by ``query_ids``)
        or encoded ones."""
        return self._query_vectors(list(queries), query_ids)

    def _query_vectors(self, queries: list[str], query_ids: Sequence[str] | None) -> np.ndarray:
        if self.query_vectors is not None:
            if query_ids is None:
                raise ValueError("the query vectors were given with the run: search by query id")
            return self.query_vectors.of(list(query_ids))
        assert self.encoder is not None
        return self.encoder.encode(queries)

    def _keyword_ranker(self, queries: list[str]) -> Ranker:
        assert self.bm25 is not None
        bm25 = self.bm25

        def rank(positions: list[int], depth: int) -> list[Hits]:
            rows, scores = bm25.search([queries[i] for i in positions], depth)
            # Like Lucene, BM25 returns only passages that match at least one query term.
            keep = (rows >= 0) & (scores > 0)
            return [(r[k], s[k]) for r, s, k in zip(rows, scores, keep, strict=True)]

        return rank

    def _dense_ranker(self, vectors: np.ndarray) -> Ranker:
        def rank(positions: list[int], depth: int) -> list[Hits]:
            rows, scores = self._dense_top(vectors[positions], depth)
            # An approximate index may find fewer rows than asked (-1 past its last).
            return [(r[r >= 0], s[r >= 0]) for r, s in zip(rows, scores, strict=True)]

        return rank

    def _dense_top(self, vectors: np.ndarray, depth: int) -> Hits:
        """Exact top-``depth`` rows of each query vector: ``(rows, scores)``, ``(m, depth)``."""
        assert self.embeddings is not None
        if self.ann_index is not None:
            return self.ann_index.search(vectors, depth)
        return exact_search(
            self.embeddings, vectors, depth, row_scale=self.row_scale, on_block=_interruptible
        )

    def _hybrid_ranker(self, queries: list[str], vectors: np.ndarray) -> Ranker:
        keyword, dense = self._keyword_ranker(queries), self._dense_ranker(vectors)

        def rank(positions: list[int], depth: int) -> list[Hits]:
            # Each list is fused at depth max(n, rrf_depth) so shallow top_k still fuse fairly.
            deep = max(depth, self.recipe.rrf_depth)
            fused = []
            for (kw, _), (dn, _) in zip(
                keyword(positions, deep), dense(positions, deep), strict=True
            ):
                pairs = reciprocal_rank_fusion([kw.tolist(), dn.tolist()], k=self.recipe.rrf_k)
                pairs = pairs[:depth]
                fused.append(
                    (
                        np.array([i for i, _ in pairs], dtype=np.int64),
                        np.array([s for _, s in pairs], dtype=np.float64),
                    )
                )
            return fused

        return rank

    def _first_depth(self, top_k: int) -> int:
        """How many passages :meth:`_collect` ranks first for ``top_k`` results."""
        total = len(self.passages)
        if not self.recipe.distinct_documents or self._one_per_document:
            return min(top_k, total)
        return min(total, top_k * self.recipe.overfetch)

    def _collect(self, rank: Ranker, count: int, top_k: int) -> list[Hits]:
        """Each query's best passage of each of its ``top_k`` best documents: passages are
        ranked ever deeper (doubling) for the queries still short of ``top_k`` documents."""
        total = len(self.passages)
        n = self._first_depth(top_k)
        if not self.recipe.distinct_documents or self._one_per_document:
            return rank(list(range(count)), n)
        codes = self.chunk_table.codes
        n_documents = len(self.chunk_table.documents)
        no_self_hits = np.full(1, -1, dtype=np.int64)  # a search knows no query id
        out: list[Hits | None] = [None] * count
        todo = list(range(count))
        while todo:
            short = []
            for q, (idx, scores) in zip(todo, rank(todo, n), strict=True):
                # Each document's best passage, in rank order: the collapse's rule.
                keep, _ = first_chunks(
                    codes[idx], np.array([0, len(idx)], dtype=np.int64), no_self_hits, n_documents
                )
                first = np.flatnonzero(keep)[:top_k]
                if len(first) == top_k or len(idx) < n or n >= total:
                    out[q] = (idx[first], scores[first])
                else:
                    short.append(q)
            todo, n = short, min(total, n * 2)
        return [hits for hits in out if hits is not None]


def _interruptible(done: int, total: int) -> None:
    """Between two blocks of a long search: act on Ctrl-C."""
    interrupts.check()
