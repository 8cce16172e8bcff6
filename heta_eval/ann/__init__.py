"""Approximate search: one small seam (:class:`AnnIndex`: build over the vectors, search many
queries), with FAISS (flat, HNSW, IVF), Qdrant's local mode and LanceDB behind it, each an
optional extra imported only when its index is built (docs/ann.md).

>>> import numpy as np
>>> vectors = np.eye(3, dtype=np.float32)
>>> index = build_index(parse_ann("faiss-flat"), vectors)
>>> rows, scores = index.search(np.array([[0, 1, 0]], np.float32), 2)
>>> rows.tolist(), scores.tolist()
([[1, 0]], [[1.0, 0.0]])
>>> index.record["index"]
'IndexFlatIP'
"""

from __future__ import annotations

import numpy as np

from heta_eval.ann.base import AnnError, AnnIndex, scored_rows
from heta_eval.ann.faiss_index import FaissIndex
from heta_eval.ann.lancedb_index import LanceIndex
from heta_eval.ann.qdrant_index import QdrantIndex
from heta_eval.ann.spec import (
    DENSE_MODES,
    KINDS,
    AnnSpec,
    Setting,
    ann_mode,
    parse_ann,
    split_ann,
    split_specs,
)

__all__ = [
    "DENSE_MODES",
    "KINDS",
    "AnnError",
    "AnnIndex",
    "AnnSpec",
    "Setting",
    "ann_mode",
    "build_index",
    "parse_ann",
    "scored_rows",
    "split_ann",
    "split_specs",
]


def build_index(spec: AnnSpec, vectors: np.ndarray) -> AnnIndex:
    """Build ``spec``'s index over ``vectors`` (float32 ``(n, d)``, as :func:`scored_rows`
    makes them); an :class:`AnnError` where its library is missing or the data does not
    allow its settings."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if spec.kind.startswith("faiss"):
        return FaissIndex(spec, vectors)
    if spec.kind == "qdrant":
        return QdrantIndex(spec, vectors)
    return LanceIndex(spec, vectors)
