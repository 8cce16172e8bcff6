"""Sharded exact dense search: every shard's top-k merged equals the single-machine top-k
(documents, order with ties, scores to the bit); the shard plan; Ray stays unimported."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from support.ray_cluster import REPO, cluster_env

from heta_eval.ann.exact_search import exact_search
from heta_eval.encoding.dense import embedding_identity
from heta_eval.evaluation import Document
from heta_eval.reference.bm25 import top_indices
from heta_eval.reference.recipe import Recipe
from heta_eval.scale.executor import ShardedSearchKnowledgeBase
from heta_eval.scale.search import merge_top_k, sharded_top_k, split_rows
from heta_eval.scale.shards import ShardStore, plan_shards


@settings(max_examples=200, deadline=None)
@given(
    rows=st.integers(1, 60),
    dim=st.integers(1, 4),
    shards=st.integers(1, 8),
    align=st.integers(1, 5),
    k=st.integers(0, 70),
    seed=st.integers(0, 2**32 - 1),
)
def test_merged_shard_top_k_equals_single_machine_with_ties(rows, dim, shards, align, k, seed):
    # Small integers: many exact ties, and every dot product is exact in float32.
    rng = np.random.default_rng(seed)
    matrix = rng.integers(-2, 3, size=(rows, dim)).astype(np.float32)
    query = rng.integers(-2, 3, size=dim).astype(np.float32)
    parts = [(a, matrix[a:b]) for a, b in split_rows(rows, shards, align)]
    assert sum(len(p) for _, p in parts) == rows
    idx, scores = sharded_top_k(parts, query, k)
    full = matrix @ query
    expected = top_indices(full, k)
    assert idx.tolist() == expected.tolist()
    assert scores.tolist() == full[expected].tolist()


def test_shards_score_every_row_to_the_bit_like_the_whole_matrix():
    # Real-sized float vectors: each shard is searched as the whole matrix is (blocks of a
    # matrix product, never thinner than BLAS's own), so shard scores equal the whole
    # matrix's bit for bit, and so do the merged rankings.
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(5183, 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    queries = matrix[:10]
    whole_rows, whole_scores = exact_search(matrix, queries, 100)
    for shards in (2, 3, 7):
        parts = [(a, matrix[a:b]) for a, b in split_rows(len(matrix), shards)]
        idx, scores = sharded_top_k(parts, queries, 100)
        assert idx.tolist() == whole_rows.tolist()
        assert np.array_equal(scores, whole_scores)
        # One query at a time (a 1-D query) gives the same bits as the batch.
        one_rows, one_scores = sharded_top_k(parts, queries[3], 100)
        assert one_rows.tolist() == whole_rows[3].tolist()
        assert np.array_equal(one_scores, whole_scores[3])


class InProcessShards:
    """The shard actors' arithmetic (``heta_eval.scale.search``) without a cluster."""

    def __init__(self, matrix: np.ndarray, shards: int) -> None:
        self.parts = [(a, np.array(matrix[a:b])) for a, b in split_rows(len(matrix), shards)]
        self.calls: list[int] = []

    def top_k(self, queries: np.ndarray, k: int):
        self.calls.append(k)
        return sharded_top_k(self.parts, queries, k)


def test_sharded_knowledge_base_ranks_vector_and_hybrid_like_the_whole_matrix(tmp_path):
    # Many chunks per document: finding top_k distinct documents goes deeper than the first
    # ranking the shards are asked for, in both modes (rrf_depth is small).
    docs = [
        Document(
            id=f"d{j}", text=" ".join(f"Apples of kind {j} are red, number {i}." for i in range(12))
        )
        for j in range(6)
    ]
    docs += [Document(id=f"o{i}", text=f"An apple a day, item {i}.") for i in range(4)]
    recipe = Recipe(
        modes=["vector_search", "hybrid_search"], chunking={"size": 6}, overfetch=1, rrf_depth=4
    )
    kb = recipe.build("split", docs, cache_dir=tmp_path, progress=False)
    assert len(kb.chunks) > 128  # three shards of 64-row blocks
    index = InProcessShards(kb.embeddings, 3)
    sharded = ShardedSearchKnowledgeBase(kb, index)
    assert sharded.embeddings is None and len(index.parts) == 3
    queries = ["red apples of kind 3", "an apple a day", "number 7"]
    for mode in ("vector_search", "hybrid_search"):
        for top_k in (1, 5, 9):
            expected = kb.search(queries, mode=mode, top_k=top_k)
            got = sharded.search(queries, mode=mode, top_k=top_k)
            for e, g in zip(expected, got, strict=True):
                assert g.rows.tolist() == e.rows.tolist(), (mode, top_k)
                assert np.array_equal(g.scores, e.scores), (mode, top_k)
    # One batched call per search, then deeper calls for single queries.
    assert len(index.calls) > 6 and max(index.calls) > min(index.calls)


def test_merge_of_no_parts_is_empty():
    idx, scores = merge_top_k([], 5)
    assert idx.size == 0 and scores.size == 0


def test_shard_plan_covers_every_chunk_once_longest_first_in_whole_batches():
    texts = [("x" * n) for n in np.random.default_rng(1).integers(1, 50, size=103)]
    plan = plan_shards(texts, 10, batch_size=4)
    assert all(len(s) == 12 for s in plan[:-1])  # 10 rounded up to whole batches of 4
    flat = np.concatenate(plan)
    assert sorted(flat.tolist()) == list(range(103))
    lengths = [len(texts[i]) for i in flat]
    assert lengths == sorted(lengths, reverse=True)
    # The order DenseEncoder batches a corpus in (ties by position), so batches are the same.
    assert flat.tolist() == np.argsort([-len(t) for t in texts], kind="stable").tolist()


def test_shard_store_keeps_only_whole_shards_and_assembles_chunk_order(tmp_path):
    texts = ["aaa", "b", "cc"]
    identity = embedding_identity(model="m", precision="float32", device="cpu")
    store = ShardStore.for_encode(tmp_path, texts, identity, 1)
    plan = plan_shards(texts, 1)
    for shard, rows in enumerate(plan):
        store.save(shard, np.array([[float(r)] for r in rows], dtype=np.float32))
    (store.folder / ".partial.npy").write_bytes(b"half")  # a write cut short is not a shard
    assert store.finished() == {0, 1, 2}
    assert store.assemble(plan, 3)[:, 0].tolist() == [0.0, 1.0, 2.0]
    other = embedding_identity(model="m", precision="bfloat16", device="cpu")
    assert ShardStore.for_encode(tmp_path, texts, other, 1).folder != store.folder


def test_shards_of_two_int8_routes_are_never_shared(tmp_path):
    # Keyed by the precision alone, OpenVINO's int8 shards were found by ONNX Runtime's
    # encode (and the other way round).
    texts = ["aaa", "b"]
    stores = {
        route: ShardStore.for_encode(
            tmp_path,
            texts,
            embedding_identity(model="m", precision="int8", device="cpu", route=route),
            1,
        ).folder
        for route in ("openvino-int8", "onnxruntime-int8")
    }
    assert stores["openvino-int8"] != stores["onnxruntime-int8"]


def test_run_without_ray_never_imports_ray(tmp_path):
    code = (
        "import sys\n"
        "from heta_eval.cli import main\n"
        "from heta_eval.runner import BenchmarkRunner\n"
        "import heta_eval.scale, heta_eval.cli.sweep\n"
        "main(['run', '--benchmark', sys.argv[1], '--documents', sys.argv[2], "
        "'--modes', 'keyword_search', '--no-cache', '--quiet', '--output', sys.argv[3]])\n"
        "assert main(['sweep', '--datasets', 'nope', '--modes', 'keyword_search', "
        "'--output', sys.argv[3] + '-sweep']) == 2\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
        "print('no ray')\n"
    )
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "q1", "query": "cats", "expected": {"relevance": {"d1": 1}}}\n')
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "Cats purr."}\n')
    result = subprocess.run(
        [sys.executable, "-c", code, str(cases), str(docs), str(tmp_path / "out")],
        env=cluster_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "no ray" in result.stdout
