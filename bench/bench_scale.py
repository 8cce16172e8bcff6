"""At scale: BM25 against Anserini 0.22.1, dense search over given vectors against BEIR's exact
search, on a synthetic BEIR corpus of any size.

    python bench/bench_scale.py [--docs N] [--queries N] [--shape msmarco|nq] [--scratch DIR]
                                [--quick] [--repeats N] [--output FILE] [--no-run]
                                [--only bm25|dense] [--dim D]

The corpus (``_beir_corpus.write_beir_corpus``: MS MARCO-shaped passages or NQ-shaped titled
ones, seeded) is generated into ``--scratch`` (default ``bench/out/scale/``, untracked) once
and reused. Default 1,000,000 passages x 2,000 queries (quick: 20,000 x 200), top 1,000.

Rows (each side a fresh process, Anserini's first; ``ratio`` is peer time / ours for time
rows and ours / peer for memory rows; peak memory is that of the side's process tree, our main
process and its indexing worker or Anserini's JVM, shared pages counted once: ``TreePeak``;
the notes add CPU seconds and the plain sums of resident sets):

* ``BM25 run ...`` (whole run): ``heta-eval run --dataset FOLDER --modes keyword_search
  --output OUT`` on a fresh cache, as a user runs it (corpus reading, documents, index build,
  1,000 hits per query, metrics, results folder), against Anserini's ``IndexCollection`` +
  ``SearchCollection -bm25 -hits 1000 -threads 2`` (fresh index). Goals: time <= 1.0x
  Anserini's, peak memory <= 1.5x. ``identical``: every query's top 1,000 the same documents
  in the same order, and our scores printed as Anserini prints them (4 decimals, tie runs
  lowered by 1e-6 a place) the same text, line for line.
* ``BM25 index + search ...`` (the index alone): one process reading the corpus as a lazy
  column from the file, ``LuceneBM25Index.build`` then ``search(queries, 1000)``; the same
  Anserini figures. Notes: build and search seconds apart.

* ``vector_search run, given vectors ...``: seeded unit-length float16 vectors (``--dim``,
  default 384) for every line of corpus.jsonl and queries.jsonl, written beside the corpus;
  ``heta-eval run --modes vector_search --corpus-embeddings --query-embeddings`` on a fresh
  cache against BEIR 2.2.0's ``DenseRetrievalExactSearch`` (``cos_sim``, chunks of 50,000, the
  dataset read by its ``GenericDataLoader``, a model handing back the vectors' rows). Goals:
  time <= 0.5x BEIR's (ratio >= 2), peak memory <= 1.0x. ``identical``: every query's top 10
  the same documents in the same order and its top 1,000 the same set for >= 99.9% of queries.

The BM25 rows skip with the reason where Java or the pyserini wheel is missing. Reports the
load average.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _beir_corpus import write_beir_corpus  # noqa: E402
from _rows import emit, log, row  # noqa: E402

from heta_eval import config  # noqa: E402
from tools.lucene_oracle import anserini  # noqa: E402

PEER = "Anserini 0.22.1 (Java 17, 2 threads)"
DENSE_PEER = "beir 2.2.0 DenseRetrievalExactSearch"

# The index alone, in a fresh process: the corpus streamed from its file (a lazy column), ids
# as an Arrow array; prints build and search seconds and writes the hits.
_INDEX_ONLY = """
import json, sys, time
import numpy as np
from heta_eval.lucene.index import LuceneBM25Index

folder, out = sys.argv[1:3]

class Texts:
    def __init__(self, path, n):
        self.path, self.n = path, n
    def __len__(self):
        return self.n
    def __iter__(self):
        with open(self.path, encoding="utf-8") as lines:
            for line in lines:
                doc = json.loads(line)
                yield f"{doc['title']} {doc['text']}".strip()

ids = np.load(f"{out}/ids.npy")
queries = [json.loads(line)["text"] for line in open(f"{folder}/queries.jsonl", encoding="utf-8")]
started = time.perf_counter()
index = LuceneBM25Index.build({"contents": Texts(f"{folder}/corpus.jsonl", len(ids))},
                              tie_keys=ids, directory=f"{out}/index")
built = time.perf_counter()
idx, scores = index.search(queries, k=1000)
searched = time.perf_counter()
np.save(f"{out}/idx.npy", idx)
np.save(f"{out}/scores.npy", scores)
json.dump({"build": built - started, "search": searched - built}, open(f"{out}/times.json", "w"))
"""


class TreePeak:
    """The peak memory of ``root`` and its descendants (every process started from here, when
    ``root`` is this process), sampled every 0.1 s (a loaded machine may delay a sample: the
    rows take the larger of this and the main process's own peak, which the kernel keeps):
    ``mb``, their resident pages with shared ones (libraries mapped by several of them)
    counted once, i.e. the sum of their private pages plus the most any one of them shares
    (``/proc/PID/smaps_rollup``); ``rss_mb``, the plain sum of their resident sets (which
    counts a shared library once per process)."""

    def __init__(self, root: int, *, exclude_root: bool = False) -> None:
        self.root, self.exclude_root = root, exclude_root
        self.peak = self.rss_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> TreePeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            pids = _descendants(self.root)
            if not self.exclude_root:
                pids.add(self.root)
            private = shared = rss = 0
            for pid in pids:
                mine, theirs = _pages(pid)
                private, shared, rss = private + mine, max(shared, theirs), rss + mine + theirs
            self.peak = max(self.peak, private + shared)
            self.rss_peak = max(self.rss_peak, rss)

    @property
    def mb(self) -> float:
        return self.peak / 2**20

    @property
    def rss_mb(self) -> float:
        return self.rss_peak / 2**20


def _descendants(root: int) -> set[int]:
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _pages(pid: int) -> tuple[int, int]:
    """A process's resident bytes: (private, shared with other processes)."""
    private = shared = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("Private_Clean", "Private_Dirty"):
                private += int(value.split()[0]) * 1024
            elif name in ("Shared_Clean", "Shared_Dirty"):
                shared += int(value.split()[0]) * 1024
    except (OSError, ValueError):
        pass
    return private, shared


def _env(cache: Path) -> dict[str, str]:
    """A fresh knowledge-base cache, and this machine's numba cache: compiled kernels load as
    they do on every run but a machine's first (a fresh cache folder would compile them)."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": path,
        "HETA_EVAL_CACHE_DIR": str(cache),
        "NUMBA_CACHE_DIR": str(config.numba_cache_dir()),
    }


def warm_up(scratch: Path, shape: str) -> None:
    """Compile (once per machine) what the timed runs load: one run of the quick size, which
    is large enough for the metric engine's parallel kernels (200,000 results)."""
    folder = write_beir_corpus(
        scratch / f"{shape}-20000-200", docs=20_000, queries=200, shape=shape
    )
    ours_whole_run(folder, scratch)
    ours_index_only(folder, scratch)


@dataclass
class Side:
    """One side's measurement: wall seconds, peak memory (``TreePeak``), its hits."""

    seconds: float
    mb: float
    rss_mb: float
    hits: dict
    notes: str = ""


def _timed_process(args: list[str], env: dict[str, str]) -> tuple[float, float, TreePeak, float]:
    """Run a fresh process: wall seconds, CPU seconds (its own and its children's), its
    tree's peak, its own peak MB (wait4)."""
    started = time.perf_counter()
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL)
    with TreePeak(process.pid) as peak:
        _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:4])} ... exited {process.returncode}")
    return seconds, usage.ru_utime + usage.ru_stime, peak, usage.ru_maxrss / 1024


def ours_whole_run(folder: Path, scratch: Path) -> Side:
    """``heta-eval run`` on a fresh cache."""
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        out = Path(tmp) / "results"
        args = [
            sys.executable,
            "-m",
            "heta_eval",
            "run",
            "--dataset",
            str(folder),
            "--modes",
            "keyword_search",
            "--output",
            str(out),
            "--quiet",
        ]
        seconds, cpu, peak, main = _timed_process(args, _env(Path(tmp) / "cache"))
        build = json.loads((out / "summary.json").read_text())["build"]
        notes = (
            f"ours: index {build.get('bm25_seconds')} s of the run, {cpu:.0f} CPU s, main "
            f"process {main:,.0f} MB"
        )
        hits = _read_trec(out / "runs" / "keyword_search.trec")
        return Side(seconds, max(peak.mb, main), max(peak.rss_mb, main), hits, notes)


def ours_index_only(folder: Path, scratch: Path) -> Side:
    """Build + search in one fresh process (seconds: the build's and the search's)."""
    ids = _corpus_ids(folder)
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        np.save(Path(tmp) / "ids.npy", np.array(ids))
        args = [sys.executable, "-c", _INDEX_ONLY, str(folder), tmp]
        _, cpu, peak, main = _timed_process(args, _env(Path(tmp) / "cache"))
        times = json.loads((Path(tmp) / "times.json").read_text())
        idx, scores = np.load(Path(tmp) / "idx.npy"), np.load(Path(tmp) / "scores.npy")
    hits = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as lines:
        for line, row, values in zip(lines, idx.tolist(), scores.tolist(), strict=True):
            ranked = zip(row, values, strict=True)
            hits[json.loads(line)["_id"]] = [(ids[i], s) for i, s in ranked if i >= 0]
    notes = (
        f"ours: build {times['build']:.1f} s + search {times['search']:.1f} s, {cpu:.0f} "
        f"CPU s (process start included), main process {main:,.0f} MB"
    )
    seconds = times["build"] + times["search"]
    return Side(seconds, max(peak.mb, main), max(peak.rss_mb, main), hits, notes)


def _corpus_ids(folder: Path) -> list[str]:
    with open(folder / "corpus.jsonl", encoding="utf-8") as lines:
        return [json.loads(line)["_id"] for line in lines]


def peer_run(folder: Path) -> Side:
    """Anserini, fresh (its JVMs are this process's children)."""
    topics = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as lines:
        for line in lines:
            query = json.loads(line)
            topics[query["_id"]] = query["text"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with TreePeak(os.getpid(), exclude_root=True) as peak:
        run = anserini.bm25_run(folder / "corpus.jsonl", topics, fresh=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    # The largest JVM's own peak: exact where the samples missed a moment (it runs first, so
    # no child of ours came before it).
    jvm = after.ru_maxrss / 1024
    index_s, search_s = run.index_seconds or 0.0, run.search_seconds or 0.0
    notes = f"Anserini: index {index_s:.1f} s + search {search_s:.1f} s, {cpu:.0f} CPU s"
    return Side(index_s + search_s, max(peak.mb, jvm), max(peak.rss_mb, jvm), run.hits, notes)


def _read_trec(path: Path) -> dict[str, list[tuple[str, float]]]:
    hits: dict[str, list[tuple[str, float]]] = {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            qid, _, docid, _, score, _ = line.split()
            hits.setdefault(qid, []).append((docid, float(score)))
    return hits


def identical(ours: dict, peer: dict) -> tuple[bool, str]:
    """Every query's top 1,000: the same ids in the same order, and our scores, printed as
    Anserini prints them, the same text; and a note on the differences."""
    differ = printed = 0
    for q in set(ours) | set(peer):
        a, b = ours.get(q, [])[:1000], peer.get(q, [])
        differ += [d for d, _ in a] != [d for d, _ in b]
        printed += anserini_printed([s for _, s in a]) != [f"{s:.6f}" for _, s in b]
    note = f"{differ} of {len(peer)} queries' ids differ, {printed} queries' printed scores differ"
    return differ == 0 and printed == 0, note


def anserini_printed(scores: list[float]) -> list[str]:
    """Float32 scores as Anserini's run files print them: rounded to 4 decimals (in double),
    and within a run of scores no more than 1e-4 apart each lowered by 1e-6 per place (in
    float32), so that trec_eval keeps the order."""
    out, previous, dup = [], np.float32(0), 0
    for score in scores:
        current = np.float32(math.floor(float(np.float32(score)) * 1e4 + 0.5) / 1e4)
        if previous == 0 or previous - current > np.float32(1e-4):
            dup = 0
        else:
            dup += 1
            current = np.float32(current - np.float32(1e-6) * np.float32(dup))
        out.append(f"{float(current):.6f}")
        previous = current
    return out


# BEIR's DenseRetrievalExactSearch over the given vectors, as a BEIR user runs it: the
# dataset through GenericDataLoader, a model whose encode_* hand back the vectors' rows.
_BEIR_DENSE = """
import json, sys
import numpy as np, torch
from beir.datasets.data_loader import GenericDataLoader
from beir.retrieval.search.dense import DenseRetrievalExactSearch

folder, corpus_npy, queries_npy, out = sys.argv[1:5]
corpus, queries, qrels = GenericDataLoader(folder).load(split="test")
with open(f"{folder}/corpus.jsonl", encoding="utf-8") as lines:
    row = {json.loads(line)["_id"]: i for i, line in enumerate(lines)}
with open(f"{folder}/queries.jsonl", encoding="utf-8") as lines:
    query_row = {json.loads(line)["_id"]: i for i, line in enumerate(lines)}
vectors, query_vectors = np.load(corpus_npy, mmap_mode="r"), np.load(queries_npy)
for doc_id, doc in corpus.items():
    doc["row"] = row[doc_id]

class Given:
    def encode_queries(self, texts, **kwargs):
        return torch.from_numpy(query_vectors[[query_row[t] for t in texts]].astype("f4"))
    def encode_corpus(self, docs, **kwargs):
        return torch.from_numpy(np.asarray(vectors[[d["row"] for d in docs]], dtype="f4"))

search = DenseRetrievalExactSearch(Given(), corpus_chunk_size=50000, show_progress_bar=False)
results = search.search(corpus, {q: q for q in queries}, 1000, "cos_sim")
json.dump({q: sorted(docs, key=lambda d: -docs[d]) for q, docs in results.items()},
          open(out, "w"))
"""


def write_vectors(folder: Path, dim: int, seed: int = 0) -> tuple[Path, Path]:
    """Seeded unit-length float16 vectors for every line of the folder's corpus.jsonl and
    queries.jsonl (written once, reused)."""
    corpus, queries = folder / f"corpus-{dim}.npy", folder / f"queries-{dim}.npy"
    if corpus.exists() and queries.exists():
        return corpus, queries
    for path, source in ((corpus, "corpus.jsonl"), (queries, "queries.jsonl")):
        with open(folder / source, "rb") as lines:
            rows = sum(1 for _ in lines)
        rng = np.random.default_rng([seed, rows, dim])
        out = np.lib.format.open_memmap(
            path.with_suffix(".part"), mode="w+", dtype=np.float16, shape=(rows, dim)
        )
        for start in range(0, rows, 100_000):
            block = rng.standard_normal((min(100_000, rows - start), dim), dtype=np.float32)
            out[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
        out.flush()
        del out
        path.with_suffix(".part").rename(path)
    return corpus, queries


def ours_dense_run(folder: Path, scratch: Path, vectors: tuple[Path, Path]) -> Side:
    """``heta-eval run --modes vector_search`` over the given vectors, on a fresh cache."""
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        out = Path(tmp) / "results"
        args = [
            sys.executable,
            "-m",
            "heta_eval",
            "run",
            "--dataset",
            str(folder),
            "--modes",
            "vector_search",
            "--corpus-embeddings",
            str(vectors[0]),
            "--query-embeddings",
            str(vectors[1]),
            "--output",
            str(out),
            "--quiet",
        ]
        seconds, cpu, peak, main = _timed_process(args, _env(Path(tmp) / "cache"))
        hits = _read_trec(out / "runs" / "vector_search.trec")
    notes = f"ours: {cpu:.0f} CPU s, main process {main:,.0f} MB"
    return Side(seconds, max(peak.mb, main), max(peak.rss_mb, main), hits, notes)


def peer_dense_run(folder: Path, scratch: Path, vectors: tuple[Path, Path]) -> Side:
    """BEIR's exact search over the same vectors, a fresh process."""
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        out = Path(tmp) / "results.json"
        args = [
            sys.executable,
            "-c",
            _BEIR_DENSE,
            str(folder),
            str(vectors[0]),
            str(vectors[1]),
            str(out),
        ]
        seconds, cpu, peak, main = _timed_process(args, _env(Path(tmp) / "cache"))
        ranked = json.loads(out.read_text())
    notes = f"BEIR: {cpu:.0f} CPU s"
    hits = {q: [(d, 0.0) for d in docs] for q, docs in ranked.items()}
    return Side(seconds, max(peak.mb, main), max(peak.rss_mb, main), hits, notes)


#: Exact (float64) cosines this close are float32 ties: the two sides' products round in
#: different orders (about 1e-8 at the cut's ~0.16), while neighbouring scores at the cut of
#: 1M random vectors are about 1.5e-5 apart.
FLOAT_TIE = 1e-6


def same_dense(
    ours: dict, peer: dict, folder: Path | None = None, vectors: tuple[Path, Path] | None = None
) -> tuple[bool, str]:
    """Top 10 the same documents in the same order for every query, and the top 1,000 the
    same set for at least 99.9% of queries (float rounding may swap rows at the cut). With the
    vectors, each query whose sets differ is checked: do the documents in one set only all
    score, exactly (float64), within ``FLOAT_TIE`` of the cut?"""
    top10 = sets = 0
    differ = []
    for q, theirs in peer.items():
        mine = [d for d, _ in ours.get(q, []) if d != q][:1000]
        top10 += mine[:10] == [d for d, _ in theirs[:10]]
        same = set(mine) == {d for d, _ in theirs}
        sets += same
        if not same:
            differ.append((q, mine, [d for d, _ in theirs]))
    n = len(peer)
    note = f"top 10 equal for {top10:,} of {n:,} queries, top-1000 sets for {sets:,}"
    if differ and folder is not None and vectors is not None:
        gaps = _cut_gaps(differ, folder, vectors)
        ties = sum(gap <= FLOAT_TIE for gap in gaps)
        note += (
            f"; of the {len(differ)} others, {ties} differ only by float ties at the cut "
            f"(exact cosines within {FLOAT_TIE:g} of the 1,000th: largest gap "
            f"{max(gaps):.2g})"
        )
    return top10 == n and sets >= 0.999 * n, note


def _cut_gaps(differ: list, folder: Path, vectors: tuple[Path, Path]) -> list[float]:
    """Per query whose top-1000 sets differ, the largest distance, in exact float64 cosine,
    between a document in one set only and the 1,000th of ours."""
    row = {doc_id: i for i, doc_id in enumerate(_corpus_ids(folder))}
    with open(folder / "queries.jsonl", encoding="utf-8") as lines:
        query_row = {json.loads(line)["_id"]: i for i, line in enumerate(lines)}
    corpus, queries = np.load(vectors[0], mmap_mode="r"), np.load(vectors[1], mmap_mode="r")

    def cosine(q: str, docs: list[str]) -> np.ndarray:
        v = np.asarray(queries[query_row[q]], dtype=np.float64)
        m = np.asarray(corpus[[row[d] for d in docs]], dtype=np.float64)
        return m @ v / (np.linalg.norm(m, axis=1) * np.linalg.norm(v))

    gaps = []
    for q, mine, theirs in differ:
        odd = sorted(set(mine) ^ set(theirs))
        cut = cosine(q, [mine[-1]])[0]
        gaps.append(float(np.abs(cosine(q, odd) - cut).max()))
    return gaps


def dense_rows(folder: Path, scratch: Path, label: str, dim: int) -> list[dict[str, Any]]:
    """Given float16 vectors searched by ``heta-eval run`` and by BEIR's exact search."""
    vectors = write_vectors(folder, dim)
    # Compile (once per machine) what the timed run loads, as warm_up does for BM25.
    small = write_beir_corpus(scratch / "msmarco-20000-200", docs=20_000, queries=200)
    ours_dense_run(small, scratch, write_vectors(small, dim))
    load = [round(x, 1) for x in os.getloadavg()]
    peer = peer_dense_run(folder, scratch, vectors)
    ours = ours_dense_run(folder, scratch, vectors)
    same, note = same_dense(ours.hits, peer.hits, folder, vectors)
    log(
        f"dense: ours {ours.seconds:.1f} s {ours.mb:,.0f} MB, BEIR {peer.seconds:.1f} s "
        f"{peer.mb:,.0f} MB; {note}"
    )
    notes = (
        f"{ours.notes}; {peer.notes}; {note}; {dim}-dimensional float16 vectors given "
        f"(--corpus-embeddings, --query-embeddings), cos_sim; peak memory of the process "
        f"tree, shared pages once; load {load}"
    )
    target = f"vector_search run, given vectors, {label}"
    return [
        row(
            f"{target} vs BEIR exact search, time",
            peer=DENSE_PEER,
            goal=">= 2.0",
            ours_s=ours.seconds,
            peer_s=peer.seconds,
            identical=same,
            notes=notes,
        ),
        _memory_row(
            f"{target} vs BEIR exact search, peak memory",
            ours.mb,
            peer.mb,
            same,
            notes,
            goal=1.0,
            peer=DENSE_PEER,
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=None, help="passages (default 1,000,000)")
    parser.add_argument("--queries", type=int, default=None, help="queries (default 2,000)")
    parser.add_argument("--shape", choices=["msmarco", "nq"], default="msmarco")
    parser.add_argument("--scratch", type=Path, default=ROOT / "bench" / "out" / "scale")
    parser.add_argument("--quick", action="store_true", help="20,000 x 200")
    parser.add_argument("--repeats", type=int, default=1, help="(one run each: minutes)")
    parser.add_argument("--no-run", action="store_true", help="the index rows only")
    parser.add_argument("--output", type=Path)
    parser.add_argument("--only", choices=["bm25", "dense"], help="one kind of rows")
    parser.add_argument("--dim", type=int, default=384, help="dense vectors' dimension")
    args = parser.parse_args(argv)
    docs = args.docs or (20_000 if args.quick else 1_000_000)
    queries = args.queries or (200 if args.quick else 2_000)
    label = f"{args.shape} {docs:,} x {queries:,} @1000"
    args.scratch.mkdir(parents=True, exist_ok=True)
    log(f"corpus: {label} in {args.scratch}")
    folder = write_beir_corpus(
        args.scratch / f"{args.shape}-{docs}-{queries}",
        docs=docs,
        queries=queries,
        shape=args.shape,
    )
    rows: list[dict[str, Any]] = []
    if args.only != "dense":
        reason = anserini.unavailable()
        if reason is not None:
            rows.append(
                row(f"BM25 run {label}", peer=PEER, goal=">= 1.0", notes=f"skipped: {reason}")
            )
        else:
            rows += measure(folder, args.scratch, label, args.shape, run=not args.no_run)
    if args.only != "bm25":
        rows += dense_rows(folder, args.scratch, label, args.dim)
    emit(rows, args.output)
    return 0


def measure(
    folder: Path, scratch: Path, label: str, shape: str, *, run: bool
) -> list[dict[str, Any]]:
    """The rows: Anserini once (first: no child of this process before its JVMs), a warm-up,
    then ours (whole run, index alone)."""
    load = [round(x, 1) for x in os.getloadavg()]
    peer = peer_run(folder)
    warm_up(scratch, shape)
    log(f"{peer.notes}, peak {peer.mb:,.0f} MB")
    rows = []
    sides = [("BM25 run", ours_whole_run)] if run else []
    for name, measured in [*sides, ("BM25 index + search", ours_index_only)]:
        ours = measured(folder, scratch)
        same, note = identical(ours.hits, peer.hits)
        log(f"{name}: {ours.seconds:.1f} s ({ours.notes}), peak {ours.mb:,.0f} MB; {note}")
        notes = (
            f"{ours.notes}; {peer.notes}; {note}; peak memory of the process tree, shared "
            f"pages once (summed resident sets: ours {ours.rss_mb:,.0f} MB, Anserini "
            f"{peer.rss_mb:,.0f} MB); load {load}"
        )
        rows += [
            row(
                f"{name} {label} vs Anserini, time",
                peer=PEER,
                goal=">= 1.0",
                ours_s=ours.seconds,
                peer_s=peer.seconds,
                identical=same,
                notes=notes,
            ),
            _memory_row(f"{name} {label} vs Anserini, peak memory", ours.mb, peer.mb, same, notes),
        ]
    return rows


def _memory_row(
    target: str,
    ours_mb: float,
    peer_mb: float,
    same: bool,
    notes: str,
    *,
    goal: float = 1.5,
    peer: str = PEER,
) -> dict:
    ratio = ours_mb / peer_mb if peer_mb else None
    out = row(target, peer=peer, goal=f"<= {goal}", ratio=ratio, identical=same, notes=notes)
    out["ours_value"], out["peer_value"] = f"{ours_mb:,.0f} MB", f"{peer_mb:,.0f} MB"
    out["met"] = ratio is not None and ratio <= goal
    return out


if __name__ == "__main__":
    sys.exit(main())
