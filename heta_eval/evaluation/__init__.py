"""Evaluation, as the Heta Evaluation docs' evaluators page has it: every evaluator and every
record an evaluator reads or returns, beside the scoring functions (the same objects as
:mod:`heta_eval`'s).

* the protocol: :class:`BenchmarkEvaluatorProtocol` (a ``name`` and an async ``evaluate``
  that reads a :class:`BenchmarkCase` and a :class:`QueryResponse` and returns an
  :class:`EvaluationScore`);
* the records: :class:`BenchmarkCase` (its :class:`ExpectedOutput`, each
  :class:`GoldEvidence`), :class:`QueryResponse` of :class:`QueryResult` hits,
  :class:`EvaluationScore`, :class:`Document`;
* retrieval: :class:`BeirRetrievalMetric`, :func:`beir_default_metrics`;
* evidence and answers: :class:`EvidenceRecallAtK`, :class:`AnswerContains`,
  :class:`AnswerExactMatch`, :class:`AnswerF1`;
* context and citations: :class:`ContextPrecisionAtK`, :class:`CitationPrecision`,
  :class:`CitationRecall`; the LLM judge: :class:`LLMJudge`;
* scoring: :func:`evaluate_responses`, :func:`evaluate_run`, :func:`evaluate_run_file`
  (a :class:`RunEvaluation`), :class:`Measure`, :func:`read_run`, :func:`read_qrels`.

Names load on first use (PEP 562), so ``from heta_eval.evaluation import evaluate_run``
imports the retrieval metrics without pydantic's models of the replies. Names this module
listed before 0.2.0 and no longer does still resolve until 0.3.0, with a DeprecationWarning
naming their home (:mod:`heta_eval._moved`).

>>> from heta_eval.evaluation import (BenchmarkEvaluatorProtocol, EvaluationScore,
...     AnswerF1, ContextPrecisionAtK, beir_default_metrics)
>>> [metric.name for metric in beir_default_metrics(k_values=(10,), metrics=["ndcg", "mrr"])]
['ndcg@10', 'mrr@10']
>>> all(isinstance(e, BenchmarkEvaluatorProtocol) for e in (AnswerF1(), ContextPrecisionAtK()))
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_eval import _LAZY as _PUBLIC
from heta_eval import _moved
from heta_eval._lazy import attach

if TYPE_CHECKING:  # what editors and type checkers read; _LAZY is what runs
    from heta_eval.io.qrels import read_qrels
    from heta_eval.io.run import read_run
    from heta_eval.measures.measure import Measure
    from heta_eval.models.protocol import BenchmarkEvaluatorProtocol
    from heta_eval.models.query_result import QueryResult
    from heta_eval.models.records import (
        BenchmarkCase,
        Document,
        EvaluationScore,
        ExpectedOutput,
        GoldEvidence,
        QueryResponse,
    )
    from heta_eval.rag.aggregate import evaluate_responses
    from heta_eval.rag.answers import AnswerContains, AnswerExactMatch, AnswerF1
    from heta_eval.rag.citations import CitationPrecision, CitationRecall
    from heta_eval.rag.context import ContextPrecisionAtK
    from heta_eval.rag.evidence import EvidenceRecallAtK
    from heta_eval.rag.judge.judge import LLMJudge
    from heta_eval.retrieval.metric import BeirRetrievalMetric, beir_default_metrics
    from heta_eval.retrieval.result import RunEvaluation
    from heta_eval.retrieval.run import evaluate_run
    from heta_eval.retrieval.run_file import evaluate_run_file


_NOT_EVALUATION = ("heta_eval.runner", "heta_eval.reference", "heta_eval.systems")

#: Public name -> the module that defines it: heta_eval's names but the runner's and the
#: knowledge bases', and the evaluators and records heta_eval leaves out.
_LAZY = {
    **{name: module for name, module in _PUBLIC.items() if not module.startswith(_NOT_EVALUATION)},
    "AnswerF1": "heta_eval.rag.answers",
    "CitationPrecision": "heta_eval.rag.citations",
    "CitationRecall": "heta_eval.rag.citations",
    "ContextPrecisionAtK": "heta_eval.rag.context",
    "ExpectedOutput": "heta_eval.models.records",
    "GoldEvidence": "heta_eval.models.records",
    "LLMJudge": "heta_eval.rag.judge.judge",
}

__all__ = [
    "AnswerContains",
    "AnswerExactMatch",
    "AnswerF1",
    "BeirRetrievalMetric",
    "BenchmarkCase",
    "BenchmarkEvaluatorProtocol",
    "CitationPrecision",
    "CitationRecall",
    "ContextPrecisionAtK",
    "Document",
    "EvaluationScore",
    "EvidenceRecallAtK",
    "ExpectedOutput",
    "GoldEvidence",
    "LLMJudge",
    "Measure",
    "QueryResponse",
    "QueryResult",
    "RunEvaluation",
    "beir_default_metrics",
    "evaluate_responses",
    "evaluate_run",
    "evaluate_run_file",
    "read_qrels",
    "read_run",
]
_getattr, __dir__ = attach(__name__, _LAZY)
__getattr__ = _moved.moved_getattr(__name__, _getattr)
