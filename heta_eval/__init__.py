"""heta-eval: a pytrec_eval-backed, BEIR-compatible harness for retrieval and RAG systems.

The public API is importable from here; evaluation objects also from
``heta_eval.evaluation``:

>>> from heta_eval import BeirRetrievalMetric, evaluate_run
>>> evaluate_run({"q": {"d": 1}}, {"q": {"d": 1.0}}).beir_dict()["ndcg"]["NDCG@10"]
1.0
"""

from .evaluation import *  # noqa: F403
from .evaluation import __all__ as _evaluation_all
from .kb import HttpKnowledgeBase, KnowledgeBase, Recipe, ReferenceKnowledgeBase
from .runner import (
    Benchmark,
    BenchmarkResults,
    BenchmarkRunner,
    JsonlBenchmark,
    load_results,
)

__version__ = "0.1.0"
__all__ = [
    *_evaluation_all,
    "Benchmark",
    "BenchmarkResults",
    "BenchmarkRunner",
    "HttpKnowledgeBase",
    "JsonlBenchmark",
    "KnowledgeBase",
    "Recipe",
    "ReferenceKnowledgeBase",
    "__version__",
    "load_results",
]
