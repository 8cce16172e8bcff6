"""Benchmark BEIR's ``evaluate_custom`` measures from a run file: ``heta-eval evaluate
--measures`` with MRR, R_cap, Hole and Accuracy at BEIR's cutoffs (in-process ``main``; the
file is read into arrays and scored by the compiled engine) against BEIR's path (the
``load_runfile`` loop, the qrels tsv loop, then ``custom_metrics``'s ``mrr``, ``recall_cap``,
``hole`` and ``top_k_accuracy``), alternated in one process, numbers compared.

Usage: ``python bench/bench_custom.py [--quick] [--repeats N] [--output FILE]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _rows import emit, interleaved, log, row, timed  # noqa: E402
from _synthetic import write_run_files  # noqa: E402

K = [1, 3, 5, 10, 100]
NAMES = ",".join(f"{m}@{k}" for m in ("MRR", "R_cap", "Hole", "Accuracy") for k in K)


def ours(run: Path, qrels: Path) -> dict[str, float]:
    from heta_eval.cli import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        main(["evaluate", "--run", str(run), "--qrels", str(qrels), "--measures", NAMES, "--json"])
    measures = json.loads(buffer.getvalue())["measures"]
    return {name: value["beir"] for name, value in measures.items()}


def beir(run: Path, qrels: Path) -> dict[str, float]:
    from beir.retrieval.custom_metrics import hole, mrr, recall_cap, top_k_accuracy

    results: dict[str, dict[str, float]] = {}
    with run.open(encoding="utf-8") as handle:  # beir.util.load_runfile's loop
        for line in handle:
            qid, _, doc_id, _, score, _ = line.strip().split(" ")
            results.setdefault(qid, {})[doc_id] = float(score)
    judged: dict[str, dict[str, int]] = {}
    with qrels.open(encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            qid, doc_id, label = line.rstrip("\n").split("\t")
            judged.setdefault(qid, {})[doc_id] = int(label)
    return {
        **mrr(judged, results, K),
        **recall_cap(judged, results, K),
        **hole(judged, results, K),
        **top_k_accuracy(judged, results, K),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="700 queries x 200 results")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output")
    args = parser.parse_args(argv)
    queries, depth = (700, 200) if args.quick else (6980, 1000)
    run, qrels = write_run_files(HERE / "out", queries, depth, seed=0)
    first_s, _ = timed(lambda: ours(run, qrels))  # imports and the numba cache load
    log(f"bench_custom: first call {first_s:.2f} s")
    logging.disable(logging.INFO)  # custom_metrics logs every value, should a handler listen
    try:
        ours_s, numbers, peer_s, expected = interleaved(
            lambda: ours(run, qrels), lambda: beir(run, qrels), args.repeats
        )
    finally:
        logging.disable(logging.NOTSET)
    ratio = ours_s / peer_s
    rows = [
        row(
            "BEIR's custom measures (MRR, R_cap, Hole, Accuracy) from a run file",
            peer="beir load_runfile + custom_metrics' four functions",
            goal="<= 0.4",
            ours_s=ours_s,
            peer_s=peer_s,
            ratio=ratio,
            met=ratio <= 0.4,
            identical=numbers == expected,
            notes=f"{queries} queries x {depth} results, 20 measures; ratio is our time over "
            f"the peer's; alternated, {args.repeats} rounds; first call {first_s:.2f} s not "
            "in the median",
        )
    ]
    emit(rows, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
