"""Paired tests per slice: every system's queries grouped by a slice (a case or query metadata
field, the query's length, CQADupStack's forum: :mod:`heta_eval.slices`) and each group
compared on its own, with Holm's correction within the slice; then the mean of the slices'
means per system (for CQADupStack's forums: BEIR's number).

>>> systems = {"a": {"q1": {"ndcg@10": 0.2}, "q2": {"ndcg@10": 0.6}, "q3": {"ndcg@10": 0.4}},
...            "b": {"q1": {"ndcg@10": 0.3}, "q2": {"ndcg@10": 0.6}, "q3": {"ndcg@10": 0.1}}}
>>> found = compare_by_slice(systems, {"q1": "x", "q2": "x", "q3": "y"}, n_resamples=100)
>>> [(value, round(c.rows[0].diff, 3)) for value, c in found.comparisons.items()]
[('x', 0.05), ('y', -0.3)]
>>> row = found.macro[0]
>>> row.system, round(row.baseline_mean, 3), round(row.system_mean, 3)
('b', 0.4, 0.275)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from heta_eval.compare.compare import Comparison, SystemsInput, compare
from heta_eval.compare.gate import compare_against
from heta_eval.slices import ordered_values

__all__ = ["MacroRow", "SliceComparison", "compare_by_slice"]


@dataclass(frozen=True)
class MacroRow:
    """One system against its baseline on one metric: each one's mean of the slices' means
    (over the slices where both were compared)."""

    metric: str
    system: str
    baseline: str
    slices: int
    baseline_mean: float
    system_mean: float

    @property
    def diff(self) -> float:
        return self.system_mean - self.baseline_mean


@dataclass
class SliceComparison:
    """Per slice value its :class:`~heta_eval.compare.Comparison` (slices in reading order),
    the slices that could not be compared and why, and the macro rows."""

    field: str
    comparisons: dict[str, Comparison]
    skipped: dict[str, str] = field(default_factory=dict)
    macro: list[MacroRow] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "slices": {value: c.to_dict() for value, c in self.comparisons.items()},
            "skipped": self.skipped,
            "macro": [{**vars(row), "diff": row.diff} for row in self.macro],
        }


def compare_by_slice(
    systems: SystemsInput,
    slices: Mapping[str, str],
    *,
    field: str = "slice",
    baseline: str | None = None,
    baselines: Mapping[str, str] | None = None,
    metrics: Sequence[str] | None = None,
    **settings: Any,
) -> SliceComparison:
    """Compare the systems within each slice (``slices``: ``{query id: slice}``): as
    :func:`~heta_eval.compare.compare` with ``baseline``, or each system against its own
    (``baselines``, as a gate pairs them: :func:`~heta_eval.compare.gate.compare_against`).
    A query no slice names is left out; a slice where a pair shares no query is skipped,
    with the reason."""
    members: dict[str, set[str]] = {}
    for qid, value in slices.items():
        members.setdefault(value, set()).add(qid)
    result = SliceComparison(field, {})
    for value in ordered_values(members):
        chosen = members[value]
        part = {
            name: {qid: values for qid, values in per_query.items() if qid in chosen}
            for name, per_query in systems.items()
        }
        try:
            if baselines:
                result.comparisons[value] = compare_against(part, baselines, metrics, **settings)
            else:
                result.comparisons[value] = compare(part, baseline, metrics, **settings)
        except ValueError as error:
            result.skipped[value] = str(error)
    result.macro = _macro(list(result.comparisons.values()))
    return result


def _macro(comparisons: Sequence[Comparison]) -> list[MacroRow]:
    means: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    for comparison in comparisons:
        for row in comparison.rows:
            key = (row.metric, row.system, row.baseline)
            means.setdefault(key, []).append((row.mean_baseline, row.mean_system))
    rows = []
    for (metric, system, baseline), pairs in means.items():
        base = sum(a for a, _ in pairs) / len(pairs)
        rows.append(
            MacroRow(
                metric, system, baseline, len(pairs), base, sum(b for _, b in pairs) / len(pairs)
            )
        )
    return rows
