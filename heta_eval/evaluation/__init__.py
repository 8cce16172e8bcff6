"""Evaluation: models, the evaluator protocol, and the built-in evaluators.

Names load on first use (PEP 562), so ``from heta_eval.evaluation import evaluate_run`` imports
the retrieval metrics without pydantic's models of the LLM judge or httpx.
"""

from __future__ import annotations

from heta_eval._lazy import attach

#: Public name -> the submodule that defines it. A new public name is one line here.
_LAZY = {
    "AggregateValue": "heta_eval.retrieval.evaluate",
    "AnswerContains": "heta_eval.rag.answers",
    "AnswerExactMatch": "heta_eval.rag.answers",
    "AnswerF1": "heta_eval.rag.answers",
    "BEIR_K_VALUES": "heta_eval.retrieval.evaluate",
    "BeirRetrievalMetric": "heta_eval.retrieval.evaluate",
    "BenchmarkCase": "heta_eval.models.records",
    "BenchmarkEvaluatorProtocol": "heta_eval.models.protocol",
    "ChunkTable": "heta_eval.models.columns",
    "CitationPrecision": "heta_eval.rag.citations",
    "CitationRecall": "heta_eval.rag.citations",
    "ContextPrecisionAtK": "heta_eval.rag.context",
    "Document": "heta_eval.models.records",
    "DocumentRanking": "heta_eval.retrieval.evaluate",
    "EvaluationFailure": "heta_eval.rag.aggregate",
    "EvaluationReport": "heta_eval.rag.aggregate",
    "EvaluationScore": "heta_eval.models.records",
    "EvidenceMatcher": "heta_eval.rag.evidence",
    "EvidenceRecallAtK": "heta_eval.rag.evidence",
    "ExpectedOutput": "heta_eval.models.records",
    "GoldEvidence": "heta_eval.models.records",
    "JUDGE_PROMPT": "heta_eval.rag.judge.judge",
    "JudgeError": "heta_eval.rag.judge.judge",
    "LLMJudge": "heta_eval.rag.judge.judge",
    "METRICS": "heta_eval.retrieval.evaluate",
    "Measure": "heta_eval.measures.measure",
    "MetricSummary": "heta_eval.rag.aggregate",
    "QueryResponse": "heta_eval.models.records",
    "QueryResult": "heta_eval.models.records",
    "RECOGNISED_LOCATOR_FIELDS": "heta_eval.models.records",
    "ResultColumns": "heta_eval.models.columns",
    "RunEvaluation": "heta_eval.retrieval.evaluate",
    "ScoreTable": "heta_eval.rag.aggregate",
    "UnknownMeasureError": "heta_eval.measures.measure",
    "aevaluate_responses": "heta_eval.rag.aggregate",
    "answer_tokens": "heta_eval.rag.normalize",
    "beir_default_metrics": "heta_eval.retrieval.evaluate",
    "collapse_to_documents": "heta_eval.retrieval.evaluate",
    "contains_tokens": "heta_eval.rag.normalize",
    "default_document_resolver": "heta_eval.retrieval.evaluate",
    "evaluate_responses": "heta_eval.rag.aggregate",
    "evaluate_run": "heta_eval.retrieval.evaluate",
    "evaluate_run_file": "heta_eval.retrieval.evaluate",
    "evidence_tokens": "heta_eval.rag.normalize",
    "locator_verdict": "heta_eval.rag.evidence",
    "measure_key": "heta_eval.retrieval.evaluate",
    "normalize_answer": "heta_eval.rag.normalize",
    "parse_measure": "heta_eval.retrieval.evaluate",
    "parse_measures": "heta_eval.measures.measure",
    "resolve_citations": "heta_eval.rag.citations",
    "summarize_scores": "heta_eval.rag.aggregate",
}

__all__ = sorted(_LAZY)
__getattr__, __dir__ = attach(__name__, _LAZY)
