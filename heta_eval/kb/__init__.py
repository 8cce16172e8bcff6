"""Knowledge bases: the protocol, the reference implementation, recipes, an HTTP client and
any function as a knowledge base (:func:`from_callable`).

Names load on first use (PEP 562): the protocol (:mod:`heta_eval.kb.protocol`, what the
runner reads) costs nothing heavy; bm25s and the Lucene analyzer load with the reference
knowledge base, torch and sentence-transformers only when a dense index is built.

>>> from heta_eval.kb import KnowledgeBase, from_callable
>>> isinstance(from_callable(lambda query, top_k: [("d1", 1.0)]), KnowledgeBase)
True
"""

from heta_eval._lazy import attach

#: Public name -> the module that defines it.
_LAZY = {
    "MODES": "heta_eval.kb.reference",
    "Answerer": "heta_eval.kb.answerers",
    "AnswererSpec": "heta_eval.kb.recipe",
    "BM25Spec": "heta_eval.kb.recipe",
    "BatchKnowledgeBase": "heta_eval.kb.protocol",
    "CallableKnowledgeBase": "heta_eval.kb.callables",
    "ChatAnswerer": "heta_eval.kb.answerers",
    "Chunk": "heta_eval.kb.chunking",
    "ChunkingSpec": "heta_eval.kb.recipe",
    "DenseSpec": "heta_eval.kb.recipe",
    "ExtractiveAnswerer": "heta_eval.kb.answerers",
    "HttpKnowledgeBase": "heta_eval.kb.http_client",
    "IngestingKnowledgeBase": "heta_eval.kb.protocol",
    "KnowledgeBase": "heta_eval.kb.protocol",
    "Recipe": "heta_eval.kb.recipe",
    "ReferenceKnowledgeBase": "heta_eval.kb.reference",
    "chunk_document": "heta_eval.kb.chunking",
    "chunk_documents": "heta_eval.kb.chunking",
    "from_callable": "heta_eval.kb.callables",
    "reciprocal_rank_fusion": "heta_eval.kb.hybrid",
    "split_sentences": "heta_eval.kb.chunking",
}

__all__ = sorted(_LAZY)
__getattr__, __dir__ = attach(__name__, _LAZY)
