"""Recipes: declarative, serializable descriptions of how a knowledge base is built."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from heta_eval import interrupts
from heta_eval.io.write import write_whole
from heta_eval.kb.answerers import make_answerer
from heta_eval.kb.bm25 import BM25Index
from heta_eval.kb.cache import ArtifactCache, cache_key, default_cache_dir
from heta_eval.kb.chunking import chunk_documents
from heta_eval.kb.cpu import this_cpu
from heta_eval.kb.dense import DEFAULT_MODEL, DenseEncoder
from heta_eval.kb.embedding_cache import cached_embeddings
from heta_eval.kb.lucene.index import LUCENE_INDEX_VERSION, LuceneBM25Index
from heta_eval.kb.precision import Precision, device_kind
from heta_eval.kb.reference import ReferenceKnowledgeBase
from heta_eval.models.corpus import corpus_fingerprint
from heta_eval.models.records import Document

__all__ = ["AnswererSpec", "BM25Spec", "ChunkingSpec", "DenseSpec", "Recipe"]


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

    @model_validator(mode="after")
    def _overlap_below_size(self) -> Recipe:
        if self.chunking.size is not None and self.chunking.overlap >= self.chunking.size:
            raise ValueError("chunking.overlap must be smaller than chunking.size")
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
        documents: Sequence[Document],
        *,
        cache_dir: str | Path | Literal[False] | None = None,
        progress: bool = True,
        executor: Any = None,
        fingerprint: str | None = None,
    ) -> ReferenceKnowledgeBase:
        """Build the knowledge base ``name`` over ``documents``.

        ``cache_dir=None`` uses :func:`default_cache_dir`; ``False`` disables the cache.
        ``executor`` (e.g. :class:`heta_eval.scale.RayExecutor`) encodes the corpus and
        serves dense search elsewhere; the cached artifacts are the same either way.
        ``fingerprint``: the documents' :func:`~heta_eval.models.corpus.corpus_fingerprint`
        where the caller has it already (the runner does), so the corpus is hashed once.
        """
        documents = list(documents)
        if not documents:
            raise ValueError(f"cannot build knowledge base {name!r} from an empty corpus")
        started = time.perf_counter()
        info: dict = {
            "cache_dir": False if cache_dir is False else str(cache_dir or default_cache_dir())
        }
        cache = None if cache_dir is False else ArtifactCache(cache_dir or default_cache_dir())
        fingerprint = fingerprint or corpus_fingerprint(documents)
        c = self.chunking
        chunks = chunk_documents(documents, size=c.size, overlap=c.overlap, unit=c.unit)
        # BM25 indexes title + text, like Pyserini's BEIR indexes; the dense text is BEIR's.
        texts = [f"{ch.title} {ch.text}".strip() for ch in chunks]

        bm25 = None
        if "keyword_search" in self.modes or "hybrid_search" in self.modes:
            bm25 = self._bm25(chunks, texts, cache, fingerprint, info, progress)
        encoder = embeddings = None
        if "vector_search" in self.modes or "hybrid_search" in self.modes:
            encoder, embeddings = self._dense(texts, cache, info, progress, executor)

        info["seconds"] = round(time.perf_counter() - started, 3)
        kb = ReferenceKnowledgeBase(
            name,
            recipe=self,
            documents=documents,
            chunks=chunks,
            bm25=bm25,
            embeddings=embeddings,
            encoder=encoder,
            answerer=make_answerer(self.answerer),
            build_info=info,
        )
        return executor.attach(kb) if executor is not None else kb

    def _bm25(
        self,
        chunks: Sequence[Any],
        texts: list[str],
        cache: ArtifactCache | None,
        fingerprint: str,
        info: dict,
        progress: bool,
    ) -> Any:
        """The BM25 index over ``texts``, built or from the cache (``info`` says which)."""
        b, c = self.bm25, self.chunking

        def build_bm25(directory: Path | None = None) -> BM25Index | LuceneBM25Index:
            _say(progress, f"building the BM25 index over {len(texts):,} passages")
            with interrupts.phase("building the BM25 index"):
                if b.analyzer == "lucene":
                    fields = (
                        {
                            "contents": [ch.text for ch in chunks],
                            "title": [ch.title for ch in chunks],
                        }
                        if b.fields == "multifield"
                        else {"contents": texts}
                    )
                    # Equal scores rank by document id, as Anserini sorts them. Written
                    # straight into the cache entry (``directory``), or a temporary folder.
                    ties = [ch.document_id for ch in chunks]
                    return LuceneBM25Index.build(
                        fields, k1=b.k1, b=b.b, tie_keys=ties, directory=directory,
                        progress=progress,
                    )  # fmt: skip
                bm25s = BM25Index.build(
                    texts, k1=b.k1, b=b.b, method=b.method, language=b.language, progress=progress
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

    def _dense(
        self,
        texts: list[str],
        cache: ArtifactCache | None,
        info: dict,
        progress: bool,
        executor: Any,
    ) -> tuple[Any, Any]:
        """The encoder and the vectors of ``texts``, encoded or from the cache."""
        d = self.dense
        encoder = DenseEncoder(d.model, precision=d.precision, batch_size=d.batch_size,
                               device=d.device)  # fmt: skip
        root = cache.root if cache is not None else None

        def encode_texts(batch: list[str], keep: Any = None) -> Any:
            if executor is None:
                _load_model(encoder, progress)
                return encoder.encode(batch, progress=progress, on_batch=keep)
            # Ray's encode keeps its finished shards itself.
            return executor.encode_corpus(encoder, batch, progress=progress, cache_root=root)

        t = time.perf_counter()
        if cache is None:
            with interrupts.phase(f"encoding {len(texts):,} passages"):
                embeddings, info["embeddings"] = encode_texts(texts), "built"
        else:
            # Keyed by the texts encoded (not the corpus or chunking that made them) and the
            # encoder's identity: model, resolved precision, device kind ("auto" shares
            # entries with what it resolves to; vectors of one precision or device kind are
            # never served for another). Local and Ray encodes share entries; only texts no
            # entry holds are encoded.
            # An executor serves the vectors from its own shards: mapped, never loaded.
            embeddings, info["embeddings"], path = cached_embeddings(
                cache, encoder.identity(), texts, encode_texts, mapped=executor is not None
            )
            info["embeddings_path"] = str(path)
        # Loaded now, not by the first query: on a loaded machine loading takes minutes,
        # which would count against that query's timeout.
        _load_model(encoder, progress)
        info["embeddings_seconds"] = round(time.perf_counter() - t, 3)
        info["precision"] = encoder.precision
        info["route"] = encoder.route
        info["route_reason"] = encoder.route_choice.reason
        if encoder.route_choice.evidence:
            info["route_evidence"] = encoder.route_choice.evidence
        info["device"] = encoder.device
        if device_kind(encoder.device) == "cpu":
            info["cpu"] = this_cpu().describe()
        return encoder, embeddings


def _say(progress: bool, line: str) -> None:
    """A status line on stderr for a step that shows no bar of its own."""
    if progress:
        print(line, file=sys.stderr, flush=True)


def _load_model(encoder: Any, progress: bool) -> None:
    """Load the encoder's model now, saying so: loading takes seconds, silent otherwise."""
    if encoder.loaded:
        return
    _say(progress, f"loading the embedding model {encoder.model_name} "
                   f"({encoder.precision}, {encoder.device})")  # fmt: skip
    with interrupts.phase("loading the embedding model"):
        encoder.runner  # noqa: B018 (loads and caches it)
