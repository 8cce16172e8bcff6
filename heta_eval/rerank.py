"""BEIR's second stage: rerank any first stage with a cross-encoder, as BEIR's ``Rerank``
does (docs/rerank.md). The objects live in :mod:`heta_eval.kb`; this module gathers them.

* :class:`CrossEncoderReranker`: a cross-encoder's scores of (query, text) pairs, and
  :meth:`~CrossEncoderReranker.rerank`, BEIR's ``Rerank.rerank`` on BEIR's dicts;
* :class:`RerankingKnowledgeBase`: any knowledge base with a mode ``M+rerank`` beside each
  mode ``M``; :class:`RerankSpec`: the same as a recipe field (``Recipe(rerank=...)``);
* :class:`CrossEncoderError`: a model that cannot rerank, said in one line.

>>> import tempfile
>>> from heta_eval.kb.cross_encoder import demo_cross_encoder
>>> reranker = CrossEncoderReranker(demo_cross_encoder(tempfile.mkdtemp()), cache_dir=False)
>>> reranked = reranker.rerank(
...     corpus={"d1": {"title": "Cats", "text": "Cats purr."}, "d2": {"text": "Dogs bark."}},
...     queries={"q1": "do cats purr"}, results={"q1": {"d1": 2.0, "d2": 1.0}}, top_k=100)
>>> sorted(reranked["q1"])
['d1', 'd2']
"""

from heta_eval.kb.cross_encoder import CrossEncoderError
from heta_eval.kb.rerank import RerankingKnowledgeBase, RerankSpec, rerank_mode
from heta_eval.kb.reranker import CrossEncoderReranker

__all__ = [
    "CrossEncoderError",
    "CrossEncoderReranker",
    "RerankSpec",
    "RerankingKnowledgeBase",
    "rerank_mode",
]
