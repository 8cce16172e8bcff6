"""Whole-process rows for ``heta-eval trec_eval`` against trec_eval 9.0.8's C binary.

On the synthetic run (5,000 queries x 1,000 results; quick: 500 x 200; ``_synthetic.py``),
each side a fresh process, alternated (the first side flips each round):

* ``trec_eval 2CR shape``: ``-c -m ndcg_cut.10 -m recall.100,1000 -m map``. Goal: <= 0.5x.
* ``trec_eval -m all_trec``. Goal: <= 1.0x.

``ratio`` is ours / peer (below 1, ours is faster); ``peak_mb`` is each side's peak RSS
(goal: ours <= 1.5x the binary's); ``identical``: the two standard outputs are the same bytes.
The row also records the load average before and after. The binary: ``TREC_EVAL``, else one
built by ``.ci/build-trec-eval`` from trec_eval 9.0.8's source in ``../shared/reference`` (as CI
builds it); without either the rows say so.

Usage: ``python bench/bench_trec_eval.py [--quick] [--repeats N] [--output FILE]``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _synthetic import write_run_files  # noqa: E402
from bench_oneshot import REPO, alternated  # noqa: E402

SHAPES = {
    "trec_eval 2CR shape (-c -m ndcg_cut.10 -m recall.100,1000 -m map)": (
        ["-c", "-m", "ndcg_cut.10", "-m", "recall.100,1000", "-m", "map"],
        0.5,
    ),
    "trec_eval -m all_trec": (["-m", "all_trec"], 1.0),
}


def trec_qrels(tsv: Path) -> Path:
    """The BEIR qrels tsv as TREC qrels lines (``qid 0 docid label``), which trec_eval reads."""
    out = tsv.with_suffix(".qrels")
    if not out.exists():
        rows = tsv.read_text(encoding="utf-8").splitlines()[1:]
        text = "".join(f"{q} 0 {d} {label}\n" for q, d, label in (r.split("\t") for r in rows))
        out.write_text(text, encoding="utf-8")
    return out


def shape_row(target: str, words: list[str], goal: float, files, binary, repeats) -> dict:
    ours = [sys.executable, "-m", "heta_eval", "trec_eval", *words, *files]
    load_before = os.getloadavg()
    measured = alternated(ours, [binary, *words, *files], repeats)
    ratio = measured["ours_s"] / measured["peer_s"]
    peaks = measured["peaks"]
    memory = peaks["ours"] / peaks["peer"]
    return {
        "target": target,
        "ours_s": round(measured["ours_s"], 3),
        "peer": "trec_eval 9.0.8 (C), whole process",
        "peer_s": round(measured["peer_s"], 3),
        "ratio": round(ratio, 3),
        "goal": f"<= {goal}, peak RSS <= 1.5x",
        "met": ratio <= goal and memory <= 1.5,
        "identical": measured["outputs"]["ours"] == measured["outputs"]["peer"],
        "peak_mb": {side: round(mb) for side, mb in peaks.items()},
        "notes": (
            f"{repeats} alternated rounds; times ours {measured['times']['ours']}, peer "
            f"{measured['times']['peer']}; memory {memory:.2f}x; load average "
            f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
        ),
    }


def built_trec_eval() -> str:
    """trec_eval built from its source as CI builds it (``.ci/build-trec-eval``), or why not."""
    done = subprocess.run(
        [str(REPO / ".ci" / "build-trec-eval")], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        why = done.stderr.strip().splitlines() or [f"exit {done.returncode}"]
        return f"(none: .ci/build-trec-eval said {why[0]!r})"
    return done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 x 200 synthetic run")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--output")
    args = parser.parse_args(argv)
    binary = os.environ.get("TREC_EVAL") or built_trec_eval()
    rows = []
    if not shutil.which(binary):
        rows = [
            {"target": t, "error": f"trec_eval binary not found: {binary}", "met": None}
            for t in SHAPES
        ]
    else:
        compileall.compile_dir(REPO / "heta_eval", quiet=1)
        queries, depth = (500, 200) if args.quick else (5000, 1000)
        run, tsv = write_run_files(HERE / "out", queries, depth, seed=0)
        files = [str(trec_qrels(tsv)), str(run)]
        repeats = args.repeats or (3 if args.quick else 5)
        for target, (words, goal) in SHAPES.items():
            rows.append(shape_row(target, words, goal, files, binary, repeats))
    text = json.dumps(rows, indent=2)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
