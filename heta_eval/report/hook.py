"""The report ``heta-eval run`` and ``heta-eval sweep`` write when they finish.

A report that cannot be written (Jinja2 not installed, a folder unreadable) costs the run
nothing: one warning line says why, and ``heta-eval report`` can write it later.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["report_after_run", "report_after_sweep"]


def report_after_run(folder: Path, *, benchmark: Any = None, results: Any = None) -> Path | None:
    """Write ``report.html`` into a run's results folder and print its path; ``benchmark``
    and ``results`` are the run's own, so nothing is read twice."""
    return _write([folder], folder / "report.html", benchmark=benchmark,
                  results=None if results is None else [results])  # fmt: skip


def report_after_sweep(output: Path, manifest: dict[str, Any]) -> list[Path]:
    """One report of the sweep's finished cells (``OUTPUT/report.html``), or one per dataset
    (``OUTPUT/report-<dataset>.html``) when the sweep spans several; print each path."""
    by_dataset: dict[str, list[Path]] = {}
    for cell_id, state in manifest.get("cells", {}).items():
        if state.get("status") == "done" and state.get("folder"):
            dataset = cell_id.rsplit("/", 2)[0]
            by_dataset.setdefault(dataset, []).append(output / state["folder"])
    written = []
    for dataset, folders in by_dataset.items():
        name = "report.html" if len(by_dataset) == 1 else f"report-{dataset.replace('/', '-')}.html"
        path = _write(folders, output / name, title=f"{dataset} sweep")
        if path is not None:
            written.append(path)
    return written


def _write(folders: Sequence[Path], output: Path, **options: Any) -> Path | None:
    from . import write_report

    try:
        path = write_report(folders, output, **options)
    except Exception as error:  # the run's results are safe; only the report is missing
        print(f"warning: no report written ({type(error).__name__}: {error}); "
              f"write it with: heta-eval report {' '.join(map(str, folders))}",
              file=sys.stderr)  # fmt: skip
        return None
    print(f"report: {path}", file=sys.stderr)
    return path
