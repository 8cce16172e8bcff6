"""Recipes: declarative, serializable descriptions of how a knowledge base is built."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from heta_eval import interrupts
from heta_eval.ann import AnnError, AnnSpec, build_index, scored_rows
from heta_eval.cache.store import ArtifactCache, cache_key, default_cache_dir
from heta_eval.data.beir_loader import QueryRows
from heta_eval.data.corpus_store import CorpusStore
from heta_eval.encoding.dense import DEFAULT_MODEL
from heta_eval.encoding.precision import Precision
from heta_eval.io.write import write_whole
from heta_eval.lucene.index import LUCENE_INDEX_VERSION, LuceneBM25Index
from heta_eval.models.records import Document
from heta_eval.reference.answerers import make_answerer
from heta_eval.reference.bm25 import BM25Index
from heta_eval.reference.given_vectors import VectorsFile
from heta_eval.reference.knowledge_base import ReferenceKnowledgeBase
from heta_eval.reference.passages import Passages, passages
from heta_eval.reference.vectors import DenseParts, dense_parts
from heta_eval.rerank.stage import RerankingKnowledgeBase, RerankSpec

__all__ = ["AnswererSpec", "BM25Spec", "ChunkingSpec", "DenseSpec", "Recipe"]

logger = logging.getLogger(__name__)


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChunkingSpec(_Spec):
    """How documents are cut: ``size`` (``None``: never split) and ``overlap`` in ``unit``."""

    size: int | None = Field(default=512, gt=0)
    overlap: int = Field(default=0, ge=0)
    unit: Literal["tokens", "chars"] = "tokens"


class BM25Spec(_Spec):
    """BM25 settings; the defaults are Pyserini's (Lucene BM25, k1=0.9, b=0.4).

    ``analyzer="lucene"`` (default) analyzes and scores exactly as Lucene's
    ``EnglishAnalyzer`` and ``BM25Similarity`` do in Anserini (docs/bm25.md), over title and
    text in one field (``fields="flat"``) or in two whose scores add (``"multifield"``, 2CR's
    multifield row). ``analyzer="bm25s"`` uses ``bm25s`` (its tokenizer and stop words,
    Snowball stemming in ``language``, the BM25 variant ``method``).
    """

    analyzer: Literal["lucene", "bm25s"] = "lucene"
    fields: Literal["flat", "multifield"] = "flat"
    method: str = "lucene"
    k1: float = 0.9
    b: float = 0.4
    language: str = "english"

    @model_validator(mode="after")
    def _lucene_is_english(self) -> BM25Spec:
        if self.analyzer == "lucene" and self.language != "english":
            raise ValueError("bm25.analyzer 'lucene' is English only; use 'bm25s' for others")
        if self.fields == "multifield" and self.analyzer != "lucene":
            raise ValueError("bm25.fields 'multifield' needs bm25.analyzer 'lucene'")
        return self


class DenseSpec(_Spec):
    """Embedding model (a name or local path), the precision and device it runs on.

    ``precision="auto"``: float16 on CUDA; on the CPU the default route of its kind of CPU,
    chosen from ``make bench``'s measurements there (``heta_eval.config.AUTO_PRECISION``).
    ``device="auto"``: CUDA when visible, else the CPU. ``batch_size=None``: 16 on the CPU,
    512 on CUDA."""

    model: str = DEFAULT_MODEL
    precision: Precision = "auto"
    device: str = Field(default="auto", pattern=r"^(auto|cpu|mps|cuda(:[0-9]+)?)$")
    batch_size: int | None = Field(default=None, gt=0)
    #: How a query's vector scores a passage's: cosine (BEIR's ``cos_sim``; the encoder's
    #: vectors are of unit length, so it is their inner product) or the inner product.
    score_function: Literal["cos_sim", "dot"] = "cos_sim"
    #: Vectors given with the run instead of encoding the corpus (one row per document, in
    #: the order of the corpus's lines) and, optionally, the queries (:mod:`.given_vectors`).
    corpus_vectors: VectorsFile | None = None
    query_vectors: VectorsFile | None = None
    #: An approximate index that searches the vectors instead of the exact search
    #: (:mod:`heta_eval.ann`); its modes are named after it (``vector_search+faiss-hnsw``).
    ann: AnnSpec | None = None

    @field_validator("corpus_vectors", "query_vectors", mode="before")
    @classmethod
    def _describe(cls, value: Any) -> Any:
        # A path is read (header, size, SHA-256) once, here: the recipe records what it is.
        return VectorsFile.describe(value) if isinstance(value, str | Path) else value

    @model_serializer(mode="wrap")
    def _without_exact_ann(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # No index (exact search) is written as before there was one: a results folder made
        # then keeps its recipe, and so its identity.
        data = handler(self)
        if data.get("ann", False) is None:
            del data["ann"]
        return data

    @model_validator(mode="after")
    def _queries_with_corpus(self) -> DenseSpec:
        if self.query_vectors is not None and self.corpus_vectors is None:
            raise ValueError("dense.query_vectors needs dense.corpus_vectors")
        pair = (self.corpus_vectors, self.query_vectors)
        if pair[1] is not None and pair[0] is not None and pair[0].dimension != pair[1].dimension:
            raise ValueError(
                f"dense.query_vectors are {pair[1].dimension}-dimensional, "
                f"dense.corpus_vectors {pair[0].dimension}-dimensional"
            )
        return self


class AnswererSpec(_Spec):
    """``extractive`` (best sentence of the top chunks, no LLM), ``llm`` (OpenAI-compatible
    chat completions configured from ``HETA_EVAL_LLM_*`` env vars) or ``none``."""

    kind: Literal["extractive", "llm", "none"] = "extractive"
    top_chunks: int = Field(default=3, gt=0)
    model: str | None = None  # llm only; default from HETA_EVAL_LLM_MODEL
    base_url: str | None = None  # llm only; default from HETA_EVAL_LLM_BASE_URL


class Recipe(_Spec):
    """How a knowledge base is built from a benchmark's documents.

    Indexes and embeddings are cached on disk, keyed by the settings that shape them and a
    fingerprint of the corpus: the same recipe on the same documents reuses them; a changed
    chunking, BM25 or embedding setting, or a changed corpus, rebuilds.

    >>> recipe = Recipe(chunking={"size": 256, "overlap": 32}, modes=["keyword_search"])
    >>> Recipe.model_validate_json(recipe.model_dump_json()) == recipe
    True
    >>> "ann" in recipe.model_dump()["dense"]  # exact search: written as before indexes
    False
    >>> kb = recipe.build("demo", [Document(id="d1", text="Cats purr.")], cache_dir=False,
    ...                   progress=False)
    >>> kb.modes
    ('keyword_search',)
    """

    name: str = "reference"
    modes: list[Literal["keyword_search", "vector_search", "hybrid_search"]] = Field(
        default_factory=lambda: ["keyword_search", "vector_search", "hybrid_search"], min_length=1
    )
    chunking: ChunkingSpec = Field(default_factory=ChunkingSpec)
    bm25: BM25Spec = Field(default_factory=BM25Spec)
    dense: DenseSpec = Field(default_factory=DenseSpec)
    answerer: AnswererSpec = Field(default_factory=AnswererSpec)
    rrf_k: int = Field(default=60, gt=0)
    rrf_depth: int = Field(default=100, gt=0)
    distinct_documents: bool = True
    overfetch: int = Field(default=3, ge=1)
    #: A second stage (:mod:`heta_eval.rerank.stage`): each mode ``M`` also answers as
    #: ``M+rerank``, its first ``depth`` results rescored by a cross-encoder.
    rerank: RerankSpec | None = None

    @model_serializer(mode="wrap")
    def _without_rerank(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # No second stage is written as before there was one: a results folder made then
        # keeps its recipe, and so its identity.
        data = handler(self)
        if data.get("rerank", False) is None:
            del data["rerank"]
        return data

    @model_validator(mode="after")
    def _overlap_below_size(self) -> Recipe:
        if self.chunking.size is not None and self.chunking.overlap >= self.chunking.size:
            raise ValueError("chunking.overlap must be smaller than chunking.size")
        if self.dense.corpus_vectors is not None and self.chunking.size is not None:
            raise ValueError(
                "dense.corpus_vectors hold one vector per document: set "
                "chunking.size to null (whole documents)"
            )
        return self

    @classmethod
    def from_file(cls, path: str | Path) -> Recipe:
        """Load a recipe from a JSON file (validated; unknown keys are errors)."""
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))

    def to_file(self, path: str | Path) -> None:
        """Write the recipe as JSON."""
        write_whole(path, self.model_dump_json(indent=2) + "\n")

    def build(
        self,
        name: str,
        documents: Sequence[Document] | CorpusStore,
        *,
        cache_dir: str | Path | Literal[False] | None = None,
        progress: bool = True,
        executor: Any = None,
        fingerprint: str | None = None,
        query_rows: QueryRows | None = None,
    ) -> ReferenceKnowledgeBase | RerankingKnowledgeBase:
        """Build the knowledge base ``name`` over ``documents`` (a list, or a
        :class:`~heta_eval.data.corpus_store.CorpusStore`, which is never loaded whole).

        ``cache_dir=None`` uses :func:`default_cache_dir`; ``False`` disables the cache.
        ``executor`` (e.g. :class:`heta_eval.scale.RayExecutor`) encodes the corpus and
        serves dense search elsewhere; the cached artifacts are the same either way.
        ``fingerprint``: the documents' :func:`~heta_eval.models.corpus.corpus_fingerprint`
        where the caller has it already (a store has it), so the corpus is hashed once.
        ``query_rows``: where each query's vector is, when ``dense.query_vectors`` are given.
        With ``rerank``, the knowledge base is a
        :class:`~heta_eval.rerank.stage.RerankingKnowledgeBase` over the reference.
        """
        store = (
            documents
            if isinstance(documents, CorpusStore)
            else CorpusStore.from_documents(documents)
        )
        if not len(store):
            raise ValueError(f"cannot build knowledge base {name!r} from an empty corpus")
        started = time.perf_counter()
        info: dict = {
            "cache_dir": False if cache_dir is False else str(cache_dir or default_cache_dir())
        }
        cache = None if cache_dir is False else ArtifactCache(cache_dir or default_cache_dir())
        fingerprint = fingerprint or store.fingerprint
        c = self.chunking
        # BM25 indexes title + text, like Pyserini's BEIR indexes; the dense text is BEIR's.
        found = passages(store, size=c.size, overlap=c.overlap, unit=c.unit)

        bm25 = None
        if "keyword_search" in self.modes or "hybrid_search" in self.modes:
            bm25 = self._bm25(found, cache, fingerprint, info, progress)
        dense = DenseParts(None, None)
        if "vector_search" in self.modes or "hybrid_search" in self.modes:
            dense = dense_parts(
                self.dense,
                found.texts,
                cache=cache,
                info=info,
                progress=progress,
                executor=executor,
                query_rows=query_rows,
            )

        ann_index = None
        if self.dense.ann is not None and dense.embeddings is not None:
            ann_index = _ann_index(self.dense.ann, dense, info, progress, executor)
        info["seconds"] = round(time.perf_counter() - started, 3)
        kb = ReferenceKnowledgeBase(
            name,
            recipe=self,
            store=store,
            passages=found,
            bm25=bm25,
            embeddings=dense.embeddings,
            encoder=dense.encoder,
            answerer=make_answerer(self.answerer),
            build_info=info,
            row_scale=dense.row_scale,
            query_vectors=dense.query_vectors,
            ann_index=ann_index,
        )
        kb = executor.attach(kb) if executor is not None else kb
        if self.rerank is None:
            return kb
        spec = self.rerank
        return RerankingKnowledgeBase(
            kb,
            spec.reranker(cache_dir),
            depth=spec.depth,
            level=spec.level,
            progress=progress,
            identity=spec.identity(),
        )

    def _bm25(
        self,
        found: Passages,
        cache: ArtifactCache | None,
        fingerprint: str,
        info: dict,
        progress: bool,
    ) -> Any:
        """The BM25 index over the passages, built or from the cache (``info`` says which)."""
        b, c = self.bm25, self.chunking
        texts = found.texts

        def build_bm25(directory: Path | None = None) -> BM25Index | LuceneBM25Index:
            _say(progress, f"building the BM25 index over {len(texts):,} passages")
            with interrupts.phase("building the BM25 index"):
                if b.analyzer == "lucene":
                    fields = (
                        {"contents": found.bodies, "title": found.titles}
                        if b.fields == "multifield"
                        else {"contents": texts}
                    )
                    # Equal scores rank by document id, as Anserini sorts them (a store's ids:
                    # its Arrow column, never a Python list). Written straight into the cache
                    # entry (``directory``), or a temporary folder.
                    ids = found.table.document_ids
                    ties = getattr(ids, "arrow", ids)
                    return LuceneBM25Index.build(
                        fields,
                        k1=b.k1,
                        b=b.b,
                        tie_keys=ties,
                        directory=directory,
                        progress=progress,
                    )
                bm25s = BM25Index.build(
                    list(texts),
                    k1=b.k1,
                    b=b.b,
                    method=b.method,
                    language=b.language,
                    progress=progress,
                )
                if directory is not None:
                    bm25s.save(directory)
                return bm25s

        t = time.perf_counter()
        if cache is None:
            bm25, info["bm25"] = build_bm25(), "built"
        else:
            # The Lucene index's format version: a fix to its analysis rebuilds old entries.
            version = [LUCENE_INDEX_VERSION] if b.analyzer == "lucene" else []
            key = cache_key("bm25", c.model_dump(), b.model_dump(), fingerprint, *version)
            path, reused = cache.get_or_build("bm25", key, build_bm25)
            bm25, info["bm25"] = (
                LuceneBM25Index.load(path)
                if b.analyzer == "lucene"
                else BM25Index.load(path, language=b.language),
                ("cache" if reused else "built"),
            )
            info["bm25_path"] = str(path)
        info["bm25_seconds"] = round(time.perf_counter() - t, 3)
        # Chunks Anserini would not index (blank contents), for the run summary.
        info["bm25_skipped"] = getattr(bm25, "skipped", 0)
        return bm25


def _ann_index(spec: AnnSpec, dense: DenseParts, info: dict, progress: bool, executor: Any) -> Any:
    """``spec``'s index over the passages' vectors as the exact search scores them; ``info``
    records what was built (library, version, index class, settings, seconds)."""
    if executor is not None:
        raise AnnError(
            f"dense.ann ({spec.label}) searches in this process: run it without an executor (--ray)"
        )
    _say(progress, f"building the {spec.label} index over {len(dense.embeddings):,} vectors")
    with interrupts.phase(f"building the {spec.kind} index"):
        index = build_index(spec, scored_rows(dense.embeddings, dense.row_scale))
    info["ann"] = index.record
    return index


def _say(progress: bool, line: str) -> None:
    """A status line (logged) for a step that shows no bar of its own."""
    if progress:
        logger.info(line)
