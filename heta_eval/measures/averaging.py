"""Averaging rules, in one place: every mean of the project is taken by :func:`combine`.

Retrieval numbers are averaged here whether they come from a run file, a run dict or
collected responses; ``heta-eval trec_eval``'s ``all`` lines and the runner's headline
(a failed query counts 0) use :func:`combine` too:

* the **BEIR** mean is over the queries that are in the run *and* have non-empty qrels
  (``EvaluateRetrieval.evaluate``); BEIR's ``evaluate_custom`` families (``MRR@k``,
  ``R_cap@k``, ``Hole@k``, ``Accuracy@k``) divide by every qrels query instead;
* the **strict** mean is trec_eval ``-c``'s: over every judged query, a query missing from
  the run scored on an empty ranking (0 for nDCG, AP, recall, P, RR, ...);
* sums run in run order (strict: qrels order) in a plain loop, as BEIR's do, and the
  reported number is ``round(x, 5)``; the unrounded one is kept too;
* trec_eval's counts (``num_q``, ``num_rel``, ...) are summed, not averaged, and its ``gm_*``
  measures are geometric means (``exp`` of the mean of the per-query logs), as trec_eval
  reports them.

>>> value = summarise("NDCG@10", Measure.parse("NDCG@10"), [1.0, 0.5], 2, [1.0, 0.5], [0.0])
>>> value.beir, value.strict, value.queries, value.judged_queries
(0.75, 0.5, 2, 3)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from heta_eval.measures.beir import CUSTOM_FAMILIES
from heta_eval.measures.measure import Measure, Summary

__all__ = [
    "AggregateValue",
    "beir_denominator",
    "combine",
    "empty_ranking_values",
    "missing_values",
    "round5",
    "summarise",
]


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
    """What BEIR divides a measure's sum by: every qrels query for its ``evaluate_custom``
    families (MRR, R_cap, Hole, Accuracy), else the evaluated queries."""
    return qrels_queries if measure.family in CUSTOM_FAMILIES else evaluated


def _total(values: Sequence[float]) -> float:
    total = 0.0
    for value in values:  # a plain loop in order: BEIR's summation, not sum()'s
        total += value
    return total


def combine(
    summary: Summary, values: Sequence[float], missing: Sequence[float] = ()
) -> float | None:
    """One number from per-query values (summed in order) and the values of the queries
    counted without a ranking (``missing``: trec_eval ``-c``'s missing queries, BEIR MRR's
    unranked qrels queries, the runner's failed queries), as trec_eval's ``meas_avg.c``
    adds them: ``len(missing) * value`` when they are all equal (``-c``'s
    ``gm_map`` floor). ``"sum"``: the total; ``"mean"``: total / count; ``"geometric"``:
    ``exp`` of the mean of the logs. None when there is nothing to average."""
    total = _total(values)
    if missing:
        same = all(value == missing[0] for value in missing)
        total += len(missing) * missing[0] if same else _total(missing)
    count = len(values) + len(missing)
    if summary == "sum":
        return total
    if not count:
        return None
    return math.exp(total / count) if summary == "geometric" else total / count


def _relevant(labels: Mapping[str, int]) -> int:
    return sum(1 for label in labels.values() if label > 0)


def missing_values(
    measure: Measure, qrels: Mapping[str, Mapping[str, int]], qids: Sequence[str]
) -> list[float]:
    """:meth:`~heta_eval.measures.measure.Measure.missing_value` of each of ``qids``."""
    return [measure.missing_value(_relevant(qrels[qid])) for qid in qids]


def empty_ranking_values(
    qrels: Mapping[str, Mapping[str, int]], qids: Sequence[str], measures: Sequence[Measure]
) -> dict[str, dict[Measure, float]]:
    """``{qid: {measure: value}}`` for judged queries with no ranking, scored as trec_eval
    ``-c`` scores a missing query (closed forms: pytrec_eval crashes on a run whose every
    query is empty)."""
    return {qid: {m: m.missing_value(_relevant(qrels[qid])) for m in measures} for qid in qids}


def summarise(
    name: str,
    measure: Measure,
    beir_values: Sequence[float],
    beir_divisor: int,
    strict_values: Sequence[float],
    strict_missing: Sequence[float],
) -> AggregateValue:
    """BEIR and strict aggregates of one measure.

    ``beir_values``: the evaluated queries' values in run order, averaged over
    ``beir_divisor`` (:func:`beir_denominator`; the rest count 0). ``strict_values``: the
    judged queries the run ranks, in qrels order; ``strict_missing``: the
    :meth:`~heta_eval.measures.measure.Measure.missing_value` of each judged query it lacks.
    """
    beir_missing = [0.0] * (beir_divisor - len(beir_values))
    beir = combine(measure.summary, beir_values, beir_missing)
    strict = combine(measure.summary, strict_values, strict_missing)
    return AggregateValue(
        name=name,
        beir=round5(beir),
        beir_unrounded=beir,
        strict=round5(strict),
        strict_unrounded=strict,
        queries=len(beir_values),
        judged_queries=len(strict_values) + len(strict_missing),
    )
