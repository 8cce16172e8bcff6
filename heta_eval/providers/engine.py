"""A columnar metric engine: BEIR's numbers, computed by a compiled kernel.

pytrec_eval needs a ``{qid: {docid: float}}`` dict of Python objects (slow to build for
millions of results) and holds the GIL. This engine takes the run as flat arrays instead:

* ``offsets``: query ``q``'s results are rows ``offsets[q]:offsets[q + 1]``, in run order;
* the doc ids as one UTF-8 byte buffer with row offsets (an Arrow string array's buffers),
  so ties compare bytes in the kernel as trec_eval's ``strcmp`` does, with no Python strings;
* ``scores`` (float64) and an optional validity mask (a missing score makes the query's
  scores rank-derived, as ``collapse_to_documents`` does);
* a self-hit mask (rows removed before anything else, never mutating the input).

The kernel (numba, ``cache=True``) replicates trec_eval 9.0.8's arithmetic exactly
(``../shared/reference/beir-semantics.md`` §3 and §8): float32 scores ranked descending,
ties by doc id bytes descending; linear-gain nDCG divided by ``log2(rank + 1)`` taken from
Python's ``math.log2`` (libm); MAP and recall over the full R; P over k; sums in rank order.
MRR follows BEIR's ``mrr``: a stable sort on the raw float64 scores, relevant = label > 0.
Duplicate doc ids in one query keep their first row and are counted.

Aggregation is shared with :func:`heta_eval.retrieval.evaluate.evaluate_run`, which uses
this engine for large runs (``engine="auto"``).

>>> run = columnar_run_from_dict({"q1": {"d2": 3.0, "d1": 2.0, "q1": 9.0}, "q2": {"d3": 1.0}})
>>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
>>> values, stats = evaluate_columnar(run, qrels, k_values=(1, 10))
>>> [round(v, 5) for v in values[0, :2].tolist()]  # q1: NDCG@1, NDCG@10
[0.0, 0.63093]
>>> stats[0].tolist()  # q1: documents, duplicates, self-hits, rank-derived
[2, 0, 1, 0]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import pairwise

import numpy as np

from heta_eval._runtime import HAVE_NUMBA, njit, run_in_threads
from heta_eval._runtime import usable_cpus as _cores
from heta_eval.io._kernels import compare_bytes as _compare
from heta_eval.io.columnar import (
    ColumnarRun,
    columnar_run_from_dict,
    first_occurrences,
    gather_strings,
    string_buffers,
)
from heta_eval.measures.measure import METRICS

__all__ = [
    "HAVE_NUMBA",
    "METRIC_ORDER",
    "ColumnarRun",
    "columnar_run_from_dict",
    "evaluate_columnar",
    "first_occurrences",
    "gather_strings",
    "measure_column",
    "string_buffers",
]

#: Column blocks of the kernel's output, each ``len(k_values)`` wide: BEIR's metrics, in order.
METRIC_ORDER: tuple[str, ...] = METRICS


def _qrels_arrays(
    query_ids: Sequence[str], qrels: Mapping[str, Mapping[str, int]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The judgments of each run query, flattened like the run, and its qrels status."""
    status = np.zeros(len(query_ids), dtype=np.int8)  # 0 unjudged, 1 empty qrels, 2 judged
    docs: list[str] = []
    labels: list[int] = []
    offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    for i, qid in enumerate(query_ids):
        judged = qrels.get(qid)
        if judged is not None:
            status[i] = 2 if judged else 1
            docs.extend(judged.keys())
            labels.extend(judged.values())
        offsets[i + 1] = len(docs)
    data, doc_offsets = string_buffers(docs)
    return offsets, data, doc_offsets, np.asarray(labels, dtype=np.int64), status


def evaluate_columnar(
    run: ColumnarRun,
    qrels: Mapping[str, Mapping[str, int]],
    k_values: Sequence[int],
) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values and statistics of every metric at every k (sorted ascending).

    Returns ``values`` (float64, one row per run query, columns ``METRIC_ORDER`` × k) and
    ``stats`` (int64 rows: documents kept, duplicate rows dropped, self-hits removed,
    rank-derived flag). Only meaningful where the query is judged: the caller picks rows
    (trec measures need non-empty qrels, MRR only a qrels entry), as pytrec_eval and BEIR do.
    """
    ks = np.asarray(sorted(set(k_values)), dtype=np.int64)
    kmax = int(ks[-1])
    # trec_eval divides by libm's log2(rank + 1); Python's math.log2 is libm's (numpy's
    # vectorised log2 may differ in the last ulp).
    discount = np.array([1.0] + [math.log2(r + 1) for r in range(1, kmax + 1)])
    qr_offsets, qr_data, qr_doc_offsets, qr_labels, status = _qrels_arrays(run.query_ids, qrels)
    rows = run.rows
    valid = run.valid if run.valid is not None else np.ones(rows, dtype=np.bool_)
    skip = run.skip if run.skip is not None else np.zeros(rows, dtype=np.bool_)

    def queries(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """The kernel on queries a..b-1 (offsets stay absolute row numbers)."""
        return _kernel(
            run.offsets[a : b + 1],
            run.doc_data,
            run.doc_offsets,
            run.scores,
            valid,
            skip,
            qr_offsets[a : b + 1],
            qr_data,
            qr_doc_offsets,
            qr_labels,
            status[a:b],
            ks,
            discount,
        )

    parts = _query_parts(run.offsets, _cores())
    if len(parts) == 1:
        return queries(0, len(run.query_ids))
    # Queries are independent: the kernel (which releases the GIL) scores slices of them
    # on every core. Each query's arithmetic is unchanged, so the numbers are identical.
    done = run_in_threads(queries, parts)
    return np.concatenate([v for v, _ in done]), np.concatenate([s for _, s in done])


def load_kernel() -> None:
    """Load the cached compiled kernel (compile it on first use), typed as for any run:
    writable C arrays (a read-only array would load another specialization)."""
    evaluate_columnar(columnar_run_from_dict({"q": {"d": 1.0}}), {"q": {"d": 1}}, (1,))


#: Runs with fewer results are scored by one thread (starting threads would cost more).
PARALLEL_MIN_ROWS = 200_000


def _query_parts(offsets: np.ndarray, cores: int) -> list[tuple[int, int]]:
    """Query ranges of about equal row counts, two per core (a busy core then slows one
    small part, not half the run); a single range for small runs or one core."""
    nq = len(offsets) - 1
    total = int(offsets[-1])
    if cores < 2 or total < PARALLEL_MIN_ROWS or nq < 2:
        return [(0, nq)]
    targets = np.linspace(0, total, 2 * cores + 1)[1:-1]
    cuts = np.searchsorted(offsets, targets).tolist()
    bounds = sorted({0, nq, *(c for c in cuts if 0 < c < nq)})
    return list(pairwise(bounds))


def measure_column(measure: object, k_values: Sequence[int]) -> int:
    """The column of :func:`evaluate_columnar`'s output holding ``measure`` (one of BEIR's
    five families at a cutoff in ``k_values``)."""
    metric, k = measure.legacy  # type: ignore[attr-defined]
    return METRIC_ORDER.index(metric) * len(k_values) + list(k_values).index(k)


# ------------------------------------------------------------------------------- kernel


@njit(cache=True)
def _hash(data, start, end):  # pragma: no cover - compiled
    h = np.uint64(14695981039346656037)
    prime = np.uint64(1099511628211)
    view = data[start:end]  # indices from 0: no wrap-around test per byte (see _jit.at)
    for i in range(len(view)):
        h = (h ^ np.uint64(view[i])) * prime
    return h


@njit(cache=True, nogil=True)
def _kernel(
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
    nq = len(q_off) - 1
    nk = len(ks)
    kmax = ks[nk - 1]
    values = np.zeros((nq, 5 * nk), dtype=np.float64)
    stats = np.zeros((nq, 4), dtype=np.int64)
    for q in range(nq):
        s = q_off[q]
        e = q_off[q + 1]
        # 1. drop self-hits, then duplicate doc ids (keeping the first row).
        n = 0
        rows = np.empty(e - s, dtype=np.int64)
        for i in range(s, e):
            if skip[i]:
                stats[q, 2] += 1
            else:
                rows[n] = i
                n += 1
        rows = rows[:n]
        # Open addressing on the doc id's hash: linear in the query's rows.
        hashes = np.empty(n, dtype=np.uint64)
        size = 16
        while size < 2 * n:
            size *= 2
        table = np.full(size, -1, dtype=np.int64)
        mask = np.uint64(size - 1)
        dup = np.zeros(n, dtype=np.bool_)
        for j in range(n):
            x = rows[j]
            h = _hash(data, d_off[x], d_off[x + 1])
            hashes[j] = h
            slot = h & mask
            while True:
                t = table[slot]
                if t < 0:
                    table[slot] = j
                    break
                y = rows[t]
                if hashes[t] == h and (
                    _compare(data, d_off[x], d_off[x + 1], data, d_off[y], d_off[y + 1]) == 0
                ):
                    dup[j] = True
                    break
                slot = (slot + np.uint64(1)) & mask
        m = 0
        for j in range(n):
            if not dup[j]:
                rows[m] = rows[j]
                hashes[m] = hashes[j]
                m += 1
        rows = rows[:m]
        stats[q, 0] = m
        stats[q, 1] = n - m
        # 2. scores (rank-derived n..1 when any kept row has none) and labels.
        sc = np.empty(m, dtype=np.float64)
        derived = False
        for j in range(m):
            if not valid[rows[j]]:
                derived = True
        for j in range(m):
            sc[j] = float(m - j) if derived else scores[rows[j]]
        stats[q, 3] = 1 if derived else 0
        qs = qr_off[q]
        qe = qr_off[q + 1]
        nj = qe - qs
        qh = np.empty(nj, dtype=np.uint64)
        for t in range(nj):
            qh[t] = _hash(qr_data, qr_doff[qs + t], qr_doff[qs + t + 1])
        q_order = np.argsort(qh)
        qh_sorted = qh[q_order]
        labels = np.full(m, -1, dtype=np.int64)
        for j in range(m):
            x = rows[j]
            h = hashes[j]
            t = np.searchsorted(qh_sorted, h)
            while t < nj and qh_sorted[t] == h:
                r = qs + q_order[t]
                if _compare(data, d_off[x], d_off[x + 1], qr_data, qr_doff[r], qr_doff[r + 1]) == 0:
                    labels[j] = qr_label[r]
                    break
                t += 1
        if status[q] == 2:
            # 3. trec_eval measures on the float32 ranking.
            n_rel = 0
            n_pos = 0
            for t in range(qs, qe):
                if qr_label[t] >= 1:
                    n_rel += 1
                if qr_label[t] > 0:
                    n_pos += 1
            ideal = np.empty(n_pos, dtype=np.int64)
            p = 0
            for t in range(qs, qe):
                if qr_label[t] > 0:
                    ideal[p] = qr_label[t]
                    p += 1
            ideal = np.sort(ideal)[::-1]
            idcg = np.zeros(nk, dtype=np.float64)
            acc = 0.0
            c = 0
            for r in range(1, kmax + 1):
                if r <= n_pos:
                    acc += ideal[r - 1] / discount[r]
                while c < nk and ks[c] == r:
                    idcg[c] = acc
                    c += 1
            f32 = np.empty(m, dtype=np.float32)
            local = np.empty(m, dtype=np.int64)
            for j in range(m):
                local[j] = j
                f32[j] = np.float32(sc[j])
            order = (
                local
                if _in_trec_order(f32, data, d_off, rows)
                else _trec_order(local, f32, data, d_off, rows)
            )
            dcg = 0.0
            ap = 0.0
            hits = 0
            c = 0
            limit = m if m < kmax else kmax
            for r in range(1, limit + 1):
                lab = labels[order[r - 1]]
                if lab > 0:
                    dcg += lab / discount[r]
                if lab >= 1:
                    hits += 1
                    ap += hits / r
                while c < nk and ks[c] == r:
                    _record(values, q, c, nk, ks[c], dcg, idcg[c], ap, hits, n_rel)
                    c += 1
            while c < nk:
                _record(values, q, c, nk, ks[c], dcg, idcg[c], ap, hits, n_rel)
                c += 1
        if status[q] >= 1:
            # 4. BEIR's mrr: stable sort on the raw scores, descending.
            descending = True
            for j in range(m - 1):
                if sc[j] < sc[j + 1]:
                    descending = False
                    break
            # A run already in score order (the usual file) keeps it: a stable sort would.
            if descending:
                mrr_order = np.arange(m)
            else:
                neg = np.empty(m, dtype=np.float64)
                for j in range(m):
                    neg[j] = -sc[j]
                mrr_order = np.argsort(neg, kind="mergesort")
            first = 0
            limit = m if m < kmax else kmax
            for r in range(1, limit + 1):
                if labels[mrr_order[r - 1]] > 0:
                    first = r
                    break
            if first > 0:
                for c in range(nk):
                    if first <= ks[c]:
                        values[q, 4 * nk + c] = 1.0 / first
    return values, stats


@njit(cache=True)
def _in_trec_order(f32, data, d_off, rows):  # pragma: no cover - compiled
    # True when rows are already in _trec_order's order (runs are usually written so): that
    # order is total, so the sort would return them as they are.
    for j in range(len(f32) - 1):
        if f32[j] < f32[j + 1]:
            return False
        if f32[j] == f32[j + 1]:
            x = rows[j]
            y = rows[j + 1]
            if _compare(data, d_off[x], d_off[x + 1], data, d_off[y], d_off[y + 1]) < 0:
                return False
    return True


@njit(cache=True)
def _trec_order(local, f32, data, d_off, rows):  # pragma: no cover - compiled
    # Bottom-up merge sort of local indices: float32 score descending, then doc id bytes
    # (of global row rows[x]) descending -- trec_eval's qsort comparator, a total order.
    n = len(local)
    a = local.copy()
    b = np.empty_like(a)
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                x = a[i]
                y = a[j]
                if f32[x] > f32[y]:
                    take_left = True
                elif f32[x] < f32[y]:
                    take_left = False
                else:
                    gx = rows[x]
                    gy = rows[y]
                    take_left = (
                        _compare(data, d_off[gx], d_off[gx + 1], data, d_off[gy], d_off[gy + 1]) > 0
                    )
                if take_left:
                    b[o] = x
                    i += 1
                else:
                    b[o] = y
                    j += 1
                o += 1
            while i < mid:
                b[o] = a[i]
                i += 1
                o += 1
            while j < hi:
                b[o] = a[j]
                j += 1
                o += 1
            lo += 2 * width
        a, b = b, a
        width *= 2
    return a


@njit(cache=True, inline="always")
def _record(values, q, c, nk, k, dcg, idcg, ap, hits, n_rel):  # pragma: no cover - compiled
    values[q, c] = dcg / idcg if idcg > 0 else 0.0
    values[q, nk + c] = ap / n_rel if n_rel > 0 else 0.0
    values[q, 2 * nk + c] = hits / n_rel if n_rel > 0 else 0.0
    values[q, 3 * nk + c] = hits / k
