"""heta-eval: a pytrec_eval-backed, BEIR-compatible harness for retrieval and RAG systems.

Names load on first use (PEP 562): ``import heta_eval`` costs nothing until a name is read,
and a one-shot command imports only what it uses. Everything else lives in its home module
(``heta_eval.rag``, ``heta_eval.systems``, ``heta_eval.runner``, ...).

Score a run, in memory or from files (:func:`read_qrels` / :func:`read_run` read TREC and BEIR
formats), with BEIR's numbers by default or any trec_eval :class:`Measure`:

>>> from heta_eval import Measure, evaluate_run, evaluate_run_file, read_qrels, read_run
>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "qrels.txt").write_text("q1 0 d1 1\\nq1 0 d2 0\\n")
>>> _ = (folder / "run.trec").write_text("q1 Q0 d2 1 3.0 bm25\\nq1 Q0 d1 2 2.0 bm25\\n")
>>> qrels, run = read_qrels(folder / "qrels.txt"), read_run(folder / "run.trec")
>>> run
{'q1': {'d2': 3.0, 'd1': 2.0}}
>>> result = evaluate_run(qrels, run, k_values=(1, 10))  # a RunEvaluation
>>> result.beir_dict()["ndcg"], result.per_query["q1"]["MRR@10"]
({'NDCG@1': 0.0, 'NDCG@10': 0.63093}, 0.5)
>>> Measure.parse("nDCG@10") == Measure.parse("ndcg_cut.10")
True
>>> evaluate_run_file(qrels, folder / "run.trec", measures="nDCG@10 Rprec").values()
{'nDCG@10': 0.63093, 'Rprec': 0.0}

Score a RAG system's replies (:class:`QueryResponse` of :class:`QueryResult` hits) to
:class:`BenchmarkCase` questions with :func:`evaluate_responses` and any evaluators
(:class:`BeirRetrievalMetric`, :func:`beir_default_metrics`, :class:`EvidenceRecallAtK`,
:class:`AnswerContains`, :class:`AnswerExactMatch`; each gives an :class:`EvaluationScore`;
anything with a ``name`` and an async ``evaluate`` is one: :class:`BenchmarkEvaluatorProtocol`;
:mod:`heta_eval.evaluation` holds every evaluator and record):

>>> from heta_eval import (AnswerContains, AnswerExactMatch, BeirRetrievalMetric,
...     BenchmarkCase, EvidenceRecallAtK, QueryResponse, QueryResult, evaluate_responses)
>>> case = BenchmarkCase(id="q1", query="capital of France?", expected={
...     "answers": ["Paris"], "relevance": {"d1": 1}, "evidence": [{"text": "Paris"}]})
>>> reply = QueryResponse(query=case.query, answer="It is Paris.",
...     results=[QueryResult(text="Paris is the capital.", source={"document_id": "d1"})])
>>> evaluators = [BeirRetrievalMetric("ndcg", 10), EvidenceRecallAtK(k=5),
...               AnswerContains(), AnswerExactMatch()]
>>> report = evaluate_responses([case], {"q1": reply}, evaluators)
>>> {name: summary.value for name, summary in report.metrics.items()}
{'ndcg@10': 1.0, 'evidence_recall@5': 1.0, 'answer_contains': 1.0, 'answer_exact_match': 0.0}
>>> from heta_eval import BenchmarkEvaluatorProtocol
>>> all(isinstance(evaluator, BenchmarkEvaluatorProtocol) for evaluator in evaluators)
True

Run a whole benchmark (:class:`Document` corpus, cases, evaluators) against a knowledge base
built from a :class:`Recipe`, with :class:`BenchmarkRunner` (see its example), or against any
function that returns hits, wrapped by :func:`from_callable` (the framework adapters:
:mod:`heta_eval.integrations`).

>>> from heta_eval import BenchmarkRunner, Document, Recipe, beir_default_metrics
>>> len(beir_default_metrics()), Recipe().modes[0], Document(id="d1", text="Paris.").id
(25, 'keyword_search', 'd1')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_eval import _moved
from heta_eval._lazy import attach

#: The one place the version is written (pyproject.toml reads it from here).
__version__ = "0.2.0"

if TYPE_CHECKING:  # what editors and type checkers read; _LAZY is what runs
    from heta_eval.io.qrels import read_qrels
    from heta_eval.io.run import read_run
    from heta_eval.measures.measure import Measure
    from heta_eval.models.protocol import BenchmarkEvaluatorProtocol
    from heta_eval.models.query_result import QueryResult
    from heta_eval.models.records import BenchmarkCase, Document, EvaluationScore, QueryResponse
    from heta_eval.rag.aggregate import evaluate_responses
    from heta_eval.rag.answers import AnswerContains, AnswerExactMatch
    from heta_eval.rag.evidence import EvidenceRecallAtK
    from heta_eval.reference.recipe import Recipe
    from heta_eval.retrieval.metric import BeirRetrievalMetric, beir_default_metrics
    from heta_eval.retrieval.result import RunEvaluation
    from heta_eval.retrieval.run import evaluate_run
    from heta_eval.retrieval.run_file import evaluate_run_file
    from heta_eval.runner.runner import BenchmarkRunner
    from heta_eval.systems.callables import from_callable


#: Public name -> the module that defines it.
_LAZY = {
    "AnswerContains": "heta_eval.rag.answers",
    "AnswerExactMatch": "heta_eval.rag.answers",
    "BeirRetrievalMetric": "heta_eval.retrieval.metric",
    "BenchmarkCase": "heta_eval.models.records",
    "BenchmarkEvaluatorProtocol": "heta_eval.models.protocol",
    "BenchmarkRunner": "heta_eval.runner.runner",
    "Document": "heta_eval.models.records",
    "EvaluationScore": "heta_eval.models.records",
    "EvidenceRecallAtK": "heta_eval.rag.evidence",
    "Measure": "heta_eval.measures.measure",
    "QueryResponse": "heta_eval.models.records",
    "QueryResult": "heta_eval.models.query_result",
    "Recipe": "heta_eval.reference.recipe",
    "RunEvaluation": "heta_eval.retrieval.result",
    "beir_default_metrics": "heta_eval.retrieval.metric",
    "evaluate_responses": "heta_eval.rag.aggregate",
    "evaluate_run": "heta_eval.retrieval.run",
    "evaluate_run_file": "heta_eval.retrieval.run_file",
    "from_callable": "heta_eval.systems.callables",
    "read_qrels": "heta_eval.io.qrels",
    "read_run": "heta_eval.io.run",
}

__all__ = [
    "AnswerContains",
    "AnswerExactMatch",
    "BeirRetrievalMetric",
    "BenchmarkCase",
    "BenchmarkEvaluatorProtocol",
    "BenchmarkRunner",
    "Document",
    "EvaluationScore",
    "EvidenceRecallAtK",
    "Measure",
    "QueryResponse",
    "QueryResult",
    "Recipe",
    "RunEvaluation",
    "__version__",
    "beir_default_metrics",
    "evaluate_responses",
    "evaluate_run",
    "evaluate_run_file",
    "from_callable",
    "read_qrels",
    "read_run",
]
_getattr, __dir__ = attach(__name__, _LAZY)
#: Names this package listed before 0.2.0 still resolve, with a DeprecationWarning (_moved).
__getattr__ = _moved.moved_getattr(__name__, _getattr)
_moved.install()
