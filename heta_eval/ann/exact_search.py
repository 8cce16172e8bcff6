"""Exact inner-product search of many queries over a large matrix of vectors, in blocks.

The corpus is read a block of rows at a time (a memory map never needs to fit in memory;
float16 rows are widened to float32 one block at a time), each block is multiplied by a
batch of query vectors in one matrix product, and each query keeps its best ``k`` rows in a
heap as the blocks go by. The result is the ranking the full product gives: best score
first, equal scores by lower row (as :func:`~heta_eval.reference.bm25.top_indices` ranks), up to
float32 rounding: a product in blocks may differ from another in the last bit of a score,
which can swap rows whose scores are that close.

Queries are the unit of work: one product per block and batch of queries, where a
matrix-vector product per query reads the whole corpus once per query (docs/scale.md).

>>> corpus = np.eye(4, dtype=np.float16)
>>> rows, scores = exact_search(corpus, np.array([[0, 1, 0, 0], [0, 0, 0.5, 0.5]], np.float32), 2)
>>> rows.tolist(), scores.tolist()
([[1, 0], [2, 3]], [[1.0, 0.0], [0.5, 0.5]])
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from heta_eval._runtime import compile_parallel, release_pages

__all__ = ["BLOCK_ROWS", "QUERY_BATCH", "exact_search"]

#: Corpus rows per block: 65,536 x 384 float32 is 96 MB, widened once per block.
BLOCK_ROWS = 65_536
#: Queries per matrix product: 256 x 65,536 float32 scores is 64 MB.
QUERY_BATCH = 256

# BLAS takes other paths for thin products (a matrix-vector product for one query; OpenBLAS's
# small-matrix kernels, measured on products of up to about 1e6 multiply-adds), which round
# the last bit of a score differently: every product is padded with zero rows up to these
# sizes, so that a score is the same whatever block or batch its row and query are in.
_MIN_ROWS = 4096
_MIN_QUERIES = 8

#: ``on_block(rows_done, rows_total)``: called after each block (progress, interrupts).
OnBlock = Callable[[int, int], None]


def exact_search(
    corpus: np.ndarray,
    queries: np.ndarray,
    k: int,
    *,
    row_scale: np.ndarray | None = None,
    block_rows: int = BLOCK_ROWS,
    query_batch: int = QUERY_BATCH,
    on_block: OnBlock | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best rows of ``corpus`` (``(n, d)``, float16 or float32, memory-mapped or
    not) for each query of ``queries`` (``(m, d)``) by inner product: ``(rows, scores)``,
    both ``(m, min(k, n))``, int64 and float32, best first, ties by lower row.

    ``row_scale`` (``n`` float32) multiplies each row's scores, e.g. the inverse norms that
    turn inner products into cosines without a normalized copy of the corpus.
    """
    n, m = int(corpus.shape[0]), int(queries.shape[0])
    k = max(0, min(int(k), n))
    heap_scores = np.full((m, k), -np.inf, dtype=np.float32)
    heap_rows = np.full((m, k), -1, dtype=np.int64)
    if m == 0 or k == 0:
        return heap_rows, heap_scores
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    kernel = _merge_kernel()
    filled = np.zeros(m, dtype=np.int64)
    for start in range(0, n, block_rows):
        stop = min(n, start + block_rows)
        rows = stop - start
        block = _padded(np.asarray(corpus[start:stop], dtype=np.float32), _padded_rows(rows))
        scale = None if row_scale is None else _padded(row_scale[start:stop], len(block))
        for first in range(0, m, query_batch):
            last = min(m, first + query_batch)
            scores = _padded(queries[first:last], _MIN_QUERIES) @ block.T
            if scale is not None:
                scores *= scale
            _merge(
                kernel,
                scores,
                start,
                rows,
                heap_scores[first:last],
                heap_rows[first:last],
                filled[first:last],
            )
        # Searched rows leave this process (they stay in the file cache for the next batch).
        release_pages(corpus, start, stop)
        if on_block is not None:
            on_block(stop, n)
    order = np.lexsort((heap_rows, -heap_scores), axis=-1)
    return np.take_along_axis(heap_rows, order, -1), np.take_along_axis(heap_scores, order, -1)


def _padded_rows(rows: int) -> int:
    return max(_MIN_ROWS, rows)


def _padded(matrix: np.ndarray, rows: int) -> np.ndarray:
    """``matrix`` as float32 with zeros up to ``rows`` rows (scores of padded rows are never
    kept: the merge stops at the block's real rows)."""
    if len(matrix) >= rows:
        return np.asarray(matrix, dtype=np.float32)
    padded = np.zeros((rows, *matrix.shape[1:]), dtype=np.float32)
    padded[: len(matrix)] = matrix
    return padded


_KERNEL_LOCK = threading.Lock()
prange = range  # numba.prange once the kernel is compiled


def _merge(
    kernel: Any,
    scores: np.ndarray,
    offset: int,
    rows: int,
    heap_scores: np.ndarray,
    heap_rows: np.ndarray,
    filled: np.ndarray,
) -> None:
    if kernel is None:
        _merge_block(scores, offset, rows, heap_scores, heap_rows, filled)
        return
    # numba's default threading layer aborts on concurrent parallel launches.
    with _KERNEL_LOCK:
        kernel(scores, offset, rows, heap_scores, heap_rows, filled)


def _merge_block(scores, offset, rows, heap_scores, heap_rows, filled):  # type: ignore[no-untyped-def]
    # Per query (a row of the heaps; padded query rows past them are never read), a min-heap
    # of its best corpus rows by (score, -row): the root is the worst kept. Rows arrive in
    # increasing order, so a strict ">" keeps the lower row among equal scores. Only the
    # block's first ``rows`` columns are real; the rest are padding.
    k = heap_scores.shape[1]
    for q in prange(heap_scores.shape[0]):
        hs = heap_scores[q]
        hr = heap_rows[q]
        row = scores[q]
        size = filled[q]
        j = 0
        while size < k and j < rows:  # filling: every row enters, sifted up
            s = row[j]
            r = offset + j
            pos = size
            size += 1
            while pos > 0:
                parent = (pos - 1) >> 1
                if hs[parent] > s or (hs[parent] == s and hr[parent] < r):
                    hs[pos], hr[pos] = hs[parent], hr[parent]
                    pos = parent
                else:
                    break
            hs[pos], hr[pos] = s, r
            j += 1
        filled[q] = size
        worst = hs[0]
        for t in range(j, rows):  # full: one comparison per row, a sift only for a better one
            s = row[t]
            if s > worst:
                r = offset + t
                pos = 0
                while True:
                    child = 2 * pos + 1
                    if child >= k:
                        break
                    right = child + 1
                    if right < k and (
                        hs[right] < hs[child] or (hs[right] == hs[child] and hr[right] > hr[child])
                    ):
                        child = right
                    if hs[child] < s or (hs[child] == s and hr[child] > r):
                        hs[pos], hr[pos] = hs[child], hr[child]
                        pos = child
                    else:
                        break
                hs[pos], hr[pos] = s, r
                worst = hs[0]


@lru_cache(maxsize=1)
def _merge_kernel() -> Any:
    return compile_parallel(_merge_block)
