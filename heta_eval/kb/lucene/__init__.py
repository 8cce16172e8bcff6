"""Lucene-compatible text analysis and BM25 scoring, without Java.

``analyze`` gives the terms of Lucene's ``EnglishAnalyzer`` (as Anserini indexes them);
:mod:`.similarity` holds Lucene's ``BM25Similarity`` arithmetic (byte-encoded lengths).
"""

from .analyzer import ENGLISH_STOP_WORDS, analyze
from .porter import porter_stem
from .tokenizer import standard_tokens

__all__ = ["ENGLISH_STOP_WORDS", "analyze", "porter_stem", "standard_tokens"]
