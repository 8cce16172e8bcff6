"""Frameworks' retrievers as knowledge bases: LangChain, LlamaIndex and Haystack 2.x, each an
optional extra (``pip install 'heta-eval[langchain]'``, ``[llamaindex]``, ``[haystack]``).

Each adapter wraps the framework's retriever (or vector store, index, pipeline) with
:func:`heta_eval.from_callable`, so its hits are checked as any function's are; maps every
hit back to its BEIR document through the document's metadata (``doc_id``, written by the
framework's ``*_documents`` loader, kept by the framework's splitters on every chunk: chunks
are scored at document level by the collapse's rule); and records what it wrapped (library,
version, class, settings) in the results folder. The frameworks load on first use: without
the extra, one line says which to install.

>>> import heta_eval.integrations as integrations
>>> sorted(integrations.__all__)[:3]
['EncoderDocumentEmbedder', 'EncoderEmbedding', 'EncoderEmbeddings']
"""

from typing import TYPE_CHECKING

from heta_eval._lazy import attach

if TYPE_CHECKING:  # what editors and type checkers read; _LAZY is what runs
    from heta_eval.integrations.haystack import (
        EncoderDocumentEmbedder,
        EncoderTextEmbedder,
        from_haystack,
        haystack_documents,
    )
    from heta_eval.integrations.langchain import (
        EncoderEmbeddings,
        from_langchain,
        langchain_documents,
    )
    from heta_eval.integrations.llamaindex import (
        EncoderEmbedding,
        from_llamaindex,
        llamaindex_documents,
    )
    from heta_eval.integrations.wrapping import documents_of


#: Public name -> the module that defines it (each framework's module imports it).
_LAZY = {
    "EncoderEmbedding": "heta_eval.integrations.llamaindex",
    "EncoderDocumentEmbedder": "heta_eval.integrations.haystack",
    "EncoderEmbeddings": "heta_eval.integrations.langchain",
    "EncoderTextEmbedder": "heta_eval.integrations.haystack",
    "documents_of": "heta_eval.integrations.wrapping",
    "from_haystack": "heta_eval.integrations.haystack",
    "from_langchain": "heta_eval.integrations.langchain",
    "from_llamaindex": "heta_eval.integrations.llamaindex",
    "haystack_documents": "heta_eval.integrations.haystack",
    "langchain_documents": "heta_eval.integrations.langchain",
    "llamaindex_documents": "heta_eval.integrations.llamaindex",
}

__all__ = [
    "EncoderDocumentEmbedder",
    "EncoderEmbedding",
    "EncoderEmbeddings",
    "EncoderTextEmbedder",
    "documents_of",
    "from_haystack",
    "from_langchain",
    "from_llamaindex",
    "haystack_documents",
    "langchain_documents",
    "llamaindex_documents",
]
__getattr__, __dir__ = attach(__name__, _LAZY)
