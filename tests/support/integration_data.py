"""A tiny real SciFact for the framework adapters' tests, and the framework's own results
scored the way BEIR users score them (pytrec_eval through ``beir``), to compare with what
the same framework gives through heta-eval's adapter and runner."""

from __future__ import annotations

import json
from pathlib import Path

from heta_eval import BenchmarkRunner
from heta_eval.adapters.beir import BeirBenchmark
from heta_eval.data.beir_loader import load_beir
from support.beir_reference import beir_numbers


def tiny_scifact(source: Path, target: Path, queries: int = 25, others: int = 50) -> Path:
    """``target/scifact-slice`` in the BEIR layout: the first ``queries`` SciFact test queries,
    their qrels, the documents they judge and ``others`` more, in corpus order."""
    folder = target / "scifact-slice"  # not the registered scifact: named otherwise
    (folder / "qrels").mkdir(parents=True)
    header, *lines = (source / "qrels" / "test.tsv").read_text().splitlines()
    kept_queries = list(dict.fromkeys(line.split("\t")[0] for line in lines))[:queries]
    lines = [line for line in lines if line.split("\t")[0] in kept_queries]
    (folder / "qrels" / "test.tsv").write_text("\n".join([header, *lines]) + "\n")
    (folder / "queries.jsonl").write_text(
        "".join(
            line + "\n"
            for line in (source / "queries.jsonl").read_text().splitlines()
            if json.loads(line)["_id"] in kept_queries
        )
    )
    judged = {line.split("\t")[1] for line in lines}
    with (source / "corpus.jsonl").open() as corpus, (folder / "corpus.jsonl").open("w") as out:
        for line in corpus:
            doc_id = json.loads(line)["_id"]
            if doc_id in judged or others > 0:
                others -= doc_id not in judged
                out.write(line)
    return folder


def benchmark(folder: Path) -> BeirBenchmark:
    return BeirBenchmark(str(folder))


def queries_of(folder: Path) -> dict[str, str]:
    return load_beir(folder).queries


def direct_ndcg10(folder: Path, ranked: dict[str, list[tuple[str, float]]]) -> float:
    """BEIR's NDCG@10 (pytrec_eval, self-hits dropped) of ``{query id: [(doc id, score),
    ...] best first}``: each document keeps its first (best) hit, as BEIR's MaxP does."""
    run = {}
    for qid, hits in ranked.items():
        docs: dict[str, float] = {}
        for doc_id, score in hits:
            docs.setdefault(doc_id, float(score))
        run[qid] = docs
    return beir_numbers(load_beir(folder).qrels, run, [10])["NDCG@10"]


def rank_scores(doc_ids: list[str]) -> list[tuple[str, float]]:
    """Hits without scores, ranked in order: n, n-1, ..., 1 (what heta-eval gives them)."""
    return [(doc_id, float(len(doc_ids) - i)) for i, doc_id in enumerate(doc_ids)]


def run_adapter(folder: Path, kb, output: Path | None = None):
    """The adapter through the whole runner, BEIR's evaluators (k up to 1,000)."""
    return BenchmarkRunner(progress=False).run(
        benchmark=benchmark(folder),
        knowledge_base=kb,
        query_modes=("default",),
        output_dir=output,
    )
