"""The reference knowledge base on a small corpus: real bm25s, the real MiniLM model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from heta_eval.encoding.dense import DenseEncoder
from heta_eval.models.records import Document, QueryResponse
from heta_eval.reference import MODES, ExtractiveAnswerer, Recipe, reciprocal_rank_fusion
from heta_eval.reference.bm25 import BM25Index, top_indices
from heta_eval.systems import IngestingKnowledgeBase, KnowledgeBase

CORPUS = [
    Document(id="paris", title="Paris", text="Paris is the capital and largest city of France."),
    Document(
        id="rome", title="Rome", text="Rome is the capital city of Italy. It has the Colosseum."
    ),
    Document(
        id="cats", title="Cats", text="Cats are small domestic felines that purr and hunt mice."
    ),
    Document(id="dogs", title="Dogs", text="Dogs are loyal domesticated canines that bark."),
    Document(
        id="photo",
        title="Photosynthesis",
        text="Plants convert sunlight, water and carbon dioxide into glucose and oxygen.",
    ),
    Document(id="empty", title="", text=""),
]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory):
    return Recipe().build(
        "small", CORPUS, cache_dir=tmp_path_factory.mktemp("cache"), progress=False
    )


def test_protocols(kb) -> None:
    assert isinstance(kb, KnowledgeBase) and isinstance(kb, IngestingKnowledgeBase)
    assert kb.modes == MODES


@pytest.mark.parametrize(
    ("mode", "query", "expected"),
    [
        ("keyword_search", "capital of France", "paris"),
        ("keyword_search", "barking dogs", "dogs"),
        ("vector_search", "Which animal meows and catches rodents?", "cats"),
        ("vector_search", "how do plants make sugar from light", "photo"),
        ("hybrid_search", "Italian capital with the Colosseum", "rome"),
    ],
)
async def test_each_mode_finds_the_right_document(kb, mode: str, query: str, expected: str) -> None:
    response = await kb.query(query, mode=mode, top_k=3)
    assert isinstance(response, QueryResponse) and response.mode == mode
    top = response.results[0]
    assert top.source["document_id"] == expected
    assert top.reference_id == f"{expected}#0" == top.source["chunk_id"]
    doc = next(d for d in CORPUS if d.id == expected)
    assert top.text == doc.text[top.source["start"] : top.source["end"]]
    scores = [r.score for r in response.results]
    assert all(type(s) is float for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert response.answer  # the default extractive answerer answers from the top chunks


async def test_keyword_search_returns_only_matching_documents(kb) -> None:
    response = await kb.query("purr", mode="keyword_search", top_k=5)
    assert [r.source["document_id"] for r in response.results] == ["cats"]
    assert (await kb.query("zzzz qqqq", mode="keyword_search", top_k=5)).results == []


async def test_vector_search_scores_are_cosines(kb) -> None:
    response = await kb.query("kittens", mode="vector_search", top_k=len(CORPUS))
    assert len(response.results) == len(CORPUS)
    assert all(-1.0001 <= r.score <= 1.0001 for r in response.results)
    encoder = DenseEncoder()
    assert encoder.precision == kb.encoder.precision
    query = encoder.encode(["kittens"])[0]  # a query is encoded alone, as the kb does
    row = next(i for i, chunk in enumerate(kb.chunks) if chunk.document_id == "cats")
    stored = kb.embeddings[row]
    np.testing.assert_allclose(np.linalg.norm([query, stored], axis=1), 1.0, rtol=1e-5)
    cats = next(r for r in response.results if r.source["document_id"] == "cats")
    assert cats.score == pytest.approx(float(query @ stored), abs=1e-5)
    # The stored vector is the chunk's text's. Encoded alone it moves a little in bfloat16
    # and int8 (rounding, and int8's activation scales, depend on the batch).
    alone = encoder.encode(["Cats " + CORPUS[2].text])[0]
    assert float(alone @ stored) > (0.99999 if kb.encoder.precision == "float32" else 0.98)


async def test_hybrid_is_rrf_of_the_two_rankings(kb) -> None:
    query, n = "capital city", len(CORPUS)
    kw = [r.reference_id for r in (await kb.query(query, mode="keyword_search", top_k=n)).results]
    vec = [r.reference_id for r in (await kb.query(query, mode="vector_search", top_k=n)).results]
    hybrid = (await kb.query(query, mode="hybrid_search", top_k=n)).results
    expected = dict(reciprocal_rank_fusion([kw, vec], k=60))
    for r in hybrid:
        assert r.score == pytest.approx(expected[r.reference_id])


def test_rrf_math() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert [d for d, _ in reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]])] == ["a", "c", "b"]
    assert reciprocal_rank_fusion([["x"]], k=1) == [("x", 0.5)]
    assert reciprocal_rank_fusion([]) == []


def test_top_indices_is_exact() -> None:
    rng = np.random.default_rng(0)
    scores = rng.normal(size=1000)
    assert top_indices(scores, 10).tolist() == np.argsort(-scores)[:10].tolist()
    assert top_indices(scores, 5000).tolist() == np.argsort(-scores).tolist()


async def test_unknown_mode_is_a_clear_error(kb) -> None:
    with pytest.raises(ValueError, match="unknown mode 'fuzzy'"):
        await kb.query("x", mode="fuzzy", top_k=1)


async def test_overfetch_returns_top_k_distinct_documents(tmp_path: Path) -> None:
    # One long document split into many chunks that all match better than the others.
    long_doc = Document(id="long", text=" ".join(f"Apples are red number {i}." for i in range(40)))
    others = [Document(id=f"o{i}", text=f"An apple a day, item {i}.") for i in range(5)]
    recipe = Recipe(chunking={"size": 6, "overlap": 0}, overfetch=1)
    kb = recipe.build("split", [long_doc, *others], cache_dir=tmp_path, progress=False)
    assert len(kb.chunks) > 20
    for mode in MODES:
        results = (await kb.query("red apples", mode=mode, top_k=4)).results
        ids = [r.source["document_id"] for r in results]
        assert len(ids) == 4 and len(set(ids)) == 4, (mode, ids)
    chunky = recipe.model_copy(update={"distinct_documents": False})
    kb2 = chunky.build("split", [long_doc, *others], cache_dir=tmp_path, progress=False)
    ids = [
        r.source["document_id"]
        for r in (await kb2.query("red apples", mode="keyword_search", top_k=4)).results
    ]
    assert ids == ["long"] * 4


def test_cache_reuse_and_invalidation(tmp_path: Path) -> None:
    docs = CORPUS[:4]
    first = Recipe().build("c", docs, cache_dir=tmp_path, progress=False)
    assert (first.build_info["bm25"], first.build_info["embeddings"]) == ("built", "built")
    assert first.encoder.calls == 1

    again = Recipe().build("c", docs, cache_dir=tmp_path, progress=False)
    assert (again.build_info["bm25"], again.build_info["embeddings"]) == ("cache", "cache")
    assert again.encoder.calls == 0  # nothing was encoded: embeddings came from disk
    np.testing.assert_array_equal(first.embeddings, again.embeddings)
    # Cached arrays load without pickle.
    emb = Path(again.build_info["embeddings_path"]) / "embeddings.npy"
    assert np.load(emb, allow_pickle=False).shape == (4, 384)

    # The answerer does not shape indexes: still cached.
    other_answer = Recipe(answerer={"kind": "none"}).build(
        "c", docs, cache_dir=tmp_path, progress=False
    )
    assert other_answer.build_info["embeddings"] == "cache" and other_answer.answerer is None

    # Changed BM25 parameters rebuild BM25 only.
    bm25_changed = Recipe(bm25={"k1": 1.2}).build("c", docs, cache_dir=tmp_path, progress=False)
    assert bm25_changed.build_info["bm25"] == "built"
    assert bm25_changed.build_info["embeddings"] == "cache"

    # Changed chunking rebuilds both (chunks whose text did not change keep their vectors).
    rechunked = Recipe(chunking={"size": 5}).build("c", docs, cache_dir=tmp_path, progress=False)
    assert rechunked.build_info["bm25"] == "built"
    assert rechunked.build_info["embeddings"].startswith("built")

    # A changed corpus (one edited document) rebuilds both.
    edited = [*docs[:3], docs[3].model_copy(update={"text": docs[3].text + " Woof."})]
    changed = Recipe().build("c", edited, cache_dir=tmp_path, progress=False)
    assert changed.build_info["bm25"] == "built"
    assert changed.build_info["embeddings"] == "built (reused 3 of 4)"  # only the edit encoded
    assert not np.array_equal(changed.embeddings[3], first.embeddings[3])
    np.testing.assert_array_equal(changed.embeddings[:3], first.embeddings[:3])


def test_bm25_index_roundtrip(tmp_path: Path) -> None:
    index = BM25Index.build(["the cat sat on the mat", "dogs bark"], progress=False)
    index.save(tmp_path / "idx")
    loaded = BM25Index.load(tmp_path / "idx")
    np.testing.assert_allclose(index.scores("cats sitting"), loaded.scores("cats sitting"))
    assert index.tokenize("The cats of the sitting") == ["cat", "sit"]  # stemmed, no stopwords


async def test_ingest_adds_documents(tmp_path: Path) -> None:
    kb = Recipe(modes=["keyword_search"]).build("i", CORPUS[:2], cache_dir=tmp_path, progress=False)
    assert (await kb.query("purr", mode="keyword_search", top_k=1)).results == []
    await kb.ingest([CORPUS[2]])
    hit = (await kb.query("purr", mode="keyword_search", top_k=1)).results[0]
    assert hit.source["document_id"] == "cats"


def test_recipe_json_roundtrip_and_validation(tmp_path: Path) -> None:
    recipe = Recipe(
        name="r",
        chunking={"size": 128, "overlap": 16, "unit": "chars"},
        dense={"precision": "bfloat16"},
    )
    path = tmp_path / "recipe.json"
    recipe.to_file(path)
    assert json.loads(path.read_text())["chunking"]["size"] == 128
    assert Recipe.from_file(path) == recipe
    path.write_text('{"chunking": {"size": 10, "overlap": 10}}')
    with pytest.raises(ValueError, match="overlap"):
        Recipe.from_file(path)
    path.write_text('{"bm25": {"k3": 1}}')
    with pytest.raises(ValueError, match="k3"):
        Recipe.from_file(path)
    with pytest.raises(ValueError, match="empty corpus"):
        Recipe().build("x", [], cache_dir=False)


async def test_bfloat16_encoder_is_close_to_float32() -> None:
    texts = [d.text for d in CORPUS[:5]]
    f32 = DenseEncoder(precision="float32").encode(texts)
    bf16 = DenseEncoder(precision="bfloat16").encode(texts)
    assert bf16.dtype == np.float32
    assert np.min(np.sum(f32 * bf16, axis=1)) > 0.98


async def test_extractive_answerer_picks_best_sentence(kb) -> None:
    response = await kb.query("What does Rome have?", mode="keyword_search", top_k=2)
    assert response.answer in {"It has the Colosseum.", "Rome is the capital city of Italy."}
    answerer = ExtractiveAnswerer()
    assert await answerer.answer("anything", []) is None


async def test_results_are_columns_that_materialize_to_the_chunks(kb) -> None:
    from heta_eval.evaluation import QueryResult
    from heta_eval.models.columns import ResultColumns

    for mode in MODES:
        response = await kb.query("capital city", mode=mode, top_k=3)
        assert isinstance(response.results, ResultColumns)
        for row, result in zip(response.results.rows.tolist(), response.results, strict=True):
            chunk = kb.chunks[row]
            assert result == QueryResult(
                text=chunk.text,
                score=result.score,
                reference_id=chunk.chunk_id,
                source=chunk.source(),
            )
        scores = [r.score for r in response.results]
        assert scores == sorted(scores, reverse=True) and 2 <= len(scores) <= 3
    assert [len(r) for r in kb.search(["cats", "dogs"], mode="keyword_search", top_k=0)] == [0, 0]


async def test_a_response_pickles_with_its_results(kb) -> None:
    import pickle

    response = await kb.query("capital of Italy", mode="keyword_search", top_k=2)
    again = pickle.loads(pickle.dumps(response))
    assert again == response and again.results.document_ids == response.results.document_ids
