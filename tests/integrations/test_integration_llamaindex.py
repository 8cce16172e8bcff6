"""LlamaIndex through heta-eval: llama-index-core's real ``VectorStoreIndex`` over the bundled
MiniLM (a ``BaseEmbedding``), on a slice of the real SciFact; the adapter's numbers equal the
index's direct results through pytrec_eval, for the index and for a retriever of it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.integration_data import direct_ndcg10, queries_of, run_adapter, tiny_scifact
from support.paths import shared_path

pytest.importorskip("llama_index.core")
from llama_index.core import VectorStoreIndex

from heta_eval.integrations import EncoderEmbedding, from_llamaindex, llamaindex_documents


@pytest.fixture(scope="module")
def scifact(tmp_path_factory):
    return tiny_scifact(shared_path("datasets", "beir", "scifact"), tmp_path_factory.mktemp("li"))


@pytest.fixture(scope="module")
def index(scifact):
    return VectorStoreIndex.from_documents(
        llamaindex_documents(scifact), embed_model=EncoderEmbedding()
    )


def _direct(scifact, retriever):
    return {
        qid: [(node.node.metadata["doc_id"], node.score) for node in retriever.retrieve(text)]
        for qid, text in queries_of(scifact).items()
    }


def test_the_loader_keeps_the_id_out_of_the_embedded_text(scifact):
    doc = llamaindex_documents(scifact)[0]
    first = json.loads((scifact / "corpus.jsonl").open().readline())
    assert doc.id_ == doc.metadata["doc_id"] == first["_id"]
    assert first["_id"] not in doc.get_content(metadata_mode="embed").split()[:3]


def test_an_index_scores_as_its_direct_results_do(scifact, index, tmp_path):
    results = run_adapter(scifact, from_llamaindex(index), tmp_path)
    direct = _direct(scifact, index.as_retriever(similarity_top_k=results.summary.top_k))
    ours = results.metric("default", "ndcg@10").beir
    assert ours == direct_ndcg10(scifact, direct)
    assert 0.3 < ours < 1.0
    wraps = json.loads((tmp_path / "summary.json").read_text())["build"]["wraps"]
    assert (wraps["library"], wraps["class"]) == (
        "llama-index-core",
        "llama_index.core.indices.vector_store.base.VectorStoreIndex",
    )
    assert wraps["version"]


def test_a_retriever_scores_as_its_direct_results_do(scifact, index):
    retriever = index.as_retriever(similarity_top_k=20)
    results = run_adapter(scifact, from_llamaindex(retriever))
    assert results.metric("default", "ndcg@10").beir == direct_ndcg10(
        scifact, _direct(scifact, retriever)
    )
    assert results.summary.build["wraps"]["settings"]["similarity_top_k"] == 20


def test_without_the_extra_one_line_says_what_to_install():
    code = "import sys; sys.modules['llama_index'] = None\nimport heta_eval.integrations.llamaindex"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("this needs the 'llamaindex' extra (pip install 'heta-eval[llamaindex]')")
    )
