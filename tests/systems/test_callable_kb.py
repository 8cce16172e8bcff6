"""Any function is a knowledge base (``heta_eval.from_callable``): sync, async and batch
functions run through the real runner, their numbers equal pytrec_eval's on the same hits,
a bad hit fails its query with one line naming the hit and the query, and a function that
raises fails only its own case (a failed batch is asked again case by case)."""

from __future__ import annotations

import asyncio
import json
import threading
import zlib

import pytest
import pytrec_eval
from support.kb_fixtures import DOCS, AnimalBenchmark

import heta_eval
from heta_eval import BenchmarkRunner, beir_default_metrics
from heta_eval.systems import BatchKnowledgeBase, KnowledgeBase
from heta_eval.systems.callables import HitError, hits_response

WORDS = {doc_id: set(text.lower().replace(".", "").split()) for doc_id, text in DOCS.items()}


def overlap(query: str, top_k: int) -> list[tuple[str, float]]:
    """Documents by word overlap with the query, ties by id: a real little retriever."""
    words = set(query.lower().split())
    scored = sorted(((-len(words & w), d) for d, w in WORDS.items()))
    return [(doc_id, float(-neg)) for neg, doc_id in scored][:top_k]


def noisy(query: str, top_k: int) -> list[tuple[str, float]]:
    """Overlap plus a fixed pseudo-random term: an imperfect ranking, with ties."""
    scored = [(d, s + zlib.crc32(f"{query}|{d}".encode()) % 4 / 2) for d, s in overlap(query, 9)]
    return sorted(scored, key=lambda hit: -hit[1])[:top_k]


def run(kb, tmp_path=None, modes=("default",), **options):
    benchmark = AnimalBenchmark(options.pop("cases", 8), numbered=options.pop("numbered", False))
    return BenchmarkRunner(progress=False, **options).run(
        benchmark=benchmark,
        knowledge_base=kb,
        query_modes=modes,
        output_dir=tmp_path,
        evaluators=beir_default_metrics(k_values=(1, 3, 10)),
    )


def pytrec_ndcg10(hits_of) -> float:
    """nDCG@10 of the same hits through pytrec_eval, self-hits dropped as BEIR does."""
    benchmark = AnimalBenchmark(8)
    qrels = {case.id: dict(case.expected.relevance) for case in benchmark.cases()}
    runs = {}
    for case in benchmark.cases():
        ranked = {doc: score for doc, score in hits_of(case.query) if doc != case.id}
        runs[case.id] = ranked
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(runs)
    return sum(v["ndcg_cut_10"] for v in per_query.values()) / len(per_query)


def test_a_sync_function_is_a_knowledge_base_with_pytrec_evals_numbers():
    kb = heta_eval.from_callable(noisy)
    assert isinstance(kb, KnowledgeBase) and not isinstance(kb, BatchKnowledgeBase)
    results = run(kb)
    ours = results.metric("default", "ndcg@10").beir
    assert ours == pytest.approx(pytrec_ndcg10(lambda q: noisy(q, 101)), abs=1e-5)
    assert ours < 1.0  # the ranking is imperfect: equal numbers are not an accident


def test_an_async_function_and_a_batch_function_give_the_same_numbers():
    async def search(query, top_k):
        await asyncio.sleep(0)
        return [{"doc_id": d, "score": s} for d, s in overlap(query, top_k)]

    calls: list[int] = []

    def search_many(queries, top_k):
        calls.append(len(queries))
        return [overlap(q, top_k) for q in queries]

    plain = run(heta_eval.from_callable(overlap)).metric("default", "ndcg@10").beir
    batched_kb = heta_eval.from_callable(search_many, batch=True, batch_size=3)
    assert isinstance(batched_kb, BatchKnowledgeBase)
    assert run(heta_eval.from_callable(search)).metric("default", "ndcg@10").beir == plain
    assert run(batched_kb).metric("default", "ndcg@10").beir == plain
    assert calls == [3, 3, 2]  # 8 cases through the runner's batch seam, 3 at a time


def test_one_function_per_mode():
    kb = heta_eval.from_callable({"words": overlap, "noisy": noisy})
    results = run(kb, modes=("words", "noisy"))
    assert results.metric("words", "ndcg@10").beir > results.metric("noisy", "ndcg@10").beir


@pytest.mark.parametrize(
    ("hit", "said"),
    [
        ("cats", "hit 0 of query 'q' is 'cats' (a str): a hit is (doc_id, score), a dict"),
        (("cats", float("nan")), "hit 0 of query 'q', ('cats', nan): score must be a finite"),
        (("cats", "high"), "hit 0 of query 'q', ('cats', 'high'): its score is a str, not a"),
        ((1.5, 2.0), "hit 0 of query 'q', (1.5, 2.0): its document id is a float; ids are"),
        (("", 2.0), "hit 0 of query 'q', ('', 2.0): its document id is empty"),
        ({"id": "cats", "score": "x"}, "hit 0 of query 'q', {'id': 'cats', 'score': 'x'}: score"),
        (("cats", 1.0, 2), "hit 0 of query 'q' is ('cats', 1.0, 2) (a tuple): a hit is"),
    ],
)
def test_a_bad_hit_is_one_line_naming_the_hit_and_its_query(hit, said):
    with pytest.raises(HitError) as raised:
        hits_response([hit], "q")
    assert str(raised.value).startswith(said)
    assert "\n" not in str(raised.value)


def test_hits_are_checked_where_they_enter():
    reply = hits_response([(7, 1), {"document_id": 8, "score": 0.5}, ("d9", None)], "q")
    assert [r.source["document_id"] for r in reply.results] == ["7", "8", "d9"]
    assert [r.score for r in reply.results] == [1.0, 0.5, None]
    assert isinstance(reply.results[0].score, float)
    with pytest.raises(HitError, match="not a list of hits"):
        hits_response("cats", "q")
    with pytest.raises(HitError, match="not a list of hits"):
        hits_response(None, "q")


def test_a_bad_hit_or_a_raising_function_fails_only_its_case(tmp_path):
    def search(query, top_k):
        if "dogs" in query:
            raise RuntimeError("index shard 3 is down")
        if "birds" in query:
            return [("birds", float("inf"))]
        return overlap(query, top_k)

    results = run(heta_eval.from_callable(search), tmp_path)
    records = [json.loads(line) for line in (tmp_path / "per_query.jsonl").open()]
    errors = {r["case_id"]: r.get("error") for r in records}
    assert errors["q1"] == "RuntimeError: index shard 3 is down"
    assert errors["q2"] == (
        "HitError: hit 0 of query 'when do birds sing', ('birds', inf): score must be a "
        "finite number, got inf"
    )
    assert errors["q0"] is None and errors["q3"] is None
    assert results.summary.modes["default"].failed_queries == 4  # 2 of each failing query


def test_a_failed_batch_is_asked_again_case_by_case():
    asked: list[list[str]] = []

    def search_many(queries, top_k):
        asked.append(list(queries))
        if any("dogs" in q for q in queries):
            raise RuntimeError("timeout")
        return [overlap(q, top_k) for q in queries]

    results = run(heta_eval.from_callable(search_many, batch=True, batch_size=4), cases=4)
    assert asked[0] == [
        "do cats purr",
        "why do dogs bark",
        "when do birds sing",
        "how do fish breathe",
    ]
    assert asked[1:] == [[q] for q in asked[0]]
    summary = results.summary.modes["default"]
    assert (summary.failed_queries, summary.answered) == (1, 3)


def test_a_batch_answering_the_wrong_number_of_queries_is_said():
    kb = heta_eval.from_callable(lambda queries, top_k: [[("cats", 1.0)]], batch=True)
    with pytest.raises(HitError, match=r"returned 1 hit lists for 2 queries \(first query 'a'\)"):
        asyncio.run(kb.query_batch(["a", "b"], mode="default", top_k=3))


def test_max_concurrency_caps_a_sync_function_in_threads():
    running, seen = [0], []
    lock = threading.Lock()

    def slow(query, top_k):
        with lock:
            running[0] += 1
            seen.append(running[0])
        threading.Event().wait(0.02)
        with lock:
            running[0] -= 1
        return overlap(query, top_k)

    run(heta_eval.from_callable(slow, max_concurrency=2), concurrency=8)
    assert max(seen) == 2
    run(heta_eval.from_callable(slow), concurrency=8)
    assert max(seen) > 2  # without the cap the runner's concurrency applies


def test_the_results_folder_records_the_function(tmp_path):
    run(heta_eval.from_callable(overlap), tmp_path)
    system = json.loads((tmp_path / "run.json").read_text())["system"]
    assert system["identity"] == {"callable": "test_callable_kb.overlap"}
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["build"] == {"wraps": "test_callable_kb.overlap"}
    # Another function into the same folder is another system: refused, not mixed.
    with pytest.raises(heta_eval.runner.RunConfigurationError, match="different run"):
        run(heta_eval.from_callable(lambda q, k: overlap(q, k)), tmp_path)


def test_duplicate_ids_are_chunks_scored_by_the_first_and_counted(tmp_path):
    # Two hits of one document: the collapse keeps the first and counts the other.
    results = run(heta_eval.from_callable(lambda q, k: [("cats", 2.0), ("cats", 3.0)]), tmp_path)
    record = next(r for r in results.records if r.case_id == "q0")
    assert record.documents == [("cats", 2.0)]
    assert record.collapse[0]["duplicate_chunks"] == 1
