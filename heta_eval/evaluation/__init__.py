"""Evaluation: models, the evaluator protocol, and the built-in evaluators."""

from .aggregate import (
    EvaluationFailure,
    EvaluationReport,
    MetricSummary,
    ScoreTable,
    aevaluate_responses,
    evaluate_responses,
    summarize_scores,
)
from .answers import AnswerContains, AnswerExactMatch, AnswerF1
from .columns import ChunkTable, ResultColumns
from .evidence import EvidenceRecallAtK, locator_verdict
from .llm_judge import JUDGE_PROMPT, JudgeError, LLMJudge
from .measures import Measure, UnknownMeasureError, parse_measures
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
from .normalize import answer_tokens, contains_tokens, normalize_answer
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
    evaluate_run_file,
    measure_key,
    parse_measure,
)

__all__ = [
    "BEIR_K_VALUES",
    "JUDGE_PROMPT",
    "METRICS",
    "RECOGNISED_LOCATOR_FIELDS",
    "AggregateValue",
    "AnswerContains",
    "AnswerExactMatch",
    "AnswerF1",
    "BeirRetrievalMetric",
    "BenchmarkCase",
    "BenchmarkEvaluatorProtocol",
    "ChunkTable",
    "Document",
    "DocumentRanking",
    "EvaluationFailure",
    "EvaluationReport",
    "EvaluationScore",
    "EvidenceRecallAtK",
    "ExpectedOutput",
    "GoldEvidence",
    "JudgeError",
    "LLMJudge",
    "Measure",
    "MetricSummary",
    "QueryResponse",
    "QueryResult",
    "ResultColumns",
    "RunEvaluation",
    "ScoreTable",
    "UnknownMeasureError",
    "aevaluate_responses",
    "answer_tokens",
    "beir_default_metrics",
    "collapse_to_documents",
    "contains_tokens",
    "default_document_resolver",
    "evaluate_responses",
    "evaluate_run",
    "evaluate_run_file",
    "locator_verdict",
    "measure_key",
    "normalize_answer",
    "parse_measure",
    "parse_measures",
    "summarize_scores",
]
