"""Evaluation: models, the evaluator protocol, and the built-in evaluators.

Names load on first use (PEP 562), so ``from heta_eval.evaluation import evaluate_run`` imports
the retrieval metrics without pydantic's models of the LLM judge or httpx.
"""

from __future__ import annotations

from heta_eval._lazy import attach

#: Public name -> the submodule that defines it. A new public name is one line here.
_LAZY = {
    "AggregateValue": "retrieval",
    "AnswerContains": "answers",
    "AnswerExactMatch": "answers",
    "AnswerF1": "answers",
    "BEIR_K_VALUES": "retrieval",
    "BeirRetrievalMetric": "retrieval",
    "BenchmarkCase": "models",
    "BenchmarkEvaluatorProtocol": "protocol",
    "ChunkTable": "columns",
    "CitationPrecision": "citations",
    "CitationRecall": "citations",
    "ContextPrecisionAtK": "rag",
    "Document": "models",
    "DocumentRanking": "retrieval",
    "EvaluationFailure": "aggregate",
    "EvaluationReport": "aggregate",
    "EvaluationScore": "models",
    "EvidenceMatcher": "evidence",
    "EvidenceRecallAtK": "evidence",
    "ExpectedOutput": "models",
    "GoldEvidence": "models",
    "JUDGE_PROMPT": "llm_judge",
    "JudgeError": "llm_judge",
    "LLMJudge": "llm_judge",
    "METRICS": "retrieval",
    "Measure": "measures",
    "MetricSummary": "aggregate",
    "QueryResponse": "models",
    "QueryResult": "models",
    "RECOGNISED_LOCATOR_FIELDS": "models",
    "ResultColumns": "columns",
    "RunEvaluation": "retrieval",
    "ScoreTable": "aggregate",
    "UnknownMeasureError": "measures",
    "aevaluate_responses": "aggregate",
    "answer_tokens": "normalize",
    "beir_default_metrics": "retrieval",
    "collapse_to_documents": "retrieval",
    "contains_tokens": "normalize",
    "default_document_resolver": "retrieval",
    "evaluate_responses": "aggregate",
    "evaluate_run": "retrieval",
    "evaluate_run_file": "retrieval",
    "evidence_tokens": "normalize",
    "locator_verdict": "evidence",
    "measure_key": "retrieval",
    "normalize_answer": "normalize",
    "parse_measure": "retrieval",
    "parse_measures": "measures",
    "resolve_citations": "citations",
    "summarize_scores": "aggregate",
}

__all__ = sorted(_LAZY)
__getattr__, __dir__ = attach(__name__, _LAZY)
