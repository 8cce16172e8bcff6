"""Precision@k (trec_eval's ``P``): relevant rows in the top k over k (a short list still
divides by k)."""

from __future__ import annotations

from heta_eval._runtime import njit


@njit(cache=True, nogil=True)
def precision(ranked, ks, out):  # pragma: no cover - compiled
    """``out[c]`` = P@ks[c] of ``ranked`` (labels in rank order, cut at the largest k)."""
    nk = len(ks)
    hits = 0
    c = 0
    for r in range(1, len(ranked) + 1):
        if ranked[r - 1] >= 1:
            hits += 1
        while c < nk and ks[c] == r:
            out[c] = hits / ks[c]
            c += 1
    while c < nk:
        out[c] = hits / ks[c]
        c += 1
