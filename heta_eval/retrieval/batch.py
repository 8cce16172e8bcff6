"""Retrieval metrics of many responses in one batch: one collapse and one evaluator pass
per document mapping, through the provider :func:`~heta_eval.providers.backends.choose_provider`
picks; ``evaluate_responses`` and the benchmark runner score through here."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from heta_eval._runtime import construct_valid, paused_gc
from heta_eval.io.validate import validate_qrels
from heta_eval.measures.averaging import beir_denominator, summarise
from heta_eval.measures.measure import BEIR_METRICS
from heta_eval.models.records import BenchmarkCase, EvaluationScore, QueryResponse
from heta_eval.models.report import MetricSummary
from heta_eval.providers.backends import choose_provider, large_run
from heta_eval.providers.compiled import COMPILED
from heta_eval.retrieval.collapse import DocumentRanking, collapse_batch
from heta_eval.retrieval.columnar_run import validate_columnar
from heta_eval.retrieval.metric import BeirRetrievalMetric
from heta_eval.retrieval.plan import validate_k_values
from heta_eval.retrieval.run import evaluate_run

__all__ = ["retrieval_summary", "score_retrieval_batch"]


def score_retrieval_batch(
    metrics: Sequence[BeirRetrievalMetric],
    cases: Sequence[BenchmarkCase],
    responses: Mapping[str, QueryResponse],
    *,
    engine: str = "auto",
) -> dict[str, dict[str, EvaluationScore]]:
    """Per-case scores of all retrieval metrics, one engine pass per document mapping.

    ``engine``: ``"pytrec"`` (per-response collapse, then pytrec_eval), ``"fast"`` (a batch
    collapse into arrays and the compiled engine; identical numbers), or ``"auto"`` (the
    engine from :data:`~heta_eval.providers.backends.ENGINE_MIN_ROWS` results on).
    """
    return _score_retrieval(metrics, cases, responses, engine=engine).materialize()


class _RetrievalScores:
    """Retrieval scores before their ``EvaluationScore`` objects exist.

    ``values(name)`` gives a metric's values over the scored cases in case order (what the
    aggregates need); ``materialize()`` builds the per-case score dicts, group by group.
    """

    def __init__(self) -> None:
        self.fills: list[Callable[[dict[str, dict[str, EvaluationScore]]], None]] = []
        self.values_of: dict[str, Callable[[], list[float]]] = {}

    def values(self, name: str) -> list[float]:
        return self.values_of[name]()

    def materialize(self) -> dict[str, dict[str, EvaluationScore]]:
        scores: dict[str, dict[str, EvaluationScore]] = defaultdict(dict)
        with paused_gc():
            for fill in self.fills:
                fill(scores)
        return scores


def _score_retrieval(
    metrics: Sequence[BeirRetrievalMetric],
    cases: Sequence[BenchmarkCase],
    responses: Mapping[str, QueryResponse],
    *,
    engine: str = "auto",
) -> _RetrievalScores:
    # Validated once, before the backend is chosen; both backends get the same input.
    judged = [case for case in cases if case.expected.relevance]
    qrels = validate_qrels({case.id: case.expected.relevance for case in judged})
    total = sum(len(response.results) for response in responses.values())
    provider = choose_provider(engine, [m.measure for m in metrics], large=large_run(total))
    out = _RetrievalScores()
    groups: dict[tuple[Any, ...], list[BeirRetrievalMetric]] = defaultdict(list)
    for metric in metrics:
        groups[metric.config].append(metric)
    unjudged = [case.id for case in cases if not case.expected.relevance]
    for group in groups.values():
        out.fills.append(_skip_fill(group, unjudged))
        if provider.columnar:
            _score_group_fast(group, judged, qrels, responses, out)
        else:
            _score_group_pytrec(group, judged, qrels, responses, out)
    return out


def _skip_fill(
    group: Sequence[BeirRetrievalMetric], unjudged: list[str]
) -> Callable[[dict[str, dict[str, EvaluationScore]]], None]:
    def fill(scores: dict[str, dict[str, EvaluationScore]]) -> None:
        for case_id in unjudged:
            for metric in group:
                scores[case_id][metric.name] = EvaluationScore.skip(
                    metric.name, "case has no relevance judgments"
                )

    return fill


def _score_group_pytrec(
    group: Sequence[BeirRetrievalMetric],
    judged: Sequence[BenchmarkCase],
    qrels: dict[str, dict[str, int]],
    responses: Mapping[str, QueryResponse],
    out: _RetrievalScores,
) -> None:
    """Per-response collapse, then one pytrec_eval pass (small batches)."""
    collapser = group[0]
    rankings: dict[str, DocumentRanking] = {}
    for case in judged:
        response = responses.get(case.id)
        if response is not None:
            rankings[case.id] = collapser.collapse(case, response)
    run = {cid: ranking.scores for cid, ranking in rankings.items()}
    k_values = sorted({m.k for m in group})
    names = [name for name in BEIR_METRICS if any(m.metric == name for m in group)]
    evaluation = evaluate_run(
        qrels, run, k_values, metrics=names, ignore_identical_ids=False, engine="pytrec"
    )
    scored = [case.id for case in judged if case.id in rankings]
    for metric in group:
        column = [evaluation.per_query[case_id][metric.key] for case_id in scored]
        out.values_of[metric.name] = column.copy

    def fill(scores: dict[str, dict[str, EvaluationScore]]) -> None:
        for case_id in scored:
            for metric in group:
                value = evaluation.per_query[case_id][metric.key]
                scores[case_id][metric.name] = metric.score_from(value, rankings[case_id])

    out.fills.append(fill)


def _fast_score(name: str, value: float, metadata: dict[str, Any]) -> EvaluationScore:
    # What EvaluationScore(name=..., value=float, metadata=dict) builds, without validating
    # already-valid values (see construct_valid: pydantic's model_construct is slower).
    fields = {"name": name, "value": value, "passed": None, "metadata": metadata, "skipped": False}
    return construct_valid(EvaluationScore, fields, _FIELDS_GIVEN)


_FIELDS_GIVEN = frozenset({"name", "value", "metadata"})


def _score_group_fast(
    group: Sequence[BeirRetrievalMetric],
    judged: Sequence[BenchmarkCase],
    qrels: dict[str, dict[str, int]],
    responses: Mapping[str, QueryResponse],
    out: _RetrievalScores,
) -> None:
    """One batch collapse and one engine pass for metrics sharing a document mapping."""
    config = group[0]
    answered = [case for case in judged if case.id in responses]
    with paused_gc():
        batch = collapse_batch(
            ((case.id, responses[case.id]) for case in answered),
            resolver=config.resolver,
            ignore_identical_ids=config.ignore_identical_ids,
        )
        validate_columnar(batch.run)
        validate_k_values(m.k for m in group)
        table = COMPILED.table(qrels, batch.run, [m.measure for m in group])
    values, stats = table.values, table.stats
    columns = [(metric.name, table.columns[metric.measure]) for metric in group]
    for name, column in columns:
        out.values_of[name] = values[:, column].tolist

    def fill(scores: dict[str, dict[str, EvaluationScore]]) -> None:
        _fill_scores(answered, values.tolist(), stats.tolist(), batch, columns, scores)

    out.fills.append(fill)


def _fill_scores(
    answered: Sequence[BenchmarkCase],
    rows: list[list[float]],
    stat_rows: list[list[int]],
    batch: Any,
    columns: list[tuple[str, int]],
    scores: dict[str, dict[str, EvaluationScore]],
) -> None:
    for i, case in enumerate(answered):
        row = rows[i]
        base = {
            "documents": stat_rows[i][0],
            "unmapped_results": batch.unmapped[i],
            "duplicate_chunks": batch.duplicates[i],
            "self_hits_removed": batch.self_hits[i],
            "rank_derived_scores": bool(stat_rows[i][3]),
        }
        case_scores = scores[case.id]
        for name, column in columns:
            case_scores[name] = _fast_score(name, row[column], dict(base))


def retrieval_summary(
    metric: BeirRetrievalMetric,
    judged: int,
    values: Sequence[float],
    *,
    skipped: int,
    failed: int,
) -> MetricSummary:
    """``values``: the metric's values on the judged cases that have one, in case order
    (= run order); averaged by :mod:`~heta_eval.measures.averaging`, so the numbers are
    ``evaluate_run``'s. A judged case without a value scores 0 in the strict mean."""
    evaluated = len(values)
    measure = metric.measure
    divisor = beir_denominator(measure, evaluated, judged)
    unscored = [measure.missing_value(0)] * (judged - evaluated)  # BEIR's families: 0
    aggregate = summarise(metric.name, measure, values, divisor, values, unscored)
    missing = judged - evaluated - failed
    return MetricSummary(
        name=metric.name,
        kind="retrieval",
        value=aggregate.beir,
        beir=aggregate.beir,
        beir_unrounded=aggregate.beir_unrounded,
        strict=aggregate.strict,
        strict_unrounded=aggregate.strict_unrounded,
        scored=evaluated,
        skipped=skipped,
        failed=failed,
        missing=missing,
        partial=missing > 0 or failed > 0,
    )
