"""BEIR's averaging rules, in one place (``../shared/reference/beir-semantics.md`` §1, §3).

Every retrieval number of the project is averaged here, whether it comes from a run file, a
run dict or collected responses:

* the **BEIR** mean is over the queries that are in the run *and* have non-empty qrels
  (``EvaluateRetrieval.evaluate``); BEIR's ``MRR@k`` (``evaluate_custom(..., "mrr")``)
  divides by every qrels query instead;
* the **strict** mean is trec_eval ``-c``'s: over every judged query, a query missing from
  the run scored on an empty ranking (0 for nDCG, AP, recall, P, RR, ...);
* sums run in run order (strict: qrels order) in a plain loop, as BEIR's do, and the
  reported number is ``round(x, 5)``; the unrounded one is kept too;
* trec_eval's counts (``num_q``, ``num_rel``, ...) are summed, not averaged, and its ``gm_*``
  measures are geometric means (``exp`` of the mean of the per-query logs), as trec_eval
  reports them.

>>> value = summarise("NDCG@10", Measure.parse("NDCG@10"), [1.0, 0.5], [1.0, 0.5, 0.0], 2)
>>> value.beir, value.strict, value.queries, value.judged_queries
(0.75, 0.5, 2, 3)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from heta_eval.measures.measure import Measure

__all__ = ["AggregateValue", "beir_denominator", "round5", "summarise"]


@dataclass(frozen=True)
class AggregateValue:
    """A metric aggregated over queries, BEIR-style and strict (``trec_eval -c``)."""

    name: str
    beir: float | None
    beir_unrounded: float | None
    strict: float | None
    strict_unrounded: float | None
    queries: int  # queries in the BEIR mean
    judged_queries: int  # queries in the strict mean

    @property
    def differs(self) -> bool:
        """True when the BEIR and strict numbers disagree after rounding."""
        return self.beir != self.strict


def round5(value: float | None) -> float | None:
    """BEIR's ``round(x, 5)``; None stays None."""
    return None if value is None else round(value, 5)


def beir_denominator(measure: Measure, evaluated: int, qrels_queries: int) -> int:
    """What BEIR divides a measure's sum by: every qrels query for its MRR, else the
    evaluated queries."""
    return qrels_queries if measure.rule == "beir_mrr" else evaluated


def _total(values: Sequence[float]) -> float:
    total = 0.0
    for value in values:  # a plain loop in order: BEIR's summation, not sum()'s
        total += value
    return total


def _combine(measure: Measure, total: float, n: int) -> float | None:
    if measure.summary == "sum":
        return total
    if not n:
        return None
    return math.exp(total / n) if measure.summary == "geometric" else total / n


def summarise(
    name: str,
    measure: Measure,
    beir_values: Sequence[float],
    strict_values: Sequence[float],
    beir_divisor: int,
) -> AggregateValue:
    """BEIR and strict aggregates of one measure.

    ``beir_values``: the evaluated queries' values in run order; ``beir_divisor``: from
    :func:`beir_denominator`; ``strict_values``: one value per judged query in qrels order
    (a query missing from the run has its empty-ranking value).
    """
    beir = _combine(measure, _total(beir_values), beir_divisor)
    strict = _combine(measure, _total(strict_values), len(strict_values))
    return AggregateValue(
        name=name,
        beir=round5(beir),
        beir_unrounded=beir,
        strict=round5(strict),
        strict_unrounded=strict,
        queries=len(beir_values),
        judged_queries=len(strict_values),
    )
