"""Lucene-compatible text analysis and BM25 scoring, without Java (docs/bm25.md).

``analyze`` gives the terms of Lucene's ``EnglishAnalyzer`` (as Anserini indexes them);
``LuceneBM25Index`` scores as Lucene's ``BM25Similarity`` (byte-encoded lengths); the Java
oracle that checks both lives in :mod:`.anserini` (tests and benchmarks only), and the
developer harness around it in :mod:`.oracle` (``make lucene-oracle``).
"""

from .analyzer import ENGLISH_STOP_WORDS, analyze
from .index import LuceneBM25Index
from .porter import porter_stem
from .tokenizer import standard_tokens

__all__ = ["ENGLISH_STOP_WORDS", "LuceneBM25Index", "analyze", "porter_stem", "standard_tokens"]
