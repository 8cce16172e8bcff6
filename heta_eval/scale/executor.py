"""The Ray executor: where ``heta-eval run --ray ADDRESS`` encodes the corpus and searches.

:class:`RayExecutor` plugs into :meth:`heta_eval.kb.Recipe.build` (``executor=``): the
corpus is encoded on the cluster (:func:`~heta_eval.scale.encode.encode_shards`) and stored
in the artifact cache under the same key as a local encode, so a rerun on either executor is
a cache hit; dense search then runs over shards held by actors spread over the nodes, and
their top-k lists are merged into the single-machine result.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..kb.dense import DenseEncoder
from ..kb.reference import ReferenceKnowledgeBase
from .cluster import cluster_resources, connect
from .search import Hits, merge_top_k, shard_top_k, split_rows

__all__ = ["DEFAULT_SHARD_SIZE", "RayExecutor", "local_executor_record"]

#: Chunks per embedding shard: the unit of resumption and of one batch on a worker.
DEFAULT_SHARD_SIZE = 4096


def local_executor_record() -> dict[str, Any]:
    """What the summary records for a run without ``--ray``.

    >>> local_executor_record()["kind"]
    'local'
    """
    return {"kind": "local", "nodes": 1, "workers": 1, "gpus": 0}


class RayExecutor:
    """Encodes and searches on the Ray cluster at ``address`` (``"local"``, ``"auto"`` or
    ``"host:port"``); joins it on first use.

    ``workers`` is the size of the encoder pool (default: one per GPU where the cluster has
    GPUs, else one per CPU); ``search_shards`` the number of dense index shards (default:
    one per node).
    """

    def __init__(
        self,
        address: str,
        *,
        shard_size: int = DEFAULT_SHARD_SIZE,
        workers: int | None = None,
        search_shards: int | None = None,
    ) -> None:
        if shard_size <= 0:
            raise ValueError(f"shard size must be positive, got {shard_size}")
        self.address = address
        self.shard_size = shard_size
        self.workers = workers
        self.search_shards = search_shards
        self.encoding: dict[str, Any] = {}
        self._ray: Any = None

    def start(self) -> RayExecutor:
        if self._ray is None:
            self._ray = connect(self.address)
        return self

    # -- encoding --------------------------------------------------------------------------
    def encode_corpus(
        self,
        encoder: DenseEncoder,
        texts: Sequence[str],
        *,
        progress: bool = False,
        cache_root: str | Path | None = None,
    ) -> np.ndarray:
        """Vectors of ``texts`` (chunk order), encoded on the cluster; finished shards are
        kept under ``cache_root`` (a temporary folder without one) for resumption."""
        from .encode import encode_shards
        from .shards import ShardStore

        self.start()
        resources = cluster_resources()
        gpus = int(resources["gpus"])
        workers = self.workers or (gpus or max(1, int(resources["cpus"])))
        root = Path(cache_root) if cache_root is not None else Path(tempfile.mkdtemp())
        store = ShardStore.for_encode(
            root, texts, encoder.model_name, encoder.precision, self.shard_size,
            encoder.batch_size,
        )  # fmt: skip
        matrix, record = encode_shards(
            encoder, texts, store, shard_size=self.shard_size, workers=workers,
            gpus_per_worker=1.0 if gpus else 0.0, progress=progress,
        )  # fmt: skip
        store.remove()  # the caller stores the assembled matrix under the cache key
        self.encoding = record
        return matrix

    # -- search ----------------------------------------------------------------------------
    def attach(self, kb: ReferenceKnowledgeBase) -> ReferenceKnowledgeBase:
        """``kb`` with its dense index split into shards on the cluster's nodes."""
        if kb.embeddings is None:
            return kb
        self.start()
        shards = self.search_shards or cluster_resources()["nodes"]
        return ShardedSearchKnowledgeBase(kb, RayShardedIndex(kb.embeddings, shards))

    def describe(self) -> dict[str, Any]:
        """The summary's ``executor`` record: kind, nodes, workers, GPUs, encoding work."""
        self.start()
        resources = cluster_resources()
        record: dict[str, Any] = {
            "kind": "ray",
            "address": self.address,
            "nodes": resources["nodes"],
            "cluster_cpus": resources["cpus"],
            "cluster_gpus": resources["gpus"],
            "workers": self.encoding.get("workers", 0),
            "gpus": self.encoding.get("gpus", 0),
        }
        if self.encoding:
            record["encoding"] = self.encoding
        return record


class _DenseShard:
    """A Ray actor holding rows ``[offset, offset + len(matrix))`` of the dense index."""

    def __init__(self, offset: int, matrix: np.ndarray) -> None:
        self.offset = offset
        self.matrix = np.ascontiguousarray(matrix)

    def top_k(self, queries: np.ndarray, k: int) -> list[Hits]:
        return [shard_top_k(self.matrix, self.offset, q, k) for q in queries]


class RayShardedIndex:
    """A dense index cut into row shards, each held by an actor spread over the nodes."""

    def __init__(self, embeddings: np.ndarray, shards: int) -> None:
        import ray

        actor = ray.remote(num_cpus=0, scheduling_strategy="SPREAD")(_DenseShard)
        self.ranges = split_rows(len(embeddings), shards)
        self.actors = [actor.remote(a, ray.put(embeddings[a:b])) for a, b in self.ranges]
        # Wait until every shard is up, so actor start-up is not timed as query latency.
        ray.get([a.top_k.remote(embeddings[:0], 1) for a in self.actors])

    def top_k(self, queries: np.ndarray, k: int) -> list[Hits]:
        """Exact global top-``k`` of each query: every shard's top-k, merged."""
        import ray

        parts = ray.get([a.top_k.remote(queries, k) for a in self.actors])
        return [merge_top_k([p[i] for p in parts], k) for i in range(len(queries))]


class ShardedSearchKnowledgeBase(ReferenceKnowledgeBase):
    """A reference knowledge base whose ``vector_search`` runs over a sharded index; the
    other modes, chunk over-fetching and answers are the reference's own."""

    def __init__(self, kb: ReferenceKnowledgeBase, index: RayShardedIndex) -> None:
        self.__dict__.update(kb.__dict__)
        self.index = index

    def search(self, queries: Sequence[str], *, mode: str, top_k: int = 10) -> list[Any]:
        if mode != "vector_search" or top_k <= 0 or mode not in self.modes:
            return super().search(queries, mode=mode, top_k=top_k)
        assert self.encoder is not None
        query_vectors = self.encoder.encode(list(queries))
        out = []
        for vector in query_vectors:
            rows, scores = self._collect(lambda n, q=vector: self.index.top_k(q[None], n)[0],
                                         top_k)  # fmt: skip
            out.append(self.chunk_table.columns(rows, scores))
        return out
