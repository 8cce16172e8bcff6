"""How the cross-encoder's int8 route (``onnxruntime-int8``) agrees with torch float32, and
how fast each route scores, on BM25's top 100 of SciFact test queries: pairs/s of
float32, bfloat16 and int8 in one run (the pairs in blocks, each block through every route,
the order rotated block to block, so load from other jobs hits all alike), the largest
score difference to float32's, how many of float32's top 10 per query leave each route's
top 10, and nDCG@10 of each reranked run (BEIR's mean).

The model is ``demo_cross_encoder`` (the bundled MiniLM weights under a seeded head): its
scores rank nothing well, so nDCG@10 here is an agreement check between routes, not a
quality figure. Not a ``make bench`` row: a measurement for docs/rerank.md.

    python bench/rerank_int8_agreement.py --queries 10 --blocks 4
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from heta_eval.rerank.cross_encoder import demo_cross_encoder
from heta_eval.rerank.reranker import CrossEncoderReranker, document_text

SCIFACT = Path(__file__).resolve().parents[2] / "shared/datasets/beir/scifact"
ROUTES = ("float32", "bfloat16", "int8")


def bm25_top(queries: dict[str, str], corpus: dict[str, dict], depth: int) -> dict:
    """BM25 (the reference knowledge base's keyword_search) top ``depth`` per query."""
    from heta_eval.models.records import Document
    from heta_eval.reference import Recipe

    documents = [
        Document(id=i, title=d.get("title", ""), text=d["text"]) for i, d in corpus.items()
    ]
    kb = Recipe(modes=["keyword_search"], chunking={"size": None}).build(
        "scifact", documents, cache_dir=False, progress=False
    )
    run = {}
    for q, text in queries.items():
        reply = asyncio.run(kb.query(text, mode="keyword_search", top_k=depth))
        run[q] = {r.source["document_id"]: float(r.score) for r in reply.results}
    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--blocks", type=int, default=4)
    args = parser.parse_args()
    from beir.datasets.data_loader import GenericDataLoader
    from beir.retrieval.evaluation import EvaluateRetrieval

    corpus, queries, qrels = GenericDataLoader(str(SCIFACT)).load(split="test")
    chosen = {q: queries[q] for q in sorted(qrels, key=int)[: args.queries]}
    first = bm25_top(chosen, corpus, args.depth)
    ids = [(q, d) for q in first for d in first[q]]
    pairs = [(chosen[q], document_text(corpus[d])) for q, d in ids]
    model = demo_cross_encoder(tempfile.mkdtemp(), seed=46)
    rerankers = {
        name: CrossEncoderReranker(model, precision=name, device="cpu", cache_dir=False)
        for name in ROUTES
    }
    for reranker in rerankers.values():
        reranker.score(pairs[:4])  # load (int8: export and quantize once), warm up
    seconds = dict.fromkeys(ROUTES, 0.0)
    scores = {name: np.empty(len(pairs), dtype=np.float32) for name in ROUTES}
    blocks = np.array_split(np.arange(len(pairs)), args.blocks)
    load = [os.getloadavg()[0]]
    for turn, rows in enumerate(blocks):
        order = ROUTES[turn % 3 :] + ROUTES[: turn % 3]
        for name in order:
            started = time.perf_counter()
            scores[name][rows] = rerankers[name].score([pairs[i] for i in rows])
            seconds[name] += time.perf_counter() - started
        load.append(os.getloadavg()[0])
    runs = {name: {q: {} for q in first} for name in ROUTES}
    for name in ROUTES:
        for (q, d), value in zip(ids, scores[name].tolist(), strict=True):
            runs[name][q][d] = value
    judged = {q: qrels[q] for q in first}
    bm25_ndcg = EvaluateRetrieval.evaluate(judged, first, [10])[0]["NDCG@10"]
    print(f"{len(pairs)} pairs, {len(first)} queries, BM25 nDCG@10 {bm25_ndcg:.5f}")
    print(f"load average (1 min) during the run: {min(load):.1f}-{max(load):.1f}")
    reference = scores["float32"]

    def top10(run: dict) -> set:
        return set(sorted(run, key=lambda d: -run[d])[:10])

    for name in ROUTES:
        gap = np.abs(scores[name] - reference)
        moved = [len(top10(runs["float32"][q]) - top10(runs[name][q])) for q in first]
        ndcg = EvaluateRetrieval.evaluate(judged, runs[name], [10])[0]["NDCG@10"]
        print(
            f"{rerankers[name].route:18} {len(pairs) / seconds[name]:6.2f} pairs/s  "
            f"max |diff| {gap.max():.4f} mean {gap.mean():.4f}  top-10 changed: "
            f"{sum(moved)} of {10 * len(first)} (most in a query {max(moved)})  "
            f"nDCG@10 {ndcg:.5f}"
        )


if __name__ == "__main__":
    main()
