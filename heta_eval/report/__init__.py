"""One self-contained HTML report per results folder (or several folders together), read in
any browser with no network: the headline per mode, provenance, a sortable and filterable
per-query table with a drill-down per query, metric distributions and paired tests.

Every number is one of ``summary.json`` / ``per_query.jsonl`` or of
:func:`heta_eval.compare.compare`; nothing is scored again here.

>>> from heta_eval.report import write_report
>>> write_report(["/nonexistent"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
heta_eval.report.sources.ReportError: /nonexistent: no summary.json here; ...
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heta_eval import __version__
from heta_eval.compare.comparability import (
    IncomparableFoldersError,
    check_comparable,
    comparable_folders,
    pairing_note,
)
from heta_eval.io.write import write_whole
from heta_eval.report.charts import (
    distributions,
    evidence_by_chunking,
    pair_comparisons,
    paired_metrics,
    significance,
    slice_charts,
)
from heta_eval.report.headline import (
    DECIMALS,
    all_metric_rows,
    headline_metrics,
    headline_rows,
    partial_notes,
    provenance,
    provenance_table,
)
from heta_eval.report.payload import build_payload, numeric_metrics
from heta_eval.report.render import render_page
from heta_eval.report.sources import ReportError, load_dataset, load_systems
from heta_eval.report.text import plural

__all__ = ["REPORT_NAME", "ReportError", "build_report", "write_report"]

#: The file name ``heta-eval run`` and ``sweep`` write into the results folder.
REPORT_NAME = "report.html"

logger = logging.getLogger(__name__)


def build_report(
    folders: Sequence[str | os.PathLike[str]],
    *,
    benchmark: Any = None,
    results: Sequence[Any] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    title: str | None = None,
    key: str | None = None,
    allow_different_data: bool = False,
) -> str:
    """The report of ``folders`` as HTML text.

    ``benchmark`` is the benchmark object a run used (its documents and labels); without it
    the dataset named in ``summary.json`` is looked up under ``data_dir`` (else
    ``$HETA_EVAL_DATA``, else the cache), never downloaded. ``results`` are the folders'
    :class:`~heta_eval.runner.BenchmarkResults` when in memory already (else read);
    ``key`` is recorded in the page (``heta-eval run`` uses it to skip an unchanged report).
    Folders of different datasets, corpora or cases are refused unless
    ``allow_different_data`` (:func:`~heta_eval.compare.comparability.comparable_folders`);
    then, as for folders that record no fingerprint, a warning is logged and shown in the
    page, with what each paired test of two such folders paired and each one's own mean.
    """
    systems = load_systems(folders, results)
    if not systems:
        raise ReportError("the results folders hold no mode")
    try:
        data_warnings = comparable_folders(folders, allow_different_data=allow_different_data)
    except IncomparableFoldersError as error:
        raise ReportError(str(error)) from None
    for line in data_warnings:
        logger.warning("warning: %s", line)
    names = list(dict.fromkeys(s.summary.get("benchmark", "") for s in systems))
    wanted = {doc for s in systems for r in s.records.values() for doc, _ in r.documents[:10]}
    dataset = load_dataset(names[0], wanted, benchmark=benchmark, data_dir=data_dir)
    metrics = headline_metrics(systems)
    kinds = {
        name: metric.get("kind", "")
        for s in systems
        for name, metric in s.mode_summary.get("metrics", {}).items()
    }
    rows = headline_rows(systems, metrics)
    pairs = pair_comparisons(systems, metrics)
    if allow_different_data:
        notes = _pairing_notes(systems, pairs)
        for line in notes:
            logger.warning("warning: %s", line)
        data_warnings += notes
    marks = significance(pairs)
    folders_seen: dict[str, Any] = {}
    for system in systems:
        folders_seen.setdefault(str(system.folder), system)
    provenances = [provenance(s) for s in folders_seen.values()]
    context = {
        "title": title or ", ".join(names),
        "subtitle": " · ".join(folders_seen) + f" · {plural(len(systems), 'system')}",
        "metrics": metrics,
        "kinds": kinds,
        "headline": rows,
        "decimals": DECIMALS,
        "partial_notes": partial_notes(rows),
        "significance": marks,
        "tested": paired_metrics(systems, metrics) if len(systems) > 1 else [],
        "all_metrics": [{"label": s.label, "rows": all_metric_rows(s)} for s in systems],
        "provenance": provenances,
        "provenance_table": provenance_table(provenances) if len(provenances) > 1 else None,
        "dataset_note": dataset.note,
        "data_warnings": data_warnings,
        "distributions": distributions(systems, metrics),
        "slices": slice_charts(systems, metrics),
        "pairs": pairs,
        "evidence": evidence_by_chunking(systems),
        "version": __version__,
        "key": key,
    }
    # The per-query table opens on the first headline metric.
    order = [*metrics, *(m for m in numeric_metrics(systems) if m not in metrics)]
    data = build_payload(systems, dataset, order)
    data["headline"] = {"metrics": metrics, **marks}  # the headline's markers, per baseline
    return render_page(context, data)


def _pairing_notes(systems: Sequence[Any], pairs: Sequence[dict[str, Any]]) -> list[str]:
    """For each paired test of two folders of different data: over which queries it paired
    and each folder's own mean (as its ``summary.json`` reports it)."""
    by_label = {system.label: system for system in systems}
    checked = check_comparable(list(dict.fromkeys(str(s.folder) for s in systems)))

    def own(system: Any, metric: str) -> tuple[str, float | None, int]:
        mean = (system.mode_summary.get("metrics", {}).get(metric) or {}).get("value")
        return system.label, mean, len(system.values(metric))

    notes = []
    for pair in pairs:
        a, b = by_label[pair["baseline"]], by_label[pair["system"]]
        if checked.same_data(a.folder, b.folder):
            continue
        for row in pair["rows"]:
            notes.append(
                pairing_note(
                    row["metric"],
                    own(a, row["metric"]),
                    own(b, row["metric"]),
                    paired=row["n"],
                    unpaired=row["unpaired"],
                    missing=pair["settings"]["missing"],
                )
            )
    return notes


def write_report(
    folders: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str] | None = None,
    **options: Any,
) -> Path:
    """Write the report of ``folders`` to ``output`` (default: ``report.html`` in the first
    folder) and return its path. ``options`` are those of :func:`build_report`."""
    if not folders:
        raise ReportError("give at least one results folder")
    html = build_report(folders, **options)
    path = Path(output) if output is not None else Path(folders[0]) / REPORT_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    # A lone surrogate in some text cannot be UTF-8: it is shown as a replacement character.
    write_whole(path, html.encode("utf-8", errors="replace"))
    return path
