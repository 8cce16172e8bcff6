"""Exact dense search over row shards: each shard's top-k, merged into the global top-k.

Each shard is searched by :func:`~heta_eval.ann.exact_search.exact_search`, the search of the
whole matrix on one machine, and the merge orders by score (best first) and then by global
row, the order that search gives: every row of the global top-k is in its own shard's top-k,
so the merged result is the single-machine result. Shard boundaries fall on multiples of
:data:`ALIGN` rows, so that no shard is thinner than a block of BLAS's product kernels (a
thinner product can round the last bit of a score another way).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from heta_eval.ann.exact_search import exact_search

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


def shard_top_k(
    shard: np.ndarray,
    offset: int,
    queries: np.ndarray,
    k: int,
    row_scale: np.ndarray | None = None,
) -> Hits:
    """The ``k`` best rows of one shard for each query: (global row indices, scores), by
    :func:`~heta_eval.ann.exact_search.exact_search`; ``queries`` is ``(m, d)`` (results
    ``(m, k)``) or one ``(d,)`` query (results ``(k,)``).

    >>> m = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    >>> shard_top_k(m, 10, np.array([0.0, 1.0], dtype=np.float32), 1)[0].tolist()
    [11]
    """
    single = queries.ndim == 1
    rows, scores = exact_search(shard, np.atleast_2d(queries), k, row_scale=row_scale)
    rows = rows + offset
    return (rows[0], scores[0]) if single else (rows, scores)


def merge_top_k(parts: Sequence[Hits], k: int) -> Hits:
    """The global top-``k`` of several shards' hits, per query (the last axis): best score
    first, ties by lower row.

    >>> a = (np.array([0, 1]), np.array([0.9, 0.5], dtype=np.float32))
    >>> b = (np.array([7]), np.array([0.9], dtype=np.float32))
    >>> merge_top_k([a, b], 2)[0].tolist()
    [0, 7]
    """
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    idx = np.concatenate([p[0] for p in parts], axis=-1).astype(np.int64, copy=False)
    scores = np.concatenate([p[1] for p in parts], axis=-1)
    order = np.lexsort((idx, -scores), axis=-1)[..., :k]
    return np.take_along_axis(idx, order, -1), np.take_along_axis(scores, order, -1)


def sharded_top_k(shards: Sequence[tuple[int, np.ndarray]], queries: np.ndarray, k: int) -> Hits:
    """Top-``k`` over in-process ``(offset, shard)`` pairs; what the Ray shard actors do
    where the shards live, and then the driver's merge.

    >>> m = np.random.default_rng(0).normal(size=(500, 4)).astype(np.float32)
    >>> parts = [(a, m[a:b]) for a, b in split_rows(500, 4)]
    >>> bool((sharded_top_k(parts, m[:3], 5)[0] == exact_search(m, m[:3], 5)[0]).all())
    True
    """
    return merge_top_k([shard_top_k(s, offset, queries, k) for offset, s in shards], k)
