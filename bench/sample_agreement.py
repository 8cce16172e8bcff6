"""How well a quick subset (``heta-eval run --sample N``) ranks systems as the full dataset
does: Kendall's tau (tau-b) between the systems' nDCG@10 on the whole dataset and on
samples of N queries (seeds 0..S-1).

* **SciFact** (real): the reference knowledge base's three modes (BM25 flat, MiniLM,
  hybrid), BM25 multifield, and runs fused from BM25 and MiniLM (rrf; wsum with min-max
  scores at three weights): 8 systems, each run for real on every sample (BM25's statistics
  are the sample's own; the dense vectors come from the embedding cache).
* **Synthetic**: 8 systems of set quality on a corpus of 2,000 queries (each with 1-3
  relevant documents among 50,000): a system puts each relevant document at a rank drawn
  from a geometric law whose mean its quality sets, the rest of its ranking random.
  Systems' qualities are evenly spaced; ``--gap`` sets the space (the mean nDCG@10 apart).
  A sample keeps the sampled queries and scores each system's ranking restricted to the
  sample's documents (the scores of a pair do not depend on the corpus here).

Not a speed benchmark (``make bench`` does not run it): a measurement for docs/datasets.md.

    python bench/sample_agreement.py --sizes 30,50,100,150 --seeds 5 \\
        --data ../shared/datasets/beir --cache /tmp/heta-sample-bench
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from heta_eval.data.sample import SampleSpec, key

SYSTEMS = ("bm25", "bm25-multifield", "minilm", "hybrid", "rrf", "wsum-0.2", "wsum-0.5", "wsum-0.8")


def scifact_scores(data: Path, spec: SampleSpec | None) -> dict[str, float]:
    """nDCG@10 (BEIR's mean) of the 8 systems on SciFact or on its sample ``spec``."""
    from heta_eval.adapters.beir import BeirBenchmark
    from heta_eval.evaluation import beir_default_metrics, evaluate_run
    from heta_eval.fusion import fuse
    from heta_eval.reference import Recipe
    from heta_eval.runner import BenchmarkRunner

    bench = BeirBenchmark("scifact", data_dir=data, sample=spec, download=False)
    runner = BenchmarkRunner(progress=False, top_k=100)
    metrics = beir_default_metrics(k_values=(10,))
    modes = ("keyword_search", "vector_search", "hybrid_search")
    flat = runner.run(
        benchmark=bench,
        recipe=Recipe(modes=list(modes), chunking={"size": None}),
        query_modes=modes,
        evaluators=metrics,
    )
    multi = runner.run(
        benchmark=bench,
        query_modes=("keyword_search",),
        evaluators=metrics,
        recipe=Recipe(
            modes=["keyword_search"], chunking={"size": None}, bm25={"fields": "multifield"}
        ),
    )
    qrels = bench.qrels
    out = {
        "bm25": flat.metric("keyword_search", "ndcg@10").beir,
        "bm25-multifield": multi.metric("keyword_search", "ndcg@10").beir,
        "minilm": flat.metric("vector_search", "ndcg@10").beir,
        "hybrid": flat.metric("hybrid_search", "ndcg@10").beir,
    }
    runs = [flat.run("keyword_search"), flat.run("vector_search")]
    fused = {"rrf": fuse(runs, method="rrf")}
    for weight in (0.2, 0.5, 0.8):
        fused[f"wsum-{weight}"] = fuse(
            runs, method="wsum", norm="min-max", params={"weights": [weight, 1 - weight]}
        )
    for name, run in fused.items():
        result = evaluate_run(qrels, run, k_values=(10,), metrics=("ndcg",))
        out[name] = result.aggregates["NDCG@10"].beir_unrounded
    return out


def synthetic(
    n_queries: int, n_docs: int, gap: float, seed: int
) -> tuple[dict, list[dict[str, dict[str, float]]]]:
    """qrels and 8 systems' runs (depth 100) of set quality: system i puts each relevant
    document at a geometric rank of mean 1 + 12 * (1 - q_i), q_i evenly spaced by ``gap``."""
    rng = np.random.default_rng(seed)
    qrels = {}
    for q in range(n_queries):
        relevant = rng.choice(n_docs, size=int(rng.integers(1, 4)), replace=False)
        qrels[f"q{q}"] = {f"d{d}": 1 for d in relevant}
    runs = []
    for i in range(len(SYSTEMS)):
        quality = 0.9 - gap * 8 * i / len(SYSTEMS)
        mean_rank = 1 + 12 * (1 - quality)
        run: dict[str, dict[str, float]] = {}
        for qid, judged in qrels.items():
            drawn = rng.integers(0, n_docs, 100)
            docs = {f"d{d}": float(s) for d, s in zip(drawn, rng.random(100) * 100, strict=True)}
            for doc in judged:
                rank = rng.geometric(1 / mean_rank)
                docs[doc] = 100.0 - rank + rng.random() * 0.5  # near its drawn rank
            run[qid] = docs
        runs.append(run)
    return qrels, runs


def synthetic_scores(qrels: dict, runs: list, spec: SampleSpec | None, n_docs: int) -> list:
    """Each synthetic system's nDCG@10 on all queries or on the sample ``spec`` (its queries
    by the sample's rule, its documents: the judged ones and the distractors by key)."""
    from heta_eval.evaluation import evaluate_run

    if spec is None:
        chosen, kept = set(qrels), None
    else:
        chosen = set(sorted(qrels, key=lambda q: key(spec.seed, q))[: spec.queries])
        judged = {d for q in chosen for d in qrels[q]}
        wanted = spec.documents or round(n_docs * spec.queries / len(qrels))
        others = sorted(
            (f"d{d}" for d in range(n_docs) if f"d{d}" not in judged),
            key=lambda d: key(spec.seed, d),
        )
        kept = judged | set(others[: max(wanted - len(judged), 0)])
    part = {q: qrels[q] for q in chosen}
    out = []
    for run in runs:
        restricted = {
            q: {d: s for d, s in run[q].items() if kept is None or d in kept} for q in chosen
        }
        result = evaluate_run(part, restricted, k_values=(10,), metrics=("ndcg",))
        out.append(result.aggregates["NDCG@10"].beir_unrounded)
    return out


def tau(full: list[float], sampled: list[float]) -> float:
    return float(kendalltau(full, sampled).statistic)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="30,50,100,150")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets" / "beir")
    )
    parser.add_argument("--cache", default="/tmp/heta-sample-bench")
    parser.add_argument("--gap", type=float, default=0.02)
    parser.add_argument("--skip-scifact", action="store_true")
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument(
        "--documents",
        type=int,
        default=None,
        help="SciFact samples of this many documents (default: by ratio)",
    )
    args = parser.parse_args()
    os.environ["HETA_EVAL_CACHE_DIR"] = args.cache
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"cpu: {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}; seeds {args.seeds}")
    if not args.skip_scifact:
        started = time.perf_counter()
        full = scifact_scores(Path(args.data), None)
        print(
            f"SciFact full ({time.perf_counter() - started:.0f} s): "
            + ", ".join(f"{name} {value:.4f}" for name, value in full.items())
        )
        names = list(full)
        for size in sizes:
            taus = []
            for seed in range(args.seeds):
                sampled = scifact_scores(Path(args.data), SampleSpec(size, seed, args.documents))
                taus.append(tau([full[n] for n in names], [sampled[n] for n in names]))
                print(
                    f"  scifact N={size} seed={seed}: tau {taus[-1]:.3f}; "
                    + ", ".join(f"{n} {sampled[n]:.4f}" for n in names)
                )
            documents = args.documents or "by ratio"
            print(
                f"SciFact N={size} (documents {documents}): tau mean "
                f"{statistics.fmean(taus):.3f}, min {min(taus):.3f}"
                f", max {max(taus):.3f} over {len(taus)} seeds"
            )
    if args.skip_synthetic:
        return
    n_queries, n_docs = 2000, 50_000
    for gap in (args.gap, args.gap * 2.5):
        qrels, runs = synthetic(n_queries, n_docs, gap, seed=7)
        full_scores = synthetic_scores(qrels, runs, None, n_docs)
        print(f"synthetic gap {gap:g}: full nDCG@10 " + ", ".join(f"{v:.4f}" for v in full_scores))
        for size in [*sizes, 500]:
            for documents, what in ((None, "distractors by ratio"), (n_docs, "all documents")):
                taus = [
                    tau(
                        full_scores,
                        synthetic_scores(qrels, runs, SampleSpec(size, s, documents), n_docs),
                    )
                    for s in range(args.seeds * 4)
                ]
                print(
                    f"synthetic gap {gap:g} N={size} ({what}): tau mean "
                    f"{statistics.fmean(taus):.3f}, min {min(taus):.3f}, max {max(taus):.3f} "
                    f"over {len(taus)} seeds"
                )


if __name__ == "__main__":
    main()
