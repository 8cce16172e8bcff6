"""Run every benchmark, each in its own subprocess, and write ``bench/results.json`` and
``bench/results.md`` (a table of ratios against goals; ``--quick`` writes them under
``bench/out/quick/``, untracked), then print the table.

    python bench/run_all.py [--quick] [--repeats N]

A script that is missing, fails or times out becomes an error row; the others still run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
SCRIPTS = (
    "bench_metrics.py",
    "bench_custom.py",
    "bench_oneshot.py",
    "bench_trec_eval.py",
    "bench_kb.py",
    "bench_e2e.py",
    "bench_lucene.py",
    "bench_lucene_tokenizer.py",
    "bench_scale.py",
    "bench_ray.py",
    "bench_report.py",
    "bench_fusion.py",
    "bench_integrations.py",
    "bench_rerank.py",
)


def machine() -> dict[str, Any]:
    """Size and software of this machine, for the record."""
    info: dict[str, Any] = {"cores": os.cpu_count(), "platform": platform.platform()}
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
        info["cpu"] = next(
            (line.split(":", 1)[1].strip() for line in text.splitlines() if "model name" in line),
            platform.processor(),
        )
        flags = next((line for line in text.splitlines() if line.startswith("flags")), "")
        info["bf16"] = sorted({"avx512_bf16", "amx_bf16"} & set(flags.split()))
    except OSError:
        info["cpu"] = platform.processor()
    try:
        kb = int(Path("/proc/meminfo").read_text().split("MemTotal:")[1].split()[0])
        info["memory_gib"] = round(kb / 2**20, 1)
    except (OSError, IndexError, ValueError):
        pass
    info["python"] = platform.python_version()
    for package in ("numpy", "torch", "bm25s", "sentence-transformers", "pytrec-eval-terrier"):
        try:
            info[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            info[package] = None
    return info


def load() -> list[float] | None:
    """1/5/15-minute load averages: other jobs on a shared machine skew timings."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def run_script(name: str, quick: bool, repeats: int | None, timeout: float) -> list[dict]:
    """The rows of one benchmark script, or one error row."""
    path = BENCH / name
    if not path.is_file():
        return [{"target": name, "error": "script not found", "met": None}]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        cmd = [sys.executable, str(path), "--output", str(out)]
        cmd += ["--quick"] if quick else []
        cmd += ["--repeats", str(repeats)] if repeats else []
        print(f"== {name}", file=sys.stderr, flush=True)
        started = time.perf_counter()
        try:
            # stderr (progress) passes through; stdout is kept in case rows are printed there.
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return [{"target": name, "error": f"timed out after {timeout:.0f} s", "met": False}]
        seconds = round(time.perf_counter() - started, 1)
        text = out.read_text(encoding="utf-8") if out.is_file() else proc.stdout
        try:
            rows = json.loads(text)
            assert isinstance(rows, list)
        except (json.JSONDecodeError, AssertionError):
            rows = None
        if proc.returncode != 0 or rows is None:
            tail = (proc.stdout or "")[-300:]
            return [{"target": name, "error": f"exit {proc.returncode}: {tail}", "met": False}]
        for r in rows:
            r.setdefault("script", name)
            r.setdefault("script_seconds", seconds)
        return rows


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.3g}{unit}" if abs(value) < 100 else f"{value:,.0f}{unit}"
    return f"{value}{unit}"


def _measure(r: dict[str, Any], side: str) -> str:
    if f"{side}_value" in r:
        return str(r[f"{side}_value"])
    if f"{side}_qps" in r:
        return _fmt(r[f"{side}_qps"], "/s")
    if f"{side}_s" in r:
        return _fmt(r[f"{side}_s"], " s")
    return "–"


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: one line per row; ratio > 1 means ours is faster (peer time / our time)."""
    lines = [
        "| target | ours | peer | peer value | ratio | goal | met | identical |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['target']} | error: {r['error'][:80]} | | | | | ✗ | |")
            continue
        met = {True: "✓", False: "✗", None: "–"}[r.get("met")]
        same = {True: "yes", False: "NO", None: "–"}[r.get("identical")]
        ratio = "–" if r.get("ratio") is None else f"{r['ratio']:.2f}×"
        lines.append(
            f"| {r['target']} | {_measure(r, 'ours')} | {r.get('peer') or '–'} | "
            f"{_measure(r, 'peer')} | {ratio} | {r.get('goal', '')} | {met} | {same} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="scaled-down inputs, 1 repeat")
    parser.add_argument("--repeats", type=int, default=None, help="passed to each script")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per script")
    args = parser.parse_args(argv)
    # A guard against hangs, not a budget: a busy shared machine must not turn rows into
    # "timed out" (the quick run takes about 2 minutes on an idle 2-core machine).
    timeout = args.timeout or (600 if args.quick else 3 * 3600)
    started = dt.datetime.now(dt.timezone.utc)
    load_before = load()
    rows: list[dict[str, Any]] = []
    for name in SCRIPTS:
        rows += run_script(name, args.quick, args.repeats, timeout)
    result = {
        "date": started.isoformat(timespec="seconds"),
        "quick": args.quick,
        "seconds": round((dt.datetime.now(dt.timezone.utc) - started).total_seconds(), 1),
        "machine": machine(),
        "load_average": {"before": load_before, "after": load()},
        "rows": rows,
    }
    # The quick run is a smoke test: it never overwrites the checked-in full results.
    target = BENCH / "out" / "quick" if args.quick else BENCH
    target.mkdir(parents=True, exist_ok=True)
    (target / "results.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    m = result["machine"]
    after = result["load_average"]["after"]
    header = (
        f"Benchmarks{' (quick)' if args.quick else ''}, {result['date']}: {m.get('cores')} cores, "
        f"{m.get('memory_gib')} GiB, {m.get('cpu')}; Python {m['python']}, torch {m['torch']}, "
        f"numpy {m['numpy']}; load average before/after {load_before} / {after}.\n\n"
        "Each row's ratio reads against its goal (throughput rows: peer time / our time, so "
        "above 1 means ours is faster).\n\n"
    )
    markdown = header + table(rows) + "\n"
    (target / "results.md").write_text(markdown, encoding="utf-8")
    print(markdown)
    print(f"wrote {target / 'results.json'} and {target / 'results.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
