"""The vectors a knowledge base searches: the passages encoded (or read from the cache), or
vectors given with the run (:mod:`.given_vectors`), and what encodes or holds the queries'.

``build_info`` records which: ``embeddings`` is ``"built"``, ``"cache"`` or ``"given"``,
with the encoder's precision, route and device where an encoder runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from heta_eval import interrupts
from heta_eval.cache.store import ArtifactCache
from heta_eval.data.beir_loader import QueryRows
from heta_eval.encoding.cpu import this_cpu
from heta_eval.encoding.dense import DenseEncoder
from heta_eval.encoding.embedding_cache import cached_embeddings
from heta_eval.encoding.precision import device_kind
from heta_eval.reference.given_vectors import VectorsError, check_vectors
from heta_eval.reference.knowledge_base import QueryVectors

__all__ = ["DenseParts", "dense_parts"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DenseParts:
    """The encoder (``None`` where the query vectors are given), the passage vectors, their
    row scale (cosine of given vectors) and the given query vectors."""

    encoder: DenseEncoder | None
    embeddings: Any
    row_scale: np.ndarray | None = None
    query_vectors: QueryVectors | None = None


def dense_parts(
    spec: Any,
    texts: Sequence[str],
    *,
    cache: ArtifactCache | None,
    info: dict[str, Any],
    progress: bool,
    executor: Any = None,
    query_rows: QueryRows | None = None,
) -> DenseParts:
    """Encode ``texts`` (or read them from the cache), or open and check the given vectors
    of ``spec`` (a :class:`~heta_eval.reference.recipe.DenseSpec`)."""
    started = time.perf_counter()
    if spec.corpus_vectors is not None:
        parts = _given(spec, len(texts), info, progress, query_rows)
    else:
        encoder = _encoder(spec)
        embeddings = _encoded(encoder, texts, cache, info, progress, executor)
        parts = DenseParts(encoder, embeddings)
    if parts.encoder is not None:
        # Loaded now, not by the first query: on a loaded machine loading takes minutes,
        # which would count against that query's timeout.
        _load_model(parts.encoder, progress)
        encoder = parts.encoder
        info["precision"] = encoder.precision
        info["route"] = encoder.route
        info["route_reason"] = encoder.route_choice.reason
        if encoder.route_choice.evidence:
            info["route_evidence"] = encoder.route_choice.evidence
        info["device"] = encoder.device
        if device_kind(encoder.device) == "cpu":
            info["cpu"] = this_cpu().describe()
    info["embeddings_seconds"] = round(time.perf_counter() - started, 3)
    return parts


def _encoder(spec: Any) -> DenseEncoder:
    return DenseEncoder(
        spec.model, precision=spec.precision, batch_size=spec.batch_size, device=spec.device
    )


def _encoded(
    encoder: DenseEncoder,
    texts: Sequence[str],
    cache: ArtifactCache | None,
    info: dict[str, Any],
    progress: bool,
    executor: Any,
) -> Any:
    """The vectors of ``texts``, encoded or from the cache."""
    root = cache.root if cache is not None else None

    def encode_texts(batch: list[str], keep: Any = None) -> Any:
        if executor is None:
            _load_model(encoder, progress)
            return encoder.encode(batch, progress=progress, on_batch=keep)
        # Ray's encode keeps its finished shards itself.
        return executor.encode_corpus(encoder, batch, progress=progress, cache_root=root)

    if cache is None:
        with interrupts.phase(f"encoding {len(texts):,} passages"):
            info["embeddings"] = "built"
            return encode_texts(list(texts))
    # Keyed by the texts encoded (not the corpus or chunking that made them) and the
    # encoder's identity: model, resolved precision, device kind ("auto" shares entries with
    # what it resolves to; vectors of one precision or device kind are never served for
    # another). Local and Ray encodes share entries; only texts no entry holds are encoded.
    # Mapped, never loaded: a search reads them a block at a time (an executor serves them
    # from its own shards).
    embeddings, info["embeddings"], path = cached_embeddings(
        cache, encoder.identity(), texts, encode_texts, mapped=True
    )
    info["embeddings_path"] = str(path)
    return embeddings


def _given(
    spec: Any, passages: int, info: dict[str, Any], progress: bool, query_rows: QueryRows | None
) -> DenseParts:
    """The given corpus vectors (and query vectors, or the encoder of the queries), checked."""
    cosine = spec.score_function == "cos_sim"
    given = spec.corpus_vectors
    _say(
        progress,
        f"checking the given vectors {given.name} ({given.rows:,} x {given.dimension}, "
        f"{given.dtype})",
    )
    with interrupts.phase(f"checking {given.name}"):
        matrix = given.open()
        dimension = spec.query_vectors.dimension if spec.query_vectors is not None else None
        checked = check_vectors(
            matrix, given, expected_rows=passages, dimension=dimension, cosine=cosine
        )
    warnings = list(checked.warnings)
    info["embeddings"] = "given"
    info["corpus_vectors"] = given.name
    query_vectors = encoder = None
    if spec.query_vectors is not None:
        if query_rows is None:
            raise VectorsError(
                f"{spec.query_vectors.name}: query vectors need the benchmark's "
                "query order (a BEIR dataset's queries.jsonl)"
            )
        queries = spec.query_vectors.open()
        found = check_vectors(
            queries,
            spec.query_vectors,
            expected_rows=query_rows.total,
            what="queries",
            source=query_rows.source,
            dimension=given.dimension,
            cosine=cosine,
        )
        warnings += found.warnings
        query_vectors = QueryVectors(queries, query_rows.rows, cosine=cosine)
        info["query_vectors"] = spec.query_vectors.name
    else:
        encoder = _encoder(spec)
        _load_model(encoder, progress)
        if encoder.dimension != given.dimension:
            raise VectorsError(
                f"{given.name}: {given.dimension}-dimensional vectors, but the query encoder "
                f"{spec.model} makes {encoder.dimension}-dimensional ones; give the query vectors "
                "too (--query-embeddings) or the model that made these (--recipe)"
            )
    for line in warnings:
        logger.warning("warning: %s", line)
    if warnings:
        info["warnings"] = [*info.get("warnings", []), *warnings]
    row_scale = checked.row_scale if cosine else None
    return DenseParts(encoder, matrix, row_scale, query_vectors)


def _say(progress: bool, line: str) -> None:
    """A status line (logged) for a step that shows no bar of its own."""
    if progress:
        logger.info(line)


def _load_model(encoder: Any, progress: bool) -> None:
    """Load the encoder's model now, saying so: loading takes seconds, silent otherwise."""
    if encoder.loaded:
        return
    _say(
        progress,
        f"loading the embedding model {encoder.model_name} ({encoder.precision}, {encoder.device})",
    )
    with interrupts.phase("loading the embedding model"):
        encoder.runner  # noqa: B018 (loads and caches it)
