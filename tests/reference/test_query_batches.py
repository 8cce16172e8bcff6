"""Queries in batches: the reference knowledge base's batched search equals searching each
query against every passage (BM25's scores, numpy's products, the first passage of each
document), and the runner asks a knowledge base with ``query_batch`` in batches, charging a
failure to its own case only."""

from __future__ import annotations

import numpy as np
import pytest

from heta_eval.ann.exact_search import exact_search
from heta_eval.evaluation import BenchmarkCase, Document, QueryResponse, beir_default_metrics
from heta_eval.reference import Recipe
from heta_eval.reference.bm25 import top_indices
from heta_eval.reference.hybrid import reciprocal_rank_fusion
from heta_eval.runner import BenchmarkRunner

WORDS = [
    "apple",
    "pear",
    "plum",
    "fig",
    "kiwi",
    "lime",
    "date",
    "grape",
    "melon",
    "berry",
    "cherry",
    "peach",
]


def corpus(count: int = 60, seed: int = 3) -> list[Document]:
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(count):
        sentences = [" ".join(rng.choice(WORDS, size=4)) + "." for _ in range(rng.integers(1, 5))]
        docs.append(
            Document(id=f"d{i:03d}", title=str(rng.choice(WORDS)), text=" ".join(sentences))
        )
    docs.append(Document(id="twin-a", title="fig", text="fig fig kiwi."))
    docs.append(Document(id="twin-b", title="fig", text="fig fig kiwi."))  # ties everywhere
    return docs


QUERIES = ["apple pear", "fig kiwi", "grape", "zzz none", "melon berry cherry peach", "fig"]


def expected(kb, query: str, mode: str, top_k: int) -> list[int]:
    """One query ranked against every passage, then each document's first passage (what
    the batched search must give: its batches, depths and over-fetching change nothing)."""
    texts_bm25 = kb.bm25.scores(query) if kb.bm25 is not None else None
    if mode == "keyword_search":
        order = top_indices(texts_bm25, len(texts_bm25), kb.bm25.tie_ranks)
        order = order[texts_bm25[order] > 0]
    else:
        # Every passage's exact score (exact_search is checked against brute force in
        # tests/ann/test_exact_search.py; near-equal vectors of twin texts tie there as here).
        dense = exact_search(kb.embeddings, kb.encoder.encode([query]), len(kb.chunks))[0][0]
        if mode == "vector_search":
            order = dense
        else:
            keyword = top_indices(texts_bm25, len(texts_bm25), kb.bm25.tie_ranks)
            keyword = keyword[texts_bm25[keyword] > 0]
            fused = reciprocal_rank_fusion([keyword.tolist(), dense.tolist()], k=kb.recipe.rrf_k)
            order = np.array([row for row, _ in fused], dtype=np.int64)
    seen, rows = set(), []
    for row in order.tolist():
        doc = kb.chunks[row].document_id
        if doc not in seen:
            seen.add(doc)
            rows.append(row)
    return rows[:top_k]


@pytest.fixture(scope="module", params=[None, 6], ids=["whole", "chunked"])
def kb(request, tmp_path_factory):
    recipe = Recipe(chunking={"size": request.param}, rrf_depth=500)
    return recipe.build("fruit", corpus(), cache_dir=tmp_path_factory.mktemp("c"), progress=False)


@pytest.mark.parametrize("mode", ["keyword_search", "vector_search", "hybrid_search"])
@pytest.mark.parametrize("top_k", [1, 4, 30, 200])
def test_a_batch_ranks_each_query_as_against_every_passage(kb, mode, top_k):
    batch = kb.search(QUERIES, mode=mode, top_k=top_k)
    for query, results in zip(QUERIES, batch, strict=True):
        assert results.rows.tolist() == expected(kb, query, mode, top_k), (query, mode)
        alone = kb.search([query], mode=mode, top_k=top_k)[0]
        assert alone.rows.tolist() == results.rows.tolist()
        assert np.array_equal(alone.scores, results.scores)


class Batched:
    """A knowledge base answering in batches, which fails a batch holding ``poison``."""

    modes = ("default",)
    batch_size = 3

    def __init__(self, poison: str | None = None, short: bool = False) -> None:
        self.poison, self.short = poison, short
        self.batches: list[list[str]] = []
        self.singles: list[str] = []

    def reply(self, text: str) -> QueryResponse:
        if text == self.poison:
            raise RuntimeError("cannot answer this one")
        return QueryResponse(query=text, results=[{"score": 1.0, "source": {"document_id": "d1"}}])

    async def query_batch(self, texts, *, mode, top_k, query_ids=None):
        self.batches.append(list(query_ids))
        replies = [self.reply(text) for text in texts]
        return replies[:-1] if self.short else replies

    async def query(self, text, *, mode, top_k):
        self.singles.append(text)
        return self.reply(text)


class Bench:
    name = "tiny"

    def documents(self):
        return [Document(id="d1", text="one"), Document(id="d2", text="two")]

    def cases(self):
        return [
            BenchmarkCase(id=f"q{i}", query=f"text {i}", expected={"relevance": {"d1": 1}})
            for i in range(8)
        ]

    def evaluators(self):
        return beir_default_metrics(k_values=(1,))


def run(kb):
    return BenchmarkRunner(progress=False).run(
        benchmark=Bench(), knowledge_base=kb, query_modes=("default",)
    )


def test_the_runner_asks_in_batches_of_the_knowledge_bases_size():
    kb = Batched()
    results = run(kb)
    assert kb.batches == [["q0", "q1", "q2"], ["q3", "q4", "q5"], ["q6", "q7"]]
    assert kb.singles == []
    assert results.metric("default", "ndcg@1").beir == 1.0


def test_a_failing_batch_is_asked_again_case_by_case_and_only_its_culprit_fails():
    kb = Batched(poison="text 4")
    results = run(kb)
    assert kb.singles == ["text 3", "text 4", "text 5"]  # the failed batch, one by one
    failed = [r.case_id for r in results.records if not r.ok]
    assert failed == ["q4"]
    assert "cannot answer this one" in next(r.error for r in results.records if not r.ok)


def test_a_batch_with_too_few_replies_is_asked_again_case_by_case():
    kb = Batched(short=True)
    results = run(kb)
    assert sorted(kb.singles) == [f"text {i}" for i in range(8)]
    assert all(r.ok for r in results.records)


class Fruit:
    """Cases judging the fruit corpus with graded, zero and negative labels."""

    name = "fruit"

    def documents(self):
        return corpus()

    def cases(self):
        rng = np.random.default_rng(7)
        ids = [doc.id for doc in corpus()]
        return [
            BenchmarkCase(
                id=f"q{i}",
                query=query,
                expected={
                    "relevance": {
                        str(d): int(rng.integers(-1, 3))
                        for d in rng.choice(ids, size=5, replace=False)
                    }
                },
            )
            for i, query in enumerate(QUERIES * 3)
        ]

    def evaluators(self):
        return beir_default_metrics(k_values=(1, 3, 10, 100))


def test_replies_scored_a_few_at_a_time_score_as_all_at_once(monkeypatch, tmp_path):
    """The runner lets replies go once their retrieval metrics are scored (every
    SCORE_EVERY results): scoring them three results at a time gives every case the same
    scores as one batch, and both equal pytrec_eval on the run."""
    import pytrec_eval

    import heta_eval.runner.queries as queries

    recipe = Recipe(modes=["keyword_search"])
    kb = recipe.build("fruit", corpus(), cache_dir=tmp_path, progress=False)

    def scores(every: int):
        monkeypatch.setattr(queries, "SCORE_EVERY", every)
        results = BenchmarkRunner(progress=False, top_k=100).run(
            benchmark=Fruit(), knowledge_base=kb, query_modes=("keyword_search",)
        )
        return results, {
            r.case_id: {name: s.value for name, s in r.scores.items()} for r in results.records
        }

    whole, at_once = scores(10**9)
    _, a_few = scores(3)
    assert a_few == at_once
    qrels = {c.id: c.expected.relevance for c in Fruit().cases()}
    run = {r.case_id: dict(r.documents) for r in whole.records}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    for case_id, values in at_once.items():
        assert values["ndcg@10"] == pytest.approx(oracle[case_id]["ndcg_cut_10"], abs=1e-12)
