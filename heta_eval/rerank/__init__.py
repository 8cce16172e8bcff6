"""BEIR's second stage: rerank any first stage with a cross-encoder, as BEIR's ``Rerank``
does (docs/rerank.md): the model (:mod:`.cross_encoder`), its scores of pairs (:mod:`.reranker`,
kept on disk by :mod:`.pair_scores`) and the stage over any knowledge base (:mod:`.stage`).

* :class:`CrossEncoderReranker`: a cross-encoder's scores of (query, text) pairs, and
  :meth:`~CrossEncoderReranker.rerank`, BEIR's ``Rerank.rerank`` on BEIR's dicts;
* :class:`RerankingKnowledgeBase`: any knowledge base with a mode ``M+rerank`` beside each
  mode ``M``; :class:`RerankSpec`: the same as a recipe field (``Recipe(rerank=...)``);
* :class:`CrossEncoderError`: a model that cannot rerank, said in one line.

>>> import tempfile
>>> from heta_eval.rerank.cross_encoder import demo_cross_encoder
>>> reranker = CrossEncoderReranker(demo_cross_encoder(tempfile.mkdtemp()), cache_dir=False)
>>> reranked = reranker.rerank(
...     corpus={"d1": {"title": "Cats", "text": "Cats purr."}, "d2": {"text": "Dogs bark."}},
...     queries={"q1": "do cats purr"}, results={"q1": {"d1": 2.0, "d2": 1.0}}, top_k=100)
>>> sorted(reranked["q1"])
['d1', 'd2']
"""

from heta_eval.rerank.cross_encoder import CrossEncoderError
from heta_eval.rerank.reranker import CrossEncoderReranker
from heta_eval.rerank.stage import RerankingKnowledgeBase, RerankSpec, rerank_mode

__all__ = [
    "CrossEncoderError",
    "CrossEncoderReranker",
    "RerankSpec",
    "RerankingKnowledgeBase",
    "rerank_mode",
]
