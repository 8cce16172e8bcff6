"""FAISS: exact (``IndexFlatIP``), HNSW (``IndexHNSWFlat``) and IVF (``IndexIVFFlat``), all by
inner product, searched with FAISS's own threads."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from heta_eval.ann.base import AnnError, library
from heta_eval.ann.spec import AnnSpec

__all__ = ["FaissIndex"]

#: FAISS's defaults, recorded where a setting is not given (M: the usual HNSW32).
HNSW_DEFAULTS = {"M": 32, "efConstruction": 40, "efSearch": 16}


class FaissIndex:
    """A FAISS index over ``vectors`` (float32, ``(n, d)``)."""

    def __init__(self, spec: AnnSpec, vectors: np.ndarray) -> None:
        faiss = library("faiss", spec)
        self.spec = spec
        started = time.perf_counter()
        n, d = vectors.shape
        settings = dict(spec.settings)
        if spec.kind == "faiss-flat":
            index = faiss.IndexFlatIP(d)
        elif spec.kind == "faiss-hnsw":
            settings = {**HNSW_DEFAULTS, **settings}
            index = faiss.IndexHNSWFlat(d, settings["M"], faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = settings["efConstruction"]
            index.hnsw.efSearch = settings["efSearch"]
        else:
            nlist = settings.get("nlist", max(1, min(n, round(4 * math.sqrt(n)))))
            settings = {"nlist": nlist, "nprobe": settings.get("nprobe", 1)}
            if settings["nlist"] > n:
                raise AnnError(
                    f"faiss-ivf: nlist={settings['nlist']:,} lists need at least as "
                    f"many vectors to train on; the corpus has {n:,}"
                )
            self._quantizer = faiss.IndexFlatIP(d)  # kept: the IVF index does not own it
            index = faiss.IndexIVFFlat(
                self._quantizer, d, settings["nlist"], faiss.METRIC_INNER_PRODUCT
            )
            index.train(vectors)
            index.nprobe = min(settings["nprobe"], settings["nlist"])
        index.add(vectors)
        self._index = index
        self.record: dict[str, Any] = {
            "library": "faiss",
            "version": faiss.__version__,
            "index": type(index).__name__,
            "metric": "inner product",
            "settings": settings,
            "threads": faiss.omp_get_max_threads(),
            "vectors": n,
            "dimension": d,
            "build_seconds": round(time.perf_counter() - started, 3),
        }

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, self._index.ntotal)
        scores, rows = self._index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        scores = scores.astype(np.float32)
        scores[rows < 0] = -np.inf
        return rows.astype(np.int64), scores

    def close(self) -> None:
        self._index = None
