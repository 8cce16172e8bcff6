"""MRR@k as BEIR's ``evaluate_custom(..., "mrr")`` computes it: a stable sort on the raw
float64 scores (not trec_eval's float32 ranking), relevant meaning label > 0."""

from __future__ import annotations

import numpy as np

from heta_eval._runtime import njit


@njit(cache=True, nogil=True)
def reciprocal_rank(sc, labels, ks, out):  # pragma: no cover - compiled
    """``out[c]`` = 1 / (rank of the first relevant row) when that rank is <= ks[c]; ``out``
    is left as it is (zero) otherwise. ``sc`` and ``labels`` are the kept rows', in run
    order."""
    m = len(sc)
    descending = True
    for j in range(m - 1):
        if sc[j] < sc[j + 1]:
            descending = False
            break
    # A run already in score order (the usual file) keeps it: a stable sort would.
    if descending:
        order = np.arange(m)
    else:
        negated = np.empty(m, dtype=np.float64)
        for j in range(m):
            negated[j] = -sc[j]
        order = np.argsort(negated, kind="mergesort")
    nk = len(ks)
    kmax = ks[nk - 1]
    first = 0
    for r in range(1, min(m, kmax) + 1):
        if labels[order[r - 1]] > 0:
            first = r
            break
    if first > 0:
        for c in range(nk):
            if first <= ks[c]:
                out[c] = 1.0 / first
