"""Score collected responses and aggregate them, without a knowledge base.

``evaluate_responses(cases, responses, evaluators)`` is the one aggregation function of the
project; the benchmark runner calls it too. Retrieval metrics (``BeirRetrievalMetric``) are
scored together in one pytrec_eval pass and aggregated the BEIR way and the strict way;
other evaluators run per case with bounded concurrency and are aggregated by the type of
their values: means for numbers, pass rates for booleans, counts for strings.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from operator import methodcaller
from typing import Any, Literal

from pydantic import BaseModel, Field, GetCoreSchemaHandler
from pydantic_core import core_schema

from .models import BenchmarkCase, EvaluationScore, QueryResponse
from .protocol import BenchmarkEvaluatorProtocol
from .retrieval import METRICS, BeirRetrievalMetric, DocumentRanking, evaluate_run

__all__ = [
    "AUTO_ENGINE_RESULTS",
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


class MetricSummary(BaseModel):
    """One evaluator's aggregate over the cases.

    ``value`` is the headline number: the BEIR mean (rounded to 5 decimals) for retrieval
    metrics, the mean for numeric scores, the pass rate for booleans, None for strings
    (see ``counts``). ``partial`` is True when some case failed or had no response.
    """

    name: str
    kind: Literal["retrieval", "numeric", "boolean", "categorical", "empty"]
    value: float | None
    beir: float | None = None
    beir_unrounded: float | None = None
    strict: float | None = None
    strict_unrounded: float | None = None
    mean: float | None = None
    pass_rate: float | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    scored: int = 0
    skipped: int = 0
    failed: int = 0
    missing: int = 0
    partial: bool = False


class EvaluationFailure(BaseModel):
    """An evaluator that raised or timed out on one case."""

    case_id: str
    evaluator: str
    error: str


class ScoreTable(Mapping[str, dict[str, EvaluationScore]]):
    """Per-case scores, ``{case id: {evaluator name: EvaluationScore}}``, built on first read.

    At MS MARCO size the retrieval metrics alone give 175k per-case scores (7k cases x 25
    metrics); building them costs more than computing them, so a report keeps the metric
    arrays and builds the score objects only when someone reads them (all at once, then
    kept). Behaves as a read-only mapping; serializes as a plain dict.

    >>> table = ScoreTable(lambda: {"q1": {}})
    >>> list(table), table == {"q1": {}}
    (['q1'], True)
    """

    __slots__ = ("_build", "_data")

    def __init__(
        self,
        data: Mapping[str, dict[str, EvaluationScore]]
        | Callable[[], dict[str, dict[str, EvaluationScore]]]
        | None = None,
    ) -> None:
        self._build = data if callable(data) else None
        self._data: dict[str, dict[str, EvaluationScore]] | None = (
            None if callable(data) else dict(data or {})
        )

    def _scores(self) -> dict[str, dict[str, EvaluationScore]]:
        if self._data is None:
            assert self._build is not None
            with paused_collector():
                self._data = self._build()
            self._build = None
        return self._data

    def __getitem__(self, case_id: str) -> dict[str, EvaluationScore]:
        return self._scores()[case_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._scores())

    def __len__(self) -> int:
        return len(self._scores())

    def __repr__(self) -> str:
        return f"ScoreTable({self._scores()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ScoreTable, (self._scores(),))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> Any:
        plain = handler.generate_schema(dict[str, dict[str, EvaluationScore]])

        def validate(value: Any, inner: Any) -> ScoreTable:
            return value if isinstance(value, ScoreTable) else cls(inner(value))

        def serialize(value: Any, inner: Any) -> Any:
            return inner(value._scores() if isinstance(value, ScoreTable) else value)

        return core_schema.no_info_wrap_validator_function(
            validate,
            plain,
            serialization=core_schema.wrap_serializer_function_ser_schema(serialize, schema=plain),
        )


class EvaluationReport(BaseModel):
    """Aggregates per evaluator, every per-case score (see :class:`ScoreTable`), and the
    failures."""

    metrics: dict[str, MetricSummary]
    scores: ScoreTable = Field(default_factory=ScoreTable)
    failures: list[EvaluationFailure] = Field(default_factory=list)
    cases: int = 0
    responses: int = 0

    @property
    def partial(self) -> bool:
        return any(summary.partial for summary in self.metrics.values())

    def table(self) -> str:
        """A markdown table of the aggregates."""
        lines = [
            "| evaluator | value | BEIR | strict | scored | skipped | failed | missing |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for s in self.metrics.values():
            value = _fmt(s.value) if s.kind != "categorical" else _fmt_counts(s.counts)
            lines.append(
                f"| {s.name}{' (partial)' if s.partial else ''} | {value} | {_fmt(s.beir)} | "
                f"{_fmt(s.strict)} | {s.scored} | {s.skipped} | {s.failed} | {s.missing} |"
            )
        return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.5f}"


def _fmt_counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{key}: {count}" for key, count in counts.items()) or "–"


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


#: Batches with at least this many results use the compiled engine under ``engine="auto"``.
AUTO_ENGINE_RESULTS = 100_000


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
    engine from ``AUTO_ENGINE_RESULTS`` results on, when numba is available).
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
        with paused_collector():
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
    if engine not in ("auto", "pytrec", "fast"):
        raise ValueError(f"engine must be 'auto', 'pytrec' or 'fast', got {engine!r}")
    if engine == "auto":
        from .engine import HAVE_NUMBA

        total = sum(len(response.results) for response in responses.values())
        engine = "fast" if HAVE_NUMBA and total >= AUTO_ENGINE_RESULTS else "pytrec"
    out = _RetrievalScores()
    groups: dict[tuple[Any, ...], list[BeirRetrievalMetric]] = defaultdict(list)
    for metric in metrics:
        groups[metric.config].append(metric)
    judged = [case for case in cases if case.expected.relevance]
    unjudged = [case.id for case in cases if not case.expected.relevance]
    for group in groups.values():
        out.fills.append(_skip_fill(group, unjudged))
        if engine == "fast":
            _score_group_fast(group, judged, responses, out)
        else:
            _score_group_pytrec(group, judged, responses, out)
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
    responses: Mapping[str, QueryResponse],
    out: _RetrievalScores,
) -> None:
    """Per-response collapse, then one pytrec_eval pass (small batches)."""
    collapser = group[0]
    qrels = {case.id: case.expected.relevance for case in judged}
    rankings: dict[str, DocumentRanking] = {}
    for case in judged:
        response = responses.get(case.id)
        if response is not None:
            rankings[case.id] = collapser.collapse(case, response)
    run = {cid: ranking.scores for cid, ranking in rankings.items()}
    k_values = sorted({m.k for m in group})
    names = [name for name in METRICS if any(m.metric == name for m in group)]
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


_new_object = object.__new__
_set = object.__setattr__
_FIELDS_GIVEN = frozenset({"name", "value", "metadata"})


def _fast_score(name: str, value: float, metadata: dict[str, Any]) -> EvaluationScore:
    # What EvaluationScore(name=..., value=float, metadata=dict) builds, without validating
    # already-valid values: 175k scores (7k cases x 25 metrics) cost 0.1 s instead of 0.4 s.
    score = _new_object(EvaluationScore)
    _set(
        score,
        "__dict__",
        {"name": name, "value": value, "passed": None, "metadata": metadata, "skipped": False},
    )
    _set(score, "__pydantic_fields_set__", set(_FIELDS_GIVEN))
    _set(score, "__pydantic_extra__", None)
    _set(score, "__pydantic_private__", None)
    return score


def _score_group_fast(
    group: Sequence[BeirRetrievalMetric],
    judged: Sequence[BenchmarkCase],
    responses: Mapping[str, QueryResponse],
    out: _RetrievalScores,
) -> None:
    """One batch collapse and one engine pass for metrics sharing a document mapping."""
    from .engine import METRIC_ORDER, evaluate_columnar
    from .retrieval import _validate_k_values, collapse_batch

    config = group[0]
    answered = [case for case in judged if case.id in responses]
    with paused_collector():
        batch = collapse_batch(
            ((case.id, responses[case.id]) for case in answered),
            resolver=config.resolver,
            ignore_identical_ids=config.ignore_identical_ids,
        )
        qrels = {case.id: case.expected.relevance for case in answered}
        ks = _validate_k_values(m.k for m in group)
        values, stats = evaluate_columnar(batch.run, qrels, ks)
    nk = len(ks)
    columns = [
        (metric.name, METRIC_ORDER.index(metric.metric) * nk + ks.index(metric.k))
        for metric in group
    ]
    for name, column in columns:
        out.values_of[name] = values[:, column].tolist

    def fill(scores: dict[str, dict[str, EvaluationScore]]) -> None:
        _fill_scores(answered, values.tolist(), stats.tolist(), batch, columns, scores)

    out.fills.append(fill)


@contextmanager
def paused_collector() -> Iterator[None]:
    """Pause the cyclic garbage collector while our own acyclic bookkeeping runs.

    With millions of chunk results alive, every full collection walks all of them (about a
    second each at MS MARCO size) although nothing allocated here forms a cycle. User
    evaluators never run inside this.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


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


def _retrieval_summary(
    metric: BeirRetrievalMetric,
    judged: int,
    values: Sequence[float],
    *,
    skipped: int,
    failed: int,
) -> MetricSummary:
    """``values``: the metric's values on the judged cases that have one, in case order."""
    # The same sums as evaluate_run, in case order (= run order), so the numbers are BEIR's:
    # evaluate() divides by the evaluated queries, BEIR's mrr by all judged queries; the
    # strict mean always by all judged queries.
    total = 0.0
    for value in values:  # a plain loop in case order: BEIR's summation, not sum()'s
        total += value
    evaluated = len(values)
    denominator = judged if metric.metric == "mrr" else evaluated
    beir = total / denominator if denominator else None
    strict = total / judged if judged else None
    missing = judged - evaluated - failed
    return MetricSummary(
        name=metric.name,
        kind="retrieval",
        value=None if beir is None else round(beir, 5),
        beir=None if beir is None else round(beir, 5),
        beir_unrounded=beir,
        strict=None if strict is None else round(strict, 5),
        strict_unrounded=strict,
        scored=evaluated,
        skipped=skipped,
        failed=failed,
        missing=missing,
        partial=missing > 0 or failed > 0,
    )


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
            summaries[name] = _retrieval_summary(
                evaluator, judged, retrieval_values(name),
                skipped=len(cases) - judged, failed=failed,
            )  # fmt: skip
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
    with paused_collector():
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

    with paused_collector():
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


def run_sync(coroutine: Any) -> Any:
    """Run a coroutine to completion, also from inside a running event loop."""
    outcome: dict[str, Any] = {}

    async def keep() -> None:
        # Python 3.11's asyncio.run reprs the finished task when restoring SIGINT (a
        # signal.getsignal bug): with a big report as the task's result that costs seconds.
        outcome["value"] = await coroutine

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(keep())
        return outcome["value"]

    def target() -> None:
        try:
            asyncio.run(keep())
        except BaseException as error:  # re-raised in the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=target, name="heta-eval-sync")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
