"""Lucene-compatible text analysis and BM25 scoring, without Java (docs/bm25.md).

``analyze`` gives the terms of Lucene's ``EnglishAnalyzer`` (as Anserini indexes them);
``LuceneBM25Index`` scores as Lucene's ``BM25Similarity`` (byte-encoded lengths); the Java
oracle that checks both lives in :mod:`.anserini` (tests and benchmarks only), and the
developer harness around it in :mod:`.oracle` (``make lucene-oracle``).
"""

from heta_eval.kb.lucene.analyzer import ENGLISH_STOP_WORDS, analyze
from heta_eval.kb.lucene.index import LuceneBM25Index
from heta_eval.kb.lucene.porter import porter_stem
from heta_eval.kb.lucene.tokenizer import standard_tokens

__all__ = ["ENGLISH_STOP_WORDS", "LuceneBM25Index", "analyze", "porter_stem", "standard_tokens"]
