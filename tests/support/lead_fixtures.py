"""A small synthetic run in three modes for the report's tests: query ids that sort
differently as text and as numbers, judged documents found at ranks each mode sets, and
one mode that fails some queries (so its run is partial)."""

from __future__ import annotations

import random

from heta_eval.evaluation import BenchmarkCase, Document, QueryResponse, beir_default_metrics

QIDS = [str(i) for i in (1, 2, 3, 10, 11, 20, 100, 101, 1012, 9)] + [f"q{i}" for i in range(14)]
DOCUMENTS = 60
FAILING = {"3", "q5"}  # mode_c refuses these


class SmallBenchmark:
    name = "synthetic-lead"

    def documents(self):
        return [
            Document(id=f"d{i}", title=f"title {i}", text=f"text of d{i}") for i in range(DOCUMENTS)
        ]

    def cases(self):
        # Two judged documents per query: d<i> (grade 2) and d<i+1> (grade 1).
        return [
            BenchmarkCase(
                id=qid,
                query=f"question {i} about {qid}",
                expected={"relevance": {f"d{i}": 2, f"d{i + 1}": 1}},
            )
            for i, qid in enumerate(QIDS)
        ]

    def evaluators(self):
        return beir_default_metrics(k_values=(1, 10, 100))


class ThreeModes:
    """mode_a puts d<i> at rank i % 4, mode_b at rank (3i) % 12, mode_c at rank 0 (and
    refuses the queries in FAILING); d<i+1> follows two ranks later."""

    modes = ("mode_a", "mode_b", "mode_c")

    async def query(self, text: str, *, mode: str, top_k: int) -> QueryResponse:
        i = int(text.split()[1])
        qid = text.split()[-1]
        if mode == "mode_c" and qid in FAILING:
            raise RuntimeError(f"refused <b>{qid}</b>")
        rank = {"mode_a": i % 4, "mode_b": (3 * i) % 12, "mode_c": 0}[mode]
        rng = random.Random(f"{mode}-{i}")
        pool = [f"d{j}" for j in range(DOCUMENTS) if j not in (i, i + 1)]
        rng.shuffle(pool)
        hits = pool[: top_k - 2]
        hits.insert(min(rank, len(hits)), f"d{i}")
        hits.insert(min(rank + 2, len(hits)), f"d{i + 1}")
        results = [
            {"text": "", "score": round(1.0 - r / 100, 4), "source": {"document_id": d}}
            for r, d in enumerate(hits[:top_k])
        ]
        return QueryResponse(query=text, mode=mode, results=results)


def run_three_modes(folder):
    """The results folder of the three modes; returns (benchmark, results)."""
    from heta_eval.runner import BenchmarkRunner

    benchmark = SmallBenchmark()
    results = BenchmarkRunner(top_k=20, progress=False, concurrency=4).run(
        benchmark=benchmark,
        knowledge_base=ThreeModes(),
        query_modes=ThreeModes.modes,
        output_dir=folder,
    )
    return benchmark, results
