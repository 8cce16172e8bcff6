"""nDCG@k as trec_eval's ``ndcg_cut`` computes it: linear gain, ``log2(rank + 1)`` discount
(libm's, precomputed by the caller), the ideal ranking from the positive judgments."""

from __future__ import annotations

import numpy as np

from heta_eval._runtime import njit


@njit(cache=True, nogil=True)
def ndcg(ranked, judged_labels, ks, discount, out):  # pragma: no cover - compiled
    """``out[c]`` = nDCG@ks[c] of ``ranked`` (the labels of the top ``min(m, max k)`` rows in
    rank order, -1 unjudged) against the query's ``judged_labels``."""
    nk = len(ks)
    n_pos = 0
    for label in judged_labels:
        if label > 0:
            n_pos += 1
    ideal = np.empty(n_pos, dtype=np.int64)
    p = 0
    for label in judged_labels:
        if label > 0:
            ideal[p] = label
            p += 1
    ideal = np.sort(ideal)[::-1]
    idcg = np.zeros(nk, dtype=np.float64)
    acc = 0.0
    c = 0
    for r in range(1, ks[nk - 1] + 1):
        if r <= n_pos:
            acc += ideal[r - 1] / discount[r]
        while c < nk and ks[c] == r:
            idcg[c] = acc
            c += 1
    dcg = 0.0
    c = 0
    for r in range(1, len(ranked) + 1):
        label = ranked[r - 1]
        if label > 0:
            dcg += label / discount[r]
        while c < nk and ks[c] == r:
            out[c] = dcg / idcg[c] if idcg[c] > 0 else 0.0
            c += 1
    while c < nk:
        out[c] = dcg / idcg[c] if idcg[c] > 0 else 0.0
        c += 1
