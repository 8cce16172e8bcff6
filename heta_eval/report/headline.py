"""The headline of a report (per system: BEIR and strict aggregates, counts, reference
checks) and its provenance (dataset, recipe, executor, versions, timings, warnings).

Every number is taken from ``summary.json`` as written: nothing is recomputed or rounded
again. ``number`` renders one the way JSON wrote it.

>>> number(0.67891), number(None), number(3)
('0.67891', '–', '3')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heta_eval.data.references import check
from heta_eval.data.registry import get_dataset
from heta_eval.report.sources import System
from heta_eval.report.text import TEXT_LIMIT, plural, shown

__all__ = [
    "all_metric_rows",
    "fixed",
    "headline_metrics",
    "headline_rows",
    "number",
    "partial_notes",
    "provenance",
    "provenance_table",
    "reference_system",
]

#: Shown first when present; every other evaluator follows in the summary's order.
PREFERRED = ("ndcg@10", "recall@100", "map@100", "mrr@10", "recall@1000")
PLAIN_KINDS = ("numeric", "boolean")
#: Decimals of every headline number (the exact value is the cell's title).
DECIMALS = 4


def number(value: Any) -> str:
    """A summary number as summary.json holds it (same digits), ``–`` when absent."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, float) else str(value)


def headline_metrics(systems: Sequence[System], limit: int = 8) -> list[str]:
    """The metrics of the headline and the plots: the preferred retrieval metrics, then the
    other scored evaluators (evidence recall, answer metrics, judges)."""
    seen: dict[str, str] = {}
    for system in systems:
        for name, metric in system.mode_summary.get("metrics", {}).items():
            seen.setdefault(name, metric.get("kind", ""))
    chosen = [name for name in PREFERRED if seen.get(name) == "retrieval"]
    if not chosen:
        chosen = [name for name, kind in seen.items() if kind == "retrieval"][:2]
    chosen += [name for name, kind in seen.items() if kind in PLAIN_KINDS]
    return chosen[:limit]


def reference_system(system: System) -> str | None:
    """The reference (``heta-eval check --system``) a mode is comparable with, if any:
    BM25 flat or multifield for keyword search with the Lucene analyzer, the dense model's
    MTEB score for vector search. Hybrid modes and services have none."""
    recipe = system.summary.get("recipe") or {}
    if system.mode == "keyword_search":
        bm25 = recipe.get("bm25") or {}
        if bm25.get("analyzer") == "lucene" and bm25.get("fields") in ("flat", "multifield"):
            return f"bm25-{bm25['fields']}"
    if system.mode == "vector_search":
        model = (recipe.get("dense") or {}).get("model")
        if model == "all-MiniLM-L6-v2":
            return model
    return None


def _checks(system: System) -> list[dict[str, Any]]:
    name = reference_system(system)
    if name is None or (system.summary.get("recipe") or {}).get("chunking", {}).get("size"):
        return []  # chunked documents are not what the references scored
    if not _whole_corpus(system):
        return []  # a slice of the corpus: the references do not apply
    metrics = {
        metric: {kind: values.get(kind) for kind in ("value", "beir", "strict")}
        for metric, values in system.mode_summary.get("metrics", {}).items()
        if values.get("kind") == "retrieval"
    }
    results = check({system.summary.get("benchmark", ""): metrics}, name)
    return [
        {
            "metric": r.metric,
            "status": r.status,
            "observed": number(r.observed),
            "expected": number(r.expected),
            "delta": f"{r.delta:+.4f}",
            "aggregate": r.aggregate,
            "system": r.system,
        }
        for r in results
    ]


def _whole_corpus(system: System) -> bool:
    try:
        expected = get_dataset(system.summary.get("benchmark", "")).corpus
    except Exception:  # not a registered dataset: no reference either
        return False
    count = str(system.summary.get("documents") or "").partition(":")[0]
    return expected is None or count == str(expected)


def fixed(value: Any, decimals: int = DECIMALS) -> str:
    """A headline number with a fixed count of decimals (the exact one is the cell's title).

    >>> fixed(0.98), fixed(1), fixed(None)
    ('0.9800', '1.0000', '–')
    """
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return number(value)
    return f"{value:.{decimals}f}"


def _cell(name: str, metric: dict[str, Any]) -> dict[str, Any]:
    kind = metric.get("kind", "empty")
    # Retrieval: the BEIR mean over the answered queries; others: summary.json's `mean`
    # (over the scored cases), the pass rate of a boolean where no mean is written.
    aggregate = "beir" if kind == "retrieval" else "mean"
    value = metric.get(aggregate)
    if value is None and aggregate == "mean":
        value = metric.get("value")
    strict = metric.get("strict")
    return {
        "name": name,
        "kind": kind,
        "aggregate": aggregate,
        "raw": value,
        "shown": fixed(value),
        "exact": number(value),
        "strict_raw": strict,
        "strict_shown": fixed(strict),
        "strict_exact": number(strict),
        "partial": bool(metric.get("partial")),
        "scored": metric.get("scored", 0),
        "best": False,
        "best_strict": False,
    }


def headline_rows(systems: Sequence[System], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """One row per system: counts, ``cells`` (per metric: the headline aggregate and the
    strict one, shown with fixed decimals and exact in ``exact``; ``best`` marks each
    column's highest) and the reference checks."""
    rows = []
    for system in systems:
        summary = system.mode_summary
        cells = [_cell(name, summary.get("metrics", {}).get(name) or {}) for name in metrics]
        cases, answered = summary.get("cases", 0), summary.get("answered", 0)
        failed = summary.get("failed_queries", 0)
        rows.append(
            {
                "label": system.label,
                "mode": system.mode,
                "folder": str(system.folder),
                "cases": cases,
                "answered": answered,
                "failed": failed,
                "not_run": max(cases - answered - failed, 0),
                "evaluator_failures": summary.get("evaluator_failures", 0),
                "failure_reasons": [
                    (shown(reason, TEXT_LIMIT), count)
                    for reason, count in list((summary.get("failure_reasons") or {}).items())[:5]
                ],
                "partial": bool(summary.get("partial")),
                "cells": cells,
                "checks": _checks(system),
            }
        )
    for column in range(len(metrics)):
        _mark_best([r["cells"][column] for r in rows], "raw", "best")
        _mark_best([r["cells"][column] for r in rows], "strict_raw", "best_strict")
    return rows


def _mark_best(cells: list[dict[str, Any]], key: str, best: str) -> None:
    # A partial mean leaves failed queries out: it can be best only when every one is partial.
    known = [c for c in cells if c[key] is not None]
    pool = [c for c in known if not (key == "raw" and c["partial"])] or known
    if len(cells) > 1 and pool:
        top = max(c[key] for c in pool)
        for c in pool:
            c[best] = c[key] == top


def partial_notes(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Per system with a partial value, what each number of its row is (the footnote of †)."""
    notes = []
    for row in rows:
        partial = [c for c in row["cells"] if c["partial"]]
        if not partial:
            continue
        counts = "; ".join(f"{c['name']} {c['scored']} of {row['cases']}" for c in partial)
        parts = [plural(row["failed"], "failed query", "failed queries")] if row["failed"] else []
        parts += [f"{plural(row['not_run'], 'query', 'queries')} not run"] if row["not_run"] else []
        left = " and ".join(parts) or "the cases an evaluator failed on or gave no value for"
        retrieval = any(c["kind"] == "retrieval" for c in partial)
        others = any(c["kind"] != "retrieval" for c in partial)
        zero = []
        if parts and retrieval:
            zero.append("strict (trec_eval -c) counts each of them as 0")
        if parts and others:
            zero.append("so does summary.json's value of the other evaluators (the full table)")
        notes.append(
            f"{row['label']}: † a mean over the queries scored only ({counts}); {left} "
            f"left out of it{'; ' if zero else ''}{', '.join(zero)}."
        )
    return notes


def all_metric_rows(system: System) -> list[dict[str, Any]]:
    """Every evaluator of one system with all its aggregates, for the full table."""
    rows = []
    for name, metric in system.mode_summary.get("metrics", {}).items():
        counts = metric.get("counts") or {}
        rows.append(
            {
                "name": name,
                "kind": metric.get("kind", ""),
                "value": number(metric.get("value")),
                "beir": number(metric.get("beir")),
                "strict": number(metric.get("strict")),
                "counts": ", ".join(f"{k}: {v}" for k, v in counts.items()),
                "scored": metric.get("scored", 0),
                "skipped": metric.get("skipped", 0),
                "failed": metric.get("failed", 0),
                "missing": metric.get("missing", 0),
            }
        )
    return rows


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        items: list[tuple[str, str]] = []
        for key, inner in value.items():
            items += _flatten(inner, f"{prefix}.{key}" if prefix else str(key))
        return items
    if isinstance(value, list):
        return [(prefix, ", ".join(number(v) if not isinstance(v, str) else v for v in value))]
    return [(prefix, number(value) if not isinstance(value, str) else value)]


def _what_ran(
    summary: dict[str, Any], bm25: dict[str, Any], dense: dict[str, Any]
) -> list[tuple[str, str]]:
    """The analyzer where BM25 ran, the dense model with the precision, device and route it
    resolved to where a dense mode ran (``build``), not the recipe's ``auto``, and why that
    route (its reason, the measurements behind it, the CPU)."""
    build = summary.get("build") or {}
    rows = []
    if "bm25" in build or (bm25 and not build):
        rows.append(("analyzer", f"{bm25.get('analyzer', '–')} ({bm25.get('fields', '–')} fields)"))
    if "precision" in build or "embeddings" in build:
        asked = dense.get("precision")
        chosen = build.get("precision") or "–"
        rows += [
            ("model", dense.get("model") or "–"),
            ("precision", chosen + (f" (asked {asked})" if asked and asked != chosen else "")),
            ("device", build.get("device") or "–"),
            ("route", build.get("route") or "–"),
        ]
        rows += [
            (label, build[key])
            for label, key in (
                ("route chosen", "route_reason"),
                ("route evidence", "route_evidence"),
                ("CPU", "cpu"),
            )
            if build.get(key)
        ]
    return rows


def provenance_table(provenances: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several folders' provenance as one table: ``differ`` (setting, one value per folder)
    for the settings that differ, ``same`` (setting, value) for those every folder shares.

    >>> t = provenance_table([{"key": [("a", "1"), ("b", "x")]}, {"key": [("a", "2"), ("b", "x")]}])
    >>> t["differ"], t["same"]
    ([('a', ['1', '2'])], [('b', 'x')])
    """
    names = list(dict.fromkeys(k for p in provenances for k, _ in p["key"]))
    values = [dict(p["key"]) for p in provenances]
    differ, same = [], []
    for name in names:
        row = [v.get(name, "–") for v in values]
        if len(set(row)) == 1:
            same.append((name, row[0]))
        else:
            differ.append((name, row))
    return {"differ": differ, "same": same}


def provenance(system: System) -> dict[str, Any]:
    """Where the numbers come from, for one results folder (shared by its modes)."""
    summary, run = system.summary, system.run_json
    recipe = summary.get("recipe") or {}
    bm25, dense = recipe.get("bm25") or {}, recipe.get("dense") or {}
    chunking = recipe.get("chunking") or {}
    key = [
        ("dataset", summary.get("benchmark", "")),
        ("corpus fingerprint", summary.get("documents") or "–"),
        ("cases fingerprint", run.get("cases") or "–"),
        (
            "system",
            summary.get("system", {}).get("kind", "")
            + (f" {summary['system']['url']}" if summary.get("system", {}).get("url") else ""),
        ),
        *_what_ran(summary, bm25, dense),
        (
            "chunking",
            "whole documents"
            if not chunking.get("size")
            else f"{chunking['size']} {chunking.get('unit', '')}, "
            f"overlap {chunking.get('overlap', 0)}",
        ),
        ("executor", ", ".join(f"{k} {v}" for k, v in (summary.get("executor") or {}).items())),
        ("heta-eval", summary.get("heta_eval_version") or "–"),
        ("created", summary.get("created_at") or "–"),
        ("top_k", f"{summary.get('top_k')} (asked {summary.get('top_k_requested')})"),
    ]
    timings = [(name, number(value)) for name, value in (summary.get("timings") or {}).items()]
    modes = [
        (mode, [(k, number(v)) for k, v in (values.get("timings") or {}).items()])
        for mode, values in summary.get("modes", {}).items()
    ]
    return {
        "folder": str(system.folder),
        "key": [(name, str(value)) for name, value in key],
        "recipe": _flatten(recipe),
        "build": _flatten(summary.get("build") or {}),
        "checks": _flatten(summary.get("checks") or {}),
        "usage": _flatten(summary.get("usage") or {}),
        "timings": timings,
        "mode_timings": modes,
        "warnings": [shown(line, TEXT_LIMIT) for line in summary.get("warnings") or []],
    }
