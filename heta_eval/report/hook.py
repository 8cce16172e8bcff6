"""The report ``heta-eval run`` and ``heta-eval sweep`` write when they finish.

A report that cannot be written (Jinja2 not installed, a folder unreadable) costs the run
nothing: one warning line says why, and ``heta-eval report`` can write it later. A rerun that
changed nothing (a resumed run with every query done) keeps the report it finds: the report
carries a key of what it was made from (the folders' contents and this version's template).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heta_eval import __version__
from heta_eval.io import json_text
from heta_eval.report import write_report
from heta_eval.report.render import asset_text
from heta_eval.runner.hits import HITS_FILE

__all__ = ["report_after_run", "report_after_sweep", "report_key"]

logger = logging.getLogger(__name__)


def report_after_run(folder: Path, *, benchmark: Any = None, results: Any = None) -> Path | None:
    """Write ``report.html`` into a run's results folder and log its path; ``benchmark``
    and ``results`` are the run's own, so nothing is read twice."""
    return _write(
        [folder],
        folder / "report.html",
        benchmark=benchmark,
        results=None if results is None else [results],
    )


def report_after_sweep(output: Path, manifest: dict[str, Any]) -> list[Path]:
    """One report of the sweep's finished cells (``OUTPUT/report.html``), or one per dataset
    (``OUTPUT/report-<dataset>.html``) when the sweep spans several; log each path."""
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


def report_key(folders: Sequence[Path]) -> str:
    """A digest of what a report of ``folders`` shows: each folder's summary (less the time
    it was written), per-query records and run.json, and this version's template."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(__version__.encode())
    for name in ("report.html.j2", "report.js", "headline.js", "report.css"):
        digest.update(asset_text(name).encode())
    for folder in folders:
        summary = json_text.loads((folder / "summary.json").read_text(encoding="utf-8"))
        summary.pop("created_at", None)
        digest.update(json.dumps(summary, sort_keys=True).encode())
        for name in ("per_query.jsonl", HITS_FILE, "run.json"):
            path = folder / name
            if path.exists():
                with path.open("rb") as handle:
                    while chunk := handle.read(1 << 20):
                        digest.update(chunk)
    return digest.hexdigest()


def _current(output: Path, key: str) -> bool:
    try:
        with output.open("r", encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    found = re.search(r'<meta name="heta-eval-report-key" content="([0-9a-f]+)">', head)
    return found is not None and found.group(1) == key


def _write(folders: Sequence[Path], output: Path, **options: Any) -> Path | None:
    try:
        key = report_key(folders)
        if _current(output, key):
            logger.info("report: %s (unchanged)", output)
            return output
        path = write_report(folders, output, key=key, **options)
    except Exception as error:  # the run's results are safe; only the report is missing
        logger.warning(
            "warning: no report written (%s: %s); write it with: heta-eval report %s",
            type(error).__name__,
            error,
            " ".join(map(str, folders)),
        )
        return None
    logger.info("report: %s", path)
    return path
