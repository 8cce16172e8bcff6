"""Knowledge-base speed: BM25 build and retrieval vs raw ``bm25s`` (target 3), dense
encoding vs plain sentence-transformers float32 (target 4).

Rows (JSON list on stdout or ``--output``), medians of ``--repeats`` alternated runs:

* ``keyword_search build``: ``BM25Index.build`` vs ``bm25s.tokenize`` + ``BM25.index``
  (Lucene, k1=0.9, b=0.4, Snowball English stemmer, English stopwords), seeded synthetic
  corpus (Zipf vocabulary, ~60 tokens a passage).
* ``keyword_search top-1000 batch``: ``BM25Index.search`` vs bm25s's numba backend (query
  tokenization included in both; JIT warm-ups timed apart and reported in notes).
* ``keyword_search top-1000 per query``: the reference KB's path (``scores`` +
  ``top_indices`` per query) vs bm25s's default numpy backend ``retrieve``.
* ``vector_search encoding``: ``DenseEncoder()`` (default precision ``auto``) vs
  ``SentenceTransformer(all-MiniLM-L6-v2).encode`` in float32, on SciFact abstracts.
* ``vector_search encoding without bfloat16``: where ``auto`` picks bfloat16, the precision it
  picks on this CPU with its bfloat16 flags removed (int8 on x86), vs the same peer, in the
  same rotation; ``vector_search encoding in bfloat16 (auto does not pick it here)``: where
  the CPU has bfloat16 instructions but ``auto`` does not use them (Intel without AMX),
  bfloat16 itself, to show why.
* ``vector_search cached rebuild``: the same recipe on the same corpus, built twice.
* ``vector_search nDCG@10 <precision> vs float32`` (full run only): SciFact nDCG@10 of the
  default precision and of the no-bfloat16 one, each minus float32's (via ``heta-eval run``;
  embeddings come from the recipe cache after the first run).

    python bench/bench_kb.py [--quick] [--repeats N] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _rows import emit, interleaved, log, row, timed  # noqa: E402

from heta_eval.kb.bm25 import BM25Index, top_indices  # noqa: E402

K1, B, METHOD = 0.9, 0.4, "lucene"

_SYLLABLES = ("ka", "to", "ri", "men", "sal", "por", "tin", "ve", "lo", "dra", "qu", "an",
              "est", "ion", "ber", "cul")  # fmt: skip
_SUFFIXES = ["", "", "", "s", "ing", "ed", "ation", "ly"]
_STOP = ("the", "of", "and", "to", "in", "a", "is", "that", "for", "with", "as", "on", "by",
         "are", "was")  # fmt: skip


def synthetic_corpus(
    passages: int, queries: int, *, seed: int = 0, vocab: int = 50_000
) -> tuple[list[str], list[str]]:
    """Seeded passages (Zipf(1.07) words, ~60 tokens, stopwords the most frequent words,
    inflected forms the stemmer folds) and 6-word queries drawn from the same distribution."""
    rng = np.random.default_rng(seed)
    words, seen = list(_STOP), set(_STOP)
    while len(words) < vocab:
        parts = rng.integers(0, len(_SYLLABLES), rng.integers(2, 5))
        word = "".join(_SYLLABLES[i] for i in parts) + _SUFFIXES[rng.integers(len(_SUFFIXES))]
        if word not in seen:
            seen.add(word)
            words.append(word)
    table = np.array(words)
    p = 1.0 / np.arange(1, vocab + 1) ** 1.07
    p /= p.sum()
    lengths = np.clip(rng.normal(60, 20, passages).astype(int), 5, 200)
    tokens = table[rng.choice(vocab, size=int(lengths.sum()), p=p)]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    corpus = [" ".join(tokens[bounds[i] : bounds[i + 1]]) for i in range(passages)]
    qwords = table[rng.choice(vocab, size=queries * 6, p=p)]
    return corpus, [" ".join(qwords[i * 6 : (i + 1) * 6]) for i in range(queries)]


def same_top_k(ids_a: np.ndarray, sc_a: np.ndarray, ids_b: np.ndarray, sc_b: np.ndarray) -> bool:
    """Identical scores rank by rank, and identical ids up to the order of equal scores (and
    the choice among texts tied exactly at the k-th score, which a cut may split)."""
    if sc_a.shape != sc_b.shape or not np.array_equal(sc_a, sc_b):
        return False
    for ia, ib, s in zip(ids_a, ids_b, sc_a, strict=True):
        above = s > s[-1]
        if not np.array_equal(np.sort(ia[above]), np.sort(ib[above])):
            return False
    return True


def keyword_rows(
    passages: int, queries: int, repeats: int, seed: int, *, numba_peer: bool = True
) -> list[dict[str, Any]]:
    import bm25s
    import Stemmer

    log(f"keyword_search: generating {passages} passages, {queries} queries")
    corpus, qs = synthetic_corpus(passages, queries, seed=seed)
    k = min(1000, passages)
    stemmer = Stemmer.Stemmer("english")
    settings = f"{METHOD}, k1={K1}, b={B}, Snowball English, English stopwords"

    def raw_build(backend: str = "numpy") -> Any:
        tokens = bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False)
        retriever = bm25s.BM25(method=METHOD, k1=K1, b=B, backend=backend)
        retriever.index(tokens, show_progress=False)
        return retriever

    log("keyword_search: build")
    ours_s, ours_ix, peer_s, raw = interleaved(
        lambda: BM25Index.build(corpus, progress=False), raw_build, repeats
    )
    mine: Any = ours_ix.retriever
    same_index = mine.vocab_dict == raw.vocab_dict and all(
        np.array_equal(mine.scores[key], raw.scores[key]) for key in ("data", "indices", "indptr")
    )
    rows = [
        row(
            "keyword_search build",
            ours_s=ours_s,
            peer="bm25s tokenize + index (numpy)",
            peer_s=peer_s,
            units=passages,
            goal=">= 0.8",
            identical=same_index,
            notes=f"{passages} passages/s; {settings}; identical = same vocabulary and CSC arrays",
        )
    ]

    def raw_tokens() -> list[list[str]]:
        return bm25s.tokenize(
            qs, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
        )

    # The numba peer: same index, numba backend; its JIT is compiled on first use in every
    # process (~15 s here), so --quick compares with the numpy backend on all cores instead.
    threads = os.cpu_count() or 1
    backend = "numba" if numba_peer else "numpy"
    batch_raw = raw_build(backend)
    raw_jit_s, _ = timed(
        lambda: batch_raw.retrieve(raw_tokens()[:8], k=k, n_threads=threads, show_progress=False)
    )
    # Ours: a numba kernel cached on disk, so only the first use on a machine compiles.
    ours_jit_s, _ = timed(lambda: ours_ix.search(qs[:8], k))

    def raw_numba() -> tuple[np.ndarray, np.ndarray]:
        docs, scores = batch_raw.retrieve(raw_tokens(), k=k, n_threads=threads, show_progress=False)
        return docs, scores

    log("keyword_search: top-k batch")
    ours_s, (oi, osc), peer_s, (pi, psc) = interleaved(
        lambda: ours_ix.search(qs, k), raw_numba, repeats
    )
    rows.append(
        row(
            f"keyword_search top-{k} batch",
            ours_s=ours_s,
            peer=f"bm25s {backend} backend, n_threads={threads}",
            peer_s=peer_s,
            units=queries,
            goal=">= 0.8",
            identical=same_top_k(oi, osc, pi, psc),
            notes=(
                f"queries/s over {passages} passages, tokenization included; JIT warm-up "
                f"apart: ours {ours_jit_s:.2f} s (on-disk cache), bm25s {raw_jit_s:.2f} s"
            ),
        )
    )

    def ours_per_query() -> tuple[np.ndarray, np.ndarray]:
        ids, scores = [], []
        for q in qs:
            s = ours_ix.scores(q)
            top = top_indices(s, k)
            ids.append(top)
            scores.append(s[top])
        return np.stack(ids), np.stack(scores)

    def raw_numpy() -> tuple[np.ndarray, np.ndarray]:
        docs, scores = raw.retrieve(raw_tokens(), k=k, show_progress=False)
        return docs, scores

    log("keyword_search: top-k per query")
    ours_s, (oi, osc), peer_s, (pi, psc) = interleaved(ours_per_query, raw_numpy, repeats)
    rows.append(
        row(
            f"keyword_search top-{k} per query",
            ours_s=ours_s,
            peer="bm25s numpy backend (its default)",
            peer_s=peer_s,
            units=queries,
            goal=">= 0.8",
            identical=same_top_k(oi, osc, pi, psc),
            notes="the reference KB's path: BM25Index.scores + top_indices, one query at a time",
        )
    )
    return rows


def data_dir() -> Path:
    env = os.environ.get("HETA_EVAL_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "datasets" / "beir"


def scifact_texts(n: int) -> tuple[list[str], str]:
    """The first ``n`` SciFact abstracts as BEIR encodes them (title + " " + text), or
    synthetic sentences where SciFact is not on disk."""
    path = data_dir() / "scifact" / "corpus.jsonl"
    if path.is_file():
        texts = []
        with path.open(encoding="utf-8") as f:
            for line in f:
                doc = json.loads(line)
                texts.append(f"{doc.get('title', '')} {doc['text']}".strip())
                if len(texts) == n:
                    break
        return texts, f"first {len(texts)} SciFact abstracts"
    corpus, _ = synthetic_corpus(n, 1, seed=1)
    return corpus, f"{n} synthetic passages (SciFact not found at {path})"


def rotated(fns: dict[str, Any], repeats: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Median seconds and last result of each function, run in a rotating order so that load
    from other jobs on a shared machine hits all alike."""
    names = list(fns)
    times: dict[str, list[float]] = {name: [] for name in names}
    results: dict[str, Any] = {}
    for i in range(max(1, repeats)):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            seconds, results[name] = timed(fns[name])
            times[name].append(seconds)
    return {name: float(np.median(t)) for name, t in times.items()}, results


def vector_rows(texts_n: int, repeats: int, ndcg: bool) -> list[dict[str, Any]]:
    import torch
    from sentence_transformers import SentenceTransformer

    from heta_eval.kb import Recipe
    from heta_eval.kb.dense import DenseEncoder, default_model_path
    from heta_eval.kb.precision import choose_precision, cpu_flags, cpu_vendor
    from heta_eval.models.records import Document

    texts, what = scifact_texts(texts_n)
    log(f"vector_search: encoding {what}")
    ours = DenseEncoder(device="cpu")  # default precision "auto"
    # The other side of auto's bfloat16 rule: where auto picks bfloat16, what it picks on a
    # CPU like this one where bfloat16 is not fast (int8 on x86); where it does not pick
    # bfloat16 but the CPU has the instructions (an Intel CPU without AMX), bfloat16 itself.
    no_bf16 = choose_precision("cpu", cpu_flags() - {"avx512_bf16", "amx_bf16"}, cpu_vendor())
    has_bf16 = bool(cpu_flags() & {"avx512_bf16", "amx_bf16"})
    alternative = no_bf16 if ours.precision == "bfloat16" or not has_bf16 else "bfloat16"
    other = DenseEncoder(device="cpu", precision=alternative)
    batch = ours.batch_size
    # BEIR's path: SentenceTransformer(model).encode(texts, batch_size=...) in float32.
    peer = SentenceTransformer(default_model_path(), device="cpu")
    for encoder in (ours, other):  # load (int8: export once per machine) + warm up
        encoder.encode(texts[:8])
    peer.encode(texts[:8], batch_size=batch, show_progress_bar=False)

    def peer_encode() -> np.ndarray:
        with torch.inference_mode():
            return peer.encode(
                texts, batch_size=batch, convert_to_numpy=True, show_progress_bar=False
            )

    fns = {"peer": peer_encode, "auto": lambda: ours.encode(texts)}
    if other.precision != ours.precision:
        fns["other"] = lambda: other.encode(texts)
    seconds, results = rotated(fns, repeats)
    theirs = results["peer"] / np.linalg.norm(results["peer"], axis=1, keepdims=True)
    flags = sorted(cpu_flags() & {"avx512_bf16", "amx_bf16", "avx512_vnni", "avx2"})
    rows = []
    if other.precision == "bfloat16":
        other_label = "vector_search encoding in bfloat16 (auto does not pick it here)"
        other_how = "bfloat16, which this CPU has but auto does not pick on it"
    else:
        other_label = f"vector_search encoding without bfloat16 ({other.precision})"
        other_how = f"the precision auto picks without bfloat16: {other.precision}"
    for name, encoder, label in [
        ("auto", ours, "vector_search encoding"),
        ("other", other, other_label),
    ]:
        if name not in seconds:
            continue
        cosines = np.sum(results[name] * theirs, axis=1)
        how = f"precision auto -> {encoder.precision}" if name == "auto" else other_how
        rows.append(
            row(
                label,
                ours_s=seconds[name],
                peer="sentence-transformers float32",
                peer_s=seconds["peer"],
                units=len(texts),
                goal=">= 1.8",
                identical=None,
                notes=(
                    f"texts/s, {what}, all-MiniLM-L6-v2, batch {batch}, "
                    f"{torch.get_num_threads()} threads, CPU flags {flags}; ours: {how}; "
                    f"cosine to float32 min {cosines.min():.4f} mean {cosines.mean():.5f}"
                ),
            )
        )

    # Cache: the same recipe on the same documents, built twice into one fresh cache.
    docs = [Document(id=str(i), text=t) for i, t in enumerate(texts[:64])]
    recipe = Recipe(modes=["vector_search"])
    with tempfile.TemporaryDirectory() as cache:
        first_s, first = timed(lambda: recipe.build("b", docs, cache_dir=cache, progress=False))
        second_s, second = timed(lambda: recipe.build("b", docs, cache_dir=cache, progress=False))
    reused = second.build_info.get("embeddings") == "cache" and second.encoder.calls == 0
    rows.append(
        row(
            "vector_search cached rebuild",
            ours_s=second_s,
            peer="first build (encodes)",
            peer_s=first_s,
            goal="re-encodes nothing",
            met=reused,
            identical=bool(np.array_equal(first.embeddings, second.embeddings)),
            notes=(
                f"{len(docs)} texts; second build: embeddings={second.build_info.get('embeddings')}"
                f", encode calls={second.encoder.calls}"
            ),
        )
    )
    if ndcg:
        for precision in dict.fromkeys([ours.precision, other.precision]):
            if precision != "float32":
                rows.append(ndcg_row(precision))
    return rows


def ndcg_row(precision: str) -> dict[str, Any]:
    """SciFact nDCG@10 of vector_search in ``precision`` and in float32, through the CLI with
    the default (persistent) recipe cache, so only a machine's first bench encodes SciFact."""
    target = f"vector_search nDCG@10 {precision} vs float32"
    if not (data_dir() / "scifact" / "corpus.jsonl").is_file():
        return row(target, peer=None, goal="abs(delta) <= 0.002",
                   notes=f"SciFact not found under {data_dir()}")  # fmt: skip
    values: dict[str, float] = {}
    seconds: dict[str, float] = {}
    cli = str(Path(sys.executable).with_name("heta-eval"))
    with tempfile.TemporaryDirectory() as tmp:
        for p in dict.fromkeys(["float32", precision]):
            log(f"vector_search: SciFact nDCG@10 in {p} (encodes only on a cold cache)")
            recipe = Path(tmp) / f"{p}.json"
            dense = {"precision": p, "device": "cpu"}
            recipe.write_text(json.dumps({"modes": ["vector_search"], "dense": dense}))
            out = Path(tmp) / p
            cmd = [cli, "run", "--dataset", "scifact", "--data-dir", str(data_dir()),
                   "--recipe", str(recipe), "--modes", "vector_search", "--output", str(out),
                   "--quiet"]  # fmt: skip
            seconds[p], proc = timed(
                lambda c=cmd: subprocess.run(c, capture_output=True, text=True)
            )
            if proc.returncode != 0:
                return row(
                    target,
                    peer="float32",
                    goal="abs(delta) <= 0.002",
                    met=False,
                    notes=f"heta-eval run failed: {proc.stderr[-300:]}",
                )
            summary = json.loads((out / "summary.json").read_text())
            metric = summary["modes"]["vector_search"]["metrics"]["ndcg@10"]
            values[p] = float(metric.get("beir_unrounded", metric["value"]))
    delta = values[precision] - values["float32"]
    runs = ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items())
    out = row(
        target,
        peer="float32",
        goal="abs(delta) <= 0.002",
        met=abs(delta) <= 0.002,
        identical=None,
        notes=(
            f"SciFact test: {precision} {values[precision]:.5f}, float32 {values['float32']:.5f},"
            f" delta {delta:+.5f}; heta-eval run times {runs}"
        ),
    )
    # Scores, not times: shown as they are in the table.
    out["ours_value"], out["peer_value"] = round(values[precision], 5), round(values["float32"], 5)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="scaled-down sizes, 1 repeat")
    parser.add_argument("--repeats", type=int, default=None, help="default 3 (1 with --quick)")
    parser.add_argument("--passages", type=int, default=None, help="BM25 corpus size")
    parser.add_argument("--queries", type=int, default=None, help="BM25 queries")
    parser.add_argument("--texts", type=int, default=None, help="texts to encode")
    parser.add_argument("--no-ndcg", action="store_true", help="skip the SciFact nDCG row")
    parser.add_argument("--only", choices=["keyword", "vector"], default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=None, help="write the JSON rows here")
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)
    passages = args.passages or (10_000 if args.quick else 100_000)
    queries = args.queries or (200 if args.quick else 1_000)
    texts = args.texts or (64 if args.quick else 512)
    rows: list[dict[str, Any]] = []
    if args.only in (None, "keyword"):
        rows += keyword_rows(passages, queries, repeats, args.seed, numba_peer=not args.quick)
    if args.only in (None, "vector"):
        rows += vector_rows(texts, repeats, ndcg=not (args.quick or args.no_ndcg))
    emit(rows, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
