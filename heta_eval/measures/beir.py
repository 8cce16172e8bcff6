"""BEIR's measure families: the one table their names come from, and the rules of the four
that BEIR's ``evaluate_custom`` computes itself (``beir.retrieval.custom_metrics``).

``evaluate`` gives nDCG, MAP, recall and P through pytrec_eval (trec_eval's ranking:
float32 scores, ties by doc id descending). ``evaluate_custom`` gives MRR, R_cap, Hole and
Accuracy with its own ranking: Python's stable ``sorted`` on the raw scores, descending, so
equal scores keep the run's order. Per query, on the first ``min(k, ranked)`` documents of
that ranking (:func:`beir_ranking`), relevant meaning label > 0:

* ``MRR@k``: 1 / rank of the first relevant document, else 0;
* ``R_cap@k``: relevant documents found / ``min(k, relevant documents)``;
* ``Hole@k``: documents that no query's judgments name (any label, 0 included) / ``k``:
  the *annotated corpus* is every document the call's qrels judge;
* ``Accuracy@k``: 1 when a relevant document is among them, else 0.

Each is summed over the run's judged queries in run order and divided by **every qrels
query** (``len(qrels)``), then rounded to 5 decimals. Where BEIR fails, heta-eval has one
rule each: a query with no relevant document scores **0 for R_cap@k** (BEIR divides by zero
there), and a run query with no qrels entry is not scored by any of the four (BEIR's
``mrr``, ``recall_cap`` and ``top_k_accuracy`` raise ``KeyError`` on it; its ``hole`` adds it
to the sum while dividing by the qrels' queries).

>>> ranking = beir_ranking({"b": 1.0, "a": 1.0, "c": 2.0})
>>> ranking
['c', 'b', 'a']
>>> labels = {"a": 1, "b": 0}
>>> [custom_value(f, ranking[:2], labels, {"a", "b"}, 2) for f in CUSTOM_FAMILIES]
[0.0, 0.0, 0.5, 0.0]
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

__all__ = [
    "BEIR_TABLE",
    "CUSTOM_ALIASES",
    "CUSTOM_FAMILIES",
    "DEFAULT_METRICS",
    "beir_ranking",
    "custom_value",
]

# BEIR's families: (the (metric, k) API's metric, BEIR's key prefix, the family). The first
# four are trec_eval's; the last four are evaluate_custom's, each its own family.
BEIR_TABLE: tuple[tuple[str, str, str], ...] = (
    ("ndcg", "NDCG", "ndcg_cut"),
    ("map", "MAP", "map_cut"),
    ("recall", "Recall", "recall"),
    ("precision", "P", "P"),
    ("mrr", "MRR", "mrr"),
    ("r_cap", "R_cap", "r_cap"),
    ("hole", "Hole", "hole"),
    ("accuracy", "Accuracy", "accuracy"),
)
#: The metrics of the default grid (``metrics=``'s default): BEIR's ``evaluate`` and MRR.
DEFAULT_METRICS: tuple[str, ...] = ("ndcg", "map", "recall", "precision", "mrr")
#: The families BEIR's ``evaluate_custom`` computes with its own ranking and denominator.
CUSTOM_FAMILIES: tuple[str, ...] = ("mrr", "r_cap", "hole", "accuracy")

#: BEIR's ``evaluate_custom`` names of each family (lower-cased; it lower-cases its argument),
#: beside the ``metric@k`` spellings: ``recall_cap``, ``acc``, ``top_k_accuracy``...
CUSTOM_ALIASES: dict[str, str] = {
    "mrr": "mrr",
    "mrr_cut": "mrr",
    "r_cap": "r_cap",
    "recall_cap": "r_cap",
    "hole": "hole",
    "accuracy": "accuracy",
    "acc": "accuracy",
    "top_k_acc": "accuracy",
    "top_k_accuracy": "accuracy",
}


def beir_ranking(docs: Mapping[str, float]) -> list[str]:
    """``evaluate_custom``'s ranking: ``sorted(items, key=score, reverse=True)``, a stable
    sort, so equal scores keep the run's (insertion) order."""
    return [doc for doc, _ in sorted(docs.items(), key=lambda item: item[1], reverse=True)]


def custom_value(
    family: str, top: Sequence[str], labels: Mapping[str, int], annotated: Collection[str], k: int
) -> float:
    """One query's value of a custom family at ``k``: ``top`` is its first ``min(k, ranked)``
    documents of :func:`beir_ranking`, ``labels`` its judgments, ``annotated`` every judged
    document of the call (Hole's)."""
    if family == "hole":
        return sum(1 for doc in top if doc not in annotated) / k
    hits = [r for r, doc in enumerate(top, 1) if labels.get(doc, 0) > 0]
    if family == "mrr":
        return 1.0 / hits[0] if hits else 0.0
    if family == "accuracy":
        return 1.0 if hits else 0.0
    relevant = sum(1 for label in labels.values() if label > 0)
    return len(hits) / min(relevant, k) if relevant else 0.0  # BEIR: ZeroDivisionError
