"""The HTML report's load time in a real headless Chromium: a report of three systems × 300
queries (each query with two judged documents, 100 hits per system, one system refusing
some queries), written by the real runner and ``write_report`` from an in-process knowledge
base; then opened fresh, alternately with the peer, ``--repeats`` times (default 3).

* ours: the page as written; the time is ``heta-report-ready`` (the mark its script sets
  once the headline, the query table, the plots and a ``#q=`` link are set up), first paint
  in the notes.
* peer: the same page without its script (the static headline, provenance and charts), its
  first paint: what the script adds.

Goal: ready in under a second. Needs Debian's chromium and chromium-driver (else an error
row).

    python bench/bench_report.py [--quick] [--repeats N] [--output FILE]
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _rows import emit, log, row  # noqa: E402

QUERIES, DOCUMENTS, TOP_K = 300, 5_000, 100
MODES = ("bm25", "dense", "hybrid")
TARGET = "report ready, 3 systems × 300 queries"


class _Benchmark:
    name = "synthetic-report"

    def documents(self):
        from heta_eval.evaluation import Document

        return [
            Document(id=f"d{i}", title=f"title {i}", text=f"text {i} " * 40)
            for i in range(DOCUMENTS)
        ]

    def cases(self):
        from heta_eval.evaluation import BenchmarkCase

        return [
            BenchmarkCase(
                id=str(i),
                query=f"question {i} about things",
                expected={"relevance": {f"d{i}": 2, f"d{i + 1}": 1}},
            )
            for i in range(QUERIES)
        ]

    def evaluators(self):
        from heta_eval.evaluation import beir_default_metrics

        return beir_default_metrics(k_values=(1, 10, 100))


class _KB:
    modes = MODES

    async def query(self, text: str, *, mode: str, top_k: int) -> Any:
        from heta_eval.evaluation import QueryResponse

        i = int(text.split()[1])
        if mode == "hybrid" and i % 50 == 7:
            raise RuntimeError("refused")
        rng = random.Random(f"{mode}-{i}")
        hits = [f"d{rng.randrange(DOCUMENTS)}" for _ in range(top_k)]
        hits[{"bm25": i % 12, "dense": (5 * i) % 15, "hybrid": i % 5}[mode]] = f"d{i}"
        results = [
            {"text": "", "score": float(top_k - r), "source": {"document_id": d}}
            for r, d in enumerate(hits)
        ]
        return QueryResponse(query=text, mode=mode, results=results)


def write(folder: Path) -> Path:
    from heta_eval.report import write_report
    from heta_eval.runner import BenchmarkRunner

    benchmark = _Benchmark()
    results = BenchmarkRunner(top_k=TOP_K, progress=False, concurrency=8).run(
        benchmark=benchmark, knowledge_base=_KB(), query_modes=MODES, output_dir=folder
    )
    return write_report([folder], benchmark=benchmark, results=[results])


def _browser(profile: str) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or ""
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1400,900",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def _open(path: Path, mark: str | None) -> float:
    """Seconds to ``mark`` (or to first paint) of one fresh browser's first load of ``path``."""
    import time

    profile = tempfile.mkdtemp(prefix="heta-bench-report-")
    browser = _browser(profile)
    try:
        browser.get(path.resolve().as_uri())
        script = (
            f"var m = performance.getEntriesByName('{mark}');"
            if mark
            else "var m = performance.getEntriesByName('first-contentful-paint');"
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            found = browser.execute_script(script + "return m.length ? m[0].startTime : null;")
            if found is not None:
                return found / 1000
            time.sleep(0.02)
        raise RuntimeError(f"{path}: no {mark or 'first paint'} in 120 s")
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repeat")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)
    if not (shutil.which("chromium") or shutil.which("chromium-browser")) or not shutil.which(
        "chromedriver"
    ):
        emit(
            [row(TARGET, peer=None, goal="ready < 1 s", notes="no chromium/chromedriver")],
            args.output,
        )
        return 0
    with tempfile.TemporaryDirectory(prefix="heta-bench-report-") as tmp:
        log("writing the report ...")
        report = write(Path(tmp) / "results")
        html = report.read_text(encoding="utf-8")
        static = Path(tmp) / "static.html"
        static.write_text(re.sub(r"<script>.*?</script>", "", html, flags=re.S), encoding="utf-8")
        ready, paint, peer = [], [], []
        for i in range(repeats):
            for side in ("ours", "peer") if i % 2 == 0 else ("peer", "ours"):
                if side == "ours":
                    ready.append(_open(report, "heta-report-ready"))
                    paint.append(_open(report, None))
                else:
                    peer.append(_open(static, None))
        ours_s, peer_s = statistics.median(ready), statistics.median(peer)
        size, first = report.stat().st_size / 1e6, statistics.median(paint)
        notes = (
            f"{size:.2f} MB; first paint {first:.3f} s; "
            f"ready {', '.join(f'{t:.3f}' for t in ready)} s; static page's first paint "
            f"{', '.join(f'{t:.3f}' for t in peer)} s; ratio = ours / peer"
        )
        rows = [
            row(
                TARGET,
                peer="the same page without its script (first paint)",
                goal="ready < 1 s",
                ours_s=ours_s,
                peer_s=peer_s,
                ratio=ours_s / peer_s,
                met=ours_s < 1.0,
                notes=notes,
            )
        ]
    emit(rows, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
