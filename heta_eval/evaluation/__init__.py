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

__all__ = [
    "RECOGNISED_LOCATOR_FIELDS",
    "BenchmarkCase",
    "BenchmarkEvaluatorProtocol",
    "Document",
    "EvaluationScore",
    "ExpectedOutput",
    "GoldEvidence",
    "QueryResponse",
    "QueryResult",
    "answer_tokens",
    "normalize_answer",
]
