"""Recall@k (trec_eval's ``recall``): relevant rows in the top k over all R relevant
judgments."""

from __future__ import annotations

from heta_eval._runtime import njit


@njit(cache=True, nogil=True)
def recall(ranked, n_rel, ks, out):  # pragma: no cover - compiled
    """``out[c]`` = recall@ks[c] of ``ranked`` (labels in rank order, cut at the largest k)."""
    nk = len(ks)
    hits = 0
    c = 0
    for r in range(1, len(ranked) + 1):
        if ranked[r - 1] >= 1:
            hits += 1
        while c < nk and ks[c] == r:
            out[c] = hits / n_rel if n_rel > 0 else 0.0
            c += 1
    while c < nk:
        out[c] = hits / n_rel if n_rel > 0 else 0.0
        c += 1
