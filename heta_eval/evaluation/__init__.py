"""Evaluation: models, the evaluator protocol, and the built-in evaluators."""

from .models import (
    RECOGNISED_LOCATOR_FIELDS,
    BenchmarkCase,
    Document,
    EvaluationScore,
    ExpectedOutput,
    GoldEvidence,
    QueryResponse,
    QueryResult,
)
from .normalize import answer_tokens, normalize_answer
from .protocol import BenchmarkEvaluatorProtocol
from .retrieval import (
    BEIR_K_VALUES,
    METRICS,
    AggregateValue,
    BeirRetrievalMetric,
    DocumentRanking,
    RunEvaluation,
    beir_default_metrics,
    collapse_to_documents,
    default_document_resolver,
    evaluate_run,
    measure_key,
    parse_measure,
)

__all__ = [
    "BEIR_K_VALUES",
    "METRICS",
    "RECOGNISED_LOCATOR_FIELDS",
    "AggregateValue",
    "BeirRetrievalMetric",
    "BenchmarkCase",
    "BenchmarkEvaluatorProtocol",
    "Document",
    "DocumentRanking",
    "EvaluationScore",
    "ExpectedOutput",
    "GoldEvidence",
    "QueryResponse",
    "QueryResult",
    "RunEvaluation",
    "answer_tokens",
    "beir_default_metrics",
    "collapse_to_documents",
    "default_document_resolver",
    "evaluate_run",
    "measure_key",
    "normalize_answer",
    "parse_measure",
]
