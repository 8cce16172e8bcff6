"""The cross-encoder's int8 route (``onnxruntime-int8``): the bi-encoder's ONNX export and
int8 quantization applied to a real cross-encoder (the bundled MiniLM weights under a seeded
head), on real SciFact pairs: scores within ``INT8_SCORE_TOLERANCE`` of float32's, a pair's
score the same bytes alone or among others, BEIR's ``Rerank`` order wherever its scores are
further apart than the tolerance allows to swap, what ``auto`` takes on every kind of CPU, a
pair cache that never serves one route's scores for another, and one-line refusals."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from beir.datasets.data_loader import GenericDataLoader
from beir.reranking import Rerank
from beir.reranking.models import CrossEncoder as BeirCrossEncoder
from support.cpu_kinds import KIND_IDS, KINDS
from support.paths import shared_path

from heta_eval.encoding.cpu import simulated_cpu
from heta_eval.rerank import CrossEncoderReranker
from heta_eval.rerank.cross_encoder import (
    INT8_KINDS,
    INT8_SCORE_TOLERANCE,
    CrossEncoderError,
    demo_cross_encoder,
    rerank_route,
)
from heta_eval.rerank.reranker import document_text
from heta_eval.rerank.stage import RerankSpec

ROOT = Path(__file__).resolve().parents[2]
#: What ``auto`` takes for a cross-encoder on each kind of CPU (docs/rerank.md's table).
AUTO_ROUTE = {
    "amx": "torch-bfloat16",
    "avx512-bf16-amd": "torch-bfloat16",
    "avx512-bf16-intel": "torch-float32",
    "vnni": "onnxruntime-int8",
    "avx2": "torch-float32",
    "other": "torch-float32",
}


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> str:
    return demo_cross_encoder(tmp_path_factory.mktemp("cross-encoder"), seed=46)


@pytest.fixture(scope="module")
def scifact():
    return GenericDataLoader(str(shared_path("datasets", "beir", "scifact"))).load(split="test")


@pytest.fixture(scope="module")
def bm25_top(scifact) -> dict[str, dict[str, float]]:
    """BM25's (the reference knowledge base's) top 12 of four SciFact test queries."""
    from heta_eval.models.records import Document
    from heta_eval.reference import Recipe

    corpus, queries, qrels = scifact
    documents = [
        Document(id=i, title=d.get("title", ""), text=d["text"]) for i, d in corpus.items()
    ]
    kb = Recipe(modes=["keyword_search"], chunking={"size": None}).build(
        "scifact", documents, cache_dir=False, progress=False
    )
    run = {}
    for q in sorted(qrels, key=int)[:4]:
        reply = asyncio.run(kb.query(queries[q], mode="keyword_search", top_k=12))
        run[q] = {r.source["document_id"]: float(r.score) for r in reply.results}
    return run


def _pairs(scifact, bm25_top) -> list[tuple[str, str]]:
    corpus, queries, _ = scifact
    return [(queries[q], document_text(corpus[d])) for q in bm25_top for d in bm25_top[q]]


def test_int8_scores_stay_within_the_tolerance_of_float32(model, scifact, bm25_top):
    pairs = _pairs(scifact, bm25_top)
    wide = CrossEncoderReranker(model, precision="float32", device="cpu", cache_dir=False)
    narrow = CrossEncoderReranker(model, precision="int8", device="cpu", cache_dir=False)
    assert narrow.route == "onnxruntime-int8"
    assert narrow.route_choice.reason == "asked for: int8"
    reference, scores = wide.score(pairs), narrow.score(pairs)
    gap = np.abs(scores - reference)
    assert gap.max() < INT8_SCORE_TOLERANCE, gap.max()
    assert gap.max() > 0  # int8 arithmetic, not float32's served under another name
    assert len(set(scores.tolist())) == len(pairs)  # the float32 head: no ties


def test_a_pairs_int8_score_is_the_same_bytes_alone_among_others_and_reordered(
    model, scifact, bm25_top
):
    pairs = _pairs(scifact, bm25_top)[:16]
    two = CrossEncoderReranker(model, precision="int8", device="cpu", cache_dir=False)
    together = two.score(pairs)
    alone = np.concatenate([two.score([pair]) for pair in pairs])
    reordered = two.score(pairs[::-1])[::-1]
    one_worker = CrossEncoderReranker(
        model, precision="int8", device="cpu", cache_dir=False, workers=1
    ).score(pairs[5:] + pairs[:5])
    assert together.tobytes() == alone.tobytes()
    assert together.tobytes() == np.ascontiguousarray(reordered).tobytes()
    assert together.tobytes() == np.concatenate([one_worker[-5:], one_worker[:-5]]).tobytes()


def test_int8_reranking_keeps_beirs_order_wherever_the_tolerance_cannot_swap_it(
    model, scifact, bm25_top
):
    # Each int8 score is within INT8_SCORE_TOLERANCE of float32's (and ours within 1e-5 of
    # BEIR's batches), so two documents whose BEIR scores are further apart than twice that
    # keep BEIR's order; closer ones may swap.
    corpus, queries, _ = scifact
    chosen = {q: queries[q] for q in bm25_top}
    beir = Rerank(BeirCrossEncoder(model), batch_size=32).rerank(corpus, chosen, bm25_top, 12)
    reranker = CrossEncoderReranker(model, precision="int8", device="cpu", cache_dir=False)
    ours = reranker.rerank(corpus, chosen, bm25_top, 12)
    bound = INT8_SCORE_TOLERANCE + 1e-5
    compared = 0
    for q, expected in beir.items():
        assert set(ours[q]) == set(expected), q
        for doc, score in expected.items():
            assert abs(ours[q][doc] - score) < bound, (q, doc)
        for a in expected:
            for b in expected:
                if expected[a] - expected[b] > 2 * bound:
                    assert ours[q][a] > ours[q][b], (q, a, b)
                    compared += 1
    assert compared >= 30  # of 4 x 66 pairs of documents (48 here): not a vacuous check


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_auto_takes_the_documented_route_for_cross_encoders_on_each_kind(kind, model):
    with simulated_cpu(kind.cpu):
        choice = rerank_route("auto", "cpu", model)
        assert choice.route == AUTO_ROUTE[kind.kind]
        assert (kind.kind in INT8_KINDS) == (choice.route == "onnxruntime-int8")
        if kind.route == "onnxruntime-int8" and choice.route != kind.route:
            assert "not taken for cross-encoders" in choice.reason
            assert "INT8_SCORE_TOLERANCE" in choice.reason
        # int8 asked for runs wherever ONNX Runtime is installed, and is refused elsewhere.
        assert rerank_route("int8", "cpu", model).route == "onnxruntime-int8"
        assert rerank_route("onnxruntime-int8", "cpu", model).route == "onnxruntime-int8"
    with simulated_cpu(replace(kind.cpu, onnxruntime=False)):
        with pytest.raises(ValueError, match=r"^precision 'int8' needs onnxruntime and onnx"):
            rerank_route("int8", "cpu", model)
        assert rerank_route("auto", "cpu", model).route != "onnxruntime-int8"


def test_the_pair_cache_never_serves_one_routes_scores_for_another(model, scifact, tmp_path):
    corpus, queries, _ = scifact
    ids = zip(list(queries)[:6], list(corpus)[:6], strict=True)
    pairs = [(queries[q], document_text(corpus[d])) for q, d in ids]
    wide = CrossEncoderReranker(model, precision="float32", device="cpu", cache_dir=tmp_path)
    reference = wide.score(pairs)
    narrow = CrossEncoderReranker(model, precision="int8", device="cpu", cache_dir=tmp_path)
    scores = narrow.score(pairs)
    assert (narrow.scored, narrow.reused) == (6, 0)
    assert not np.array_equal(scores, reference)
    assert narrow.identity()["scheme"].startswith("ort-dynamic-int8-per-channel")
    assert "scheme" not in wide.identity()  # torch's routes keep their keys (and caches)
    again = CrossEncoderReranker(model, precision="int8", device="cpu", cache_dir=tmp_path)
    assert again.score(pairs).tobytes() == scores.tobytes()
    assert (again.scored, again.reused) == (0, 6)
    assert len(list(tmp_path.glob("rerank-*.sqlite"))) == 2


def test_unbuilt_routes_are_refused_in_one_line(model, tmp_path):
    with pytest.raises(CrossEncoderError) as refused:
        CrossEncoderReranker(model, precision="openvino-int8", device="cpu", cache_dir=False)
    assert "\n" not in str(refused.value)
    assert str(refused.value).startswith("precision 'openvino-int8': OpenVINO encodes with a ")
    with pytest.raises(ValueError, match="runs on the CPU only"):
        rerank_route("int8", "cuda", model)
    assert RerankSpec(model=model, precision="int8").reranker(cache_dir=False).route == (
        "onnxruntime-int8"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HETA_EVAL_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "heta_eval",
            "run",
            "--dataset",
            "scifact",
            "--rerank",
            model,
            "--rerank-precision",
            "openvino-int8",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    assert "invalid choice: 'openvino-int8'" in done.stderr
