"""The Ray executor: where ``heta-eval run --ray ADDRESS`` encodes the corpus and searches.

:class:`RayExecutor` plugs into :meth:`heta_eval.reference.Recipe.build` (``executor=``): the
corpus is encoded on the cluster (:func:`~heta_eval.scale.encode.encode_shards`) and stored
in the artifact cache under the same key as a local encode, so a rerun on either executor is
a cache hit; dense search then runs over row shards held by actors spread over the nodes, and
their top-k lists are merged into the single-machine result.

The driver never holds the whole embedding matrix: it is assembled on disk and memory-mapped,
and each search shard is copied from the map into Ray's object store one at a time, for its
actor to take (so the nodes need no shared file system for a run).
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval import interrupts
from heta_eval.encoding.dense import DenseEncoder
from heta_eval.models.records import Document
from heta_eval.reference.knowledge_base import ReferenceKnowledgeBase
from heta_eval.scale.cluster import cluster_resources, connect, parse_address
from heta_eval.scale.errors import ClusterWatch, RayRunError, lost_after, ray_failures, where
from heta_eval.scale.search import Hits, merge_top_k, shard_top_k, split_rows

__all__ = ["DEFAULT_SHARD_SIZE", "RayExecutor"]

logger = logging.getLogger(__name__)

#: Chunks per embedding shard: the unit of resumption and of one batch on a worker.
DEFAULT_SHARD_SIZE = 4096

_NOTHING_KEPT = "nothing is kept: the cache is off (--no-cache), so a rerun encodes again"


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
        program: str = "heta-eval",
    ) -> None:
        if shard_size <= 0:
            raise ValueError(f"shard size must be positive, got {shard_size}")
        self.address = address
        self.shard_size = shard_size
        self.workers = workers
        self.search_shards = search_shards
        self.encoding: dict[str, Any] = {}
        self.index: RayShardedIndex | None = None
        self._ray: Any = None
        #: Whether the run keeps its vectors in the artifact cache (None: not known yet).
        self.cached: bool | None = None
        #: Who speaks when the cluster is lost (the command, in the CLI).
        self.program = program
        #: Watches a cluster this process joined (None for ``local``, or before start).
        self.watch: ClusterWatch | None = None
        # The Ray work under way and what it keeps, for the watch's message.
        self._doing: str | None = None
        self._kept_now: Callable[[], str] = self._kept

    def start(self) -> RayExecutor:
        if self._ray is None:
            # Joining takes seconds (starting one, more): say so rather than sit silent.
            doing = (
                "starting a Ray cluster in this process"
                if parse_address(self.address) is None
                else f"joining {where(self.address)}"
            )
            logger.info(doing)
            with interrupts.phase(doing):
                self._ray = connect(self.address)
            if parse_address(self.address) is not None:  # a cluster that can die without us
                self.watch = ClusterWatch(
                    self._ray.get_runtime_context().gcs_address,
                    message=self._lost,
                    program=self.program,
                    grace=lost_after(),
                ).start()
        return self

    def _kept(self) -> str:
        """What a run that Ray failed after the encode keeps, and how to resume it."""
        if self.cached is False:
            return _NOTHING_KEPT
        if self.cached is None:
            return "finished work is kept: rerunning the same command resumes it"
        return "the encoded vectors are in the cache: rerunning the same command reuses them"

    def _lost(self) -> str:
        doing = f" while {self._doing}" if self._doing else ""
        return f"{where(self.address)} stopped answering{doing}\n{self._kept_now()}"

    @contextmanager
    def phase(self, doing: str, kept: Callable[[], str] | None = None) -> Iterator[None]:
        """Ray work named ``doing`` (\"encoding the corpus\"): a Ray error in the block
        becomes a one-line :class:`RayRunError`, and a cluster lost meanwhile is reported as
        lost while doing it; ``kept()`` says what is kept and how to resume."""
        kept = kept or self._kept
        before = self._doing, self._kept_now
        self._doing, self._kept_now = doing, kept
        # Ctrl-C says the same: what Ray was doing, what is kept.
        interrupts.keep("ray", kept)
        try:
            with interrupts.phase(f"{doing} on Ray"), ray_failures(self.address, doing, kept):
                yield
        finally:
            self._doing, self._kept_now = before

    # -- encoding --------------------------------------------------------------------------
    def encode_corpus(
        self,
        encoder: DenseEncoder,
        texts: Sequence[str],
        *,
        progress: bool = False,
        cache_root: str | Path | None = None,
    ) -> np.ndarray:
        """Vectors of ``texts`` (chunk order, a read-only memory map), encoded on the
        cluster; finished shards are kept under ``cache_root`` (a temporary folder without
        one) for resumption."""
        from heta_eval.scale.encode import encode_shards
        from heta_eval.scale.shards import ShardStore

        self.cached = cache_root is not None
        root = Path(cache_root) if cache_root is not None else Path(tempfile.mkdtemp())
        store = ShardStore.for_encode(root, texts, encoder.identity(), self.shard_size)
        try:
            kept = store if cache_root is not None else None
            with self.phase("encoding the corpus", lambda: _shards_kept(kept)):
                self.start()
                resources = cluster_resources()
                gpus = int(resources["gpus"])
                workers = self.workers or (gpus or max(1, int(resources["cpus"])))
                matrix, record = encode_shards(
                    encoder,
                    texts,
                    store,
                    shard_size=self.shard_size,
                    workers=workers,
                    gpus_per_worker=1.0 if gpus else 0.0,
                    progress=progress,
                )
        except RayRunError:
            if cache_root is None:  # a temporary folder: no rerun could find it
                store.remove()
                with contextlib.suppress(OSError):
                    root.rmdir()
            raise
        # The caller copies the map into the cache entry; the mapping outlives the files.
        store.remove()
        if cache_root is None:
            with contextlib.suppress(OSError):
                root.rmdir()
        self.encoding = record
        return matrix

    # -- search ----------------------------------------------------------------------------
    def attach(self, kb: ReferenceKnowledgeBase) -> ReferenceKnowledgeBase:
        """``kb`` with its dense index split into row shards held by actors on the
        cluster's nodes, and its own matrix dropped."""
        if kb.embeddings is None:
            return kb
        self.cached = kb.build_info.get("cache_dir") is not False
        with self.phase("placing the dense index on the cluster"):
            self.start()
            shards = self.search_shards or cluster_resources()["nodes"]
            self.index = RayShardedIndex(
                kb.embeddings, shards, address=self.address, row_scale=kb.row_scale
            )
        return ShardedSearchKnowledgeBase(kb, self.index)

    def describe(self) -> dict[str, Any]:
        """The summary's ``executor`` record: kind, nodes, workers, GPUs, encoding work."""
        with self.phase("reading its resources"):
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
        if self.index is not None:
            record["search_shards"] = self.index.placement
        return record


def _shards_kept(store: Any) -> str:
    """What an encode that Ray failed keeps in ``store`` (None: the cache is off), and how
    to resume it."""
    if store is None:
        return _NOTHING_KEPT
    done = len(store.finished())
    if not done:
        return "no shard had finished; rerunning the same command starts the encode again"
    shards = "1 finished shard is" if done == 1 else f"{done} finished shards are"
    return f"{shards} kept in {store.folder}; rerunning the same command encodes only the rest"


class _DenseShard:
    """A Ray actor holding rows ``[offset, offset + rows)`` of the dense index.

    Never restarted (Ray's default for actors): a restarted one would have lost its rows, so
    a dead shard fails the search loudly instead, and so does one asked before it has them.
    """

    def __init__(self, offset: int, rows: int) -> None:
        self.offset = offset
        self.rows = rows
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.row_scale: np.ndarray | None = None

    def load(self, matrix: np.ndarray, row_scale: np.ndarray | None = None) -> str:
        """Keep a private copy of the shard (the object store's is freed; float16 vectors
        stay float16) and its rows' score factors, and say where."""
        import ray

        self.matrix = np.array(matrix, order="C")
        self.row_scale = None if row_scale is None else np.array(row_scale)
        return ray.get_runtime_context().get_node_id()

    def top_k(self, queries: np.ndarray, k: int) -> Hits:
        if len(self.matrix) != self.rows:
            raise RuntimeError(
                f"shard at row {self.offset} holds {len(self.matrix)} of its {self.rows} rows"
            )
        return shard_top_k(self.matrix, self.offset, queries, k, self.row_scale)


class RayShardedIndex:
    """A dense index cut into row shards (:func:`split_rows`), each held by an actor spread
    over the nodes. ``embeddings`` may be a memory map: one shard's rows at a time are read
    from it and handed over through the object store, so this process never holds more.
    """

    def __init__(
        self,
        embeddings: np.ndarray,
        shards: int,
        *,
        address: str = "auto",
        row_scale: np.ndarray | None = None,
    ) -> None:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.address = address  # named in errors
        self.ranges = split_rows(len(embeddings), shards)
        # Shard i on alive node i mod n, and only there: Ray's SPREAD and soft affinity both
        # fall back to a node that looks less busy, which can put every shard on one node.
        nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
        actor = ray.remote(num_cpus=0)(_DenseShard)
        self.actors = [
            actor.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(nodes[i % len(nodes)], False)
            ).remote(a, b - a)
            for i, (a, b) in enumerate(self.ranges)
        ]
        #: Where each shard lives: ``[{"rows": [start, end], "node": node id}, ...]``.
        self.placement: list[dict[str, Any]] = []
        for (a, b), shard in zip(self.ranges, self.actors, strict=True):
            ref = ray.put(np.array(embeddings[a:b], order="C"))
            scale = None if row_scale is None else row_scale[a:b]
            node = ray.get(shard.load.remote(ref, scale))
            del ref  # the actor has its own copy: free the object store's
            self.placement.append({"rows": [a, b], "node": node})

    def top_k(self, queries: np.ndarray, k: int) -> Hits:
        """Exact global top-``k`` of each query (``(m, k)`` rows and scores): every shard's
        top-k of the whole batch, merged. A lost shard fails the call (with a one-line
        :class:`RayRunError`; the runner records it against the queries): an answer from the
        other shards alone would be wrong."""
        import ray

        with ray_failures(self.address, "searching"):
            parts = ray.get([a.top_k.remote(queries, k) for a in self.actors])
        return merge_top_k(parts, k)


class ShardedSearchKnowledgeBase(ReferenceKnowledgeBase):
    """A reference knowledge base whose dense ranking (``vector_search`` and the dense half
    of ``hybrid_search``) runs over a sharded index; it holds no embedding matrix. The
    other modes, chunk over-fetching, fusion and answers are the reference's own."""

    def __init__(self, kb: ReferenceKnowledgeBase, index: RayShardedIndex) -> None:
        self.__dict__.update(kb.__dict__)
        self.embeddings = None
        self.index = index

    def _dense_top(self, vectors: np.ndarray, depth: int) -> Hits:
        # Every query of the batch in one call per shard; a prefix of an exact top-n is the
        # exact top of that length (the order, score then row, is total).
        return self.index.top_k(vectors, depth)

    async def ingest(self, documents: Sequence[Document]) -> None:
        raise NotImplementedError(
            "a knowledge base searched on Ray is rebuilt with the executor: "
            "Recipe.build(..., executor=...)"
        )
