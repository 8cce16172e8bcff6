"""The evaluation names under one import: scoring runs and replies, the evaluators, and the
records they read and write (the same objects as :mod:`heta_eval`'s).

Names load on first use (PEP 562), so ``from heta_eval.evaluation import evaluate_run``
imports the retrieval metrics without pydantic's models of the replies.

>>> from heta_eval.evaluation import BenchmarkCase, EvaluationScore, beir_default_metrics
>>> [metric.name for metric in beir_default_metrics(k_values=(10,), metrics=["ndcg", "mrr"])]
['ndcg@10', 'mrr@10']
"""

from __future__ import annotations

from heta_eval import _LAZY as _PUBLIC
from heta_eval._lazy import attach

#: Public name -> the module that defines it: heta_eval's names but the runner and the kb.
_LAZY = {
    name: module
    for name, module in _PUBLIC.items()
    if not module.startswith(("heta_eval.runner", "heta_eval.kb"))
}

__all__ = sorted(_LAZY)
__getattr__, __dir__ = attach(__name__, _LAZY)
