"""The engine's driver: every query of a run slice through the kernels, into one row of
values (eight families × the cutoffs) and one row of statistics. Only the families and
cutoffs asked for are computed: BEIR's custom families (MRR, R_cap, Hole, Accuracy) sort
again, and nDCG's ideal ranking runs to the family's deepest cutoff."""

from __future__ import annotations

import numpy as np

from heta_eval._runtime import njit
from heta_eval.providers.kernels.ap import average_precision
from heta_eval.providers.kernels.custom import beir_custom, beir_order, custom_depth
from heta_eval.providers.kernels.dedup import kept_rows
from heta_eval.providers.kernels.judgments import (
    annotated_rows,
    relevant_count,
    row_labels,
    row_scores,
)
from heta_eval.providers.kernels.ndcg import ndcg
from heta_eval.providers.kernels.order import trec_ranking
from heta_eval.providers.kernels.precision import precision
from heta_eval.providers.kernels.recall import recall


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
    upto,
    discount,
    corpus,
):  # pragma: no cover - compiled
    """``(values, stats)`` of queries ``0..len(q_off)-2`` (see ``evaluate_columnar``).
    Family ``f`` (column block ``f``) is computed at its first ``upto[f]`` cutoffs only;
    the rest of its block stays zero. ``corpus``: Hole's annotated corpus as
    ``(sorted hashes, their positions, doc id bytes, offsets)``."""
    nq = len(q_off) - 1
    nk = len(ks)
    depth = 0  # the deepest cutoff a trec_eval family needs (0: no ranking at all)
    for f in range(4):
        if upto[f] > 0:
            depth = max(depth, ks[upto[f] - 1])
    custom = upto[4] > 0 or upto[5] > 0 or upto[6] > 0 or upto[7] > 0
    values = np.zeros((nq, 8 * nk), dtype=np.float64)
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
        if status[q] == 2 and depth > 0:  # judged: trec_eval's measures on its float32 ranking
            order = trec_ranking(sc, data, d_off, rows)
            ranked = labels[order[: min(m, depth)]]
            n_rel = relevant_count(qr_label, qs, qe)
            # Each family sees the ranking cut at its own deepest cutoff: a value at k
            # depends on the top k only.
            u = upto[0]
            if u > 0:
                ndcg(ranked[: ks[u - 1]], qr_label[qs:qe], ks[:u], discount, values[q, 0:u])
            u = upto[1]
            if u > 0:
                average_precision(ranked[: ks[u - 1]], n_rel, ks[:u], values[q, nk : nk + u])
            u = upto[2]
            if u > 0:
                recall(ranked[: ks[u - 1]], n_rel, ks[:u], values[q, 2 * nk : 2 * nk + u])
            u = upto[3]
            if u > 0:
                precision(ranked[: ks[u - 1]], ks[:u], values[q, 3 * nk : 3 * nk + u])
        if status[q] >= 1 and custom:  # a qrels entry, even empty: BEIR's evaluate_custom
            top = beir_order(sc)[: min(m, custom_depth(ks, upto[4:]))]
            if upto[6] > 0:  # Hole: only the documents it reads are looked up
                annotated = annotated_rows(
                    rows[top], hashes[top], data, d_off, corpus[0], corpus[1], corpus[2], corpus[3]
                )
            else:
                annotated = np.ones(len(top), dtype=np.bool_)
            n_pos = relevant_count(qr_label, qs, qe)
            beir_custom(top, labels, annotated, n_pos, ks, upto[4:], values[q, 4 * nk :], nk)
    return values, stats
