"""The reference knowledge base and the recipes that build it: passages (whole or chunked),
Lucene-exact BM25 (:mod:`heta_eval.lucene`), dense vectors (:mod:`heta_eval.encoding`, or
vectors given with the run), hybrid RRF, an optional approximate index
(:mod:`heta_eval.ann`) and second stage (:mod:`heta_eval.rerank`), and an answerer.

Names load on first use (PEP 562): bm25s and the Lucene analyzer load with the reference
knowledge base, torch and sentence-transformers only when a dense index is built.

>>> from heta_eval.reference import Recipe
>>> Recipe(modes=["keyword_search"]).modes
['keyword_search']
"""

from typing import TYPE_CHECKING

from heta_eval._lazy import attach

if TYPE_CHECKING:  # what editors and type checkers read; _LAZY is what runs
    from heta_eval.reference.answerers import Answerer, ChatAnswerer, ExtractiveAnswerer
    from heta_eval.reference.chunking import (
        Chunk,
        chunk_document,
        chunk_documents,
        split_sentences,
    )
    from heta_eval.reference.hybrid import reciprocal_rank_fusion
    from heta_eval.reference.knowledge_base import MODES, ReferenceKnowledgeBase
    from heta_eval.reference.recipe import (
        AnswererSpec,
        BM25Spec,
        ChunkingSpec,
        DenseSpec,
        Recipe,
    )

#: Public name -> the module that defines it.
_LAZY = {
    "MODES": "heta_eval.reference.knowledge_base",
    "Answerer": "heta_eval.reference.answerers",
    "AnswererSpec": "heta_eval.reference.recipe",
    "BM25Spec": "heta_eval.reference.recipe",
    "ChatAnswerer": "heta_eval.reference.answerers",
    "Chunk": "heta_eval.reference.chunking",
    "ChunkingSpec": "heta_eval.reference.recipe",
    "DenseSpec": "heta_eval.reference.recipe",
    "ExtractiveAnswerer": "heta_eval.reference.answerers",
    "Recipe": "heta_eval.reference.recipe",
    "ReferenceKnowledgeBase": "heta_eval.reference.knowledge_base",
    "chunk_document": "heta_eval.reference.chunking",
    "chunk_documents": "heta_eval.reference.chunking",
    "reciprocal_rank_fusion": "heta_eval.reference.hybrid",
    "split_sentences": "heta_eval.reference.chunking",
}

__all__ = [
    "MODES",
    "Answerer",
    "AnswererSpec",
    "BM25Spec",
    "ChatAnswerer",
    "Chunk",
    "ChunkingSpec",
    "DenseSpec",
    "ExtractiveAnswerer",
    "Recipe",
    "ReferenceKnowledgeBase",
    "chunk_document",
    "chunk_documents",
    "reciprocal_rank_fusion",
    "split_sentences",
]
__getattr__, __dir__ = attach(__name__, _LAZY)
