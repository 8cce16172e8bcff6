"""Haystack 2.x: a retriever component or a whole ``Pipeline`` as a knowledge base
(``pip install 'heta-eval[haystack]'``).

>>> from heta_eval import Document
>>> from haystack.document_stores.in_memory import InMemoryDocumentStore
>>> from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
>>> store = InMemoryDocumentStore()
>>> _ = store.write_documents(haystack_documents([Document(id="d1", text="Cats purr."),
...                                               Document(id="d2", text="Dogs bark.")]))
>>> import asyncio
>>> reply = asyncio.run(from_haystack(InMemoryBM25Retriever(store)).query("dogs", top_k=1))
>>> reply.results[0].source["document_id"]
'd2'
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any

from heta_eval.extras import require

require("haystack")  # one line naming the extra when it is missing

from haystack import Document as HaystackDocument  # noqa: E402
from haystack import Pipeline, component  # noqa: E402

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

__all__ = ["EncoderDocumentEmbedder", "EncoderTextEmbedder", "from_haystack", "haystack_documents"]

LIBRARY = "haystack-ai"
#: Input sockets that take the query text, and the hits asked.
QUERY_SOCKETS = ("query", "text")
TOP_K_SOCKET = "top_k"


def haystack_documents(source: Any, *, id_key: str = ID_KEY) -> list[HaystackDocument]:
    """A benchmark's documents (a BEIR folder, a benchmark, documents) as Haystack
    documents: ``title + " " + text``, the BEIR id as the document's id and in its ``meta``
    (``id_key``), which Haystack's splitters copy onto every chunk."""
    return [
        HaystackDocument(
            id=doc.id, content=passage_text(doc), meta={id_key: doc.id, "title": doc.title}
        )
        for doc in documents_of(source)
    ]


def from_haystack(
    system: Any,
    *,
    id_key: str = ID_KEY,
    output: str | None = None,
    mode: str = "default",
    **options: Any,
) -> CallableKnowledgeBase:
    """A knowledge base answering with a Haystack ``Pipeline`` or a retriever component.

    A component is run as ``run(query=text, top_k=top_k)``. A pipeline gets the text on
    every open input socket named ``query`` or ``text`` (a BM25 retriever, a text embedder)
    and the run's ``top_k`` on every open ``top_k`` socket; its hits are the ``documents``
    of ``output`` (the component's name; default: the one component whose output has
    documents). Each document's BEIR id is ``meta[id_key]``. ``options`` go to
    :func:`heta_eval.from_callable`."""
    if isinstance(system, Pipeline):
        search, settings = _pipeline_search(system, output)
    elif callable(getattr(system, "run", None)):
        search, settings = _component_search(system)
    else:
        raise TypeError(
            f"from_haystack takes a Haystack Pipeline or component, not a {class_name(system)}"
        )

    def hits(query: str, top_k: int) -> Any:
        return reply(query, [(doc.score, doc.meta, doc.id) for doc in search(query, top_k)], id_key)

    settings["id_key"] = id_key
    return wrapped(hits, library=LIBRARY, wraps=system, settings=settings, mode=mode, **options)


def _component_search(component: Any) -> tuple[Any, dict[str, Any]]:
    takes = inspect.signature(component.run).parameters
    if "query" not in takes:
        raise TypeError(
            f"{class_name(component)}.run takes no query; an embedding retriever needs its "
            "embedder: give a Pipeline of both"
        )
    with_k = TOP_K_SOCKET in takes

    def search(query: str, top_k: int) -> list[Any]:
        found = component.run(query=query, **({TOP_K_SOCKET: top_k} if with_k else {}))
        return found["documents"]

    return search, {"call": "run", "init_parameters": _init_parameters(component)}


def _pipeline_search(pipeline: Pipeline, output: str | None) -> tuple[Any, dict[str, Any]]:
    sockets = pipeline.inputs()
    texts = {(name, s) for name, ins in sockets.items() for s in ins if s in QUERY_SOCKETS}
    depths = {(name, s) for name, ins in sockets.items() for s in ins if s == TOP_K_SOCKET}
    if not texts:
        raise TypeError(f"the pipeline has no open input named {' or '.join(QUERY_SOCKETS)}")
    with_documents = [name for name, outs in pipeline.outputs().items() if "documents" in outs]
    if output is None:
        if len(with_documents) != 1:
            raise TypeError(
                f"the pipeline's outputs with documents are {with_documents}: name the "
                "one to score, output=..."
            )
        output = with_documents[0]

    def search(query: str, top_k: int) -> list[Any]:
        data: dict[str, dict[str, Any]] = {}
        for name, socket in texts:
            data.setdefault(name, {})[socket] = query
        for name, socket in depths:
            data.setdefault(name, {})[socket] = top_k
        return pipeline.run(data)[output]["documents"]

    components = {
        name: {
            "class": class_name(pipeline.get_component(name)),
            "init_parameters": _init_parameters(pipeline.get_component(name)),
        }
        for name in sorted(pipeline.graph.nodes)
    }
    settings = {
        "call": "Pipeline.run",
        "output": output,
        "components": components,
        "query_inputs": sorted(map(".".join, texts)),
    }
    return search, settings


def _init_parameters(component: Any) -> dict[str, Any]:
    """A component's settings as it serializes them, less what changes from run to run (a
    document store's random index name)."""
    to_dict = getattr(component, "to_dict", None)
    try:
        parameters = dict(to_dict()["init_parameters"]) if to_dict else {}
    except Exception:  # a component that cannot serialize itself: its class says enough
        return {}
    store = parameters.get("document_store")
    if isinstance(store, dict):
        inner = {k: v for k, v in store.get("init_parameters", {}).items() if k != "index"}
        parameters["document_store"] = {"type": store.get("type"), "init_parameters": inner}
    return parameters


@component
class EncoderTextEmbedder:
    """heta-eval's dense encoder (:class:`~heta_eval.encoding.dense.DenseEncoder`: the bundled
    all-MiniLM-L6-v2 by default, float32 on the CPU) as a Haystack text embedder: ``text``
    in, ``embedding`` out, for an ``InMemoryEmbeddingRetriever``'s pipeline.

    >>> len(EncoderTextEmbedder().run(text="a cat")["embedding"])
    384
    """

    def __init__(self, encoder: Any = None) -> None:
        self.encoder = encoder or DenseEncoder(device="cpu", precision="float32")

    @component.output_types(embedding=list[float])
    def run(self, text: str) -> dict[str, Any]:
        return {"embedding": self.encoder.encode([text])[0].tolist()}


@component
class EncoderDocumentEmbedder:
    """The same encoder as a Haystack document embedder: each document's ``content``
    embedded (a copy of the document, with its ``embedding``), ready to be written to a store.

    >>> docs = EncoderDocumentEmbedder().run(documents=[HaystackDocument(content="a cat")])
    >>> len(docs["documents"][0].embedding)
    384
    """

    def __init__(self, encoder: Any = None) -> None:
        self.encoder = encoder or DenseEncoder(device="cpu", precision="float32")

    @component.output_types(documents=list[HaystackDocument])
    def run(self, documents: list[HaystackDocument]) -> dict[str, Any]:
        vectors = self.encoder.encode([doc.content or "" for doc in documents])
        pairs = zip(documents, vectors.tolist(), strict=True)
        return {"documents": [replace(doc, embedding=vector) for doc, vector in pairs]}
