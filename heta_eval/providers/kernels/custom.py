"""BEIR's ``evaluate_custom`` families (MRR, R_cap, Hole, Accuracy; their rules:
:mod:`heta_eval.measures.beir`) on one query: a stable sort on the raw float64 scores (not
trec_eval's float32 ranking), relevant meaning label > 0."""

from __future__ import annotations

import numpy as np

from heta_eval._runtime import njit


@njit(cache=True, nogil=True)
def beir_order(sc):  # pragma: no cover - compiled
    """The rows in ``sorted(..., key=score, reverse=True)``'s order: ties keep run order."""
    m = len(sc)
    for j in range(m - 1):
        if sc[j] < sc[j + 1]:
            negated = np.empty(m, dtype=np.float64)
            for i in range(m):
                negated[i] = -sc[i]
            return np.argsort(negated, kind="mergesort")
    return np.arange(m)  # already in score order (the usual file): a stable sort keeps it


@njit(cache=True, nogil=True)
def custom_depth(ks, upto):  # pragma: no cover - compiled
    """The deepest cutoff any of the four families is asked at (``upto``: theirs)."""
    kmax = 0
    for f in range(4):
        if upto[f] > 0:
            kmax = max(kmax, ks[upto[f] - 1])
    return kmax


@njit(cache=True, nogil=True)
def beir_custom(top, labels, annotated, n_rel, ks, upto, out, nk):  # pragma: no cover - compiled
    """The four families into ``out`` (blocks of ``nk`` columns: MRR, R_cap, Hole,
    Accuracy), each at its first ``upto[f]`` cutoffs; the rest stays zero. ``top``: the kept
    rows' first :func:`custom_depth` of :func:`beir_order`; ``labels``: the kept rows'
    labels (-1 unjudged); ``annotated[r]``: whether any query judges the doc at rank r + 1;
    ``n_rel``: the query's judgments with label > 0."""
    depth = len(top)
    first = 0  # rank of the first relevant row (0: none within depth)
    hits = np.zeros(depth + 1, dtype=np.int64)  # relevant rows among the first r
    holes = np.zeros(depth + 1, dtype=np.int64)  # rows no query judges among the first r
    for r in range(1, depth + 1):
        relevant = labels[top[r - 1]] > 0
        hits[r] = hits[r - 1] + (1 if relevant else 0)
        holes[r] = holes[r - 1] + (0 if annotated[r - 1] else 1)
        if relevant and first == 0:
            first = r
    for c in range(nk):
        k = ks[c]
        n = min(k, depth)
        if c < upto[0] and first > 0 and first <= k:
            out[c] = 1.0 / first
        if c < upto[1] and n_rel > 0:  # no relevant document: 0 (BEIR divides by zero)
            out[nk + c] = hits[n] / min(n_rel, k)
        if c < upto[2]:
            out[2 * nk + c] = holes[n] / k
        if c < upto[3] and hits[n] > 0:
            out[3 * nk + c] = 1.0
