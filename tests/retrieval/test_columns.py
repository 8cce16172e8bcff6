"""Columnar results (``ChunkTable`` / ``ResultColumns``) score exactly like result objects.

The same responses are given as ``ResultColumns`` and as the ``QueryResult`` lists they
materialize to; every engine path must agree to the last bit, and with the ``beir`` package
on the collapsed document-level run.
"""

from __future__ import annotations

import asyncio
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.beir_reference import beir_numbers
from support.parity_strategies import (
    K_VALUES,
    MANY_DOCS,
    QIDS,
    SCORES,
    qrels_strategy,
)

from heta_eval.evaluation import (
    BenchmarkCase,
    QueryResponse,
    QueryResult,
    beir_default_metrics,
    evaluate_responses,
)
from heta_eval.models.columns import ChunkTable, ResultColumns
from heta_eval.rag.aggregate import score_retrieval_batch
from heta_eval.retrieval.collapse import collapse_batch, collapse_to_documents
from heta_eval.runner.hits import chunk_hits

DOC_IDS = [d for d in MANY_DOCS if d] + QIDS  # query ids too: self-hits
run_strategy = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOC_IDS), SCORES, max_size=12),
    max_size=5,
)


def columnar_responses(
    run: dict[str, dict[str, float]], rng: random.Random, table_rows: list[str]
) -> dict[str, tuple[list[int], list[float]]]:
    """Rows and scores per query whose first occurrence per document reproduces ``run``,
    padded with later duplicate chunks; rows are appended to ``table_rows`` (doc ids)."""
    out = {}
    for qid, docs in run.items():
        hits: list[tuple[int, float]] = []
        for doc, score in docs.items():
            table_rows.append(doc)
            hits.append((len(table_rows) - 1, float(score)))
        for doc in list(docs) * 2:
            if rng.random() < 0.5:
                first = next(i for i, (row, _) in enumerate(hits) if table_rows[row] == doc)
                table_rows.append(doc)
                hits.insert(
                    rng.randint(first + 1, len(hits)), (len(table_rows) - 1, rng.uniform(-9, 9))
                )
        if hits and rng.random() < 0.2:  # the same chunk row listed twice
            hits.append(hits[0])
        out[qid] = ([row for row, _ in hits], [score for _, score in hits])
    return out


def build(run, seed, *, unscored: bool):
    rng = random.Random(seed)
    table_rows: list[str] = []
    layout = columnar_responses(run, rng, table_rows)
    table = ChunkTable(
        table_rows,
        texts=[f"text {i}" for i in range(len(table_rows))],
        reference_ids=[f"{doc}#{i}" for i, doc in enumerate(table_rows)],
        sources=lambda row: {"chunk_id": f"c{row}", "document_id": "ignored"},
    )
    columns = {}
    for qid, (rows, scores) in layout.items():
        if unscored and rng.random() < 0.3:
            scores = (
                None
                if rng.random() < 0.5
                else [s if rng.random() < 0.7 else np.nan for s in scores]
            )
        columns[qid] = QueryResponse(query=qid, results=table.columns(rows, scores))
    objects = {
        qid: QueryResponse(
            query=qid,
            results=[QueryResult.model_validate(r.model_dump()) for r in response.results],
        )
        for qid, response in columns.items()
    }
    return table, columns, objects


@settings(max_examples=250, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy, k_values=K_VALUES, seed=st.integers(0, 10**6))
def test_columns_equal_objects_on_every_engine_and_beir(qrels, run, k_values, seed):
    _, columns, objects = build(run, seed, unscored=False)
    cases = [BenchmarkCase(id=q, query=q, expected={"relevance": qrels.get(q, {})}) for q in QIDS]
    metrics = beir_default_metrics(k_values)
    reference = score_retrieval_batch(metrics, cases, objects, engine="pytrec")
    assert score_retrieval_batch(metrics, cases, columns, engine="fast") == reference
    assert score_retrieval_batch(metrics, cases, columns, engine="pytrec") == reference

    report = evaluate_responses(cases, columns, metrics)
    expected = beir_numbers({q: d for q, d in qrels.items() if d}, run, k_values)
    ours = {s.name: s.beir for s in report.metrics.values()}
    if expected is None:
        assert all(v is None for name, v in ours.items() if not name.startswith("mrr"))
        return
    prefix = {"NDCG": "ndcg", "MAP": "map", "Recall": "recall", "P": "precision", "MRR": "mrr"}
    for key, value in expected.items():
        metric, k = key.split("@")
        assert ours[f"{prefix[metric]}@{k}"] == value, key


@settings(max_examples=150, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy, seed=st.integers(0, 10**6))
def test_missing_scores_rank_derive_like_objects(qrels, run, seed):
    _, columns, objects = build(run, seed, unscored=True)
    cases = [BenchmarkCase(id=q, query=q, expected={"relevance": qrels.get(q, {})}) for q in QIDS]
    metrics = beir_default_metrics((1, 3, 10))
    reference = score_retrieval_batch(metrics, cases, objects, engine="pytrec")
    assert score_retrieval_batch(metrics, cases, columns, engine="fast") == reference
    assert score_retrieval_batch(metrics, cases, columns, engine="pytrec") == reference
    for qid, response in columns.items():
        assert collapse_to_documents(response, query_id=qid) == collapse_to_documents(
            objects[qid], query_id=qid
        )


@settings(max_examples=100, deadline=None)
@given(run=run_strategy, seed=st.integers(0, 10**6), split=st.integers(0, 6))
def test_mixed_batches_of_tables_and_objects_collapse_alike(run, seed, split):
    """Columns of two tables interleaved with object responses: one batch, same arrays."""
    _, columns_a, objects = build(run, seed, unscored=True)
    _, columns_b, _ = build(run, seed, unscored=True)  # equal content, another table
    mixed = []
    for i, qid in enumerate(objects):
        source = (columns_a, objects, columns_b)[(i + split) % 3]
        mixed.append((qid, source[qid]))
    plain = [(qid, objects[qid]) for qid in objects]
    for ignore in (True, False):
        got = collapse_batch(mixed, ignore_identical_ids=ignore)
        want = collapse_batch(plain, ignore_identical_ids=ignore)
        assert got.run.query_ids == want.run.query_ids
        for field in ("offsets", "doc_data", "doc_offsets", "scores"):
            assert np.array_equal(getattr(got.run, field), getattr(want.run, field)), field
        assert (got.run.valid is None) == (want.run.valid is None)
        if got.run.valid is not None:
            assert np.array_equal(got.run.valid, want.run.valid)
        assert (got.unmapped, got.duplicates, got.self_hits) == (
            want.unmapped,
            want.duplicates,
            want.self_hits,
        )


def test_a_custom_resolver_sees_the_materialized_results():
    table = ChunkTable(["d1", "d2"], sources=[{"page_index": 3}, {"page_index": 4}])
    response = QueryResponse(query="q", results=table.columns([1, 0], [2.0, 1.0]))
    ranking = collapse_to_documents(response, resolver=lambda r: f"p{r.source['page_index']}")
    assert ranking.scores == {"p4": 2.0, "p3": 1.0}


def test_results_materialize_once_validated_and_read_only():
    table = ChunkTable(
        ["d1", "d2", "d3"],
        texts=["a", "b", "c"],
        reference_ids=["d1#0", None, "d3#0"],
        sources=[{"chunk_id": "d1#0", "document_id": "stale"}, {}, {"start": 5}],
    )
    hits = table.columns(np.array([2, 0, 1]), np.array([3.0, np.nan, 1.0]))
    assert hits[0] is hits[0] and hits[-1] is hits[2]
    assert [r.score for r in hits] == [3.0, None, 1.0]
    assert hits[1].source == {"chunk_id": "d1#0", "document_id": "d1"}
    assert hits[0] == QueryResult(
        text="c", score=3.0, reference_id="d3#0", source={"start": 5, "document_id": "d3"}
    )
    assert hits[:2] == [hits[0], hits[1]] and hits[5:] == []
    assert hits.document_ids == ["d3", "d1", "d2"]
    with pytest.raises(IndexError, match="result index 3 out of range"):
        hits[3]
    with pytest.raises(ValueError, match="read-only"):
        hits.rows[0] = 1
    with pytest.raises(AttributeError):
        hits.append(hits[0])  # type: ignore[attr-defined]


def test_bad_tables_and_rows_are_refused_with_the_row():
    with pytest.raises(ValueError, match=r"document_ids: row 2 is None"):
        ChunkTable(["d1", "d2", None])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"document_ids: row 1 is 7"):
        ChunkTable(["d1", 7])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="texts: 1 rows, document_ids has 2"):
        ChunkTable(["d1", "d2"], texts=["x"])
    table = ChunkTable(["d1", "d2"])
    with pytest.raises(IndexError, match="row 2 is outside the table's 2"):
        table.columns([0, 2])
    with pytest.raises(ValueError, match="3 scores for 2 rows"):
        table.columns([0, 1], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="finite"):
        table.columns([0], [float("inf")])
    assert len(ChunkTable([])) == 0


def test_responses_with_columns_serialize_as_plain_results():
    table = ChunkTable(["d1", "d2"], texts=["a", "b"])
    response = QueryResponse(query="q", results=table.columns([1, 0], [2.0, 1.0]), answer="b")
    assert isinstance(response.results, ResultColumns)
    again = QueryResponse.model_validate_json(response.model_dump_json())
    assert isinstance(again.results, list)
    assert again == response
    assert response.model_dump()["results"][0] == {
        "text": "b",
        "score": 2.0,
        "reference_id": None,
        "source": {"document_id": "d2"},
    }


def test_evidence_and_per_case_evaluators_read_columns():
    from heta_eval.evaluation import EvidenceRecallAtK

    table = ChunkTable(["d1", "d2", "d3"], sources=[{"page_index": i} for i in range(3)])
    case = BenchmarkCase(
        id="q",
        query="?",
        expected={
            "relevance": {"d3": 1},
            "evidence": [{"locator": {"document_id": "d3", "page_index": 2}}],
        },
    )
    response = QueryResponse(query="?", results=table.columns([0, 2, 1], [3.0, 2.0, 1.0]))
    evidence = asyncio.run(EvidenceRecallAtK(k=2).evaluate(case=case, response=response))
    assert evidence.value == 1.0
    report = evaluate_responses([case], {"q": response}, beir_default_metrics((1, 3)))
    assert report.metrics["mrr@3"].beir == 0.5


def test_real_scifact_run_as_columns_equals_beir(scifact_dir, scifact_run_file):
    """The shared SciFact run, each document split into two chunks (the second ranked lower,
    after every first chunk), scored through the compiled batch path and through pytrec."""
    from heta_eval.io.trec import read_qrels, read_run

    run = read_run(scifact_run_file)
    qrels = read_qrels(scifact_dir / "qrels" / "test.tsv")
    docs = sorted({doc for ranked in run.values() for doc in ranked})
    table = ChunkTable([doc for doc in docs for _ in range(2)])
    row_of = {doc: 2 * i for i, doc in enumerate(docs)}
    responses = {}
    for qid, ranked in run.items():
        if qid not in qrels:  # the run also ranks the train queries
            continue
        firsts = [row_of[doc] for doc in ranked]
        low = min(ranked.values()) - 1.0
        rows = firsts + [row + 1 for row in firsts]
        scores = [*ranked.values(), *(low - i for i in range(len(firsts)))]
        responses[qid] = QueryResponse(query=qid, results=table.columns(rows, scores))
    cases = [BenchmarkCase(id=q, query=q, expected={"relevance": r}) for q, r in qrels.items()]
    metrics = beir_default_metrics()
    fast = score_retrieval_batch(metrics, cases, responses, engine="fast")
    assert fast == score_retrieval_batch(metrics, cases, responses, engine="pytrec")
    for qid in run.keys() & qrels.keys():
        meta = fast[qid]["ndcg@10"].metadata
        own = qid in run[qid]  # a self-hit: both of its chunks are dropped
        assert meta["documents"] == len(run[qid]) - own
        assert (meta["duplicate_chunks"], meta["self_hits_removed"]) == (
            len(run[qid]) - own,
            2 * own,
        )
    report = evaluate_responses(cases, responses, metrics)
    ours = {s.name: s.beir for s in report.metrics.values()}
    prefix = {"NDCG": "ndcg", "MAP": "map", "Recall": "recall", "P": "precision", "MRR": "mrr"}
    expected = beir_numbers(qrels, run, (1, 3, 5, 10, 100))
    assert {f"{prefix[k.split('@')[0]]}@{k.split('@')[1]}": v for k, v in expected.items()} == ours
    assert round(ours["ndcg@10"], 4) == 0.5701  # trec_eval prints 0.5701 for this run


@pytest.mark.parametrize("sources", ["callable", "list", "none"])
def test_chunk_hits_read_from_columns_equal_those_of_built_results(sources):
    # The run keeps each shown document's chunk hits: read from the table (no text read,
    # no result built), they must be those the validated results give.
    rng = random.Random(sum(map(ord, sources)))
    docs = [f"d{i}" for i in range(40)]
    rows = [rng.choice(docs) for _ in range(300)]
    given = {
        "callable": lambda row: {"chunk_id": f"c{row}"} if row % 3 else {"page": row},
        "list": [{"chunk_id": row} if row % 4 else {} for row in range(300)],
        "none": None,
    }[sources]
    reference = [f"{d}#{i}" if i % 5 else None for i, d in enumerate(rows)]
    table = ChunkTable(
        rows, texts=[f"t{i}" for i in range(300)], reference_ids=reference, sources=given
    )
    picked = rng.sample(range(300), 120)
    scores = [rng.choice([rng.random(), np.nan]) for _ in picked]
    columns = table.columns(picked, scores)
    objects = [QueryResult.model_validate(r.model_dump()) for r in columns]
    shown = list(dict.fromkeys(columns.document_ids))
    fresh = table.columns(picked, scores)  # nothing built yet
    assert chunk_hits(fresh, shown) == chunk_hits(objects, shown)
    assert fresh._materialized == [None] * len(picked)
    assert chunk_hits(fresh, shown) != []
