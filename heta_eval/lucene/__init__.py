"""Lucene-compatible text analysis and BM25 scoring, without Java (docs/bm25.md).

``analyze`` gives the terms of Lucene's ``EnglishAnalyzer`` (as Anserini indexes them);
``LuceneBM25Index`` scores as Lucene's ``BM25Similarity`` (byte-encoded lengths), built in
blocks by worker processes (:mod:`.build`, :mod:`.blocks`). The Java oracle that checks both
is developer tooling outside the package: ``tools/lucene_oracle/`` (``make lucene-oracle``).
"""

from heta_eval.lucene.analyzer import ENGLISH_STOP_WORDS, analyze
from heta_eval.lucene.index import LuceneBM25Index
from heta_eval.lucene.porter import porter_stem
from heta_eval.lucene.tokenizer import standard_tokens

__all__ = ["ENGLISH_STOP_WORDS", "LuceneBM25Index", "analyze", "porter_stem", "standard_tokens"]
