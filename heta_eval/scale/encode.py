"""Corpus encoding on Ray Data: shards of length-sorted chunks flow through ``map_batches``
over a pool of stateful encoder actors (each loads the model once; one GPU each where the
cluster has GPUs); the driver writes each shard to disk as soon as all its vectors are back.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from heta_eval.encoding.dense import DenseEncoder
from heta_eval.scale.errors import quiet_ray_data_console
from heta_eval.scale.shards import ShardStore, plan_shards

__all__ = ["ShardEncoder", "encode_shards"]


class ShardEncoder:
    """The actor of the pool: one :class:`DenseEncoder` (one model load) per actor, running
    the driver's encoding ``route`` (an engine and a precision: ``openvino-int8``, not just
    ``int8``, which would be ONNX Runtime's).

    Called with a batch of chunk rows (``shard``, ``pos``, ``text``), it encodes them and
    returns the vectors with the node and the worker process that computed them. A text's
    vector does not depend on the texts beside it (:mod:`heta_eval.encoding.shapes`), so how Ray
    cuts the rows changes nothing.
    """

    def __init__(self, model: str, route: str, batch_size: int, device: str) -> None:
        import ray

        self.encoder = DenseEncoder(
            model,
            precision=route,
            batch_size=batch_size,  # type: ignore[arg-type]
            device=device,
        )
        # Load the model now: a model this node cannot load fails the pool's start, once,
        # rather than every batch sent to it.
        _ = self.encoder.runner
        self.node = ray.get_runtime_context().get_node_id()
        self.worker = f"{self.node}:{os.getpid()}"

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        texts = [str(t) for t in batch["text"]]
        # One call over the whole batch, so that the encoder tokenizes ahead while the model
        # runs (on a GPU the host side is the bottleneck).
        vectors = self.encoder.encode(texts)
        return {
            "shard": batch["shard"],
            "pos": batch["pos"],
            "vector": vectors,
            "node": np.array([self.node] * len(vectors)),
            "worker": np.array([self.worker] * len(vectors)),
        }


def encode_shards(
    encoder: DenseEncoder,
    texts: Sequence[str],
    store: ShardStore,
    *,
    shard_size: int,
    workers: int,
    gpus_per_worker: float,
    progress: bool = False,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Encode the shards of ``texts`` that ``store`` lacks, then assemble the matrix.

    Returns the matrix (chunk order, float32; a read-only memory map, see
    :meth:`ShardStore.assemble`) and a record of the work: shards reused and encoded, chunks
    encoded per node, the encoder processes that sent vectors (an actor Ray restarted after
    its process died counts again), workers, GPUs and seconds.
    """
    started = time.perf_counter()
    plan = plan_shards(texts, shard_size, encoder.batch_size)
    shard_size = len(plan[0]) if plan else shard_size
    done = store.finished()
    pending = [s for s in range(len(plan)) if s not in done]
    pool = max(1, min(workers, len(pending))) if pending else 0
    collector = _ShardCollector(plan, store)
    if pending:
        dataset = _encoding_dataset(
            encoder,
            texts,
            plan,
            pending,
            shard_size=shard_size,
            pool=pool,
            gpus_per_worker=gpus_per_worker,
            progress=progress,
        )
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            collector.take(batch)
    record = {
        "shards": len(plan),
        "shard_size": shard_size,
        "shards_reused": len(plan) - len(pending),
        "shards_encoded": len(pending),
        "chunks_by_node": dict(collector.per_node),
        "chunks_encoded": collector.received,
        "encoder_processes": len(collector.processes),
        "workers": pool,
        "gpus": (gpus_per_worker or 0) * pool,
        "encode_seconds": round(time.perf_counter() - started, 3),
    }
    return store.assemble(plan, len(texts)), record


def _encoding_dataset(
    encoder: DenseEncoder,
    texts: Sequence[str],
    plan: list[np.ndarray],
    pending: list[int],
    *,
    shard_size: int,
    pool: int,
    gpus_per_worker: float,
    progress: bool,
) -> Any:
    """The Ray dataset that encodes the ``pending`` shards of ``plan`` on a pool of ``pool``
    :class:`ShardEncoder` actors (lazy: nothing runs until it is iterated)."""
    import pyarrow as pa
    import ray

    # One block per shard, in plan order (longest first): a shard's rows stay together and
    # each actor call cuts them into the local encoder's batches. A shard must start at a
    # multiple of the encoder's batch size within the plan, which holds because only whole
    # shards are ever sent.
    blocks = [
        pa.table(
            {
                "shard": np.full(len(plan[s]), s, dtype=np.int64),
                "pos": np.arange(len(plan[s]), dtype=np.int64),
                "text": [texts[i] for i in plan[s]],
            }
        )
        for s in pending
    ]
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = progress
    context.execution_options.verbose_progress = False
    quiet_ray_data_console()
    return ray.data.from_arrow(blocks).map_batches(
        ShardEncoder,
        fn_constructor_kwargs={
            "model": encoder.model_name,
            "route": encoder.route,
            "batch_size": encoder.batch_size,
            "device": "cuda" if gpus_per_worker else encoder.device,
        },
        batch_size=shard_size,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=pool),
        num_cpus=0 if gpus_per_worker else 1,
        num_gpus=gpus_per_worker or None,
    )


class _ShardCollector:
    """Takes the encoders' replies and writes each shard to ``store`` once all its rows are
    back, so an interrupted encode keeps every shard it finished.

    Vectors come back in any order and any batching. Ray Data restarts an encoder actor whose
    process dies and retries its batch: a row that comes back twice is kept once (and counted
    twice in ``received``).
    """

    def __init__(self, plan: list[np.ndarray], store: ShardStore) -> None:
        self.plan = plan
        self.store = store
        self.per_node: Counter[str] = Counter()
        self.processes: set[str] = set()
        self.received = 0
        self._buffers: dict[int, np.ndarray] = {}
        self._seen: dict[int, np.ndarray] = {}
        self._filled: Counter[int] = Counter()
        self._written: set[int] = set()

    def take(self, batch: dict[str, np.ndarray]) -> None:
        """One reply of the pool: rows of one or more shards."""
        vectors = np.asarray(batch["vector"], dtype=np.float32)
        self.received += len(vectors)
        self.processes.update(np.unique(batch["worker"]).tolist())
        shards = batch["shard"]
        # Whole arrays per shard, not a Python step per row: at 8 GPUs the driver takes in
        # ~100k vectors a second.
        for shard in np.unique(shards).tolist():
            if shard not in self._written:
                rows = np.flatnonzero(shards == shard)
                self._fill(shard, batch["pos"][rows], rows, vectors, batch["node"])

    def _fill(
        self, shard: int, pos: np.ndarray, rows: np.ndarray, vectors: np.ndarray, nodes: np.ndarray
    ) -> None:
        size = len(self.plan[shard])
        if shard not in self._buffers:
            self._buffers[shard] = np.empty((size, vectors.shape[1]), np.float32)
            self._seen[shard] = np.zeros(size, dtype=bool)
        # A retried batch can repeat rows, also within one reply: keep each row once.
        pos, first = np.unique(pos, return_index=True)
        fresh = ~self._seen[shard][pos]
        pos, rows = pos[fresh], rows[first[fresh]]
        self._seen[shard][pos] = True
        self._buffers[shard][pos] = vectors[rows]
        self._filled[shard] += len(pos)
        for node, count in zip(*np.unique(nodes[rows], return_counts=True), strict=True):
            self.per_node[str(node)] += int(count)
        if self._filled[shard] == size:
            self.store.save(shard, self._buffers.pop(shard))
            del self._seen[shard]
            self._written.add(shard)
