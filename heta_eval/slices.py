"""Slices: a run's per-query values grouped by a field of each case, and each group's mean.

A slice field is one of

* ``query_length``: the query's length in words (split on whitespace), in buckets
  ``1-3 words``, ``4-7 words``, ``8-15 words``, ``16+ words``;
* ``subset``: the sub-benchmark a case belongs to (CQADupStack's forum; ``forum`` is the
  same field), for a folder of sub-benchmarks' results folders;
* any other name: that field of the case's ``metadata`` (``category``, or a dotted path
  ``source.kind`` into nested objects), else of the query's ``metadata`` in a BEIR
  ``queries.jsonl``. A case without it is in the slice ``(none)``; a value that is a list
  or an object is refused (it names no one group).

Each slice's mean is over the cases of the slice that were scored (a failed query is
counted apart, as ``failed``); the mean of the slices' means (``macro``) weighs every slice
alike: for CQADupStack's forums that is the number BEIR reports.

>>> length_bucket("what causes tides"), length_bucket("")
('1-3 words', '0 words')
>>> means = slice_means({"q1": 1.0, "q2": 0.0, "q3": 0.5}, {"q1": "a", "q2": "a", "q3": "b"})
>>> [(m.value, m.cases, m.mean) for m in means], macro(means)
([('a', 2, 0.5), ('b', 1, 0.5)], 0.5)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from heta_eval.io.tables import Table

__all__ = [
    "MISSING",
    "QUERY_LENGTH",
    "SUBSET",
    "SliceError",
    "SliceMean",
    "canonical_field",
    "case_slices",
    "field_value",
    "length_bucket",
    "macro",
    "ordered_values",
    "shown_metrics",
    "slice_means",
    "slice_summary",
    "slice_table",
]

QUERY_LENGTH = "query_length"
SUBSET = "subset"
#: Other names of the built-in fields.
ALIASES = {"forum": SUBSET}
#: The slice of a case that lacks the field.
MISSING = "(none)"
#: Query length buckets, in words: (first, last), the last open.
_LENGTHS = ((1, 3), (4, 7), (8, 15), (16, None))


class SliceError(ValueError):
    """A slice field that cannot group the cases; one line naming the field and a case."""


def canonical_field(field: str) -> str:
    """The field's name, its aliases resolved (``forum`` is ``subset``)."""
    name = field.strip()
    if not name:
        raise SliceError("a slice field needs a name (query_length, subset, or a metadata field)")
    return ALIASES.get(name, name)


def length_bucket(query: str) -> str:
    """The query length bucket of ``query`` (words split on whitespace)."""
    words = len(query.split())
    if words == 0:
        return "0 words"
    for first, last in _LENGTHS:
        if last is None or words <= last:
            return f"{first}+ words" if last is None else f"{first}-{last} words"
    raise AssertionError("unreachable: the last bucket is open")


def _lookup(metadata: Mapping[str, Any] | None, field: str) -> tuple[bool, Any]:
    """``(found, value)`` of ``field`` in ``metadata``: the key itself, else a dotted path."""
    if not metadata:
        return False, None
    if field in metadata:
        return True, metadata[field]
    value: Any = metadata
    for part in field.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


def field_value(
    case_id: str,
    query: str,
    field: str,
    metadata: Mapping[str, Any] | None = None,
    query_metadata: Mapping[str, Any] | None = None,
    subset: str | None = None,
) -> str:
    """The slice of one case: its text for the field, :data:`MISSING` where it lacks it.

    >>> field_value("q1", "a b", "category", {"category": "howto"})
    'howto'
    >>> field_value("q1", "a b", "source.kind", {"source": {"kind": 3}})
    '3'
    """
    name = canonical_field(field)
    if name == QUERY_LENGTH:
        return length_bucket(query)
    if name == SUBSET and subset is not None:
        return subset
    found, value = _lookup(metadata, name)
    if not found:
        found, value = _lookup(query_metadata, name)
    if not found or value is None:
        return MISSING
    if isinstance(value, (list, tuple, dict)):
        raise SliceError(
            f"case {case_id!r}: its {name} is a {type(value).__name__}, not one value a slice "
            "can group by (give a field whose value is a word, a number or true/false)"
        )
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def case_slices(
    cases: Iterable[Any],
    field: str,
    query_metadata: Mapping[str, Mapping[str, Any]] | None = None,
    subset: str | None = None,
) -> dict[str, str]:
    """``{case id: slice}`` of ``cases`` (``BenchmarkCase``: id, query, metadata) by
    ``field``; ``query_metadata`` is a BEIR dataset's ``{query id: metadata}``."""
    found = query_metadata or {}
    return {
        case.id: field_value(case.id, case.query, field, case.metadata, found.get(case.id), subset)
        for case in cases
    }


@dataclass(frozen=True)
class SliceMean:
    """One slice: its cases, how many were scored, and their mean (None: none scored)."""

    value: str
    cases: int
    scored: int
    mean: float | None


def ordered_values(values: Iterable[str]) -> list[str]:
    """Slice values in reading order: query length buckets short to long, numbers by value,
    other words alphabetically, :data:`MISSING` last."""

    def key(value: str) -> tuple[int, float, str]:
        if value == MISSING:
            return (3, 0.0, value)
        head = value.split("-")[0].split("+")[0].split(" ")[0]
        try:
            return (0 if value.endswith("words") else 1, float(head), value)
        except ValueError:
            return (2, 0.0, value)

    return sorted(set(values), key=key)


def slice_means(values: Mapping[str, float], slices: Mapping[str, str]) -> list[SliceMean]:
    """Each slice's cases and the mean of its scored values (``values``: ``{case id: value}``
    of the scored cases; ``slices``: ``{case id: slice}`` of every case)."""
    members: dict[str, list[str]] = {}
    for case_id, value in slices.items():
        members.setdefault(value, []).append(case_id)
    out = []
    for value in ordered_values(members):
        scored = [values[c] for c in members[value] if c in values]
        mean = sum(scored) / len(scored) if scored else None
        out.append(SliceMean(value, len(members[value]), len(scored), mean))
    return out


def macro(means: Sequence[SliceMean]) -> float | None:
    """The unweighted mean of the slices' means (those with one): every slice weighs alike,
    as BEIR averages CQADupStack's forums."""
    found = [m.mean for m in means if m.mean is not None]
    return sum(found) / len(found) if found else None


def slice_summary(
    slices: Mapping[str, str],
    modes: Mapping[str, Mapping[str, Mapping[str, float]]],
    failed: Mapping[str, set[str]] | None = None,
) -> dict[str, Any]:
    """What ``summary.json`` keeps of one field: each case's slice, and per mode and metric
    each slice's cases, scored cases, failed queries and mean, with the macro mean.

    ``modes``: ``{mode: {metric: {case id: value}}}``; ``failed``: ``{mode: case ids whose
    query failed}``.

    >>> out = slice_summary({"q1": "a", "q2": "b"}, {"bm25": {"ndcg@10": {"q1": 1.0}}},
    ...                     {"bm25": {"q2"}})
    >>> out["modes"]["bm25"]["ndcg@10"]["slices"]["b"]
    {'cases': 1, 'scored': 0, 'failed': 1, 'mean': None}
    """
    summary: dict[str, Any] = {"values": ordered_values(slices.values()), "cases": dict(slices)}
    summary["modes"] = {}
    for mode, metrics in modes.items():
        lost = (failed or {}).get(mode, set())
        lost_in = Counter(slices[case_id] for case_id in lost if case_id in slices)
        per_metric = {}
        for metric, values in metrics.items():
            means = slice_means(values, slices)
            per_metric[metric] = {
                "slices": {
                    m.value: {
                        "cases": m.cases,
                        "scored": m.scored,
                        "failed": lost_in[m.value],
                        "mean": m.mean,
                    }
                    for m in means
                },
                "macro": macro(means),
            }
        summary["modes"][mode] = per_metric
    return summary


#: The metrics a slice table shows, where the run has them (``heta-eval compare``'s defaults).
SHOWN = ("ndcg@10", "recall@100")


def shown_metrics(field_summary: Mapping[str, Any]) -> list[str]:
    """The metrics a slice table shows: :data:`SHOWN` where scored, else the first one."""
    metrics = list(dict.fromkeys(m for per in field_summary["modes"].values() for m in per))
    return [m for m in SHOWN if m in metrics] or metrics[:1]


def slice_table(field: str, field_summary: Mapping[str, Any]) -> Table:
    """One row per slice (its cases; per mode and shown metric its mean, ``*`` where some
    of its queries failed), then the mean of the slices' means.

    >>> summary = slice_summary({"q1": "a", "q2": "b"}, {"bm25": {"ndcg@10": {"q1": 1.0,
    ...                                                                    "q2": 0.5}}})
    >>> print(slice_table("kind", summary).markdown(), end="")
    | kind | cases | bm25 ndcg@10 |
    |---|---:|---:|
    | a | 1 | 1.00000 |
    | b | 1 | 0.50000 |
    | mean of 2 slices | 2 | 0.75000 |
    """
    metrics = shown_metrics(field_summary)
    modes = list(field_summary["modes"])
    columns = [(mode, metric) for mode in modes for metric in metrics]
    header = [field, "cases", *(f"{mode} {metric}" for mode, metric in columns)]
    counts: dict[str, int] = {}
    for value in field_summary["cases"].values():
        counts[value] = counts.get(value, 0) + 1
    rows = []
    for value in field_summary["values"]:
        cells = []
        for mode, metric in columns:
            entry = field_summary["modes"][mode].get(metric, {}).get("slices", {}).get(value)
            cells.append(_mean_cell(entry))
        rows.append([value, str(counts.get(value, 0)), *cells])
    macro_cells = [
        _number(field_summary["modes"][mode].get(metric, {}).get("macro"))
        for mode, metric in columns
    ]
    total = str(sum(counts.values()))
    rows.append([f"mean of {len(field_summary['values'])} slices", total, *macro_cells])
    return Table(header, rows, align="lr" + "r" * len(columns))


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.5f}"


def _mean_cell(entry: Mapping[str, Any] | None) -> str:
    if not entry:
        return "–"
    return _number(entry.get("mean")) + ("*" if entry.get("failed") else "")
