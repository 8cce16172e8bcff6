"""The chunk collapse is one rule on every entry point: ``collapse_to_documents`` (result
lists and ``ResultColumns``), ``collapse_batch`` (lists, tables, both mixed), its kernel
compiled and as Python, and the reference knowledge base's distinct documents. All equal a
plain loop that states the rule; the metrics equal BEIR's on the run that loop builds, on
both sides of the compiled engine's threshold."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.beir_reference import beir_numbers

import heta_eval.providers.backends as backends
from heta_eval.evaluation import (
    BenchmarkCase,
    QueryResponse,
    beir_default_metrics,
    evaluate_responses,
)
from heta_eval.models.columns import ChunkTable
from heta_eval.models.records import Document
from heta_eval.reference import Recipe
from heta_eval.retrieval.collapse import collapse_batch, collapse_to_documents
from heta_eval.retrieval.first_chunks import first_chunks, first_chunks_of_list

QIDS = ["q1", "q2", "10", "文"]
# Some doc ids equal a query id (self-hits); None: a chunk with no resolvable document.
DOCS = ["d1", "d2", "D3", "é4", "q1", "10", "文", "100"]
TIED = [1.0, 2.0, 0.5, 1.0 + 1e-9, 3.0, -1.0, 0.0]  # few values: equal scores are common
chunks_strategy = st.lists(
    st.tuples(st.sampled_from([*DOCS, None]), st.sampled_from([*TIED, None])), max_size=14
)
queries_strategy = st.dictionaries(st.sampled_from(QIDS), chunks_strategy, max_size=4)
TABLE = ChunkTable([doc for doc in DOCS for _ in range(3)])  # three chunk rows per document


def reference(chunks, query_id, ignore_identical_ids=True):
    """The rule as a plain loop: ``(kept {doc: first score}, unmapped, duplicates, self-hits)``."""
    kept: dict[str, float | None] = {}
    unmapped = duplicates = self_hits = 0
    for doc, score in chunks:
        if doc is None:
            unmapped += 1
        elif ignore_identical_ids and doc == query_id:
            self_hits += 1
        elif doc in kept:
            duplicates += 1
        else:
            kept[doc] = score
    return kept, unmapped, duplicates, self_hits


def final_scores(kept: dict[str, float | None]) -> dict[str, float]:
    """Rank-derived n..1 when any kept document has no score, else the scores."""
    if any(score is None for score in kept.values()):
        return {doc: float(len(kept) - i) for i, doc in enumerate(kept)}
    return dict(kept)  # type: ignore[arg-type]


def spelled(doc: str | None, i: int, plain: bool) -> dict:
    """The source of chunk ``i``: ``document_id`` only, or each spelling the resolver reads."""
    if plain:
        return {"document_id": doc} if doc is not None else {}
    if doc is None:
        return [{}, {"document_id": ""}, {"chunk_id": i}][i % 3]
    return [
        {"document_id": doc, "chunk_id": i},
        {"source_key": doc},
        {"document_id": "", "object_key": doc},
        {"document_id": None, "source_key": doc},
    ][i % 4]


def list_response(chunks, plain: bool = True) -> QueryResponse:
    results = [
        {"score": score, "source": spelled(doc, i, plain)} for i, (doc, score) in enumerate(chunks)
    ]
    return QueryResponse.model_validate({"query": "q", "results": results})


def table_response(chunks) -> QueryResponse:
    """The mapped chunks as ``ResultColumns`` (a table row always has a document)."""
    rows = [3 * DOCS.index(doc) + i % 3 for i, (doc, _) in enumerate(chunks)]
    scores = [math.nan if score is None else score for _, score in chunks]
    return QueryResponse(query="q", results=TABLE.columns(rows, scores))


def mapped(chunks):
    return [(doc, score) for doc, score in chunks if doc is not None]


def batch_as_dicts(batch) -> dict[str, tuple]:
    """``collapse_batch``'s arrays as ``reference``'s tuples per query (NaN score: None)."""
    run, out = batch.run, {}
    data, offsets = bytes(run.doc_data), run.doc_offsets
    valid = run.valid if run.valid is not None else np.ones(run.rows, dtype=bool)
    for q, query_id in enumerate(run.query_ids):
        kept = {
            data[offsets[i] : offsets[i + 1]].decode(): (float(run.scores[i]) if valid[i] else None)
            for i in range(run.offsets[q], run.offsets[q + 1])
        }
        out[query_id] = (kept, batch.unmapped[q], batch.duplicates[q], batch.self_hits[q])
    return out


def by_document_id(result) -> str | None:
    """A caller's resolver: only ``source["document_id"]``."""
    return result.source.get("document_id")


@settings(max_examples=300, deadline=None)
@given(queries=queries_strategy, ignore=st.booleans(), plain=st.booleans(), own=st.booleans())
def test_every_entry_point_keeps_each_documents_first_chunk(queries, ignore, plain, own):
    """``own``: a caller's resolver, which reads ``ResultColumns`` as result objects."""
    resolver = by_document_id if own else None
    plain = plain or own
    lists = {qid: list_response(chunks, plain) for qid, chunks in queries.items()}
    tables = {qid: table_response(mapped(chunks)) for qid, chunks in queries.items()}
    expected = {qid: reference(chunks, qid, ignore) for qid, chunks in queries.items()}
    from_tables = {qid: reference(mapped(chunks), qid, ignore) for qid, chunks in queries.items()}
    options = {"resolver": resolver, "ignore_identical_ids": ignore}
    for qid in queries:
        for response, (kept, unmapped, duplicates, self_hits) in (
            (lists[qid], expected[qid]),
            (tables[qid], from_tables[qid]),
        ):
            ranking = collapse_to_documents(response, query_id=qid, **options)
            assert ranking.scores == final_scores(kept)
            assert list(ranking.scores) == list(kept)  # response order
            assert (ranking.unmapped, ranking.duplicates, ranking.self_hits) == (
                unmapped,
                duplicates,
                self_hits,
            )
            assert ranking.rank_derived == (None in kept.values())
    assert batch_as_dicts(collapse_batch(lists.items(), **options)) == expected
    assert batch_as_dicts(collapse_batch(tables.items(), **options)) == from_tables
    # Tables and lists interleaved: one segment per run of a kind, in query order.
    mixed = [(qid, tables[qid] if i % 2 else lists[qid]) for i, qid in enumerate(queries)]
    mixed_expected = {
        qid: (from_tables if i % 2 else expected)[qid] for i, qid in enumerate(queries)
    }
    batch = collapse_batch(mixed, **options)
    assert batch.run.query_ids == list(queries)
    assert batch_as_dicts(batch) == mixed_expected


@settings(max_examples=300, deadline=None)
@given(
    queries=st.lists(
        st.tuples(st.lists(st.integers(-1, 9), max_size=20), st.integers(-1, 9)), max_size=5
    ),
    many_documents=st.booleans(),
)
def test_the_kernel_compiled_as_python_and_on_lists_gives_the_rules_answer(queries, many_documents):
    codes = [code for rows, _ in queries for code in rows]
    offsets = np.cumsum([0] + [len(rows) for rows, _ in queries])
    own = [mine for _, mine in queries]
    # 10 codes, or so many that the kernel first renumbers the few present.
    n_codes = 100_000 if many_documents else 10
    keep_expected, counts_expected = [], []
    for rows, mine in queries:
        kept, unmapped, duplicates, self_hits = reference(
            [(None if c < 0 else c, None) for c in rows], mine if mine >= 0 else None
        )
        seen: set[int] = set()
        for c in rows:
            keep_expected.append(c in kept and c not in seen)
            seen.update([c] if c in kept else [])
        counts_expected.append([len(kept), unmapped, duplicates, self_hits])
    for compiled in (True, False):
        keep, counts = first_chunks(
            np.array(codes, dtype=np.int64), offsets, np.array(own), n_codes, compiled=compiled
        )
        assert keep.tolist() == keep_expected
        assert counts.reshape(-1, 4).tolist() == counts_expected
    for q, (rows, mine) in enumerate(queries):  # the list form: one query's ids, as one response
        ids = [c if c >= 0 else None for c in rows]
        first, one_counts = first_chunks_of_list(ids, mine if mine >= 0 else None)
        start = int(offsets[q])
        assert list(first.values()) == [i for i in range(len(rows)) if keep_expected[start + i]]
        assert list(first) == [rows[i] for i in first.values()]
        assert one_counts == counts_expected[q]
    # A caller's scratch array (all -1) gives the same answer and is left all -1 again.
    seen = np.full(n_codes, -1, dtype=np.int64)
    for _ in range(2):
        keep, counts = first_chunks(
            np.array(codes, dtype=np.int64), offsets, np.array(own), n_codes, seen=seen
        )
        assert keep.tolist() == keep_expected and counts.tolist() == counts_expected
        assert (seen == -1).all()


@settings(max_examples=300, deadline=None)
@given(chunks=chunks_strategy, own=st.sampled_from([*QIDS, None]))
def test_the_list_form_gives_the_rules_answer_on_document_ids(chunks, own):
    """None: unmapped; ``own`` None: no self-hits. Kept ids in rank order, each with the row
    of its first chunk."""
    ids = [doc for doc, _ in chunks]
    kept, unmapped, duplicates, self_hits = reference(chunks, own, own is not None)
    first, counts = first_chunks_of_list(ids, own)
    assert list(first) == list(kept)
    assert all(ids.index(doc) == row for doc, row in first.items())
    assert counts == [len(kept), unmapped, duplicates, self_hits]


@settings(max_examples=60, deadline=None)
@given(
    chunks=st.lists(
        st.tuples(st.sampled_from([*DOCS, None]), st.sampled_from([*TIED, None])),
        min_size=64,
        max_size=300,
    ),
    query_id=st.sampled_from(QIDS),
)
def test_a_long_response_keeps_each_documents_first_chunk(chunks, query_id):
    """Hundreds of rows of a few documents: most are duplicates, as in a real response."""
    kept, unmapped, duplicates, self_hits = reference(chunks, query_id)
    ranking = collapse_to_documents(list_response(chunks), query_id=query_id)
    assert list(ranking.scores.items()) == list(final_scores(kept).items())
    assert (ranking.unmapped, ranking.duplicates, ranking.self_hits) == (
        unmapped,
        duplicates,
        self_hits,
    )
    table_expected = reference(mapped(chunks), query_id)
    table_ranking = collapse_to_documents(table_response(mapped(chunks)), query_id=query_id)
    assert list(table_ranking.scores.items()) == list(final_scores(table_expected[0]).items())
    assert table_ranking.self_hits == table_expected[3]


@pytest.mark.parametrize(
    ("chunks", "query_id", "scores", "counts"),
    [
        # A later chunk of a document never replaces its first, however it scores.
        ([("a", 0.5), ("b", 0.8), ("a", 0.9), ("b", 0.8)], "q", {"a": 0.5, "b": 0.8}, (0, 2, 0)),
        # Every chunk of the query's own document is a self-hit, none a duplicate.
        ([("q", 3.0), ("a", 1.0), ("q", 2.0)], "q", {"a": 1.0}, (0, 0, 2)),
        # The first chunk has no score: the whole ranking is rank-derived.
        ([("a", None), ("b", 2.0), ("a", 3.0)], "q", {"a": 2.0, "b": 1.0}, (0, 1, 0)),
        # A duplicate's missing score does not matter: it is dropped.
        ([("a", 2.0), ("a", None), (None, None)], "q", {"a": 2.0}, (1, 1, 0)),
        ([], "q", {}, (0, 0, 0)),
        ([(None, 1.0), ("q", 1.0)], "q", {}, (1, 0, 1)),
    ],
)
def test_collapse_examples(chunks, query_id, scores, counts):
    ranking = collapse_to_documents(list_response(chunks), query_id=query_id)
    assert ranking.scores == scores
    assert (ranking.unmapped, ranking.duplicates, ranking.self_hits) == counts
    batch = collapse_batch([(query_id, list_response(chunks))])
    kept, *dropped = batch_as_dicts(batch)[query_id]
    assert final_scores(kept) == scores and tuple(dropped) == counts


def test_one_response_of_result_lists_collapses_without_loading_numba():
    """The small (pytrec_eval) path runs the kernel as Python: no JIT for a few responses."""
    code = (
        "import sys\n"
        "from heta_eval.evaluation import QueryResponse\n"
        "from heta_eval.retrieval.collapse import collapse_to_documents\n"
        "r = QueryResponse(query='q', results=[{'score': 1.0, 'source': {'document_id': 'a'}},"
        " {'score': 2.0, 'source': {'document_id': 'a'}}, {'score': 0.5, 'source': {}}])\n"
        "ranking = collapse_to_documents(r, query_id='q')\n"
        "print(ranking.scores, ranking.duplicates, ranking.unmapped, 'numba' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["{'a':", "1.0}", "1", "1", "False"]


def test_a_batch_of_no_responses_is_an_empty_run():
    batch = collapse_batch([])
    assert batch.run.query_ids == [] and batch.run.rows == 0
    assert (batch.unmapped, batch.duplicates, batch.self_hits) == ([], [], [])


@pytest.mark.parametrize("form", ["lists", "table"])
@pytest.mark.parametrize("engine_min_rows", [backends.ENGINE_MIN_ROWS, 0])
@settings(max_examples=120, deadline=None)
@given(
    qrels=st.dictionaries(
        st.sampled_from(QIDS),
        st.dictionaries(st.sampled_from(DOCS), st.integers(0, 2), max_size=5),
        max_size=4,
    ),
    queries=st.dictionaries(
        st.sampled_from(QIDS),
        st.lists(st.tuples(st.sampled_from(DOCS), st.sampled_from(TIED)), max_size=14),
        max_size=4,
    ),
    k_values=st.lists(st.integers(1, 12), min_size=1, max_size=3, unique=True),
)
def test_metrics_equal_beir_on_the_collapsed_run(form, engine_min_rows, qrels, queries, k_values):
    """pytrec_eval below the threshold, the compiled engine from it (0: always)."""
    build = list_response if form == "lists" else table_response
    cases = [
        BenchmarkCase(id=qid, query=qid, expected={"relevance": qrels.get(qid, {})})
        for qid in dict.fromkeys([*qrels, *queries])
    ]
    responses = {qid: build(chunks) for qid, chunks in queries.items()}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(backends, "ENGINE_MIN_ROWS", engine_min_rows)
        report = evaluate_responses(cases, responses, beir_default_metrics(k_values))
    # BEIR gets each document's first chunk, self-hits included: it drops those itself.
    run = {
        qid: reference(chunks, qid, ignore_identical_ids=False)[0]
        for qid, chunks in queries.items()
    }
    expected = beir_numbers({q: d for q, d in qrels.items() if d}, run, k_values)
    ours = {summary.name: summary.beir for summary in report.metrics.values()}
    if expected is None:  # BEIR divides by zero: no judged query was answered
        assert all(v is None for name, v in ours.items() if not name.startswith("mrr"))
        return
    names = {"NDCG": "ndcg", "MAP": "map", "Recall": "recall", "P": "precision", "MRR": "mrr"}
    for key, value in expected.items():
        metric, k = key.split("@")
        assert ours[f"{names[metric]}@{k}"] == value, key


async def test_knowledge_base_distinct_documents_are_the_collapse_of_its_chunk_ranking(
    tmp_path,
) -> None:
    # Documents split into many chunks, so one document fills the top of the chunk ranking.
    docs = [
        Document(id=f"doc{j}", text=" ".join(f"Red apples {j} number {i}." for i in range(j * 5)))
        for j in range(1, 6)
    ]
    recipe = Recipe(modes=["keyword_search"], chunking={"size": 5, "overlap": 0}, overfetch=1)
    kb = recipe.build("split", docs, cache_dir=tmp_path, progress=False)
    chunky = recipe.model_copy(update={"distinct_documents": False}).build(
        "split", docs, cache_dir=tmp_path, progress=False
    )
    every_chunk = chunky.search(["red apples 4"], mode="keyword_search", top_k=len(kb.chunks))[0]
    collapsed = collapse_to_documents(QueryResponse(query="q", results=every_chunk))
    assert collapsed.duplicates > 0
    for top_k in (1, 2, 4, 10):
        hits = kb.search(["red apples 4"], mode="keyword_search", top_k=top_k)[0]
        assert dict(zip(hits.document_ids, hits.scores.tolist(), strict=True)) == dict(
            list(collapsed.scores.items())[:top_k]
        )
