"""Lucene BM25 without Java vs Anserini 0.22.1 (Java), on SciFact, in the same run.

Row ``keyword_search SciFact index + search vs Anserini``: wall seconds of indexing the 5,183
SciFact documents (title + text, flat) and searching its 300 test queries for 1,000 hits each,
each side in a fresh process: ours (``LuceneBM25Index.build`` + ``search``; Python start,
imports and the numba cache load included) and Anserini's ``IndexCollection`` +
``SearchCollection`` (2 threads, JVM start included, as a user runs it). ``identical``:
the same ranked top-1000 for >= 99% of queries, scores within 1e-4. Skips with the reason
where Java or the pyserini wheel is missing.

    python bench/bench_lucene.py [--quick] [--repeats N] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _rows import emit, log, row  # noqa: E402

from tools.lucene_oracle import anserini  # noqa: E402

TARGET = "keyword_search SciFact index + search vs Anserini"

# Ours, as a fresh process would run it: read, analyze, index, search, write the hits.
_OURS = """
import json, sys
from heta_eval.lucene.index import LuceneBM25Index
corpus, topics, out = sys.argv[1:4]
docs = [json.loads(line) for line in open(corpus, encoding="utf-8")]
ids = [d["_id"] for d in docs]
index = LuceneBM25Index.build({"contents": [f"{d['title']} {d['text']}" for d in docs]},
                              tie_keys=ids)
topics = json.load(open(topics, encoding="utf-8"))
idx, scores = index.search(list(topics.values()), k=1001)
hits = {q: [(ids[i], float(s)) for i, s in zip(idx[r], scores[r]) if i >= 0 and ids[i] != q][:1000]
        for r, q in enumerate(topics)}
json.dump(hits, open(out, "w"))
"""


def scifact() -> tuple[Path, dict[str, str]]:
    from heta_eval.data.beir_loader import load_beir

    folder = Path(os.environ.get("HETA_EVAL_DATA", ROOT.parent / "shared/datasets/beir"))
    folder = folder / "scifact"
    dataset = load_beir(folder, "test")
    return folder / "corpus.jsonl", {q: dataset.queries[q] for q in dataset.qrels}


def ours(corpus: Path, topics: dict[str, str]) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        topic_file, out = Path(tmp) / "topics.json", Path(tmp) / "hits.json"
        topic_file.write_text(json.dumps(topics), encoding="utf-8")
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path}
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", _OURS, str(corpus), str(topic_file), str(out)],
            check=True,
            env=env,
        )
        seconds = time.perf_counter() - started
        return seconds, json.loads(out.read_text())


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def same_runs(a: dict, b: dict) -> bool:
    same = worst = 0.0
    for q, hits in b.items():
        got = a[q][: len(hits)]
        same += [d for d, _ in got] == [d for d, _ in hits]
        scores = dict(got)
        worst = max([worst, *(abs(scores[d] - s) for d, s in hits if d in scores)])
    return same / len(b) >= 0.99 and worst <= 1e-4


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="(same run: it is one SciFact)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    reason = anserini.unavailable()
    if reason is not None:
        emit(
            [row(TARGET, peer="Anserini 0.22.1", goal=">= 1", notes=f"skipped: {reason}")],
            args.output,
        )
        return 0
    corpus, topics = scifact()
    ours(corpus, topics)  # warm: the numba kernel compiles once per machine (disk cache)
    ours_times, peer_times, identical = [], [], True
    cpu = {"ours": [], "peer": []}
    for i in range(max(1, args.repeats)):
        # Alternate which side goes first, so load from other jobs hits both alike.
        for side in ("ours", "peer") if i % 2 == 0 else ("peer", "ours"):
            before = children_cpu()
            if side == "ours":
                seconds, our_hits = ours(corpus, topics)
                ours_times.append(seconds)
            else:
                started = time.perf_counter()
                run = anserini.bm25_run(corpus, topics, fresh=True)
                peer_times.append(time.perf_counter() - started)
                peer_hits = run.hits
                log(f"anserini: index {run.index_seconds:.1f} s, search {run.search_seconds:.1f} s")
            cpu[side].append(children_cpu() - before)
        identical = identical and same_runs(our_hits, peer_hits)
    ours_s, peer_s = min(ours_times), min(peer_times)
    emit(
        [
            row(
                TARGET,
                peer="Anserini 0.22.1 (Java 17, 2 threads)",
                goal=">= 1",
                ours_s=ours_s,
                peer_s=peer_s,
                units=len(topics),
                identical=identical,
                notes=f"best of {len(ours_times)}; fresh processes; CPU s (user + sys): ours "
                f"{min(cpu['ours']):.1f}, Anserini {min(cpu['peer']):.1f}; "
                f"load {os.getloadavg()[0]:.1f}",
            )
        ],
        args.output,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
