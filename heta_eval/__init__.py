"""heta-eval: a pytrec_eval-backed, BEIR-compatible harness for retrieval and RAG systems.

The public API is importable from here; evaluation objects also from
``heta_eval.evaluation``. Names load on first use (PEP 562): ``import heta_eval`` costs
nothing until a name is read, and a one-shot command imports only what it uses.

>>> from heta_eval import BeirRetrievalMetric, evaluate_run
>>> evaluate_run({"q": {"d": 1}}, {"q": {"d": 1.0}}).beir_dict()["ndcg"]["NDCG@10"]
1.0
"""

from __future__ import annotations

from heta_eval._lazy import attach
from heta_eval.evaluation import __all__ as _evaluation_all

__version__ = "0.1.0"

#: Public name -> the module that defines it (evaluation names: ``heta_eval.evaluation``).
_LAZY = {
    **dict.fromkeys(_evaluation_all, "evaluation"),
    "Benchmark": "runner",
    "BenchmarkResults": "runner",
    "BenchmarkRunner": "runner",
    "HttpKnowledgeBase": "kb",
    "JsonlBenchmark": "runner",
    "KnowledgeBase": "kb",
    "Recipe": "kb",
    "ReferenceKnowledgeBase": "kb",
    "load_results": "runner",
}

__all__ = sorted([*_LAZY, "__version__"])
__getattr__, __dir__ = attach(__name__, _LAZY)
