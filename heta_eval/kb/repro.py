"""Reproduce the reference knowledge base's retrieval numbers on a BEIR dataset.

``python -m heta_eval.kb.repro --data ../shared/datasets/beir/scifact`` builds the default
recipe over the corpus, runs the test queries in each mode (top 100 documents) and prints
BEIR-official nDCG@10 (pytrec_eval, query-id == doc-id hits removed, as BEIR does) and timings.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

from ..evaluation.models import Document
from .recipe import Recipe

__all__ = ["evaluate_ndcg", "load_beir", "main"]


def load_beir(
    root: Path, split: str = "test"
) -> tuple[list[Document], dict[str, str], dict[str, dict[str, int]]]:
    """Documents, queries (judged ones only) and qrels of a BEIR-layout folder."""
    docs = []
    with open(root / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            docs.append(Document(id=row["_id"], title=row.get("title", ""), text=row["text"]))
    qrels: dict[str, dict[str, int]] = {}
    with open(root / "qrels" / f"{split}.tsv", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter="\t")
        next(reader)
        for qid, did, score in reader:
            qrels.setdefault(qid, {})[did] = int(score)
    queries = {}
    with open(root / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["_id"] in qrels:
                queries[row["_id"]] = row["text"]
    return docs, queries, qrels


def evaluate_ndcg(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], k: int = 10
) -> float:
    """Mean nDCG@k over judged queries, computed like BEIR's ``EvaluateRetrieval.evaluate``."""
    import pytrec_eval

    run = {q: {d: s for d, s in docs.items() if d != q} for q, docs in run.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}"})
    scores = evaluator.evaluate(run)
    return round(sum(s[f"ndcg_cut_{k}"] for s in scores.values()) / len(scores), 5)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("../shared/datasets/beir/scifact"))
    parser.add_argument("--recipe", type=Path, help="recipe JSON (default: the default recipe)")
    parser.add_argument("--modes", default="keyword_search,vector_search,hybrid_search")
    parser.add_argument("--precision", choices=["float32", "bfloat16"])
    parser.add_argument("--cache-dir", default=None, help="default: $HETA_EVAL_CACHE_DIR")
    parser.add_argument("--no-cache", action="store_true", help="build without the disk cache")
    parser.add_argument("--output", type=Path, help="write the runs and scores here (JSON)")
    args = parser.parse_args(argv)
    recipe = Recipe.from_file(args.recipe) if args.recipe else Recipe()
    modes = args.modes.split(",")
    recipe = recipe.model_copy(update={"modes": modes})
    if args.precision:
        recipe = recipe.model_copy(
            update={"dense": recipe.dense.model_copy(update={"precision": args.precision})}
        )
    docs, queries, qrels = load_beir(args.data)
    started = time.perf_counter()
    kb = recipe.build(args.data.name, docs, cache_dir=False if args.no_cache else args.cache_dir)
    print(f"build: {time.perf_counter() - started:.1f}s {kb.build_info}")
    report = {}
    qids = list(queries)
    for mode in modes:
        t = time.perf_counter()
        hits = kb.search([queries[q] for q in qids], mode=mode, top_k=100)
        run = {
            q: {r.source["document_id"]: r.score for r in rs}
            for q, rs in zip(qids, hits, strict=False)
        }
        seconds = time.perf_counter() - t
        ndcg = evaluate_ndcg(qrels, run)
        report[mode] = {"ndcg@10": ndcg, "search_seconds": round(seconds, 2), "run": run}
        print(f"{mode}: nDCG@10 {ndcg:.5f} ({len(qids)} queries in {seconds:.1f}s)")
    if args.output:
        args.output.write_text(json.dumps({"build": kb.build_info, "modes": report}))


if __name__ == "__main__":
    main()
