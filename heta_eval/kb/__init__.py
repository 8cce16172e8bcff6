"""Knowledge bases: the protocol, the reference implementation, recipes and an HTTP client.

Heavy dependencies (torch, sentence-transformers) load only when a dense index is built.
"""

from .answerers import Answerer, ChatAnswerer, ExtractiveAnswerer
from .chunking import Chunk, chunk_document, chunk_documents, split_sentences
from .http_client import HttpKnowledgeBase
from .hybrid import reciprocal_rank_fusion
from .protocol import IngestingKnowledgeBase, KnowledgeBase
from .recipe import AnswererSpec, BM25Spec, ChunkingSpec, DenseSpec, Recipe
from .reference import MODES, ReferenceKnowledgeBase

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
