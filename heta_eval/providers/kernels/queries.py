"""The engine's driver: every query of a run slice through the kernels, into one row of
values (five families × the cutoffs) and one row of statistics."""

from __future__ import annotations

import numpy as np

from heta_eval._runtime import njit
from heta_eval.providers.kernels.ap import average_precision
from heta_eval.providers.kernels.dedup import kept_rows
from heta_eval.providers.kernels.judgments import relevant_count, row_labels, row_scores
from heta_eval.providers.kernels.ndcg import ndcg
from heta_eval.providers.kernels.order import trec_ranking
from heta_eval.providers.kernels.precision import precision
from heta_eval.providers.kernels.recall import recall
from heta_eval.providers.kernels.rr import reciprocal_rank


@njit(cache=True, nogil=True)
def score_queries(
    q_off,
    data,
    d_off,
    scores,
    valid,
    skip,
    qr_off,
    qr_data,
    qr_doff,
    qr_label,
    status,
    ks,
    discount,
):  # pragma: no cover - compiled
    """``(values, stats)`` of queries ``0..len(q_off)-2`` (see ``evaluate_columnar``)."""
    nq = len(q_off) - 1
    nk = len(ks)
    kmax = ks[nk - 1]
    values = np.zeros((nq, 5 * nk), dtype=np.float64)
    stats = np.zeros((nq, 4), dtype=np.int64)
    for q in range(nq):
        rows, hashes, self_hits, duplicates = kept_rows(q_off[q], q_off[q + 1], data, d_off, skip)
        m = len(rows)
        sc, derived = row_scores(rows, scores, valid)
        stats[q, 0] = m
        stats[q, 1] = duplicates
        stats[q, 2] = self_hits
        stats[q, 3] = 1 if derived else 0
        qs = qr_off[q]
        qe = qr_off[q + 1]
        labels = row_labels(rows, hashes, data, d_off, qs, qe, qr_data, qr_doff, qr_label)
        if status[q] == 2:  # judged: trec_eval's measures on its float32 ranking
            order = trec_ranking(sc, data, d_off, rows)
            ranked = labels[order[: min(m, kmax)]]
            n_rel = relevant_count(qr_label, qs, qe)
            ndcg(ranked, qr_label[qs:qe], ks, discount, values[q, 0:nk])
            average_precision(ranked, n_rel, ks, values[q, nk : 2 * nk])
            recall(ranked, n_rel, ks, values[q, 2 * nk : 3 * nk])
            precision(ranked, ks, values[q, 3 * nk : 4 * nk])
        if status[q] >= 1:  # a qrels entry, even empty: BEIR's mrr
            reciprocal_rank(sc, labels, ks, values[q, 4 * nk : 5 * nk])
    return values, stats
