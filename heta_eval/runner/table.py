"""The results table: ``table.md`` in a results folder, and what ``heta-eval run`` prints.

It says what was run (the dataset, its split and folder; the system; the dense encoder's
precision, device and encoding route with its reason), the retrieval metrics as a grid (mode
and metric × k; BEIR values, ``*`` when partial), other evaluators one row each, the
published reference numbers beside ours (where the data is the registered dataset and the
system is the reference knowledge base), per-mode counts, and every warning of the run. Its
tables are :class:`~heta_eval.io.tables.Table`'s; every other text it did not write (a
folder, a URL, a failure reason, a warning) stays on its line
(:func:`~heta_eval.io.tables.markdown_text`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heta_eval.data.references import check, reference_systems
from heta_eval.io.tables import Table
from heta_eval.io.tables import markdown_text as _md
from heta_eval.models.cells import EMPTY_CELL, counts_cell, value_cell
from heta_eval.slices import slice_table

if TYPE_CHECKING:
    from heta_eval.models.report import MetricSummary
    from heta_eval.runner.results import RunSummary

__all__ = ["results_table", "sample_words"]


def sample_words(sample: dict[str, Any]) -> str:
    """What a sample is, in words (``summary.json``'s ``data.sample``).

    >>> sample_words({"of": "scifact", "queries": 100, "of_queries": 300, "documents": 1728,
    ...               "of_documents": 5183, "seed": 0})
    'a sample of scifact: 100 of 300 queries, 1,728 of 5,183 documents, seed 0'
    """
    return (
        f"a sample of {sample.get('of')}: {sample.get('queries', 0):,} of "
        f"{sample.get('of_queries', 0):,} queries, {sample.get('documents', 0):,} of "
        f"{sample.get('of_documents', 0):,} documents, seed {sample.get('seed')}"
    )


def results_table(summary: RunSummary) -> str:
    """The whole table, in markdown."""
    blocks = [_about(summary), *_metric_blocks(summary), *_slice_blocks(summary)]
    references = _references(summary)
    if references:
        blocks.append(references)
    blocks.append(_notes(summary))
    if summary.warnings:
        blocks.append("\n".join(f"warning: {_md(line)}" for line in summary.warnings))
    return "\n\n".join(block for block in blocks if block)


def _about(summary: RunSummary) -> str:
    """What was run: data, system, dense encoder."""
    lines = []
    data = summary.data
    if data:
        kind = "" if data.get("registered") else ", a dataset of your own"
        if data.get("differences"):
            kind = f", NOT the registered {data['name']}"
        if data.get("sample"):
            kind = f", {sample_words(data['sample'])}"
        lines.append(
            _md(f"- dataset: {data['name']}, {data['split']} split ({data['folder']}{kind})")
        )
    system = summary.system
    if system.get("kind") == "service":
        headers = system.get("headers")
        sent = f" (headers sent: {', '.join(headers)})" if headers else ""
        lines.append(_md(f"- system: the service at {system.get('url')}{sent}"))
    elif system.get("kind") == "recipe" and summary.recipe:
        lines.append(_md(f"- system: recipe {summary.recipe.get('name', '?')}"))
    elif system.get("kind") == "object" and summary.build.get("wraps"):
        lines.append(_md(f"- system: {_wrapped(summary.build['wraps'])}"))
    build = summary.build
    if build.get("precision"):
        dense = (summary.recipe or {}).get("dense") or {}
        asked = dense.get("precision")
        chosen = f" (precision {asked})" if asked and asked != build["precision"] else ""
        lines.append(
            _md(
                f"- dense encoder: {dense.get('model', '?')}, {build['precision']} on "
                f"{build.get('device', '?')}{chosen}"
            )
        )
    if build.get("route"):
        why = f": {build['route_reason']}" if build.get("route_reason") else ""
        lines.append(_md(f"- encoding route: {build['route']}{why}"))
    return "\n".join(lines)


def _wrapped(wraps: Any) -> str:
    """What an adapter or a function wraps, in words (``build.wraps``).

    >>> _wrapped({"library": "langchain-core", "version": "1.8.3", "class": "a.Store"})
    'a.Store (langchain-core 1.8.3)'
    >>> _wrapped({"dense": "m.search"}), _wrapped("m.search")
    ('the functions dense: m.search', 'the function m.search')
    """
    if isinstance(wraps, dict) and "class" in wraps:
        version = f" {wraps['version']}" if wraps.get("version") else ""
        return f"{wraps['class']} ({wraps.get('library', '?')}{version})"
    if isinstance(wraps, dict):
        return "the functions " + ", ".join(f"{mode}: {name}" for mode, name in wraps.items())
    return f"the function {wraps}"


def _metric_blocks(summary: RunSummary) -> list[str]:
    modes = list(summary.modes)
    grid: dict[tuple[str, str], dict[int, MetricSummary]] = {}
    others: list[str] = []
    for name in summary.evaluators:
        metric, _, k = name.partition("@")
        first = summary.modes[modes[0]].metrics.get(name)
        if first is not None and first.kind == "retrieval" and k.isdigit():
            for mode in modes:
                found = summary.modes[mode].metrics.get(name)
                if found is not None:
                    grid.setdefault((mode, metric), {})[int(k)] = found
        else:
            others.append(name)
    blocks = []
    if grid:
        blocks.append(_grid(summary, grid, modes))
    if others:
        rows = [
            [
                name,
                *(
                    _cell(
                        summary.modes[m].metrics.get(name), answered=summary.modes[m].answered_only
                    )
                    for m in modes
                ),
            ]
            for name in others
        ]
        table = Table(["evaluator", *modes], rows, align="l" + "r" * len(modes))
        blocks.append(table.markdown().rstrip("\n"))
    return blocks


def _grid(
    summary: RunSummary, grid: dict[tuple[str, str], dict[int, MetricSummary]], modes: list[str]
) -> str:
    ks = sorted({k for row in grid.values() for k in row})
    rows = []
    # Grouped by mode, metrics in the evaluators' order.
    for (mode, metric), row in sorted(grid.items(), key=lambda item: modes.index(item[0][0])):
        only = summary.modes[mode].answered_only
        rows.append([mode, metric, *(_cell(row.get(k), strict=False, answered=only) for k in ks)])
    header = ["mode", "metric", *(f"@{k}" for k in ks)]
    lines = [Table(header, rows, align="ll" + "r" * len(ks)).markdown().rstrip("\n")]
    differs = [
        f"{s.name} ({mode}) strict {value_cell(s.strict)}"
        for (mode, _), row in grid.items()
        for s in row.values()
        if s.strict is not None and s.strict != s.beir
    ]
    if differs:
        lines.append("")
        lines.append(_md("Strict (trec_eval -c) differs: " + "; ".join(differs[:10])))
    return "\n".join(lines)


def _slice_blocks(summary: RunSummary) -> list[str]:
    """Per slice field, its means per slice (``--slice-by``)."""
    blocks = []
    for field, found in summary.slices.items():
        table = slice_table(field, found).markdown().rstrip("\n")
        blocks.append(_md(f"By {field} (mean per slice; * where queries failed):") + "\n\n" + table)
    return blocks


def _reference_systems(summary: RunSummary, mode: str) -> list[str]:
    """The published systems a mode of the reference knowledge base reproduces."""
    recipe = summary.recipe or {}
    if summary.system.get("kind") != "recipe" or (recipe.get("chunking") or {}).get("size"):
        return []  # a service, or chunked documents: not the published protocol
    if mode == "keyword_search":
        fields = (recipe.get("bm25") or {}).get("fields", "flat")
        return ["bm25-flat" if fields == "flat" else "bm25-multifield"]
    if mode == "vector_search" and (recipe.get("dense") or {}).get("model") == "all-MiniLM-L6-v2":
        return ["all-MiniLM-L6-v2"]
    return []


def _references(summary: RunSummary) -> str:
    """Published numbers beside ours, or why there are none for this data."""
    data = summary.data
    if not data:
        return ""
    if data.get("sample"):
        return (
            f"No reference check: {sample_words(data['sample'])}; its scores are not "
            f"{data['sample'].get('of')}'s (compare it with runs of the same sample only)."
        )
    if data.get("differences"):
        return (
            f"No reference check: this is not the registered {data['name']} "
            f"({'; '.join(data['differences'])})."
        )
    if not data.get("registered"):
        return (
            f"No reference check: {data.get('name')} is a dataset of your own; published "
            "reference scores exist only for the registered datasets."
        )
    rows: list[tuple[str, Any]] = []
    for mode, mode_summary in summary.modes.items():
        observed = {
            data["name"]: {
                name: {"value": m.value, "beir": m.beir, "strict": m.strict}
                for name, m in mode_summary.metrics.items()
                if m.kind == "retrieval"
            }
        }
        for system in _reference_systems(summary, mode):
            rows += [(mode, found) for found in check(observed, system)]
    if not rows:
        return ""
    labels = reference_systems()
    table = Table(
        ["mode", "metric", "ours", "reference", "Δ", "status"],
        [
            [
                mode,
                r.metric,
                f"{r.observed:.4f} ({r.aggregate})",
                f"{r.expected:.4f} {labels.get(r.system, r.system)}",
                f"{round(r.delta, 4) + 0.0:+.4f}",
                r.status,
            ]
            for mode, r in rows
        ],
        align="llrrrl",
    )
    lines = ["Published reference numbers beside ours (`heta-eval check`):", "", table.markdown()]
    sources = dict.fromkeys((labels.get(r.system, r.system), r.source) for _, r in rows)
    lines += [_md(f"- {label}: {source}") for label, source in sources]
    return "\n".join(lines)


def _notes(summary: RunSummary) -> str:
    notes = []
    for mode, mode_summary in summary.modes.items():
        timing = mode_summary.timings
        notes.append(
            f"- {_md(mode)}: {mode_summary.answered}/{mode_summary.cases} answered, "
            f"{mode_summary.failed_queries} failed queries, "
            f"{mode_summary.evaluator_failures} evaluator failures, "
            f"p50 latency {_ms(timing.get('latency_p50_ms'))}"
            + (" — PARTIAL" if mode_summary.partial else "")
        )
        for reason, count in list(mode_summary.failure_reasons.items())[:3]:
            notes.append(f"  - {count} × {_md(reason)}")
    if any(m.failed_queries for m in summary.modes.values()):
        notes.append(
            "- *: partial. Failed queries count as 0 in the headline (strict aggregate); "
            "the mean over answered queries follows in parentheses"
        )
    return "\n".join(notes)


def _cell(
    summary: MetricSummary | None,
    *,
    strict: bool = True,
    answered: dict[str, float | None] | None = None,
) -> str:
    if summary is None or summary.kind == "empty":
        return EMPTY_CELL
    if summary.kind == "categorical":
        return counts_cell(summary.counts)
    text = value_cell(summary.value)
    if answered and summary.name in answered:
        # Failed queries: the headline counts them as 0; the answered-only mean beside it.
        if summary.partial:
            text += "*"
        return text + f" ({value_cell(answered[summary.name])})"
    if strict and summary.kind == "retrieval" and summary.strict != summary.beir:
        text += f" (strict {value_cell(summary.strict)})" if summary.strict is not None else ""
    if summary.partial:
        text += "*"
    return text


def _ms(value: float | None) -> str:
    return EMPTY_CELL if value is None else f"{value:.1f} ms"
