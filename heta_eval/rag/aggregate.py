"""Score collected responses and aggregate them, without a knowledge base.

``evaluate_responses(cases, responses, evaluators)`` is the one aggregation function of the
project; the benchmark runner calls it too. Retrieval metrics (``BeirRetrievalMetric``) are
scored together in one pytrec_eval pass and aggregated the BEIR way and the strict way;
other evaluators run per case with bounded concurrency and are aggregated by the type of
their values: means for numbers, pass rates for booleans, counts for strings.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import methodcaller
from typing import Any

from heta_eval._runtime import paused_gc, run_sync
from heta_eval.models.protocol import BenchmarkEvaluatorProtocol
from heta_eval.models.records import BenchmarkCase, EvaluationScore, QueryResponse
from heta_eval.models.report import EvaluationFailure, EvaluationReport, MetricSummary, ScoreTable
from heta_eval.retrieval.batch import _score_retrieval, retrieval_summary, score_retrieval_batch
from heta_eval.retrieval.metric import BeirRetrievalMetric

__all__ = [
    "EvaluationFailure",
    "EvaluationReport",
    "MetricSummary",
    "ScoreTable",
    "aevaluate_responses",
    "evaluate_responses",
    "score_case",
    "score_retrieval_batch",
    "summarize_scores",
]


def _align(
    cases: Sequence[BenchmarkCase],
    responses: Mapping[str, QueryResponse | None] | Sequence[QueryResponse | None],
) -> dict[str, QueryResponse]:
    ids = [case.id for case in cases]
    duplicated = [cid for cid, n in Counter(ids).items() if n > 1]
    if duplicated:
        raise ValueError(f"case ids must be unique; repeated: {duplicated[:5]}")
    if isinstance(responses, Mapping):
        known = set(ids)
        unknown = [cid for cid in responses if cid not in known]
        if unknown:
            raise ValueError(f"responses given for unknown case ids: {unknown[:5]}")
        pairs = {cid: responses.get(cid) for cid in ids}
    else:
        if len(responses) != len(cases):
            raise ValueError(
                f"got {len(responses)} responses for {len(cases)} cases; pass a sequence "
                "aligned with the cases or a mapping {case id: response}"
            )
        pairs = dict(zip(ids, responses, strict=True))
    aligned: dict[str, QueryResponse] = {}
    for cid, response in pairs.items():
        if response is None:
            continue
        if not isinstance(response, QueryResponse):
            response = QueryResponse.model_validate(response)
        aligned[cid] = response
    return aligned


def _summarize(
    name: str,
    case_scores: list[EvaluationScore],
    *,
    failed: int,
    missing: int,
) -> MetricSummary:
    scored = [score for score in case_scores if not score.skipped]
    skipped = len(case_scores) - len(scored)
    values = [score.value for score in scored]
    passes = [score.passed for score in scored if score.passed is not None]
    pass_rate = sum(passes) / len(passes) if passes else None
    common = {
        "name": name,
        "scored": len(scored),
        "skipped": skipped,
        "failed": failed,
        "missing": missing,
        "partial": failed > 0 or missing > 0,
        "pass_rate": pass_rate,
    }
    if not values:
        return MetricSummary(kind="empty", value=None, **common)
    if all(isinstance(value, bool) for value in values):
        rate = sum(values) / len(values)  # type: ignore[arg-type]
        return MetricSummary(kind="boolean", value=rate, mean=rate, **{**common, "pass_rate": rate})
    if all(isinstance(value, (int, float)) for value in values):
        total = 0.0
        for value in values:
            total += float(value)  # type: ignore[arg-type]
        mean = total / len(values)
        return MetricSummary(kind="numeric", value=mean, mean=mean, **common)
    counts = Counter(str(value) for value in values)
    return MetricSummary(kind="categorical", value=None, counts=dict(counts), **common)


def summarize_scores(
    evaluators: Sequence[BenchmarkEvaluatorProtocol],
    cases: Sequence[BenchmarkCase],
    scores: Mapping[str, Mapping[str, EvaluationScore]],
    failures: Sequence[EvaluationFailure] = (),
    *,
    responded: Iterable[str] | None = None,
) -> dict[str, MetricSummary]:
    """Aggregate per-case scores (``{case id: {evaluator name: score}}``) per evaluator.

    ``responded`` lists the cases that got a response (default: those with any score);
    the others count as *missing*. The benchmark runner aggregates through this function.
    """
    judged_scores = [
        scores[case.id] for case in cases if case.expected.relevance and case.id in scores
    ]

    def retrieval_values(name: str) -> list[float]:
        return [
            score.value  # type: ignore[misc]
            for score in map(methodcaller("get", name), judged_scores)
            if score is not None and not score.skipped
        ]

    answered = set(responded) if responded is not None else set(scores)
    return _summaries(evaluators, cases, scores, failures, answered, retrieval_values)


def _summaries(
    evaluators: Sequence[BenchmarkEvaluatorProtocol],
    cases: Sequence[BenchmarkCase],
    scores: Mapping[str, Mapping[str, EvaluationScore]],
    failures: Sequence[EvaluationFailure],
    answered: set[str] | Mapping[str, Any],
    retrieval_values: Callable[[str], list[float]],
) -> dict[str, MetricSummary]:
    failed_per_evaluator = Counter(failure.evaluator for failure in failures)
    judged = sum(1 for case in cases if case.expected.relevance)
    missing = sum(1 for case in cases if case.id not in answered)
    summaries: dict[str, MetricSummary] = {}
    for evaluator in evaluators:
        name = evaluator.name
        failed = failed_per_evaluator[name]
        if isinstance(evaluator, BeirRetrievalMetric):
            summaries[name] = retrieval_summary(
                evaluator,
                judged,
                retrieval_values(name),
                skipped=len(cases) - judged,
                failed=failed,
            )
            continue
        case_scores = [scores[case.id][name] for case in cases if name in scores.get(case.id, {})]
        summaries[name] = _summarize(name, case_scores, failed=failed, missing=missing)
    return summaries


async def aevaluate_responses(
    cases: Iterable[BenchmarkCase],
    responses: Mapping[str, QueryResponse | None] | Sequence[QueryResponse | None],
    evaluators: Iterable[BenchmarkEvaluatorProtocol],
    *,
    concurrency: int = 16,
    timeout: float | None = None,
) -> EvaluationReport:
    """Async :func:`evaluate_responses`."""
    cases = [c if isinstance(c, BenchmarkCase) else BenchmarkCase.model_validate(c) for c in cases]
    evaluators = list(evaluators)
    names = [evaluator.name for evaluator in evaluators]
    repeated = [name for name, n in Counter(names).items() if n > 1]
    if repeated:
        raise ValueError(f"evaluator names must be unique; repeated: {repeated}")
    aligned = _align(cases, responses)

    retrieval = [e for e in evaluators if isinstance(e, BeirRetrievalMetric)]
    others = [e for e in evaluators if not isinstance(e, BeirRetrievalMetric)]
    with paused_gc():
        retrieval_scores = _score_retrieval(retrieval, cases, aligned)
    other_scores: dict[str, dict[str, EvaluationScore]] = defaultdict(dict)
    failures: list[EvaluationFailure] = []
    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def run_one(
        evaluator: BenchmarkEvaluatorProtocol, case: BenchmarkCase, response: QueryResponse
    ) -> EvaluationScore | EvaluationFailure:
        async with semaphore:
            return await score_case(evaluator, case, response, timeout=timeout)

    pending = [case for case in cases if case.id in aligned]
    for evaluator in others:
        outcomes = await asyncio.gather(*(run_one(evaluator, c, aligned[c.id]) for c in pending))
        for case, outcome in zip(pending, outcomes, strict=True):
            if isinstance(outcome, EvaluationFailure):
                failures.append(outcome)
            else:
                other_scores[case.id][evaluator.name] = outcome

    def all_scores() -> dict[str, dict[str, EvaluationScore]]:
        # Retrieval scores first, then the others, each case's in evaluator-group order.
        merged = retrieval_scores.materialize()
        for case_id, case_scores in other_scores.items():
            merged[case_id].update(case_scores)
        return {case.id: merged[case.id] for case in cases if case.id in merged}

    with paused_gc():
        metrics = _summaries(
            evaluators, cases, other_scores, failures, aligned, retrieval_scores.values
        )
        return EvaluationReport(
            metrics=metrics,
            scores=ScoreTable(all_scores),
            failures=failures,
            cases=len(cases),
            responses=len(aligned),
        )


async def score_case(
    evaluator: BenchmarkEvaluatorProtocol,
    case: BenchmarkCase,
    response: QueryResponse,
    *,
    timeout: float | None = None,
) -> EvaluationScore | EvaluationFailure:
    """Run one evaluator on one case; an exception or timeout becomes an EvaluationFailure."""
    try:
        outcome = evaluator.evaluate(case=case, response=response)
        # A plain (non-async) evaluate is accepted too: its result is used as is.
        result = (
            await asyncio.wait_for(outcome, timeout) if inspect.isawaitable(outcome) else outcome
        )
    except asyncio.TimeoutError:
        return EvaluationFailure(
            case_id=case.id, evaluator=evaluator.name, error=f"timed out after {timeout}s"
        )
    except Exception as error:  # any evaluator bug is recorded against its case
        return EvaluationFailure(
            case_id=case.id, evaluator=evaluator.name, error=f"{type(error).__name__}: {error}"
        )
    if isinstance(result, EvaluationScore):
        return result
    try:
        return EvaluationScore.model_validate(result)
    except Exception as error:
        return EvaluationFailure(
            case_id=case.id,
            evaluator=evaluator.name,
            error=f"returned {type(result).__name__}, not an EvaluationScore: {error}",
        )


def evaluate_responses(
    cases: Iterable[BenchmarkCase],
    responses: Mapping[str, QueryResponse | None] | Sequence[QueryResponse | None],
    evaluators: Iterable[BenchmarkEvaluatorProtocol],
    *,
    concurrency: int = 16,
    timeout: float | None = None,
) -> EvaluationReport:
    """Score responses to cases with evaluators and aggregate the scores.

    ``responses`` is a mapping ``{case id: QueryResponse}`` (a case without a response, e.g.
    a failed query, is *missing*: BEIR's mean drops it, the strict mean counts it as 0) or a
    sequence aligned with ``cases``. Plain dicts are validated into models. Safe to call
    where an event loop is already running (a notebook): it then runs in a worker thread.

    >>> from heta_eval.evaluation import beir_default_metrics
    >>> cases = [BenchmarkCase(id="q1", query="?", expected={"relevance": {"d1": 1}})]
    >>> responses = {"q1": {"query": "?", "results": [
    ...     {"score": 2.0, "source": {"document_id": "d2"}},
    ...     {"score": 1.0, "source": {"document_id": "d1"}}]}}
    >>> report = evaluate_responses(cases, responses, beir_default_metrics())
    >>> report.metrics["ndcg@10"].beir, report.metrics["mrr@10"].beir
    (0.63093, 0.5)
    """
    coroutine = aevaluate_responses(
        cases, responses, evaluators, concurrency=concurrency, timeout=timeout
    )
    return run_sync(coroutine)
