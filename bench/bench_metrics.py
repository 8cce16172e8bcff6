"""Benchmark the metric engine against its peers: run files and chunk-level responses.

Each side runs in its own subprocess (``--side NAME``), repeats the timed work and reports
its times, its rounded numbers and its peak RSS; the parent compares numbers and ratios.

* run-file evaluation: ``heta-eval evaluate --json`` (in-process ``main``) vs BEIR's path
  (``load_runfile``-style ``str.split`` loop, qrels tsv loop, ``EvaluateRetrieval.evaluate``
  and ``evaluate_custom(..., "mrr")``) vs ranx (``Run.from_file`` / ``Qrels.from_file`` +
  ``evaluate``; its numba warm-up is timed separately and excluded).
* chunk-level: ``evaluate_responses`` with the 25 ``beir_default_metrics`` (and with one)
  vs pytrec_eval alone on the equivalent prebuilt document-level dict, for responses given
  as ``ResultColumns`` (what the reference knowledge base returns) and as lists of
  ``QueryResult`` objects.

Usage: ``python bench/bench_metrics.py [--quick] [--repeats N] [--output FILE]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
K = [1, 3, 5, 10, 100]
MEASURES = {f"{m}.1,3,5,10,100" for m in ("ndcg_cut", "map_cut", "recall", "P")}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(function, repeats: int) -> tuple[list[float], object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return times, result


def side_ours_runfile(run: Path, qrels: Path, repeats: int) -> dict:
    from heta_eval.cli import main

    def once() -> dict:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            main(["evaluate", "--run", str(run), "--qrels", str(qrels), "--json"])
        payload = json.loads(buffer.getvalue())
        return {
            key: value
            for group in ("ndcg", "map", "recall", "precision", "mrr")
            for key, value in payload[group].items()
        }

    start = time.perf_counter()
    first = once()  # imports, numba load (or compile when no cache), page cache
    first_s = time.perf_counter() - start
    times, numbers = _timed(once, repeats)
    assert numbers == first
    return {"times": times, "first_s": first_s, "numbers": numbers}


def _beir_qrels(path: Path) -> dict[str, dict[str, int]]:
    import csv

    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_MINIMAL)
        next(reader)
        for row in reader:
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    return qrels


def side_beir_runfile(run: Path, qrels: Path, repeats: int) -> dict:
    import logging

    from beir.retrieval.evaluation import EvaluateRetrieval

    logging.getLogger("beir").setLevel(logging.WARNING)

    def once() -> dict:
        results: dict[str, dict[str, float]] = {}
        with run.open(encoding="utf-8") as handle:  # beir.util.load_runfile's loop
            for line in handle:
                qid, _, doc_id, _, score, _ = line.strip().split(" ")
                results.setdefault(qid, {})[doc_id] = float(score)
        judged = _beir_qrels(qrels)
        ndcg, _map, recall, precision = EvaluateRetrieval.evaluate(judged, results, K)
        mrr = EvaluateRetrieval.evaluate_custom(judged, results, K, "mrr")
        return {**ndcg, **_map, **recall, **precision, **mrr}

    times, numbers = _timed(once, repeats)
    return {"times": times, "numbers": numbers}


def side_ranx_runfile(run: Path, qrels: Path, repeats: int) -> dict:
    from ranx import Qrels, Run, evaluate

    trec_qrels = qrels.with_suffix(".trec-qrels")
    if not trec_qrels.exists():
        with trec_qrels.open("w") as handle:
            for qid, docs in _beir_qrels(qrels).items():
                for doc, label in docs.items():
                    handle.write(f"{qid} 0 {doc} {label}\n")
    metrics = [f"{m}@{k}" for m in ("ndcg", "map", "recall", "precision", "mrr") for k in K]
    start = time.perf_counter()  # numba JIT warm-up on a tiny input
    evaluate(Qrels({"q": {"d": 1}}), Run({"q": {"d": 1.0, "e": 0.5}}), metrics)
    warmup_s = time.perf_counter() - start

    def once() -> dict:
        scores = evaluate(
            Qrels.from_file(str(trec_qrels), kind="trec"),
            Run.from_file(str(run), kind="trec"),
            metrics,
        )
        return {key: round(float(value), 5) for key, value in scores.items()}

    times, numbers = _timed(once, repeats)
    return {"times": times, "numbers": numbers, "warmup_s": warmup_s}


def side_chunks(queries: int, chunks: int, repeats: int, form: str) -> dict:
    """``form``: ``columns`` or ``objects``. Times our 25 and 1 evaluators and pytrec_eval
    alone on the prebuilt document-level dict, alternated round by round in this process
    (same inputs, same machine load), after one untimed call of each."""
    sys.path.insert(0, str(HERE))
    import pytrec_eval
    from _synthetic import make_chunk_columns, make_chunk_responses

    from heta_eval.evaluation import beir_default_metrics, evaluate_responses

    build = make_chunk_columns if form == "columns" else make_chunk_responses
    cases, responses, run, qrels = build(queries, chunks, seed=0)
    all25 = beir_default_metrics()
    assert len(all25) == 25

    def ours(evaluators):
        def once() -> dict:
            report = evaluate_responses(cases, responses, evaluators)
            return {name: summary.beir for name, summary in report.metrics.items()}

        return once

    def pytrec() -> dict:
        pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
        return {}

    sides = {"ours25": ours(all25), "ours1": ours(all25[3:4]), "pytrec": pytrec}  # ndcg@10
    first_s = {}
    for name, once in sides.items():  # numba kernels load (or compile on a fresh machine)
        start = time.perf_counter()
        once()
        first_s[name] = time.perf_counter() - start
    times: dict[str, list[float]] = {name: [] for name in sides}
    numbers = {}
    for i in range(repeats):
        names = list(sides) if i % 2 == 0 else list(sides)[::-1]
        for name in names:
            start = time.perf_counter()
            numbers[name] = sides[name]()
            times[name].append(time.perf_counter() - start)
    from beir.retrieval.evaluation import EvaluateRetrieval

    ndcg, _map, recall, precision = EvaluateRetrieval.evaluate(qrels, run, K)
    mrr = EvaluateRetrieval.evaluate_custom(qrels, run, K, "mrr")
    return {
        "times": times,
        "first_s": first_s,
        "numbers": numbers,
        "beir_numbers": {**ndcg, **_map, **recall, **precision, **mrr},
    }


def _run_side(args: list[str]) -> dict:
    completed = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise RuntimeError(f"side {args} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _row(
    target: str,
    ours: dict,
    peer_name: str,
    peer: dict,
    goal: float,
    identical: bool,
    notes: str,
    compare: str = "<=",
) -> dict:
    ours_s = statistics.median(ours["times"])
    peer_s = statistics.median(peer["times"])
    ratio = ours_s / peer_s
    return {
        "target": target,
        "ours_s": round(ours_s, 3),
        "peer": peer_name,
        "peer_s": round(peer_s, 3),
        "ratio": round(ratio, 3),
        "goal": f"{compare} {goal}",
        "met": ratio <= goal if compare == "<=" else ratio < goal,
        "identical": identical,
        "peak_mb": None
        if ours["peak_mb"] is None
        else {"ours": round(ours["peak_mb"]), "peer": round(peer["peak_mb"])},
        "notes": notes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="700 queries x 200 results")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output")
    parser.add_argument("--only", choices=("runfile", "chunks"))
    parser.add_argument("--side", help=argparse.SUPPRESS)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--qrels", help=argparse.SUPPRESS)
    parser.add_argument("--queries", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--depth", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.side:
        if args.side.startswith("chunks-"):
            out = side_chunks(args.queries, args.depth, args.repeats, args.side.split("-", 1)[1])
        else:
            function = {
                "ours": side_ours_runfile,
                "beir": side_beir_runfile,
                "ranx": side_ranx_runfile,
            }[args.side]
            out = function(Path(args.run), Path(args.qrels), args.repeats)
        out["peak_mb"] = _peak_mb()
        print(json.dumps(out))
        return 0

    sys.path.insert(0, str(HERE))
    from _synthetic import write_run_files

    queries, depth = (700, 200) if args.quick else (6980, 1000)
    reps = ["--repeats", str(args.repeats)]
    rows = []
    if args.only in (None, "runfile"):
        run, qrels = write_run_files(OUT, queries, depth, seed=0)
        files = ["--run", str(run), "--qrels", str(qrels), *reps]
        ours = _run_side(["--side", "ours", *files])
        beir = _run_side(["--side", "beir", *files])
        ranx = _run_side(["--side", "ranx", *files])
        same = ours["numbers"] == beir["numbers"]
        comparable = [k for k in ours["numbers"] if k.split("@")[0] in ("P", "Recall", "MRR")]
        ranx_key = {"P": "precision", "Recall": "recall", "MRR": "mrr"}
        ranx_same = all(
            ours["numbers"][k] == ranx["numbers"][f"{ranx_key[k.split('@')[0]]}@{k.split('@')[1]}"]
            for k in comparable
        )
        size = f"{queries} queries x {depth} results"
        rows.append(
            _row(
                "run-file evaluation",
                ours,
                "beir load_runfile+evaluate+evaluate_custom(mrr)",
                beir,
                0.4,
                same,
                f"{size}; ours first call (imports, numba cache load) "
                f"{ours['first_s']:.2f}s, not in the median",
            )
        )
        rows.append(
            _row(
                "run-file evaluation vs ranx",
                ours,
                "ranx Run.from_file+evaluate",
                ranx,
                1.0,
                ranx_same,
                f"{size}; ranx JIT warm-up {ranx['warmup_s']:.2f}s excluded; compared "
                "P/Recall/MRR only (ranx ranks ties differently and uses its own nDCG/MAP)",
                compare="<",
            )
        )
    if args.only in (None, "chunks"):
        cq, cd = (700, 200) if args.quick else (6980, 1000)
        # Sub-second sides: more rounds than the other rows, for a steadier median.
        shape = ["--queries", str(cq), "--depth", str(cd), "--repeats", str(args.repeats + 2)]
        names = {"NDCG": "ndcg", "MAP": "map", "Recall": "recall", "P": "precision", "MRR": "mrr"}
        size = f"{cq} responses x {cd} chunks (~3 per document)"
        forms = {
            "columns": "ResultColumns over a ChunkTable (what the reference KB returns)",
            "objects": "lists of QueryResult objects",
        }
        for form, described in forms.items():
            side = _run_side(["--side", f"chunks-{form}", *shape])
            same = side["numbers"]["ours25"] == {
                f"{names[key.split('@')[0]]}@{key.split('@')[1]}": value
                for key, value in side["beir_numbers"].items()
            }
            same_one = side["numbers"]["ours1"]["ndcg@10"] == side["numbers"]["ours25"]["ndcg@10"]
            timing = {name: {"times": t, "peak_mb": None} for name, t in side["times"].items()}
            first = side["first_s"]
            notes = (
                f"{size}; {described}; alternated in one process, "
                f"{len(side['times']['ours25'])} rounds; first calls (numba load) "
                f"{first['ours25']:.2f}s / {first['ours1']:.2f}s, not in the median"
            )
            rows.append(
                _row(
                    f"chunk-level responses, {form} (25 metrics)",
                    timing["ours25"],
                    "pytrec_eval alone on the document-level dict",
                    timing["pytrec"],
                    1.3,
                    same,
                    notes,
                )
            )
            rows.append(
                _row(
                    f"25 evaluators vs 1, {form}",
                    timing["ours25"],
                    "evaluate_responses with 1 evaluator (ndcg@10)",
                    timing["ours1"],
                    1.2,
                    same and same_one,
                    notes,
                )
            )
    text = json.dumps(rows, indent=2)
    if args.output:
        Path(args.output).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
