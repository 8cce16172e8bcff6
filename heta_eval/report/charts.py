"""The report's charts and paired tests: each metric's distribution per system, and for
pairs of systems the per-query differences with win/tie/loss, the paired tests' p-values
and the bootstrap CI, all from :func:`heta_eval.compare.compare_many` (the same numbers
``heta-eval compare`` prints).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from heta_eval.compare import compare_many
from heta_eval.report import svg
from heta_eval.report.headline import number
from heta_eval.report.sources import System
from heta_eval.report.text import plural

__all__ = [
    "distributions",
    "evidence_by_chunking",
    "pair_comparisons",
    "paired_metrics",
    "significance",
    "slice_charts",
    "system_pairs",
]

#: Beyond this many systems, each is compared with the first only (not every pair).
ALL_PAIRS_UP_TO = 6
#: Retrieval metrics tested in pairs: heta-eval compare's defaults (each test costs 20,000
#: resamples); the other scored evaluators are always tested.
PAIRED = ("ndcg@10", "recall@100")


def paired_metrics(systems: Sequence[System], metrics: Sequence[str]) -> list[str]:
    """The headline metrics that get paired tests: ``PAIRED`` (else the first retrieval
    metric) and every evaluator that is not a retrieval metric."""
    kinds = {n: m.get("kind") for s in systems for n, m in s.mode_summary["metrics"].items()}
    retrieval = [m for m in metrics if kinds.get(m) == "retrieval"]
    chosen = [m for m in retrieval if m in PAIRED] or retrieval[:1]
    return [m for m in metrics if m in chosen or kinds.get(m) != "retrieval"]


def system_pairs(labels: Sequence[str]) -> list[tuple[str, str]]:
    """Every pair of systems, or the first against each other when there are many.

    >>> system_pairs(["a", "b", "c"])
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    """
    if len(labels) <= ALL_PAIRS_UP_TO:
        return list(combinations(labels, 2))
    return [(labels[0], other) for other in labels[1:]]


def _values(system: System, metric: str) -> dict[str, float]:
    return system.values(metric)


def distributions(systems: Sequence[System], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Per metric, one histogram of every system's per-query values on a shared axis, and
    per system what it leaves out (failed queries, queries with no value)."""
    charts = []
    for metric in metrics:
        series = [(s.label, list(_values(s, metric).values())) for s in systems]
        series = [(label, values) for label, values in series if values]
        if not series:
            continue
        notes = [_left_out(s, len(_values(s, metric))) for s in systems if _values(s, metric)]
        charts.append(
            {
                "metric": metric,
                "svg": svg.histogram(series, f"{metric} per query", metric=metric),
                "notes": notes,
            }
        )
    return charts


def _left_out(system: System, scored: int) -> str:
    cases = system.mode_summary.get("cases", 0)
    failed = sum(1 for r in system.records.values() if r.error is not None)
    others = max(cases - scored - failed, 0)
    parts = [plural(failed, "failed query", "failed queries")] if failed else []
    parts += [f"{plural(others, 'query', 'queries')} with no value"] if others else []
    left = f"; left out: {' and '.join(parts)}" if parts else ""
    return f"{system.label}: n = {scored} of {cases}{left}"


def pair_comparisons(systems: Sequence[System], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """For each pair of systems and each metric both scored: the paired comparison
    (means, Δ, CI, p-values, W/T/L) and the difference plot. Each pair is its own
    ``compare`` (its own Holm family), all computed in one :func:`compare_many`."""
    by_label = {system.label: system for system in systems}
    metrics = paired_metrics(systems, metrics)
    families = []
    for first, second in system_pairs([s.label for s in systems]):
        a, b = by_label[first], by_label[second]
        per_query: dict[str, dict[str, dict[str, float]]] = {first: {}, second: {}}
        shared = []
        for metric in metrics:
            va, vb = _values(a, metric), _values(b, metric)
            if not (va and vb and set(va) & set(vb)):
                continue
            shared.append(metric)
            for name, values in ((first, va), (second, vb)):
                for qid, value in values.items():
                    per_query[name].setdefault(qid, {})[metric] = value
        if shared:
            families.append((per_query, first, shared))
    results = compare_many(families) if families else []
    # One y-scale per metric: the largest |difference| of any pair.
    extent: dict[str, float] = {}
    for (_, first, _), result in zip(families, results, strict=True):
        for row in result.rows:
            va, vb = (
                _values(by_label[first], row.metric),
                _values(by_label[result.systems[1]], row.metric),
            )
            top = max((abs(vb[q] - va[q]) for q in va if q in vb), default=0.0)
            extent[row.metric] = max(extent.get(row.metric, 0.0), top)
    out = []
    for (_, first, _), result in zip(families, results, strict=True):
        second = result.systems[1]
        rows = []
        for row in result.rows:
            va, vb = _values(by_label[first], row.metric), _values(by_label[second], row.metric)
            deltas = [(q, vb[q] - va[q]) for q in va if q in vb]
            title = f"{row.metric}: {second} − {first}"
            plot = svg.differences(
                deltas,
                title,
                extent=extent.get(row.metric) or None,
                pair=(first, second, row.metric),
            )
            rows.append(_row(row, plot, result.settings))
        out.append(
            {
                "baseline": first,
                "system": second,
                "rows": rows,
                "settings": result.settings,
                "caption": result.caption(),
            }
        )
    return out


def _row(row: Any, plot: str, settings: dict[str, Any]) -> dict[str, Any]:
    def signed(value: float) -> str:
        return "–" if value != value else f"{value:+.4f}"

    def p(value: float) -> str:
        return "–" if value != value else ("<0.0001" if value < 1e-4 else f"{value:.4f}")

    return {
        "metric": row.metric,
        "n": row.n,
        "mean_baseline": f"{row.mean_baseline:.4f}",
        "mean_system": f"{row.mean_system:.4f}",
        "diff": signed(row.diff),
        "ci": f"[{signed(row.ci_low)}, {signed(row.ci_high)}]",
        "p_ttest": p(row.p_ttest),
        "p_permutation": p(row.p_permutation),
        "p_permutation_holm": p(row.p_permutation_holm),
        "wtl": f"{row.wins}/{row.ties}/{row.losses}",
        "unpaired": row.unpaired,
        "significant": row.significant(settings["alpha"]),
        "raw": {"diff": row.diff, "p": row.p_permutation_holm, "n": row.n},
        "svg": plot,
    }


def significance(pairs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The headline's markers, for any baseline the page offers: per ``baseline`` and
    ``system``, per tested metric ``[Δ of the paired means, Holm p (perm), significant]``
    (the pair's own test read from either side: Δ negated, p the same), and the legend."""
    marks: dict[str, dict[str, dict[str, list[Any]]]] = {}
    for pair in pairs:
        for row in pair["rows"]:
            diff, p, significant = row["raw"]["diff"], row["raw"]["p"], row["significant"]
            for base, other, sign in (
                (pair["baseline"], pair["system"], 1),
                (pair["system"], pair["baseline"], -1),
            ):
                entry = marks.setdefault(base, {}).setdefault(other, {})
                entry[row["metric"]] = [sign * diff, p, significant]
    legend = ""
    if pairs:
        s = pairs[0]["settings"]
        legend = (
            f"▲ / ▼: better / worse than the baseline by a two-sided paired randomization test "
            f"({s['n_resamples']} sign flips, seed {s['seed']}) over the queries both answered, "
            f"p < {s['alpha']:g} after Holm's correction over the metrics tested for that pair"
        )
    return {"marks": marks, "legend": legend}


def slice_charts(systems: Sequence[System], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Per slice field the folders recorded (``run --slice-by``): the first headline metric's
    mean per slice and system, as bars and as a table (cases, means, the slices' mean)."""
    fields = list(dict.fromkeys(f for s in systems for f in s.summary.get("slices") or {}))
    charts = []
    for name in fields:
        found = [
            (s, s.summary["slices"][name])
            for s in systems
            if name in (s.summary.get("slices") or {})
        ]
        metric = next(
            (m for m in metrics if any(m in f["modes"].get(s.mode, {}) for s, f in found)), None
        )
        if metric is None:
            continue
        values = list(dict.fromkeys(v for _, f in found for v in f["values"]))
        groups, rows = [], []
        for value in values:
            bars = []
            for system, recorded in found:
                entry = recorded["modes"].get(system.mode, {}).get(metric, {})
                bars.append((system.label, (entry.get("slices", {}).get(value) or {}).get("mean")))
            cases = sum(1 for v in found[0][1]["cases"].values() if v == value)
            groups.append((value, cases, bars))
            rows.append([value, cases, *(_four(mean) for _, mean in bars)])
        macro = [_four(f["modes"].get(s.mode, {}).get(metric, {}).get("macro")) for s, f in found]
        charts.append(
            {
                "field": name,
                "metric": metric,
                "systems": [s.label for s, _ in found],
                "rows": rows,
                "macro": macro,
                "svg": svg.slice_bars(groups, f"{metric} by {name}"),
            }
        )
    return charts


def _four(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def evidence_by_chunking(systems: Sequence[System]) -> list[dict[str, Any]]:
    """Evidence recall (as summary.json holds it) per system and chunk size, where a folder
    scored evidence; empty otherwise."""
    rows = []
    for system in systems:
        metrics = system.mode_summary.get("metrics", {})
        names = [name for name in metrics if name.startswith("evidence_recall")]
        if not names:
            continue
        chunking = (system.summary.get("recipe") or {}).get("chunking") or {}
        size = chunking.get("size")
        rows.append(
            {
                "system": system.label,
                "mode": system.mode,
                "chunking": "whole documents" if not size else f"{size} {chunking.get('unit', '')}",
                "values": [(name, number(metrics[name].get("value"))) for name in names],
            }
        )
    return rows
