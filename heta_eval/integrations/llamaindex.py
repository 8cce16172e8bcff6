"""LlamaIndex: any retriever of llama-index-core, or an index, as a knowledge base
(``pip install 'heta-eval[llamaindex]'``).

>>> from heta_eval import Document
>>> from llama_index.core import VectorStoreIndex
>>> index = VectorStoreIndex.from_documents(
...     llamaindex_documents([Document(id="d1", text="Cats purr."),
...                           Document(id="d2", text="Dogs bark.")]),
...     embed_model=EncoderEmbedding())
>>> import asyncio
>>> reply = asyncio.run(from_llamaindex(index).query("a barking dog", top_k=1))
>>> reply.results[0].source["document_id"]
'd2'
"""

from __future__ import annotations

from typing import Any

from heta_eval.extras import require

require("llama_index.core")  # one line naming the extra when it is missing

from llama_index.core import Document as LlamaDocument  # noqa: E402
from llama_index.core.base.base_retriever import BaseRetriever  # noqa: E402
from llama_index.core.embeddings import BaseEmbedding  # noqa: E402
from llama_index.core.indices.base import BaseIndex  # noqa: E402
from pydantic import PrivateAttr  # noqa: E402

from heta_eval.encoding.dense import DenseEncoder  # noqa: E402
from heta_eval.integrations.wrapping import (  # noqa: E402
    ID_KEY,
    class_name,
    documents_of,
    hit,
    passage_text,
    reply,
    wrapped,
)
from heta_eval.systems.callables import CallableKnowledgeBase  # noqa: E402

__all__ = ["EncoderEmbedding", "from_llamaindex", "llamaindex_documents"]

LIBRARY = "llama-index-core"


def llamaindex_documents(source: Any, *, id_key: str = ID_KEY) -> list[LlamaDocument]:
    """A benchmark's documents (a BEIR folder, a benchmark, documents) as LlamaIndex
    documents: ``title + " " + text``, the BEIR id as ``id_`` and in the metadata
    (``id_key``), which the node parsers copy onto every chunk; the metadata is kept out of
    the text that is embedded or shown to an LLM."""
    hidden = [id_key, "title"]  # in the metadata, not in what is embedded or shown
    return [
        LlamaDocument(
            id_=doc.id,
            text=passage_text(doc),
            metadata={id_key: doc.id, "title": doc.title},
            excluded_embed_metadata_keys=hidden,
            excluded_llm_metadata_keys=hidden,
        )
        for doc in documents_of(source)
    ]


def from_llamaindex(
    system: BaseRetriever | BaseIndex,
    *,
    id_key: str = ID_KEY,
    mode: str = "default",
    **options: Any,
) -> CallableKnowledgeBase:
    """A knowledge base answering with a LlamaIndex retriever (its ``retrieve``: as many
    nodes as it is set to, ``similarity_top_k``; set it to at least the run's ``top_k``) or
    an index (``index.as_retriever(similarity_top_k=top_k)``: the run's ``top_k``). Each
    node's document is ``metadata[id_key]``, else its source document (``ref_doc_id``) where
    that is a document's id. ``options`` go to :func:`heta_eval.from_callable`."""
    if isinstance(system, BaseIndex):
        index, retrievers = system, {}

        def retriever_for(top_k: int) -> BaseRetriever:
            if top_k not in retrievers:  # built once per depth
                retrievers[top_k] = index.as_retriever(similarity_top_k=top_k)
            return retrievers[top_k]

        settings: dict[str, Any] = {"call": "as_retriever(similarity_top_k=top_k).retrieve"}
    elif isinstance(system, BaseRetriever):
        settings = {
            "call": "retrieve",
            "similarity_top_k": getattr(system, "_similarity_top_k", None),
        }

        def retriever_for(top_k: int) -> BaseRetriever:
            return system
    else:
        raise TypeError(
            f"from_llamaindex takes a LlamaIndex retriever or index, not a {class_name(system)}"
        )

    def search(query: str, top_k: int) -> Any:
        found = retriever_for(top_k).retrieve(query)
        if all(id_key in scored.node.metadata for scored in found):
            return reply(query, [(s.score, s.node.metadata, s.node.node_id) for s in found], id_key)
        return [_hit(scored, id_key) for scored in found]  # some named by their source

    settings["id_key"] = id_key
    return wrapped(search, library=LIBRARY, wraps=system, settings=settings, mode=mode, **options)


def _hit(scored: Any, id_key: str) -> dict:
    node = scored.node
    result = hit(scored.score, node.metadata, node.node_id, id_key)
    if node.ref_doc_id is not None:
        result["reference_id"] = node.ref_doc_id  # a document's id names the document
    return result


class EncoderEmbedding(BaseEmbedding):
    """heta-eval's dense encoder (:class:`~heta_eval.encoding.dense.DenseEncoder`: the bundled
    all-MiniLM-L6-v2 by default, float32 on the CPU) as a LlamaIndex ``BaseEmbedding``.

    >>> len(EncoderEmbedding().get_query_embedding("a cat"))
    384
    """

    _encoder: Any = PrivateAttr()

    def __init__(self, encoder: Any = None, **kwargs: Any) -> None:
        super().__init__(model_name=kwargs.pop("model_name", "all-MiniLM-L6-v2"), **kwargs)
        self._encoder = encoder or DenseEncoder(device="cpu", precision="float32")

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._encoder.encode([query])[0].tolist()

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._encoder.encode([text])[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._encoder.encode(texts).tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)
