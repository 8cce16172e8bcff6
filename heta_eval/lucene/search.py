"""Exact top-k BM25 search over the index's postings, compiled with numba, parallel over queries.

Each thread owns one float64 accumulator over all documents and a list of the documents a
query touched (kept with the index between searches): a query adds its terms' float32 scores
into the accumulator (the same steps as ``LuceneBM25Index.scores``), then reads back only the
touched documents, resetting each as it goes, and keeps the best ``k`` in a heap keyed by
(float32 score, lower tie rank); the ``k`` are sorted at the end. Work per query is its
postings plus touched documents times log k, never the whole collection.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

import numpy as np

from heta_eval._runtime import HAVE_NUMBA, compile_parallel, import_numba

__all__ = ["Workspace", "run_kernel", "search_kernel"]

_LOCK = threading.Lock()
prange = range  # numba.prange once the kernel is compiled


def _sift_down(keys, docs, scores, size, i):  # type: ignore[no-untyped-def]
    # Min-heap on keys: the root is the worst hit kept.
    while True:
        child = 2 * i + 1
        if child >= size:
            return
        if child + 1 < size and keys[child + 1] < keys[child]:
            child += 1
        if keys[i] <= keys[child]:
            return
        keys[i], keys[child] = keys[child], keys[i]
        docs[i], docs[child] = docs[child], docs[i]
        scores[i], scores[child] = scores[child], scores[i]
        i = child


def _sift_up(keys, docs, scores, i):  # type: ignore[no-untyped-def]
    while i > 0:
        parent = (i - 1) // 2
        if keys[parent] <= keys[i]:
            return
        keys[i], keys[parent] = keys[parent], keys[i]
        docs[i], docs[parent] = docs[parent], docs[i]
        scores[i], scores[parent] = scores[parent], scores[i]
        i = parent


# Term scores come from a table per clause for frequencies below this (the same float32
# steps, done 256 times per frequency instead of once per posting: no division per posting).
_TABLE_FREQS = 16


def _accumulate(indptr, docs, freqs, norms, factors, t, f, w, table, total, touched, count):  # type: ignore[no-untyped-def]
    """Add clause (term ``t`` of field ``f``, weight ``w``) to ``total``; a document seen the
    first time joins ``touched``. Returns the new number of touched documents."""
    one = np.float32(1.0)
    for freq in range(1, _TABLE_FREQS):
        for byte in range(256):
            # BM25Scorer.score: weight - weight / (1 + freq * normInverse), in float32.
            table[freq, byte] = w - w / (one + np.float32(freq) * factors[f, byte])
    for j in range(indptr[t], indptr[t + 1]):
        d = docs[j]
        freq = freqs[j]
        if freq < _TABLE_FREQS:
            s = table[freq, norms[f, d]]
        else:
            s = w - w / (one + np.float32(freq) * factors[f, norms[f, d]])
        if s == 0:  # adds nothing (and a document must be touched once)
            continue
        touched[count] = d  # kept only where the document is new: no branch to mispredict
        count += total[d] == 0
        total[d] += s
    return count


def _one_thread(
    indptr,
    docs,
    freqs,
    norms,
    factors,
    tie_ranks,
    terms,
    fields,
    weights,  # type: ignore[no-untyped-def]
    pointers,
    total,
    touched,
    thread,
    threads,
    out_idx,
    out_scores,
):
    """Queries ``thread``, ``thread + threads``, ...: ``total`` is all zeros on entry, and
    again on exit."""
    k = out_idx.shape[1]
    last = np.int64(0xFFFFFFFF)
    table = np.empty((_TABLE_FREQS, 256), dtype=np.float32)
    keys = np.empty(k, dtype=np.int64)
    hit_docs = np.empty(k, dtype=np.int64)
    hit_scores = np.empty(k, dtype=np.float32)
    bits = np.empty(1, dtype=np.float32)
    as_int = bits.view(np.int32)
    for q in range(thread, len(pointers) - 1, threads):
        count = 0
        for c in range(pointers[q], pointers[q + 1]):
            count = _accumulate(
                indptr,
                docs,
                freqs,
                norms,
                factors,
                terms[c],
                fields[c],
                weights[c],
                table,
                total,
                touched,
                count,
            )
        size = 0
        for i in range(count):
            d = touched[i]
            score = np.float32(total[d])
            total[d] = 0.0
            # Positive float32 scores order as their bits; the lower tie rank wins.
            bits[0] = score
            key = (np.int64(as_int[0]) << 32) | (last - np.int64(tie_ranks[d]))
            if size < k:
                keys[size], hit_docs[size], hit_scores[size] = key, d, score
                size += 1
                _sift_up(keys, hit_docs, hit_scores, size - 1)
            elif key > keys[0]:
                keys[0], hit_docs[0], hit_scores[0] = key, d, score
                _sift_down(keys, hit_docs, hit_scores, size, 0)
        order = np.argsort(keys[:size])[::-1]
        for r in range(size):
            out_idx[q, r] = hit_docs[order[r]]
            out_scores[q, r] = hit_scores[order[r]]


def _kernel(
    indptr,
    docs,
    freqs,
    norms,
    factors,
    tie_ranks,
    terms,
    fields,
    weights,  # type: ignore[no-untyped-def]
    pointers,
    totals,
    touched,
    out_idx,
    out_scores,
):
    threads = totals.shape[0]
    for thread in prange(threads):
        _one_thread(
            indptr,
            docs,
            freqs,
            norms,
            factors,
            tie_ranks,
            terms,
            fields,
            weights,
            pointers,
            totals[thread],
            touched[thread],
            thread,
            threads,
            out_idx,
            out_scores,
        )


@lru_cache(maxsize=1)
def search_kernel() -> Any:
    """The compiled kernel (its heap helpers compiled first, so it calls them compiled), or
    None without numba."""
    if not HAVE_NUMBA:
        return None
    numba = import_numba()
    for helper in (_sift_down, _sift_up, _accumulate, _one_thread):
        globals()[helper.__name__] = numba.njit(cache=True, nogil=True)(helper)
    return compile_parallel(_kernel)


class Workspace:
    """Each thread's accumulator over the documents (zeros between searches: a search resets
    what it touched) and its list of touched documents: allocated once per index and thread
    count, not per call (at 8.8M documents, 70 MB a thread to zero each time)."""

    def __init__(self, threads: int, num_docs: int, doc_type: Any) -> None:
        self.threads = threads
        self.totals = np.zeros((threads, num_docs), dtype=np.float64)
        self.touched = np.empty((threads, num_docs + 1), dtype=doc_type)


def run_kernel(
    kernel: Any,
    index: Any,
    terms: np.ndarray,
    fields: np.ndarray,
    weights: np.ndarray,
    pointers: np.ndarray,
    out_idx: np.ndarray,
    out_scores: np.ndarray,
) -> None:
    """Fill ``out_idx``/``out_scores`` (rows of -1 / 0) with the compiled ``kernel``: the
    clauses of query ``q`` are ``terms``/``fields``/``weights[pointers[q]:pointers[q + 1]]``.
    A single query runs in this thread (threads would only wait, and spin, for it)."""
    threads = import_numba().get_num_threads()
    arrays = (
        index.indptr,
        index.docs,
        index.freqs,
        index.norms,
        index.factors,
        index.tie_ranks,
        terms,
        fields,
        weights,
        pointers,
    )
    with _LOCK:
        work = index._workspace
        if work is None or work.threads != threads:
            work = index._workspace = Workspace(threads, index.num_docs, index.docs.dtype)
        if len(pointers) == 2 or threads == 1:
            one = globals()["_one_thread"]  # compiled by search_kernel()
            one(*arrays, work.totals[0], work.touched[0], 0, 1, out_idx, out_scores)
        else:
            kernel(*arrays, work.totals, work.touched, out_idx, out_scores)
