"""LangChain through heta-eval: langchain-core's real ``InMemoryVectorStore`` over the
bundled MiniLM (through LangChain's ``Embeddings``), on a slice of the real SciFact. The
adapter's numbers equal what the same store's direct results give through pytrec_eval, for
the store, its retriever and chunked documents; the results folder says what ran."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

import pytest
from support.integration_data import (
    direct_ndcg10,
    queries_of,
    rank_scores,
    run_adapter,
    tiny_scifact,
)
from support.paths import shared_path

from heta_eval.integrations import EncoderEmbeddings, from_langchain, langchain_documents

langchain_core = pytest.importorskip("langchain_core")
from langchain_core.documents import Document  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402


@pytest.fixture(scope="module")
def scifact(tmp_path_factory):
    return tiny_scifact(shared_path("datasets", "beir", "scifact"), tmp_path_factory.mktemp("lc"))


class RememberedEmbeddings(EncoderEmbeddings):
    """The bundled MiniLM, each query encoded once: the adapter's run and the direct one
    ask the same queries of the same store (the same vectors, half the encoding)."""

    def __init__(self):
        super().__init__()
        self.seen: dict[str, list[float]] = {}

    def embed_query(self, text: str) -> list[float]:
        if text not in self.seen:
            self.seen[text] = super().embed_query(text)
        return self.seen[text]


@pytest.fixture(scope="module")
def embeddings():
    return RememberedEmbeddings()


@pytest.fixture(scope="module")
def store(scifact, embeddings):
    store = InMemoryVectorStore(embeddings)
    store.add_documents(langchain_documents(scifact))
    return store


def test_the_loader_keeps_the_beir_id_and_the_reference_text(scifact):
    docs = langchain_documents(scifact)
    first = json.loads((scifact / "corpus.jsonl").open().readline())
    assert docs[0].id == docs[0].metadata["doc_id"] == first["_id"]
    assert docs[0].page_content == f"{first['title']} {first['text']}".strip()


def test_a_vector_store_scores_as_its_direct_results_do(scifact, store, tmp_path):
    results = run_adapter(scifact, from_langchain(store), tmp_path)
    ours = results.metric("default", "ndcg@10").beir
    depth = results.summary.top_k  # what the runner asked: 1,001
    direct = {
        qid: [
            (doc.metadata["doc_id"], score)
            for doc, score in store.similarity_search_with_score(text, k=depth)
        ]
        for qid, text in queries_of(scifact).items()
    }
    assert ours == direct_ndcg10(scifact, direct)
    assert 0.3 < ours < 1.0
    # What ran is in the results folder: the library, its version, the class, the settings.
    wraps = json.loads((tmp_path / "summary.json").read_text())["build"]["wraps"]
    assert wraps == {
        "library": "langchain-core",
        "version": metadata.version("langchain-core"),
        "class": "langchain_core.vectorstores.in_memory.InMemoryVectorStore",
        "settings": {
            "call": "similarity_search_with_score",
            "k": "top_k of the run",
            "embeddings": "test_integration_langchain.RememberedEmbeddings",
            "id_key": "doc_id",
        },
    }
    system = json.loads((tmp_path / "run.json").read_text())["system"]
    assert system["identity"]["wraps"]["class"] == wraps["class"]
    assert "version" not in system["identity"]["wraps"]  # an upgrade resumes, recorded


def test_a_retriever_scores_as_its_direct_results_do(scifact, store):
    retriever = store.as_retriever(search_kwargs={"k": 50})
    results = run_adapter(scifact, from_langchain(retriever))
    direct = {
        qid: rank_scores([doc.metadata["doc_id"] for doc in retriever.invoke(text)])
        for qid, text in queries_of(scifact).items()
    }
    assert results.metric("default", "ndcg@10").beir == direct_ndcg10(scifact, direct)
    settings = results.summary.build["wraps"]["settings"]
    assert settings["search_kwargs"] == {"k": 50} and settings["search_type"] == "similarity"


def test_chunked_documents_are_scored_at_document_level(scifact, embeddings):
    chunks = []
    for doc in langchain_documents(scifact):
        words = doc.page_content.split()
        for i in range(0, len(words), 100):  # 100-word chunks, each keeping the metadata
            text = " ".join(words[i : i + 100])
            chunks.append(Document(id=f"{doc.id}#{i}", page_content=text, metadata=doc.metadata))
    store = InMemoryVectorStore(embeddings)
    store.add_documents(chunks)
    assert len(chunks) > 1.3 * len(langchain_documents(scifact))
    results = run_adapter(scifact, from_langchain(store))
    direct = {
        qid: [
            (doc.metadata["doc_id"], score)
            for doc, score in store.similarity_search_with_score(text, k=1001)
        ]
        for qid, text in queries_of(scifact).items()
    }
    assert results.metric("default", "ndcg@10").beir == direct_ndcg10(scifact, direct)
    record = results.records[0]
    assert record.collapse[0]["duplicate_chunks"] > 0  # several chunks of a document
    assert all("#" not in doc_id for doc_id, _ in record.documents)


def test_anything_else_is_refused_in_one_line():
    with pytest.raises(TypeError, match="takes a LangChain BaseRetriever or VectorStore, not a"):
        from_langchain(lambda q: [])


def test_without_the_extra_one_line_says_what_to_install():
    code = (
        "import sys; sys.modules['langchain_core'] = None\n"
        "from heta_eval.integrations import from_langchain"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "heta_eval.extras.MissingExtraError: langchain_core is not installed: this needs the "
        "'langchain' extra (pip install 'heta-eval[langchain]')"
    )
