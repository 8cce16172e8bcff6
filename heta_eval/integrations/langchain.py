"""LangChain: any ``BaseRetriever`` or ``VectorStore`` as a knowledge base
(``pip install 'heta-eval[langchain]'``).

>>> from heta_eval import Document
>>> from langchain_core.vectorstores import InMemoryVectorStore
>>> store = InMemoryVectorStore(EncoderEmbeddings())
>>> _ = store.add_documents(langchain_documents([Document(id="d1", text="Cats purr."),
...                                              Document(id="d2", text="Dogs bark.")]))
>>> import asyncio
>>> reply = asyncio.run(from_langchain(store).query("a barking dog", top_k=1))
>>> reply.results[0].source["document_id"]
'd2'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heta_eval.extras import require

require("langchain_core")  # one line naming the extra when it is missing

from langchain_core.documents import Document as LangChainDocument  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.vectorstores import VectorStore, VectorStoreRetriever  # noqa: E402

from heta_eval.encoding.dense import DenseEncoder  # noqa: E402
from heta_eval.integrations.wrapping import (  # noqa: E402
    ID_KEY,
    class_name,
    documents_of,
    passage_text,
    reply,
    wrapped,
)
from heta_eval.systems.callables import CallableKnowledgeBase  # noqa: E402

__all__ = ["EncoderEmbeddings", "from_langchain", "langchain_documents"]

LIBRARY = "langchain-core"


def langchain_documents(source: Any, *, id_key: str = ID_KEY) -> list[LangChainDocument]:
    """A benchmark's documents (a BEIR folder, a benchmark, documents) as LangChain
    documents: ``title + " " + text``, the BEIR id as the document's id and in its metadata
    (``id_key``), which LangChain's text splitters copy onto every chunk."""
    return [
        LangChainDocument(
            id=doc.id, page_content=passage_text(doc), metadata={id_key: doc.id, "title": doc.title}
        )
        for doc in documents_of(source)
    ]


def _hits(query: str, found: Sequence[tuple[LangChainDocument, Any]], id_key: str) -> Any:
    return reply(query, [(score, doc.metadata, doc.id) for doc, score in found], id_key)


def from_langchain(
    system: BaseRetriever | VectorStore,
    *,
    id_key: str = ID_KEY,
    mode: str = "default",
    **options: Any,
) -> CallableKnowledgeBase:
    """A knowledge base answering with a LangChain ``VectorStore`` (its
    ``similarity_search_with_score``, asked for the run's ``top_k``: its scores are kept) or
    any ``BaseRetriever`` (its ``invoke``: it returns as many documents as it is set to,
    without scores, so they rank in its order; set its ``k`` to at least the run's ``top_k``,
    100 by default). Each hit's document is ``metadata[id_key]``. ``options`` go to
    :func:`heta_eval.from_callable` (``max_concurrency``)."""
    if isinstance(system, VectorStore):
        store = system

        def search(query: str, top_k: int) -> Any:
            return _hits(query, store.similarity_search_with_score(query, k=top_k), id_key)

        settings = {
            "call": "similarity_search_with_score",
            "k": "top_k of the run",
            "embeddings": class_name(store.embeddings),
        }
    elif isinstance(system, BaseRetriever):
        retriever = system

        def search(query: str, top_k: int) -> Any:
            return _hits(query, [(doc, None) for doc in retriever.invoke(query)], id_key)

        settings = _retriever_settings(retriever)
    else:
        raise TypeError(
            f"from_langchain takes a LangChain BaseRetriever or VectorStore, not a "
            f"{class_name(system)}"
        )
    settings["id_key"] = id_key
    return wrapped(search, library=LIBRARY, wraps=system, settings=settings, mode=mode, **options)


def _retriever_settings(retriever: BaseRetriever) -> dict[str, Any]:
    """What sets a retriever's results: a vector store retriever's search, else its plain
    fields (strings, numbers)."""
    settings: dict[str, Any] = {"call": "invoke"}
    if isinstance(retriever, VectorStoreRetriever):
        settings |= {
            "search_type": retriever.search_type,
            "search_kwargs": dict(retriever.search_kwargs),
            "vectorstore": class_name(retriever.vectorstore),
        }
        return settings
    for name, value in vars(retriever).items():
        if not name.startswith("_") and isinstance(value, (str, int, float, bool)):
            settings[name] = value
    return settings


class EncoderEmbeddings(Embeddings):
    """heta-eval's dense encoder (:class:`~heta_eval.encoding.dense.DenseEncoder`: the bundled
    all-MiniLM-L6-v2 by default, float32 on the CPU) as LangChain ``Embeddings``: the same
    vectors the reference knowledge base searches.

    >>> len(EncoderEmbeddings().embed_query("a cat"))
    384
    """

    def __init__(self, encoder: Any = None) -> None:
        self.encoder = encoder or DenseEncoder(device="cpu", precision="float32")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encoder.encode(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.encoder.encode([text])[0].tolist()
