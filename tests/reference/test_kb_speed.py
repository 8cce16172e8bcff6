"""Fast paths of the knowledge base keep exact results: batch BM25 search, top-k ties,
the "auto" encoder precision; and the KB benchmark script runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from support.cpu_kinds import KIND_IDS, KINDS

from heta_eval.encoding.cpu import simulated_cpu
from heta_eval.encoding.dense import DenseEncoder, native_bfloat16, resolve_precision
from heta_eval.reference import Recipe
from heta_eval.reference import bm25 as bm25_module
from heta_eval.reference.bm25 import BM25Index, top_indices

ROOT = Path(__file__).resolve().parents[2]


def test_top_indices_breaks_every_tie_by_lowest_index() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 200))
        # Mostly zeros with a few repeated values: ties straddle every cut.
        scores = rng.integers(-2, 4, n).astype(np.float32) * (rng.random(n) < 0.3)
        k = int(rng.integers(0, n + 3))
        expected = np.lexsort((np.arange(n), -scores))[:k]
        assert top_indices(scores, k).tolist() == expected.tolist()


@pytest.fixture(scope="module")
def index() -> BM25Index:
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_kb import synthetic_corpus

    corpus, _ = synthetic_corpus(400, 1, seed=3, vocab=300)
    return BM25Index.build(corpus, progress=False)


QUERIES = ["kato rimen salpor", "the of", "", "zzz unknown", "katos ka kato", "tinve lodra an"]


@pytest.mark.parametrize("compiled", [True, False])
def test_batch_search_equals_per_query_scores(
    index: BM25Index, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not compiled:
        monkeypatch.setattr(bm25_module, "_numba_kernel", lambda: None)
    for k in (1, 10, 400, 1000):
        ids, scores = index.search(QUERIES, k)
        assert ids.shape == scores.shape == (len(QUERIES), min(k, 400))
        for q, row_ids, row_scores in zip(QUERIES, ids, scores, strict=True):
            full = index.scores(q)
            assert row_ids.tolist() == top_indices(full, k).tolist()
            assert np.array_equal(row_scores, full[row_ids])


def test_scores_and_tokens_match_bm25s(index: BM25Index) -> None:
    import bm25s

    for q in QUERIES:
        tokens = bm25s.tokenize(
            [q], stopwords="en", stemmer=index._stemmer, return_ids=False, show_progress=False
        )[0]
        assert index.tokenize(q) == list(tokens)
        ids = index.retriever.get_tokens_ids(list(tokens))
        if ids:
            assert np.array_equal(index.scores(q), index.retriever.get_scores_from_ids(ids))


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_auto_precision_resolves_and_keys_the_cache(kind) -> None:
    with simulated_cpu(kind.cpu):
        assert native_bfloat16() is (kind.precision == "bfloat16")
        assert resolve_precision("auto") == kind.precision
        encoder = DenseEncoder(device="cpu")  # resolves the route; loads nothing yet
        assert (encoder.route, encoder.precision) == (kind.route, kind.precision)
        assert encoder.identity() == DenseEncoder(device="cpu", precision=kind.route).identity()
    assert Recipe().dense.precision == "auto"
    with pytest.raises(ValueError, match="precision"):
        resolve_precision("float8")


def test_bench_kb_quick_runs() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_kb

    out = ROOT / ".pytest_cache" / "bench_kb_smoke.json"
    out.parent.mkdir(exist_ok=True)
    argv = ["--quick", "--only", "keyword", "--passages", "300", "--queries", "20"]
    assert bench_kb.main([*argv, "--output", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [r["target"] for r in rows] == [
        "keyword_search build",
        "keyword_search top-300 batch",
        "keyword_search top-300 per query",
    ]
    assert all(r["identical"] is True and r["ratio"] > 0 for r in rows)
