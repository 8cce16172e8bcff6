"""Average precision cut at k (trec_eval's ``map_cut``): precision at each relevant rank up
to k, summed in rank order, over all R relevant judgments."""

from __future__ import annotations

from heta_eval._runtime import njit


@njit(cache=True, nogil=True)
def average_precision(ranked, n_rel, ks, out):  # pragma: no cover - compiled
    """``out[c]`` = AP@ks[c] of ``ranked`` (labels in rank order, cut at the largest k)."""
    nk = len(ks)
    ap = 0.0
    hits = 0
    c = 0
    for r in range(1, len(ranked) + 1):
        if ranked[r - 1] >= 1:
            hits += 1
            ap += hits / r
        while c < nk and ks[c] == r:
            out[c] = ap / n_rel if n_rel > 0 else 0.0
            c += 1
    while c < nk:
        out[c] = ap / n_rel if n_rel > 0 else 0.0
        c += 1
