"""The rows a query of a document-level run keeps: self-hits dropped, then repeated doc ids
(the first row stays, and is counted).

Not the chunk collapse (:mod:`heta_eval.retrieval.first_chunks`): a chunk-level response
reaches the engine already collapsed, without repeats. Repeats here are a run's own repeated
``(query, doc)`` rows, which a run file's reader refuses as trec_eval does, or re-reads with
BEIR's last-line-wins rule (:mod:`heta_eval.io.run`): the count is what tells it to."""

from __future__ import annotations

import numpy as np

from heta_eval._runtime import njit
from heta_eval.io._kernels import compare_bytes


@njit(cache=True)
def fnv1a(data, start, end):  # pragma: no cover - compiled
    """The 64-bit FNV-1a hash of ``data[start:end]``."""
    h = np.uint64(14695981039346656037)
    prime = np.uint64(1099511628211)
    view = data[start:end]  # indices from 0: no wrap-around test per byte (see io._kernels.at)
    for i in range(len(view)):
        h = (h ^ np.uint64(view[i])) * prime
    return h


@njit(cache=True, nogil=True)
def kept_rows(s, e, data, d_off, skip):  # pragma: no cover - compiled
    """``(rows, hashes, self_hits, duplicates)``: the rows ``s..e-1`` kept, in run order, and
    their doc ids' hashes. Open addressing on the hash: linear in the query's rows."""
    n = 0
    rows = np.empty(e - s, dtype=np.int64)
    for i in range(s, e):
        if not skip[i]:
            rows[n] = i
            n += 1
    self_hits = (e - s) - n
    rows = rows[:n]
    hashes = np.empty(n, dtype=np.uint64)
    size = 16
    while size < 2 * n:
        size *= 2
    table = np.full(size, -1, dtype=np.int64)
    mask = np.uint64(size - 1)
    dup = np.zeros(n, dtype=np.bool_)
    for j in range(n):
        x = rows[j]
        h = fnv1a(data, d_off[x], d_off[x + 1])
        hashes[j] = h
        slot = h & mask
        while True:
            t = table[slot]
            if t < 0:
                table[slot] = j
                break
            y = rows[t]
            if hashes[t] == h and (
                compare_bytes(data, d_off[x], d_off[x + 1], data, d_off[y], d_off[y + 1]) == 0
            ):
                dup[j] = True
                break
            slot = (slot + np.uint64(1)) & mask
    m = 0
    for j in range(n):
        if not dup[j]:
            rows[m] = rows[j]
            hashes[m] = hashes[j]
            m += 1
    return rows[:m], hashes[:m], self_hits, n - m
