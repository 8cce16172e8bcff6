"""What the judgments say about a query's kept rows: each row's label (-1 unjudged), and the
counts the families divide by."""

from __future__ import annotations

import numpy as np

from heta_eval._runtime import njit
from heta_eval.io._kernels import compare_bytes
from heta_eval.providers.kernels.dedup import fnv1a


@njit(cache=True, nogil=True)
def row_labels(rows, hashes, data, d_off, qs, qe, qr_data, qr_doff, qr_label):  # pragma: no cover
    """The label of each kept row's doc id in judgments ``qs..qe-1``, -1 where unjudged."""
    nj = qe - qs
    qh = np.empty(nj, dtype=np.uint64)
    for t in range(nj):
        qh[t] = fnv1a(qr_data, qr_doff[qs + t], qr_doff[qs + t + 1])
    q_order = np.argsort(qh)
    qh_sorted = qh[q_order]
    m = len(rows)
    labels = np.full(m, -1, dtype=np.int64)
    for j in range(m):
        x = rows[j]
        h = hashes[j]
        t = np.searchsorted(qh_sorted, h)
        while t < nj and qh_sorted[t] == h:
            r = qs + q_order[t]
            if (
                compare_bytes(data, d_off[x], d_off[x + 1], qr_data, qr_doff[r], qr_doff[r + 1])
                == 0
            ):
                labels[j] = qr_label[r]
                break
            t += 1
    return labels


@njit(cache=True, nogil=True)
def relevant_count(qr_label, qs, qe):  # pragma: no cover - compiled
    """Judgments with label >= 1: trec_eval's R (AP's and recall's denominator)."""
    n_rel = 0
    for t in range(qs, qe):
        if qr_label[t] >= 1:
            n_rel += 1
    return n_rel


@njit(cache=True, nogil=True)
def row_scores(rows, scores, valid):  # pragma: no cover - compiled
    """``(scores, derived)``: the kept rows' scores, or rank-derived ``m..1`` when any has
    none (as ``collapse_to_documents`` does)."""
    m = len(rows)
    derived = False
    for j in range(m):
        if not valid[rows[j]]:
            derived = True
    sc = np.empty(m, dtype=np.float64)
    for j in range(m):
        sc[j] = float(m - j) if derived else scores[rows[j]]
    return sc, derived


@njit(cache=True, nogil=True)
def hashed_documents(c_data, c_doff):  # pragma: no cover - compiled
    """``(hashes sorted, their positions)`` of a list of doc ids (Hole's annotated corpus),
    for :func:`annotated_rows`."""
    n = len(c_doff) - 1
    h = np.empty(n, dtype=np.uint64)
    for t in range(n):
        h[t] = fnv1a(c_data, c_doff[t], c_doff[t + 1])
    order = np.argsort(h)
    return h[order], order


@njit(cache=True, nogil=True)
def annotated_rows(rows, hashes, data, d_off, c_hash, c_pos, c_data, c_off):  # pragma: no cover
    """Whether each kept row's doc id is in the annotated corpus (:func:`hashed_documents`:
    ``c_hash`` sorted, ``c_pos`` their positions in ``c_data`` / ``c_off``)."""
    m = len(rows)
    out = np.zeros(m, dtype=np.bool_)
    n = len(c_hash)
    for j in range(m):
        x = rows[j]
        h = hashes[j]
        t = np.searchsorted(c_hash, h)
        while t < n and c_hash[t] == h:
            r = c_pos[t]
            if compare_bytes(data, d_off[x], d_off[x + 1], c_data, c_off[r], c_off[r + 1]) == 0:
                out[j] = True
                break
            t += 1
    return out
