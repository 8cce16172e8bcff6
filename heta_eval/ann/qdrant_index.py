"""Qdrant's local mode (``QdrantClient(":memory:")``): the collection lives in this process.

Local mode searches exactly (a brute-force scan in the client, as Qdrant's documentation
says), so it takes no HNSW settings: those are the Qdrant server's. Its cost here is the
client's (upload, the per-query Python objects), not an approximation."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from heta_eval.ann.base import library, padded, version
from heta_eval.ann.spec import AnnSpec

__all__ = ["QdrantIndex"]

_COLLECTION = "heta_eval"
#: Queries per ``query_batch_points`` call.
_QUERY_BATCH = 256


class QdrantIndex:
    """A local-mode Qdrant collection over ``vectors`` (float32, ``(n, d)``), dot product."""

    def __init__(self, spec: AnnSpec, vectors: np.ndarray) -> None:
        client_module = library("qdrant_client", spec)
        models = client_module.models
        self.spec = spec
        started = time.perf_counter()
        n, d = vectors.shape
        self._models = models
        self._client = client_module.QdrantClient(":memory:")
        self._client.create_collection(
            _COLLECTION, vectors_config=models.VectorParams(size=d, distance=models.Distance.DOT)
        )
        self._client.upload_collection(_COLLECTION, vectors=vectors, ids=range(n))
        self.record: dict[str, Any] = {
            "library": "qdrant-client",
            "version": version("qdrant-client"),
            "index": "QdrantLocal (local mode: exact search)",
            "metric": "dot",
            "settings": {},
            "vectors": n,
            "dimension": d,
            "build_seconds": round(time.perf_counter() - started, 3),
        }

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        models = self._models
        rows: list[np.ndarray] = []
        scores: list[np.ndarray] = []
        for first in range(0, len(queries), _QUERY_BATCH):
            batch = np.asarray(queries[first : first + _QUERY_BATCH], np.float32)
            requests = [models.QueryRequest(query=q.tolist(), limit=k) for q in batch]
            for reply in self._client.query_batch_points(_COLLECTION, requests):
                rows.append(np.array([p.id for p in reply.points], dtype=np.int64))
                scores.append(np.array([p.score for p in reply.points], dtype=np.float32))
        return padded(rows, scores, k)

    def close(self) -> None:
        self._client.close()
