"""Knowledge-base speed: BM25 build and retrieval vs raw ``bm25s``, dense encoding vs
plain sentence-transformers float32.

Rows (JSON list on stdout or ``--output``), medians of ``--repeats`` alternated runs:

* ``keyword_search build``: ``BM25Index.build`` vs ``bm25s.tokenize`` + ``BM25.index``
  (Lucene, k1=0.9, b=0.4, Snowball English stemmer, English stopwords), seeded synthetic
  corpus (Zipf vocabulary, ~60 tokens a passage).
* ``keyword_search top-1000 batch``: ``BM25Index.search`` vs bm25s's numba backend (query
  tokenization included in both; JIT warm-ups timed apart and reported in notes).
* ``keyword_search top-1000 per query``: the reference KB's path (``scores`` +
  ``top_indices`` per query) vs bm25s's default numpy backend ``retrieve``.
* ``vector_search encoding <route>``: ``DenseEncoder`` through each encoding route this CPU
  has (torch float32/bfloat16, ONNX Runtime int8, OpenVINO int8; the one ``auto`` picks is
  marked) vs ``SentenceTransformer(all-MiniLM-L6-v2).encode`` in float32, all in one rotation,
  on SciFact abstracts, with each route's cosine to float32 (``bench_encode.py``).
* ``vector_search cached rebuild``: the same recipe on the same corpus, built twice.
* ``vector_search nDCG@10 <route> vs float32`` (full run only): SciFact nDCG@10 of each route
  minus float32's (via ``heta-eval run``; embeddings come from the recipe cache after the
  first run).

    python bench/bench_kb.py [--quick] [--repeats N] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _rows import emit, interleaved, log, row, timed  # noqa: E402

from heta_eval.reference.bm25 import BM25Index, top_indices  # noqa: E402

K1, B, METHOD = 0.9, 0.4, "lucene"

_SYLLABLES = (
    "ka",
    "to",
    "ri",
    "men",
    "sal",
    "por",
    "tin",
    "ve",
    "lo",
    "dra",
    "qu",
    "an",
    "est",
    "ion",
    "ber",
    "cul",
)
_SUFFIXES = ["", "", "", "s", "ing", "ed", "ation", "ly"]
_STOP = (
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "is",
    "that",
    "for",
    "with",
    "as",
    "on",
    "by",
    "are",
    "was",
)


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


def vector_rows(texts_n: int, repeats: int, ndcg: bool) -> list[dict[str, Any]]:
    from bench_encode import encoding_rows, ndcg_row

    from heta_eval.models.records import Document
    from heta_eval.reference import Recipe

    texts, what = scifact_texts(texts_n)
    rows, routes = encoding_rows(texts, what, repeats)

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
        rows += [ndcg_row(route, data_dir()) for route in routes if route != "torch-float32"]
    return rows


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
