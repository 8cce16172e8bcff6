"""Whole-process rows: what a user waits for when running one command.

* ``one-shot evaluate``: ``heta-eval evaluate --dataset scifact`` on the real SciFact run
  (``../shared/datasets/runs``) vs ``bench/plain_pytrec_eval.py`` (read both files, one
  pytrec_eval pass, print), each a fresh process, alternated. Goal: <= 1.5x.
* ``run-file evaluation, whole process``: ``heta-eval evaluate --run --qrels`` on the
  synthetic MS MARCO-size run (6,980 queries x 1,000; quick: 700 x 200) vs the beir path
  (``bench_metrics.py --side beir``: beir's load_runfile loop, ``EvaluateRetrieval.evaluate``
  and ``evaluate_custom(mrr)``), each a fresh process. Goal: <= 0.18x, peak RSS no higher.

Times are medians of ``--repeats`` alternated runs (first order flips each round); ``ratio``
is ours / peer (below 1, ours is faster). ``identical``: the printed numbers agree.

Usage: ``python bench/bench_oneshot.py [--quick] [--repeats N] [--output FILE]``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared" / "datasets"
BEIR_NAMES = {"ndcg_cut": "NDCG", "map_cut": "MAP", "recall": "Recall", "P": "P"}


def run_process(cmd: list[str]) -> tuple[float, str, float]:
    """Wall seconds, stdout and peak RSS (MB) of one fresh process."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout's heta_eval
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, text=True, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        errors = proc.stderr.read() if proc.stderr else ""
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd} failed ({proc.returncode}): {errors[-2000:]}")
        out.seek(0)
        return seconds, out.read(), usage.ru_maxrss / 1024


def alternated(ours: list[str], peer: list[str], repeats: int) -> dict:
    """Medians of ``repeats`` rounds of fresh processes, the first side flipping each round."""
    times: dict[str, list[float]] = {"ours": [], "peer": []}
    peaks: dict[str, float] = {"ours": 0.0, "peer": 0.0}
    outputs: dict[str, str] = {}
    for i in range(repeats):
        order = [("ours", ours), ("peer", peer)]
        for side, cmd in order if i % 2 == 0 else order[::-1]:
            seconds, text, peak = run_process(cmd)
            times[side].append(seconds)
            peaks[side] = max(peaks[side], peak)
            outputs[side] = text
    return {
        "ours_s": statistics.median(times["ours"]),
        "peer_s": statistics.median(times["peer"]),
        "times": times,
        "peaks": peaks,
        "outputs": outputs,
    }


def _ours_numbers(text: str, groups: tuple[str, ...]) -> dict[str, float]:
    payload = json.loads(text)
    return {key: value for group in groups for key, value in payload[group].items()}


def _plain_numbers(text: str) -> dict[str, float]:
    numbers = {}
    for line in text.splitlines():
        name, value = line.split()
        measure, k = name.rsplit("_", 1)
        numbers[f"{BEIR_NAMES[measure]}@{k}"] = float(value)
    return numbers


def row(target: str, peer: str, goal: float, measured: dict, identical: bool, notes: str) -> dict:
    ratio = measured["ours_s"] / measured["peer_s"]
    return {
        "target": target,
        "ours_s": round(measured["ours_s"], 3),
        "peer": peer,
        "peer_s": round(measured["peer_s"], 3),
        "ratio": round(ratio, 3),
        "goal": f"<= {goal}",
        "met": ratio <= goal,
        "identical": identical,
        "peak_mb": {side: round(mb) for side, mb in measured["peaks"].items()},
        "notes": notes,
    }


def oneshot_row(repeats: int) -> dict:
    run = SHARED / "runs" / "scifact-test.reranked.trec"
    data = SHARED / "beir"
    if not run.is_file():
        return {"target": "one-shot evaluate", "error": f"{run} not found", "met": None}
    ours = [sys.executable, "-m", "heta_eval", "evaluate", "--run", str(run)]
    ours += ["--dataset", "scifact", "--data-dir", str(data), "--json"]
    peer = [sys.executable, str(HERE / "plain_pytrec_eval.py"), str(run)]
    peer += [str(data / "scifact" / "qrels" / "test.tsv")]
    measured = alternated(ours, peer, repeats)
    numbers = _ours_numbers(measured["outputs"]["ours"], ("ndcg", "map", "recall", "precision"))
    same = numbers == _plain_numbers(measured["outputs"]["peer"])
    return row(
        "one-shot evaluate (SciFact run, 300 queries)",
        "plain script: read, one pytrec_eval pass, print",
        1.5,
        measured,
        same,
        f"whole processes, {repeats} alternated rounds; ours {measured['times']['ours']}",
    )


def runfile_row(quick: bool, repeats: int) -> dict:
    sys.path.insert(0, str(HERE))
    from _synthetic import write_run_files

    queries, depth = (700, 200) if quick else (6980, 1000)
    run, qrels = write_run_files(HERE / "out", queries, depth, seed=0)
    ours = [sys.executable, "-m", "heta_eval", "evaluate", "--run", str(run)]
    ours += ["--qrels", str(qrels), "--json"]
    peer = [sys.executable, str(HERE / "bench_metrics.py"), "--side", "beir"]
    peer += ["--run", str(run), "--qrels", str(qrels), "--repeats", "1"]
    measured = alternated(ours, peer, repeats)
    groups = ("ndcg", "map", "recall", "precision", "mrr")
    numbers = _ours_numbers(measured["outputs"]["ours"], groups)
    beir = json.loads(measured["outputs"]["peer"].strip().splitlines()[-1])["numbers"]
    return row(
        "run-file evaluation, whole process",
        "beir load_runfile+evaluate+evaluate_custom(mrr), whole process",
        0.18,
        measured,
        numbers == beir,
        f"{queries} queries x {depth} results; {repeats} alternated rounds",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="700 x 200 synthetic run")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--output")
    parser.add_argument("--only", choices=("oneshot", "runfile"))
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 5)
    # Byte-compile the package as ``pip install`` does: with PYTHONDONTWRITEBYTECODE set
    # (as in some shells and CI images) every process would recompile its sources.
    compileall.compile_dir(REPO / "heta_eval", quiet=1)
    rows = []
    if args.only in (None, "oneshot"):
        rows.append(oneshot_row(repeats))
    if args.only in (None, "runfile"):
        rows.append(runfile_row(args.quick, args.repeats or 3))
    text = json.dumps(rows, indent=2)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
