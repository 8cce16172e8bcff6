"""End to end: wall time of ``make eval DATASET=scifact`` with all three modes, on a
cold cache (fresh ``HETA_EVAL_CACHE_DIR`` and output folder), then rerun on the same cache
into a fresh output folder.

Each repeat uses a new cache; a cold run encodes all of SciFact (minutes on 2 cores), so the
default is 1 repeat. ``--quick`` runs ``MODES=keyword_search`` only.

    python bench/bench_e2e.py [--quick] [--repeats N] [--modes M] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _rows import emit, log, row, timed  # noqa: E402

ALL_MODES = "keyword_search,vector_search,hybrid_search"
#: A cold ``make eval DATASET=scifact`` with every mode should take at most this (seconds).
COLD_GOAL = 100


def data_dir() -> Path:
    env = os.environ.get("HETA_EVAL_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "datasets" / "beir"


def make_eval(dataset: str, modes: str, out: Path, cache: Path) -> tuple[float, dict[str, Any]]:
    """Seconds of one ``make eval`` and its summary.json (raises with the tail of its log)."""
    env = {**os.environ, "HETA_EVAL_CACHE_DIR": str(cache), "HETA_EVAL_DATA": str(data_dir())}
    # -o: never rebuild the venv stamp mid-bench (a touched pyproject.toml would reinstall).
    cmd = [
        "make",
        "-s",
        "-o",
        ".venv/bin/heta-eval",
        "eval",
        f"DATASET={dataset}",
        f"MODES={modes}",
        f"OUT={out}",
    ]
    seconds, proc = timed(
        lambda: subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {(proc.stderr or proc.stdout)[-500:]}")
    return seconds, json.loads((out / "summary.json").read_text(encoding="utf-8"))


def artifacts(summary: dict[str, Any]) -> str:
    """How the KB's index and embeddings were obtained ("built"/"cache"), from summary.json."""
    build = summary.get("build") or {}
    info = build.get("build_info", build) if isinstance(build, dict) else {}
    parts = [f"{k}={info[k]}" for k in ("bm25", "embeddings", "precision") if k in info]
    return ", ".join(parts) or "build info not in summary.json"


def ndcg10(summary: dict[str, Any]) -> str:
    out = []
    for mode, section in (summary.get("modes") or {}).items():
        metric = (section.get("metrics") or {}).get("ndcg@10") or {}
        if "value" in metric:
            out.append(f"{mode} {metric['value']}")
    return "; ".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="keyword_search only")
    parser.add_argument("--repeats", type=int, default=1, help="cold+cached pairs (default 1)")
    parser.add_argument("--modes", default=None, help=f"default {ALL_MODES}")
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--output", default=None, help="write the JSON rows here")
    args = parser.parse_args(argv)
    modes = args.modes or ("keyword_search" if args.quick else ALL_MODES)
    target = f"e2e make eval DATASET={args.dataset} MODES={modes}"
    if not (data_dir() / args.dataset / "corpus.jsonl").is_file():
        emit(
            [row(target, peer=None, goal="report", notes=f"no {args.dataset} under {data_dir()}")],
            args.output,
        )
        return 0
    cold, warm = [], []
    first: dict[str, Any] = {}
    second: dict[str, Any] = {}
    for i in range(max(1, args.repeats)):
        with tempfile.TemporaryDirectory(prefix="heta-e2e-") as tmp:
            cache = Path(tmp) / "cache"
            log(f"e2e: cold run {i + 1} ({modes})")
            seconds, first = make_eval(args.dataset, modes, Path(tmp) / "out1", cache)
            cold.append(seconds)
            log(f"e2e: cached rerun {i + 1}")
            seconds, second = make_eval(args.dataset, modes, Path(tmp) / "out2", cache)
            warm.append(seconds)
    cold_s, warm_s = statistics.median(cold), statistics.median(warm)
    rows = [
        row(
            f"{target} (cold cache)",
            ours_s=cold_s,
            peer=None,
            goal=f"<= {COLD_GOAL} s"
            if args.dataset == "scifact" and modes == ALL_MODES
            else "report",
            met=cold_s <= COLD_GOAL if args.dataset == "scifact" and modes == ALL_MODES else None,
            notes=f"fresh cache and output; {artifacts(first)}; nDCG@10: {ndcg10(first)}",
        ),
        row(
            f"{target} (cached rerun)",
            ours_s=warm_s,
            peer="cold run",
            peer_s=cold_s,
            goal="report",
            # The cached rerun must reuse the index and embeddings and score the same.
            identical=ndcg10(first) == ndcg10(second),
            notes=f"same cache, fresh output; {artifacts(second)}; ratio = cold / cached",
        ),
    ]
    emit(rows, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
