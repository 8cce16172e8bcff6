"""A run's summary, assembled from its records: per mode the aggregates (a failed query counts
as 0 in the headline), counts, failure reasons and timings; the warnings about its inputs and
replies; what an earlier invocation into the same folder built and timed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from heta_eval import __version__
from heta_eval.measures.averaging import combine, round5
from heta_eval.models.document_id import DOCUMENT_ID_FIELDS_HELP
from heta_eval.models.protocol import BenchmarkEvaluatorProtocol
from heta_eval.models.records import BenchmarkCase
from heta_eval.models.report import MetricSummary
from heta_eval.rag.aggregate import summarize_scores
from heta_eval.rag.answers import AnswerContains, AnswerExactMatch, AnswerF1
from heta_eval.rag.evidence import EvidenceRecallAtK
from heta_eval.runner.benchmark import Benchmark
from heta_eval.runner.checks import LISTED, DocumentScan, dangling_judgments
from heta_eval.runner.plan import RunPlan
from heta_eval.runner.results import ModeSummary, QueryRecord, RunSummary, latency_summary
from heta_eval.runner.slicing import summarize_slices
from heta_eval.systems.protocol import member

__all__ = [
    "LOCAL_EXECUTOR",
    "BuildRecord",
    "assemble_summary",
    "earlier_wall_seconds",
    "input_warnings",
    "previous_summary",
]

#: What the summary records for a run without an executor (no ``--ray``).
LOCAL_EXECUTOR: dict[str, Any] = {"kind": "local", "nodes": 1, "workers": 1, "gpus": 0}


@dataclass
class BuildRecord:
    """How the knowledge base was built: its build info, seconds and executor (an earlier
    invocation's when this one built nothing)."""

    info: dict[str, Any] = field(default_factory=dict)
    seconds: float | None = None
    executor: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def earlier(cls, previous: RunSummary | None) -> BuildRecord:
        if previous is None:
            return cls()
        return cls(dict(previous.build), previous.timings.get("build_s"), dict(previous.executor))

    @classmethod
    def now(cls, kb: Any, seconds: float, executor: Any) -> BuildRecord:
        described = executor.describe() if executor is not None else dict(LOCAL_EXECUTOR)
        return cls(dict(member(kb, "build_info")), seconds, described)

    @classmethod
    def given(cls, kb: Any, earlier: BuildRecord) -> BuildRecord:
        """A knowledge base the caller built: what it says it is (``build_info``: an
        integration's library, version, class and settings), else the earlier record."""
        info = member(kb, "build_info")
        return cls(dict(info), earlier.seconds, earlier.executor) if info else earlier


def previous_summary(folder: Path | None) -> RunSummary | None:
    """The summary an earlier invocation wrote into ``folder``, if readable."""
    if folder is None or not (folder / "summary.json").exists():
        return None
    try:
        return RunSummary.model_validate_json((folder / "summary.json").read_text("utf-8"))
    except ValueError:
        return None  # unreadable: the journal still holds every finished case


def earlier_wall_seconds(previous: RunSummary | None, mode: str) -> float | None:
    """The seconds an earlier invocation spent on ``mode``'s queries."""
    if previous is None or mode not in previous.modes:
        return None
    return previous.modes[mode].timings.get("wall_s")


def assemble_summary(
    plan: RunPlan,
    scan: DocumentScan,
    all_modes: Sequence[str],
    records: dict[tuple[str, str], QueryRecord],
    mode_seconds: dict[str, float],
    previous: RunSummary | None,
    build: BuildRecord,
    warnings: list[str],
    slices: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[RunSummary, list[QueryRecord]]:
    """The summary and the records in report order (mode by mode, cases in order).

    ``all_modes``: every mode the results folder holds; a folder extended with more modes
    reports all of them. ``slices``: ``{field: {case id: slice}}`` to summarize per slice.
    """
    benchmark = plan.benchmark
    summarized = [m for m in all_modes if m in plan.modes or any(k[1] == m for k in records)]
    ordered = [records[(c.id, m)] for m in summarized for c in plan.cases if (c.id, m) in records]
    seconds = dict(mode_seconds)
    for mode in summarized:
        if mode not in seconds and previous and mode in previous.modes:
            seconds[mode] = earlier_wall_seconds(previous, mode) or 0.0
    modes = {
        mode: summarize_mode(mode, plan.cases, plan.evaluators, records, seconds.get(mode))
        for mode in summarized
    }
    # What spending evaluators (an LLM judge) report, added to a resumed run's earlier totals.
    usage = {
        e.name: e.usage_report(previous.usage.get(e.name) if previous else None)
        for e in plan.evaluators
        if callable(getattr(e, "usage_report", None))
    }
    summary = RunSummary(
        benchmark=benchmark.name,
        knowledge_base=plan.knowledge_base_name,
        system=plan.system,
        documents=scan.fingerprint,
        recipe=plan.recipe_dump(),
        evaluators=plan.names,
        top_k=plan.top_k,
        top_k_requested=plan.top_k_requested,
        modes=modes,
        timings={"build_s": build.seconds},
        build=build.info,
        checks=_input_counts(benchmark, plan.cases, scan),
        warnings=warnings + _reply_warnings(modes),
        executor=build.executor,
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        heta_eval_version=__version__,
        usage=usage,
        data=dict(getattr(benchmark, "data_record", None) or {}),
        slices=summarize_slices(slices or {}, summarized, records),
    )
    return summary, ordered


def summarize_mode(
    mode: str,
    cases: Sequence[BenchmarkCase],
    evaluators: Sequence[BenchmarkEvaluatorProtocol],
    records: dict[tuple[str, str], QueryRecord],
    wall_seconds: float | None,
) -> ModeSummary:
    """One mode's aggregates, counts and timings."""
    mine = [records[(c.id, mode)] for c in cases if (c.id, mode) in records]
    answered = [r for r in mine if r.ok]
    failures = [f for r in answered for f in r.failures]
    metrics = summarize_scores(
        evaluators,
        cases,
        {r.case_id: r.scores for r in answered},
        failures,
        responded=[r.case_id for r in answered],
    )
    failed_queries = len(mine) - len(answered)
    answered_only: dict[str, float | None] = {}
    if len(answered) < len(cases):
        metrics, answered_only = _count_failed_queries(evaluators, cases, answered, metrics)
    timings: dict[str, float | None] = {
        **latency_summary([r.latency_ms for r in answered if r.latency_ms is not None]),
        # A sum over cases scored concurrently: CPU-ish work, not elapsed time.
        "evaluation_summed_s": round(sum(r.evaluation_ms or 0.0 for r in answered) / 1000, 3),
        "wall_s": wall_seconds,
    }
    reasons = Counter(_reason(r.error, r.query) for r in mine if r.error is not None)
    return ModeSummary(
        mode=mode,
        metrics=metrics,
        answered_only=answered_only,
        cases=len(cases),
        answered=len(answered),
        failed_queries=failed_queries,
        failure_reasons=dict(reasons.most_common()),
        evaluator_failures=len(failures),
        results=sum(r.results for r in answered),
        unmapped_results=sum(r.unmapped_results for r in answered),
        partial=len(answered) < len(cases) or any(m.partial for m in metrics.values()),
        timings=timings,
    )


def _count_failed_queries(
    evaluators: Sequence[BenchmarkEvaluatorProtocol],
    cases: Sequence[BenchmarkCase],
    answered: Sequence[QueryRecord],
    metrics: dict[str, MetricSummary],
) -> tuple[dict[str, MetricSummary], dict[str, float | None]]:
    """The headline of a run with failed queries counts each as 0 (for retrieval metrics
    the strict aggregate, trec_eval -c); the mean over answered cases is kept beside it.

    A failed query is the system's failure, not a query the dataset lacks, so it must not
    lift the headline above the complete run's.
    """
    by_case = {r.case_id: r for r in answered}
    headline: dict[str, MetricSummary] = {}
    answered_only: dict[str, float | None] = {}
    for evaluator in evaluators:
        name = evaluator.name
        summary = metrics[name]
        values = [
            float(score.value)  # type: ignore[arg-type]
            for case in cases
            if (record := by_case.get(case.id)) is not None
            and (score := record.scores.get(name)) is not None
            and not score.skipped
            and isinstance(score.value, (bool, int, float))
        ]
        answered_only[name] = round5(combine("mean", values))
        if summary.kind == "retrieval":
            value = summary.strict
        elif summary.kind in ("numeric", "boolean"):
            unanswered = sum(
                1 for case in cases if case.id not in by_case and _applies(evaluator, case)
            )
            value = combine("mean", values, [0.0] * unanswered)
        else:
            headline[name] = summary
            continue
        headline[name] = summary.model_copy(update={"value": value})
    return headline, answered_only


def _applies(evaluator: BenchmarkEvaluatorProtocol, case: BenchmarkCase) -> bool:
    # Would the evaluator have scored this case (rather than skipped it) had it been answered?
    if isinstance(evaluator, EvidenceRecallAtK):
        return bool(case.expected.evidence)
    if isinstance(evaluator, (AnswerContains, AnswerExactMatch, AnswerF1)):
        return bool(case.expected.answers)
    return True


def _reason(error: str, query: str) -> str:
    """A failure message without its query text, so equal causes group together."""
    first = error.splitlines()[0] if error else error
    return first.replace(repr(query), "<query>").replace(query, "<query>")[:200]


def _skipped_files(benchmark: Benchmark) -> list[str]:
    return [str(p) for p in getattr(benchmark, "skipped_files", None) or ()]


def input_warnings(
    benchmark: Benchmark, cases: Sequence[BenchmarkCase], scan: DocumentScan
) -> list[str]:
    """Judgments naming no document, and files of a documents folder that were skipped."""
    warnings = []
    dangling = dangling_judgments(cases, scan.ids)
    for case_id, doc_id in dangling[:LISTED]:
        warnings.append(
            f"case {case_id!r} judges document {doc_id!r}, which is not among the "
            f"{len(scan.ids)} documents: it can never be retrieved (a typo?)"
        )
    if len(dangling) > LISTED:
        warnings.append(f"... {len(dangling) - LISTED} more judgments name no document")
    skipped = _skipped_files(benchmark)
    if skipped:
        shown = ", ".join(skipped[:LISTED]) + (" ..." if len(skipped) > LISTED else "")
        warnings.append(
            f"{len(skipped)} files in the documents folder were skipped (only .txt and .md "
            f"are read): {shown}"
        )
    return warnings


def _input_counts(
    benchmark: Benchmark, cases: Sequence[BenchmarkCase], scan: DocumentScan
) -> dict[str, int]:
    return {
        "documents": len(scan.ids),
        "judgments_naming_no_document": len(dangling_judgments(cases, scan.ids)),
        "skipped_files": len(_skipped_files(benchmark)),
    }


def _reply_warnings(modes: dict[str, ModeSummary]) -> list[str]:
    warnings = []
    for mode, summary in modes.items():
        if summary.results and summary.unmapped_results * 2 > summary.results:
            warnings.append(
                f"{mode}: {summary.unmapped_results} of {summary.results} results map to no "
                f"document, so they score 0; each result must name its document in "
                f"{DOCUMENT_ID_FIELDS_HELP}; see docs/runs.md"
            )
    return warnings
