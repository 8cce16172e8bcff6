"""The ``beir`` package's own numbers, computed the way BEIR users get them."""

from __future__ import annotations

import copy
import logging

from beir.retrieval.custom_metrics import hole, mrr, recall_cap, top_k_accuracy
from beir.retrieval.evaluation import EvaluateRetrieval

logging.getLogger("beir").setLevel(logging.WARNING)


def beir_numbers(qrels, run, k_values) -> dict[str, float] | None:
    """BEIR's ``evaluate`` then ``evaluate_custom(..., "mrr")`` on a copy of ``run``.

    Returns ``{"NDCG@10": ..., "MRR@10": ...}``, or None when BEIR divides by zero (no
    evaluated query). MRR sees the self-hit-pruned run, as in BEIR's example scripts; it is
    given only judged queries because BEIR raises KeyError on an unjudged one.
    """
    run = copy.deepcopy(run)
    qrels = copy.deepcopy(qrels)
    try:
        ndcg, _map, recall, precision = EvaluateRetrieval.evaluate(qrels, run, list(k_values))
    except ZeroDivisionError:
        return None
    judged_run = {qid: docs for qid, docs in run.items() if qid in qrels}
    mrr = EvaluateRetrieval.evaluate_custom(qrels, judged_run, list(k_values), "mrr")
    return {**ndcg, **_map, **recall, **precision, **mrr}


def beir_custom_numbers(qrels, run, k_values) -> dict[str, float] | None:
    """BEIR's ``evaluate_custom`` measures (``mrr``, ``recall_cap``, ``hole``,
    ``top_k_accuracy``) on a copy of ``run`` with its self-hits popped, as ``evaluate``
    leaves it (BEIR's scripts call ``evaluate`` first).

    Given the run's judged queries only (BEIR raises KeyError on the others; heta-eval scores
    none of them). ``recall_cap`` is not given the queries without a relevant document
    (BEIR divides by zero on them; heta-eval's rule scores them 0, so they add nothing to
    its sum, whose denominator stays every qrels query). None when ``qrels`` is empty.
    """
    if not qrels:
        return None
    run = copy.deepcopy(run)
    for qid, docs in run.items():
        docs.pop(qid, None)
    judged = {qid: docs for qid, docs in run.items() if qid in qrels}
    relevant = {
        qid: docs for qid, docs in judged.items() if any(v > 0 for v in qrels[qid].values())
    }
    ks = list(k_values)
    return {
        **mrr(qrels, judged, ks),
        **recall_cap(qrels, relevant, ks),
        **hole(qrels, judged, ks),
        **top_k_accuracy(qrels, judged, ks),
    }
