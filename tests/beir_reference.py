"""The ``beir`` package's own numbers, computed the way BEIR users get them."""

from __future__ import annotations

import copy
import logging

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
