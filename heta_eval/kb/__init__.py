"""Knowledge bases: the protocol, the reference implementation, recipes and an HTTP client.

Heavy dependencies (torch, sentence-transformers) load only when a dense index is built.
"""

from heta_eval.kb.answerers import Answerer, ChatAnswerer, ExtractiveAnswerer
from heta_eval.kb.chunking import Chunk, chunk_document, chunk_documents, split_sentences
from heta_eval.kb.http_client import HttpKnowledgeBase
from heta_eval.kb.hybrid import reciprocal_rank_fusion
from heta_eval.kb.protocol import BatchKnowledgeBase, IngestingKnowledgeBase, KnowledgeBase
from heta_eval.kb.recipe import AnswererSpec, BM25Spec, ChunkingSpec, DenseSpec, Recipe
from heta_eval.kb.reference import MODES, ReferenceKnowledgeBase

__all__ = [
    "MODES",
    "Answerer",
    "AnswererSpec",
    "BM25Spec",
    "BatchKnowledgeBase",
    "ChatAnswerer",
    "Chunk",
    "ChunkingSpec",
    "DenseSpec",
    "ExtractiveAnswerer",
    "HttpKnowledgeBase",
    "IngestingKnowledgeBase",
    "KnowledgeBase",
    "Recipe",
    "ReferenceKnowledgeBase",
    "chunk_document",
    "chunk_documents",
    "reciprocal_rank_fusion",
    "split_sentences",
]
