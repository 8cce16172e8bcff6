"""A columnar metric engine: BEIR's numbers, computed by a compiled kernel.

pytrec_eval needs a ``{qid: {docid: float}}`` dict of Python objects (slow to build for
millions of results) and holds the GIL. This engine takes the run as flat arrays instead:

* ``offsets``: query ``q``'s results are rows ``offsets[q]:offsets[q + 1]``, in run order;
* the doc ids as one UTF-8 byte buffer with row offsets (an Arrow string array's buffers),
  so ties compare bytes in the kernel as trec_eval's ``strcmp`` does, with no Python strings;
* ``scores`` (float64) and an optional validity mask (a missing score makes the query's
  scores rank-derived, as ``collapse_to_documents`` does);
* a self-hit mask (rows removed before anything else, never mutating the input).

The kernels (numba, ``cache=True``; :mod:`heta_eval.providers.kernels`, one per family)
replicate trec_eval 9.0.8's arithmetic exactly (see docs/retrieval-core.md): float32 scores
ranked descending, ties by doc id bytes descending; linear-gain nDCG divided by
``log2(rank + 1)`` taken from Python's ``math.log2`` (libm); MAP and recall over the full R;
P over k; sums in rank order.
BEIR's ``evaluate_custom`` families (MRR, R_cap, Hole, Accuracy) follow its rules
(:mod:`heta_eval.measures.beir`): a stable sort on the raw float64 scores, relevant = label > 0,
Hole against every document the qrels judge.
Duplicate doc ids in one query keep their first row and are counted.

Aggregation is shared with :func:`heta_eval.retrieval.run.evaluate_run`, which uses
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
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

import numpy as np

from heta_eval._runtime import HAVE_NUMBA, run_in_threads
from heta_eval._runtime import usable_cpus as _cores
from heta_eval.io.columnar import (
    ColumnarRun,
    columnar_run_from_dict,
    gather_strings,
    string_buffers,
)
from heta_eval.measures.measure import BEIR_METRICS
from heta_eval.providers.kernels.judgments import hashed_documents
from heta_eval.providers.kernels.queries import score_queries

__all__ = [
    "HAVE_NUMBA",
    "METRIC_ORDER",
    "ColumnarRun",
    "columnar_run_from_dict",
    "evaluate_columnar",
    "gather_strings",
    "measure_column",
    "string_buffers",
]

#: Column blocks of the kernel's output, each ``len(k_values)`` wide: BEIR's metrics, in order.
METRIC_ORDER: tuple[str, ...] = BEIR_METRICS


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
    wanted: Iterable[tuple[str, int]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values and statistics of the metrics at the k values (sorted ascending).

    Returns ``values`` (float64, one row per run query, columns ``METRIC_ORDER`` × k) and
    ``stats`` (int64 rows: documents kept, duplicate rows dropped, self-hits removed,
    rank-derived flag). Only meaningful where the query is judged: the caller picks rows
    (trec measures need non-empty qrels, BEIR's custom families only a qrels entry), as
    pytrec_eval and BEIR do.

    ``wanted``, ``(metric, k)`` pairs (a measure's ``legacy``), limits the work to those
    metrics: a metric not named is not computed (the custom families' sort is skipped) and each one
    named is computed up to its largest k; the columns left out hold 0. The default is all.
    """
    ks = np.asarray(sorted(set(k_values)), dtype=np.int64)
    upto = _cutoffs_needed(ks, wanted)
    qr_offsets, qr_data, qr_doc_offsets, qr_labels, status = _qrels_arrays(run.query_ids, qrels)
    # nDCG reads a discount per rank of a ranking or of a query's ideal ranking, never past
    # the longest of either: a cutoff beyond them (nDCG@100000000) costs no memory.
    deepest = max(_longest(run.offsets), _longest(qr_offsets))
    kmax = min(int(ks[-1]), deepest)
    # trec_eval divides by libm's log2(rank + 1); Python's math.log2 is libm's (numpy's
    # vectorised log2 may differ in the last ulp).
    discount = np.array([1.0] + [math.log2(r + 1) for r in range(1, kmax + 1)])
    rows = run.rows
    valid = run.valid if run.valid is not None else np.ones(rows, dtype=np.bool_)
    skip = run.skip if run.skip is not None else np.zeros(rows, dtype=np.bool_)
    corpus = _annotated_corpus(qrels if upto[METRIC_ORDER.index("hole")] else {})

    def queries(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """The kernel on queries a..b-1 (offsets stay absolute row numbers)."""
        return score_queries(
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
            upto,
            discount,
            corpus,
        )

    parts = _query_parts(run.offsets, _cores())
    if len(parts) == 1:
        return queries(0, len(run.query_ids))
    # Queries are independent: the kernel (which releases the GIL) scores slices of them
    # on every core. Each query's arithmetic is unchanged, so the numbers are identical.
    done = run_in_threads(queries, parts)
    return np.concatenate([v for v, _ in done]), np.concatenate([s for _, s in done])


def _annotated_corpus(
    qrels: Mapping[str, Mapping[str, int]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hole's annotated corpus (every document any query judges, whatever its label), hashed
    once for the kernel."""
    data, offsets = string_buffers(list({doc: None for docs in qrels.values() for doc in docs}))
    hashes, positions = hashed_documents(data, offsets)
    return hashes, positions, data, offsets


def _longest(offsets: np.ndarray) -> int:
    """The most rows any query has in a flattened table."""
    return int(np.diff(offsets).max()) if len(offsets) > 1 else 0


def _cutoffs_needed(ks: np.ndarray, wanted: Iterable[tuple[str, int]] | None) -> np.ndarray:
    """How many leading ``ks`` each metric of ``METRIC_ORDER`` is computed at."""
    if wanted is None:
        return np.full(len(METRIC_ORDER), len(ks), dtype=np.int64)
    upto = np.zeros(len(METRIC_ORDER), dtype=np.int64)
    positions = {int(k): i for i, k in enumerate(ks.tolist())}
    for metric, k in wanted:
        f = METRIC_ORDER.index(metric)
        upto[f] = max(upto[f], positions[int(k)] + 1)
    return upto


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
    families at a cutoff in ``k_values``)."""
    metric, k = measure.legacy  # type: ignore[attr-defined]
    return METRIC_ORDER.index(metric) * len(k_values) + list(k_values).index(k)
