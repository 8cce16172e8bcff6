"""Exact dense search over row shards: each shard's top-k, merged into the global top-k.

The merge orders by score (best first) and then by global row index, the order
:func:`~heta_eval.kb.bm25.top_indices` gives on the whole matrix, so the merged result is the
single-machine result: every row of the global top-k is in its own shard's top-k. Scores are
computed as ``shard @ query``, as the single-machine search computes ``matrix @ query``; shard
boundaries fall on multiples of :data:`ALIGN` rows because BLAS matrix-vector kernels work in
row blocks, and a boundary inside a block changes the last bit of some scores (measured with
OpenBLAS: 330 of 259,150 scores differed at unaligned cuts, none at aligned ones).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from heta_eval.kb.bm25 import top_indices

__all__ = ["ALIGN", "merge_top_k", "shard_top_k", "sharded_top_k", "split_rows"]

Hits = tuple[np.ndarray, np.ndarray]

#: Shard boundaries are multiples of this many rows (see the module docstring).
ALIGN = 64


def split_rows(total: int, shards: int, align: int = ALIGN) -> list[tuple[int, int]]:
    """At most ``shards`` contiguous ``[start, end)`` row ranges of near-equal size, every
    boundary a multiple of ``align`` (fewer ranges when there are too few rows).

    >>> split_rows(1000, 3)
    [(0, 320), (320, 704), (704, 1000)]
    >>> split_rows(10, 3)
    [(0, 10)]
    """
    blocks = -(-total // align)
    cuts = np.linspace(0, blocks, max(1, min(shards, blocks)) + 1).round().astype(int) * align
    cuts[-1] = total
    return [(int(a), int(b)) for a, b in itertools.pairwise(cuts) if b > a]


def shard_top_k(shard: np.ndarray, offset: int, query: np.ndarray, k: int) -> Hits:
    """The ``k`` best rows of one shard for one query: (global row indices, scores).

    >>> m = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    >>> shard_top_k(m, 10, np.array([0.0, 1.0], dtype=np.float32), 1)[0].tolist()
    [11]
    """
    scores = shard @ query
    idx = top_indices(scores, k)
    return idx + offset, scores[idx]


def merge_top_k(parts: Sequence[Hits], k: int) -> Hits:
    """The global top-``k`` of several shards' hits: best score first, ties by lower row.

    >>> a = (np.array([0, 1]), np.array([0.9, 0.5], dtype=np.float32))
    >>> b = (np.array([7]), np.array([0.9], dtype=np.float32))
    >>> merge_top_k([a, b], 2)[0].tolist()
    [0, 7]
    """
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    idx = np.concatenate([p[0] for p in parts]).astype(np.int64, copy=False)
    scores = np.concatenate([p[1] for p in parts])
    order = np.lexsort((idx, -scores))[:k]
    return idx[order], scores[order]


def sharded_top_k(shards: Sequence[tuple[int, np.ndarray]], query: np.ndarray, k: int) -> Hits:
    """Top-``k`` over in-process ``(offset, shard)`` pairs; what the Ray shard actors do
    where the shards live, and then the driver's merge.

    >>> m = np.random.default_rng(0).normal(size=(500, 4)).astype(np.float32)
    >>> q = m[3]
    >>> parts = [(a, m[a:b]) for a, b in split_rows(500, 4)]
    >>> bool((sharded_top_k(parts, q, 5)[0] == top_indices(m @ q, 5)).all())
    True
    """
    return merge_top_k([shard_top_k(s, offset, query, k) for offset, s in shards], k)
