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
    # The ideal ranking ends at n_pos: past it every cutoff's idcg is the same sum, so no
    # loop or discount runs to a cutoff beyond the judgments (nDCG@100000000).
    acc = 0.0
    r = 0
    for c in range(nk):
        top = min(ks[c], n_pos)
        while r < top:
            r += 1
            acc += ideal[r - 1] / discount[r]
        idcg[c] = acc
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
