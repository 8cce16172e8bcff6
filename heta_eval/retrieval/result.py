"""The result of scoring a run: ``RunEvaluation`` (per-query values and BEIR / strict
aggregates, keyed by measure name) and how it is assembled from per-query values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from heta_eval.extras import require
from heta_eval.io.tables import Table
from heta_eval.measures.averaging import (
    AggregateValue,
    beir_denominator,
    missing_values,
    summarise,
)
from heta_eval.measures.beir import CUSTOM_FAMILIES
from heta_eval.measures.measure import Measure, legacy_measure, measure_key
from heta_eval.models.cells import value_cell

__all__ = ["RunEvaluation", "assemble"]


@dataclass
class RunEvaluation:
    """Per-query values and BEIR / strict aggregates of one document-level run, keyed by
    measure name (BEIR's keys for the default grid, ``str(Measure)`` with ``measures=``)."""

    k_values: tuple[int, ...]
    metrics: tuple[str, ...]
    per_query: dict[str, dict[str, float]]
    aggregates: dict[str, AggregateValue]
    counts: dict[str, int] = field(default_factory=dict)
    measures: dict[str, Measure] = field(default_factory=dict)

    def beir_dict(self) -> dict[str, dict[str, float | None]]:
        """Rounded BEIR numbers keyed like BEIR: ``{"ndcg": {"NDCG@10": ...}, "map": ...}``."""
        return self._as_dict("beir")

    def strict_dict(self) -> dict[str, dict[str, float | None]]:
        """Rounded strict (``trec_eval -c``) numbers, same shape as :meth:`beir_dict`."""
        return self._as_dict("strict")

    def _as_dict(self, attribute: str) -> dict[str, dict[str, float | None]]:
        out: dict[str, dict[str, float | None]] = {}
        for name, measure in self._named().items():
            legacy = measure.legacy
            if legacy is not None:
                key = measure_key(*legacy)
                out.setdefault(legacy[0], {})[key] = getattr(self.aggregates[name], attribute)
        return out

    def _named(self) -> dict[str, Measure]:
        if self.measures:
            return self.measures
        return {
            measure_key(m, k): legacy_measure(m, k) for m in self.metrics for k in self.k_values
        }

    def values(self, attribute: str = "beir") -> dict[str, float | None]:
        """``{measure name: rounded BEIR (or ``"strict"``) aggregate}``."""
        return {name: getattr(value, attribute) for name, value in self.aggregates.items()}

    def per_query_frame(self) -> Any:
        """Per-query values as a pandas DataFrame: one row per query, one column per measure.

        >>> from heta_eval.evaluation import evaluate_run
        >>> run = evaluate_run({"q": {"d": 1}}, {"q": {"d": 1.0}}, measures=["nDCG@10", "Rprec"])
        >>> run.per_query_frame()
           nDCG@10  Rprec
        q      1.0    1.0
        """
        pd = require("pandas")  # the 'compare' extra; its absence is one line naming it

        columns = list(self.aggregates)
        frame = pd.DataFrame.from_dict(self.per_query, orient="index", columns=columns)
        frame.index.name = None
        return frame

    def table(self) -> str:
        """A markdown table with one row per measure and BEIR / strict columns."""
        rows = [
            [aggregate.name, value_cell(aggregate.beir), value_cell(aggregate.strict)]
            for aggregate in self.aggregates.values()
        ]
        header = ["measure", "BEIR", "strict (trec_eval -c)"]
        return Table(header, rows, align="lrr").markdown().rstrip("\n")


def assemble(
    qrels: Mapping[str, Mapping[str, int]],
    run_qids: Sequence[str],
    per_query: dict[str, dict[str, float]],
    ks: tuple[int, ...],
    chosen: tuple[str, ...],
    named: dict[str, Measure],
    self_hits: int,
) -> RunEvaluation:
    """BEIR and strict aggregates (:mod:`~heta_eval.measures.averaging`) of per-query values."""
    in_run = set(run_qids)
    judged = [qid for qid, docs in qrels.items() if docs]
    trec_evaluated = [qid for qid in run_qids if qrels.get(qid)]  # pytrec_eval's output order
    custom_evaluated = [qid for qid in run_qids if qid in qrels]  # BEIR's evaluate_custom
    missing = [qid for qid in judged if qid not in in_run]
    ranked = [qid for qid in judged if qid in in_run]
    aggregates: dict[str, AggregateValue] = {}
    for name, measure in named.items():
        evaluated = custom_evaluated if measure.family in CUSTOM_FAMILIES else trec_evaluated
        beir_values = [per_query[qid][name] for qid in evaluated]
        divisor = beir_denominator(measure, len(evaluated), len(qrels))
        strict_values = [per_query[qid][name] for qid in ranked]
        aggregates[name] = summarise(
            name,
            measure,
            beir_values,
            divisor,
            strict_values,
            missing_values(measure, qrels, missing),
        )
    counts = {
        "judged_queries": len(judged),
        "evaluated_queries": len(trec_evaluated),
        "missing_queries": len(missing),
        "unjudged_queries": sum(1 for qid in run_qids if not qrels.get(qid)),
        "self_hits_removed": self_hits,
    }
    return RunEvaluation(ks, chosen, per_query, aggregates, counts, dict(named))
