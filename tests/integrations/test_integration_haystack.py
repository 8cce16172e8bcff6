"""Haystack 2.x through heta-eval: the real ``InMemoryBM25Retriever`` and, in a ``Pipeline``
behind a text embedder, ``InMemoryEmbeddingRetriever``, on a slice of the real SciFact; the
adapter's numbers equal the components' direct results through pytrec_eval."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support.integration_data import direct_ndcg10, queries_of, run_adapter, tiny_scifact
from support.paths import shared_path

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # no network here
pytest.importorskip("haystack")
from haystack import Pipeline
from haystack.components.preprocessors import DocumentSplitter
from haystack.components.retrievers.in_memory import (
    InMemoryBM25Retriever,
    InMemoryEmbeddingRetriever,
)
from haystack.document_stores.in_memory import InMemoryDocumentStore

from heta_eval.integrations import (
    EncoderDocumentEmbedder,
    EncoderTextEmbedder,
    from_haystack,
    haystack_documents,
)


@pytest.fixture(scope="module")
def scifact(tmp_path_factory):
    return tiny_scifact(shared_path("datasets", "beir", "scifact"), tmp_path_factory.mktemp("hs"))


def _direct(scifact, search):
    return {
        qid: [(doc.meta["doc_id"], doc.score) for doc in search(text)]
        for qid, text in queries_of(scifact).items()
    }


def test_a_bm25_retriever_on_chunks_scores_as_its_direct_results_do(scifact, tmp_path):
    store = InMemoryDocumentStore()
    splitter = DocumentSplitter(split_by="word", split_length=80)
    chunks = splitter.run(documents=haystack_documents(scifact))["documents"]
    assert len(chunks) > len(haystack_documents(scifact))  # chunked: each keeps the meta
    store.write_documents(chunks)
    retriever = InMemoryBM25Retriever(store)
    results = run_adapter(scifact, from_haystack(retriever), tmp_path)
    depth = results.summary.top_k
    direct = _direct(scifact, lambda q: retriever.run(query=q, top_k=depth)["documents"])
    ours = results.metric("default", "ndcg@10").beir
    assert ours == direct_ndcg10(scifact, direct)
    assert 0.3 < ours < 1.0
    wraps = json.loads((tmp_path / "summary.json").read_text())["build"]["wraps"]
    assert wraps["library"] == "haystack-ai" and wraps["version"]
    settings = wraps["settings"]["init_parameters"]
    assert settings["document_store"]["init_parameters"]["bm25_algorithm"] == "BM25L"
    assert "index" not in settings["document_store"]["init_parameters"]  # random per store


def test_an_embedding_pipeline_scores_as_its_direct_results_do(scifact):
    store = InMemoryDocumentStore()
    embedded = EncoderDocumentEmbedder().run(documents=haystack_documents(scifact))
    store.write_documents(embedded["documents"])
    pipeline = Pipeline()
    pipeline.add_component("embedder", EncoderTextEmbedder())
    pipeline.add_component("retriever", InMemoryEmbeddingRetriever(store))
    pipeline.connect("embedder.embedding", "retriever.query_embedding")
    results = run_adapter(scifact, from_haystack(pipeline))
    depth = results.summary.top_k
    direct = _direct(
        scifact,
        lambda q: pipeline.run({"embedder": {"text": q}, "retriever": {"top_k": depth}})[
            "retriever"
        ]["documents"],
    )
    assert results.metric("default", "ndcg@10").beir == direct_ndcg10(scifact, direct)
    settings = results.summary.build["wraps"]["settings"]
    assert settings["output"] == "retriever" and settings["query_inputs"] == ["embedder.text"]


def test_an_embedding_retriever_alone_is_refused_in_one_line():
    with pytest.raises(TypeError, match="run takes no query; an embedding retriever needs its"):
        from_haystack(InMemoryEmbeddingRetriever(InMemoryDocumentStore()))


def test_without_the_extra_one_line_says_what_to_install():
    code = "import sys; sys.modules['haystack'] = None\nimport heta_eval.integrations.haystack"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("this needs the 'haystack' extra (pip install 'heta-eval[haystack]')")
    )
