"""Exact dense search in blocks: the ranking of the full product (best score first, ties by
lower row) on both sides of every block and batch boundary; scores that do not depend on the
block or batch a row or query is in; float16 storage; BEIR's DenseRetrievalExactSearch as
the oracle on real-valued vectors."""

from __future__ import annotations

import numpy as np
import pytest
from beir.retrieval.search.dense import DenseRetrievalExactSearch
from hypothesis import given, settings
from hypothesis import strategies as st
from support.given_vectors_model import GivenVectorsModel

from heta_eval.ann.exact_search import exact_search
from heta_eval.reference.bm25 import top_indices


@settings(max_examples=150, deadline=None)
@given(
    rows=st.integers(1, 90),
    dim=st.integers(1, 5),
    queries=st.integers(1, 9),
    k=st.integers(0, 100),
    block=st.integers(1, 40),
    batch=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_blocks_and_batches_give_the_full_products_ranking_with_ties(
    rows, dim, queries, k, block, batch, seed
):
    # Small integers: many exact ties, and every product is exact in float32 (and float16).
    rng = np.random.default_rng(seed)
    corpus = rng.integers(-2, 3, size=(rows, dim)).astype(np.float16)
    vectors = rng.integers(-2, 3, size=(queries, dim)).astype(np.float32)
    got_rows, got_scores = exact_search(corpus, vectors, k, block_rows=block, query_batch=batch)
    full = vectors.astype(np.float64) @ corpus.astype(np.float64).T
    assert got_rows.shape == got_scores.shape == (queries, min(k, rows))
    for q in range(queries):
        expected = top_indices(full[q], k)
        assert got_rows[q].tolist() == expected.tolist()
        assert got_scores[q].tolist() == full[q][expected].tolist()


def test_row_scale_multiplies_each_rows_scores():
    rng = np.random.default_rng(3)
    corpus = rng.normal(size=(300, 8)).astype(np.float32)
    vectors = rng.normal(size=(4, 8)).astype(np.float32)
    scale = (1 / np.linalg.norm(corpus, axis=1)).astype(np.float32)
    got_rows, got_scores = exact_search(corpus, vectors, 20, row_scale=scale, block_rows=70)
    cosine = (vectors @ corpus.T) * scale
    for q in range(4):
        assert got_rows[q].tolist() == top_indices(cosine[q], 20).tolist()
        np.testing.assert_allclose(got_scores[q], cosine[q][got_rows[q]], rtol=1e-6)


@pytest.mark.parametrize("dim", [8, 384])
def test_a_rows_score_is_the_same_bits_whatever_block_or_batch_it_is_in(dim):
    # Real-valued vectors: a score rounds differently through another BLAS path (one query
    # alone, a thin product); the search pads its products so that none is thinner.
    rng = np.random.default_rng(11)
    corpus = rng.normal(size=(3000, dim)).astype(np.float16)
    vectors = rng.normal(size=(13, dim)).astype(np.float32)
    reference = exact_search(corpus, vectors, 50)
    for block, batch in ((7, 13), (31, 2), (256, 5), (2999, 3), (5000, 1)):
        rows, scores = exact_search(corpus, vectors, 50, block_rows=block, query_batch=batch)
        assert np.array_equal(rows, reference[0]), (block, batch)
        assert np.array_equal(scores, reference[1]), (block, batch)
    alone = [exact_search(corpus, vectors[q : q + 1], 50) for q in range(13)]
    assert np.array_equal(np.concatenate([r for r, _ in alone]), reference[0])
    assert np.array_equal(np.concatenate([s for _, s in alone]), reference[1])
    one_row_blocks = exact_search(corpus[:300], vectors[:2], 50, block_rows=1, query_batch=1)
    assert np.array_equal(one_row_blocks[1], exact_search(corpus[:300], vectors, 50)[1][:2])
    # A corpus of another length: the rows it shares score the same bits.
    longer = np.concatenate([corpus, rng.normal(size=(9_000, dim)).astype(np.float16)])
    everything = exact_search(longer, vectors, len(longer), block_rows=5_000)
    for q in range(13):
        mine = everything[0][q] < len(corpus)
        assert np.array_equal(everything[0][q][mine][:50], reference[0][q])
        assert np.array_equal(everything[1][q][mine][:50], reference[1][q])


def test_float16_rows_search_as_their_float32_widening():
    rng = np.random.default_rng(5)
    half = rng.normal(size=(1000, 32)).astype(np.float16)
    vectors = rng.normal(size=(6, 32)).astype(np.float32)
    a = exact_search(half, vectors, 100, block_rows=300)
    b = exact_search(half.astype(np.float32), vectors, 100, block_rows=300)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_no_queries_or_no_k():
    corpus = np.ones((5, 2), np.float32)
    assert exact_search(corpus, np.zeros((0, 2), np.float32), 3)[0].shape == (0, 3)
    assert exact_search(corpus, np.ones((2, 2), np.float32), 0)[0].shape == (2, 0)
    assert exact_search(corpus, np.ones((2, 2), np.float32), 9)[0].shape == (2, 5)


@pytest.mark.parametrize("score_function", ["cos_sim", "dot"])
def test_beirs_exact_search_finds_the_same_top_10_and_scores(score_function):
    rng = np.random.default_rng(17)
    corpus = rng.normal(size=(5000, 48)).astype(np.float16)
    vectors = rng.normal(size=(25, 48)).astype(np.float16)
    model = GivenVectorsModel(corpus, vectors)
    beir = DenseRetrievalExactSearch(model, corpus_chunk_size=1700, show_progress_bar=False)
    results = beir.search(
        {f"d{i}": {"title": "", "text": str(i)} for i in range(len(corpus))},
        {f"q{q}": f"{q} query" for q in range(len(vectors))},
        100,
        score_function,
    )
    wide = vectors.astype(np.float32)
    scale = None
    if score_function == "cos_sim":
        wide = wide / np.linalg.norm(wide, axis=1, keepdims=True)
        scale = (1 / np.linalg.norm(corpus.astype(np.float32), axis=1)).astype(np.float32)
    rows, scores = exact_search(corpus, wide, 100, row_scale=scale, block_rows=1234)
    for q in range(len(vectors)):
        theirs = sorted(results[f"q{q}"].items(), key=lambda item: -item[1])
        assert [f"d{r}" for r in rows[q][:10]] == [doc for doc, _ in theirs[:10]]
        assert {f"d{r}" for r in rows[q]} == set(results[f"q{q}"])
        np.testing.assert_allclose(
            scores[q], [results[f"q{q}"][f"d{r}"] for r in rows[q]], rtol=2e-6, atol=2e-6
        )
