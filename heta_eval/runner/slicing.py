"""A run's slices (``--slice-by FIELD``): each case's slice, read from the benchmark before
any query runs (a field that cannot group the cases stops the run at once), and per mode and
evaluator the slices' means for ``summary.json`` (:mod:`heta_eval.slices`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from heta_eval.models.records import BenchmarkCase
from heta_eval.runner.results import QueryRecord
from heta_eval.slices import QUERY_LENGTH, SUBSET, canonical_field, case_slices, slice_summary

__all__ = ["case_values", "summarize_slices"]


def case_values(
    benchmark: Any, cases: Sequence[BenchmarkCase], fields: Iterable[str]
) -> dict[str, dict[str, str]]:
    """``{field: {case id: slice}}`` of ``cases`` by each field (a BEIR dataset's query
    metadata read only when a field needs it); a :class:`~heta_eval.slices.SliceError`
    naming the field and a case when one cannot group them."""
    names = list(dict.fromkeys(canonical_field(field) for field in fields))
    metadata: Mapping[str, Mapping[str, Any]] | None = None
    reader = getattr(benchmark, "query_metadata", None)
    if callable(reader) and any(name not in (QUERY_LENGTH, SUBSET) for name in names):
        metadata = reader()
    subset = getattr(benchmark, "subset", None)
    return {name: case_slices(cases, name, metadata, subset) for name in names}


def summarize_slices(
    values: Mapping[str, Mapping[str, str]],
    modes: Sequence[str],
    records: Mapping[tuple[str, str], QueryRecord],
) -> dict[str, Any]:
    """Per field, :func:`~heta_eval.slices.slice_summary` of every mode's scored values."""
    scored: dict[str, dict[str, dict[str, float]]] = {mode: {} for mode in modes}
    failed: dict[str, set[str]] = {mode: set() for mode in modes}
    for (case_id, mode), record in records.items():
        if mode not in scored:
            continue
        if not record.ok:
            failed[mode].add(case_id)
            continue
        for name, score in record.scores.items():
            value = score.value
            if score.skipped or isinstance(value, str) or value is None:
                continue
            scored[mode].setdefault(name, {})[case_id] = float(value)
    return {field: slice_summary(cases, scored, failed) for field, cases in values.items()}
