"""BenchmarkRunner: build (or reuse) a knowledge base, query every case in every mode, score
and aggregate, and keep every finished case on disk so an interrupted run resumes."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from heta_eval import __version__, interrupts
from heta_eval._runtime import run_sync
from heta_eval.evaluation import (
    AnswerContains,
    AnswerExactMatch,
    BeirRetrievalMetric,
    BenchmarkCase,
    EvidenceRecallAtK,
    QueryResponse,
)
from heta_eval.measures.averaging import combine, round5
from heta_eval.models.protocol import BenchmarkEvaluatorProtocol
from heta_eval.models.report import EvaluationFailure, MetricSummary
from heta_eval.rag.aggregate import score_case, summarize_scores
from heta_eval.rag.answers import AnswerF1
from heta_eval.retrieval.batch import score_retrieval_batch
from heta_eval.retrieval.collapse import collapse_to_documents
from heta_eval.runner.benchmark import Benchmark
from heta_eval.runner.checks import (
    LISTED,
    DocumentScan,
    dangling_judgments,
    name_documents,
    scan_documents,
    system_identity,
)
from heta_eval.runner.hits import chunk_hits
from heta_eval.runner.results import (
    BenchmarkResults,
    Journal,
    ModeSummary,
    QueryRecord,
    RunSummary,
    latency_summary,
)

__all__ = ["BenchmarkRunner", "RunConfigurationError"]


class RunConfigurationError(ValueError):
    """The run cannot start as asked (unknown mode, a results folder of another run, ...)."""


class BenchmarkRunner:
    """Runs a benchmark against a knowledge base built from a recipe (or one you pass).

    >>> from heta_eval.evaluation import Document, BenchmarkCase, beir_default_metrics
    >>> class Tiny:
    ...     name = "tiny"
    ...     def documents(self):
    ...         return [Document(id="cats", text="Cats purr and sleep."),
    ...                 Document(id="dogs", text="Dogs bark at the mail carrier.")]
    ...     def cases(self):
    ...         return [BenchmarkCase(id="q1", query="why do dogs bark",
    ...                               expected={"relevance": {"dogs": 1}})]
    ...     def evaluators(self): return beir_default_metrics(k_values=(1, 10))
    >>> from heta_eval.kb import Recipe
    >>> results = BenchmarkRunner(progress=False).run(
    ...     benchmark=Tiny(), recipe=Recipe(modes=["keyword_search"]),
    ...     knowledge_base_name="kb", query_modes=("keyword_search",), cache_dir=False)
    >>> results.metric("keyword_search", "ndcg@10").beir
    1.0
    """

    def __init__(
        self,
        *,
        top_k: int = 100,
        concurrency: int = 8,
        query_timeout: float | None = 120.0,
        evaluation_timeout: float | None = 300.0,
        progress: bool = True,
        executor: Any = None,
    ) -> None:
        if top_k < 1:
            raise ValueError(f"top_k must be positive, got {top_k}")
        self.top_k = top_k
        self.concurrency = max(1, concurrency)
        self.query_timeout = query_timeout
        self.evaluation_timeout = evaluation_timeout
        self.progress = progress
        #: Where recipes are built (``None``: here; a :class:`heta_eval.scale.RayExecutor`).
        self.executor = executor

    def run(
        self,
        *,
        benchmark: Benchmark,
        recipe: Any = None,
        knowledge_base_name: str = "kb",
        query_modes: Sequence[str] = ("vector_search",),
        evaluators: Sequence[BenchmarkEvaluatorProtocol] | None = None,
        knowledge_base: Any = None,
        output_dir: str | Path | None = None,
        cache_dir: str | Path | bool | None = None,
    ) -> BenchmarkResults:
        """Run synchronously; safe where an event loop is already running (a notebook).

        ``evaluators`` overrides the benchmark's own scoring policy. Pass either a
        ``recipe`` (the knowledge base is built, or reused from the cache) or a ready
        ``knowledge_base`` (e.g. an ``HttpKnowledgeBase``). With ``output_dir`` every
        finished case is kept on disk and a rerun continues where the last one stopped.
        Ctrl-C stops it at once (:mod:`heta_eval.interrupts`), also mid-encode.
        """
        coroutine = self.arun(
            benchmark=benchmark,
            recipe=recipe,
            knowledge_base_name=knowledge_base_name,
            query_modes=query_modes,
            evaluators=evaluators,
            knowledge_base=knowledge_base,
            output_dir=output_dir,
            cache_dir=cache_dir,
        )
        # Our handler, not asyncio's: asyncio's only cancels the task at its next await,
        # which a knowledge base being built (seconds to hours) never reaches.
        with interrupts.handled(hard=False):
            return run_sync(coroutine)

    async def arun(
        self,
        *,
        benchmark: Benchmark,
        recipe: Any = None,
        knowledge_base_name: str = "kb",
        query_modes: Sequence[str] = ("vector_search",),
        evaluators: Sequence[BenchmarkEvaluatorProtocol] | None = None,
        knowledge_base: Any = None,
        output_dir: str | Path | None = None,
        cache_dir: str | Path | bool | None = None,
    ) -> BenchmarkResults:
        """The async variant of :meth:`run`."""
        if recipe is None and knowledge_base is None:
            from heta_eval.kb import Recipe

            # A benchmark may say how its protocol builds the reference (BEIR: whole documents).
            default = getattr(benchmark, "recipe", None)
            recipe = default(query_modes) if default else Recipe(modes=list(query_modes))
        modes = tuple(dict.fromkeys(query_modes))
        if not modes:
            raise RunConfigurationError("query_modes is empty: name at least one mode")
        cases = list(benchmark.cases())
        chosen = tuple(evaluators) if evaluators is not None else tuple(benchmark.evaluators())
        names = [e.name for e in chosen]
        repeated = [n for n, count in Counter(names).items() if count > 1]
        if repeated:
            raise RunConfigurationError(f"evaluator names must be unique; repeated: {repeated}")
        retrieval = [e for e in chosen if isinstance(e, BeirRetrievalMetric)]
        # Every metric@k must see k documents, and one extra hit keeps a self-hit removed by
        # the metrics from costing a rank at k: the knowledge base is asked for
        # max(top_k, largest k) + 1 hits.
        top_k = max([self.top_k, *(m.k for m in retrieval)]) + 1

        # One pass over the documents: their content fingerprint (a rerun resumes only on
        # the same documents) and their ids (judgments and replies naming none are reported).
        self._say(f"reading the documents of {benchmark.name}")
        scan = scan_documents(benchmark.documents())
        warnings = _input_warnings(benchmark, cases, scan)
        for line in warnings:
            self._say(f"warning: {line}")
        # The data is not the dataset it is named after: said loudly, even without progress.
        data_warnings = list(getattr(benchmark, "warnings", None) or ())
        for line in data_warnings:
            print(f"warning: {line}", file=sys.stderr)
        warnings = data_warnings + warnings
        if top_k != self.top_k:
            self._say(
                f"note: asking the knowledge base for {top_k} hits per query, not top_k="
                f"{self.top_k}: the largest metric k is {top_k - 1} and one extra hit covers "
                "a removed self-hit"
            )

        folder = Path(output_dir) if output_dir is not None else None
        recipe_dump = recipe.model_dump(mode="json") if recipe is not None else None
        system = system_identity(recipe, knowledge_base, knowledge_base_name)
        # The recipe's modes only say which indexes to build: a folder of the same recipe
        # with other modes is the same system, extended.
        recipe_identity = {k: v for k, v in (recipe_dump or {}).items() if k != "modes"} or None
        journal = Journal(folder / "per_query.jsonl") if folder else None
        done: dict[tuple[str, str], QueryRecord] = {}
        all_modes = modes
        if folder is not None:
            all_modes = self._claim_folder(
                folder,
                {
                    "benchmark": benchmark.name,
                    "knowledge_base": knowledge_base_name,
                    "system": system,
                    "recipe": recipe_identity,
                    "evaluators": names,
                    "top_k": top_k,
                    "top_k_requested": self.top_k,
                    "cases": _fingerprint([c.model_dump_json() for c in cases]),
                    "documents": scan.fingerprint,
                },
                modes,
            )
            assert journal is not None
            # Finished cases of the modes asked are reused; other modes' records are kept.
            done = {key: r for key, r in journal.read().items() if r.ok or key[1] not in modes}
            _rescore_incomplete(done, cases, retrieval, names)

        pending = {mode: [case for case in cases if (case.id, mode) not in done] for mode in modes}
        # Timings of work an earlier invocation did are kept, not reset by a resumed run.
        previous = _previous_summary(folder)
        build_info: dict[str, Any] = dict(previous.build) if previous else {}
        build_seconds: float | None = previous.timings.get("build_s") if previous else None
        executor: dict[str, Any] = dict(previous.executor) if previous else {}
        kb = knowledge_base
        if kb is None and any(pending.values()):
            started = time.perf_counter()
            kb = recipe.build(
                knowledge_base_name,
                benchmark.documents(),
                cache_dir=None if cache_dir is True else cache_dir,
                progress=self.progress,
                fingerprint=scan.corpus,
                **({"executor": self.executor} if self.executor is not None else {}),
            )
            build_seconds = round(time.perf_counter() - started, 3)
            build_info = dict(getattr(kb, "build_info", {}) or {})
            executor = _executor_record(self.executor)
        if kb is not None and any(pending.values()):
            unknown = [mode for mode in modes if mode not in getattr(kb, "modes", modes)]
            if unknown:
                raise RunConfigurationError(
                    f"knowledge base {knowledge_base_name!r} has no mode {unknown[0]!r}; "
                    f"its modes are {list(kb.modes)}"
                )
            check = getattr(kb, "check_connection", None)
            if check is not None:
                try:
                    await check()
                except Exception as error:  # the service is down: say so before 300 failures
                    raise RunConfigurationError(str(error)) from None

        records = dict(done)
        mode_seconds: dict[str, float] = {}
        if journal is not None:
            interrupts.keep("journal", lambda: _journal_note(journal))
        try:
            for mode in modes:
                started = time.perf_counter()
                with interrupts.phase(f"running the {mode} queries"):
                    finished = await self._run_mode(
                        kb, mode, cases, pending[mode], len(cases) - len(pending[mode]), chosen,
                        retrieval, top_k, journal, scan.ids,
                    )  # fmt: skip
                for record in finished:
                    records[(record.case_id, mode)] = record
                earlier = (
                    previous.modes[mode].timings.get("wall_s")
                    if previous and mode in previous.modes
                    else None
                )
                elapsed = time.perf_counter() - started if pending[mode] else 0.0
                mode_seconds[mode] = round(elapsed + (earlier or 0.0), 3)
        finally:
            if journal is not None:
                journal.close()
        interrupts.keep("journal", None)

        # A folder extended with more modes reports all of them.
        summarized = [m for m in all_modes if m in modes or any(k[1] == m for k in records)]
        ordered = [records[(c.id, m)] for m in summarized for c in cases if (c.id, m) in records]
        for mode in summarized:
            if mode not in mode_seconds and previous and mode in previous.modes:
                mode_seconds[mode] = previous.modes[mode].timings.get("wall_s") or 0.0
        mode_summaries = {
            mode: self._summarize_mode(mode, cases, chosen, records, mode_seconds.get(mode))
            for mode in summarized
        }
        # What spending evaluators (an LLM judge) report, added to a resumed run's earlier totals.
        usage = {
            e.name: e.usage_report(previous.usage.get(e.name) if previous else None)
            for e in chosen
            if callable(getattr(e, "usage_report", None))
        }
        summary = RunSummary(
            benchmark=benchmark.name,
            knowledge_base=knowledge_base_name,
            system=system,
            documents=scan.fingerprint,
            recipe=recipe_dump,
            evaluators=names,
            top_k=top_k,
            top_k_requested=self.top_k,
            modes=mode_summaries,
            timings={"build_s": build_seconds},
            build=build_info,
            checks=_input_counts(benchmark, cases, scan),
            warnings=warnings + _reply_warnings(mode_summaries),
            executor=executor,
            created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            heta_eval_version=_version(),
            usage=usage,
            data=dict(getattr(benchmark, "data_record", None) or {}),
        )
        results = BenchmarkResults(summary, ordered, folder)
        if folder is not None and journal is not None:
            journal.rewrite(ordered)
            results.write(folder)
        return results

    # ----------------------------------------------------------------------------------

    def _say(self, line: str) -> None:
        if self.progress:
            print(line, file=sys.stderr)

    def _claim_folder(
        self, folder: Path, identity: dict[str, Any], modes: tuple[str, ...]
    ) -> tuple[str, ...]:
        """Claim ``folder`` for this run, or refuse it when it holds another run's results.

        The same benchmark, documents, system, evaluators and cases resume; a new mode extends
        the folder. Returns every mode the folder holds, earlier ones first.
        """
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "run.json"
        earlier: list[str] = []
        if path.exists():
            previous = json.loads(path.read_text(encoding="utf-8"))
            earlier = list(previous.pop("modes", []))
            if previous != identity:
                changed = [
                    _change(key, previous.get(key), identity.get(key))
                    for key in sorted(set(identity) | set(previous))
                    if previous.get(key) != identity.get(key)
                ]
                raise RunConfigurationError(
                    f"{folder} holds results of a different run (changed: {'; '.join(changed)})"
                    "; choose another output folder, or delete this one (--fresh) to start over"
                )
        all_modes = tuple(dict.fromkeys([*earlier, *modes]))
        if list(all_modes) != earlier:
            record = {**identity, "modes": list(all_modes)}
            path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        return all_modes

    async def _run_mode(
        self,
        kb: Any,
        mode: str,
        cases: Sequence[BenchmarkCase],
        pending: Sequence[BenchmarkCase],
        already_done: int,
        evaluators: Sequence[BenchmarkEvaluatorProtocol],
        retrieval: Sequence[BeirRetrievalMetric],
        top_k: int,
        journal: Journal | None,
        document_ids: set[str],
    ) -> list[QueryRecord]:
        if not pending:
            return []
        semaphore = asyncio.Semaphore(self.concurrency)
        bar = tqdm(
            total=len(cases), initial=already_done, desc=mode, unit="case",
            disable=not self.progress, dynamic_ncols=True,
        )  # fmt: skip
        finished: list[QueryRecord] = []
        responses: dict[str, QueryResponse] = {}

        async def one(case: BenchmarkCase) -> None:
            async with semaphore:
                record, response = await self._query_and_score(
                    kb, mode, case, evaluators, retrieval, top_k, document_ids
                )
            if journal is not None:
                journal.append(record)  # without retrieval scores yet: see below
            if response is not None:
                responses[case.id] = response
            finished.append(record)
            bar.update(1)

        try:
            await asyncio.gather(*(one(case) for case in pending))
        finally:
            bar.close()
        if retrieval and responses:
            # The mode's retrieval metrics in one batch, through the one evaluator.
            order = [evaluator.name for evaluator in evaluators]
            _score_batch(finished, cases, responses, order, retrieval)
            if journal is not None:
                for record in finished:
                    if record.ok:
                        journal.append(record)  # the last record of a case wins on resume
        return finished

    async def _query_and_score(
        self,
        kb: Any,
        mode: str,
        case: BenchmarkCase,
        evaluators: Sequence[BenchmarkEvaluatorProtocol],
        retrieval: Sequence[BeirRetrievalMetric],
        top_k: int,
        document_ids: set[str],
    ) -> tuple[QueryRecord, QueryResponse | None]:
        started = time.perf_counter()
        try:
            raw = await asyncio.wait_for(
                kb.query(case.query, mode=mode, top_k=top_k), self.query_timeout
            )
            response = raw if isinstance(raw, QueryResponse) else QueryResponse.model_validate(raw)
            response = name_documents(response, document_ids)
        except asyncio.TimeoutError:
            return QueryRecord(
                case_id=case.id, mode=mode, query=case.query,
                error=f"query timed out after {self.query_timeout}s",
                latency_ms=round((time.perf_counter() - started) * 1000, 3),
            ), None  # fmt: skip
        except Exception as error:  # any knowledge-base failure is recorded against its case
            return QueryRecord(
                case_id=case.id, mode=mode, query=case.query,
                error=f"{type(error).__name__}: {error}",
                latency_ms=round((time.perf_counter() - started) * 1000, 3),
            ), None  # fmt: skip
        latency_ms = round((time.perf_counter() - started) * 1000, 3)

        started = time.perf_counter()
        scores = {}
        failures: list[EvaluationFailure] = []
        for evaluator in evaluators:
            if isinstance(evaluator, BeirRetrievalMetric):
                continue  # scored per mode, in one batch (_score_batch)
            outcome = await score_case(evaluator, case, response, timeout=self.evaluation_timeout)
            if isinstance(outcome, EvaluationFailure):
                failures.append(outcome)
            else:
                scores[evaluator.name] = outcome
        collapse = [m.collapse(case, response).metadata() for m in _by_config(retrieval)]
        # The documents kept for the TREC run: the system's own output, self-hits included
        # (the metrics remove them), mapped like the first retrieval metric maps them.
        ranking = collapse_to_documents(
            response,
            query_id=case.id,
            resolver=retrieval[0].resolver if retrieval else None,
            ignore_identical_ids=False,
        )
        return QueryRecord(
            case_id=case.id,
            mode=mode,
            query=case.query,
            documents=list(ranking.scores.items()),
            answer=response.answer,
            scores=scores,
            collapse=collapse,
            failures=failures,
            latency_ms=latency_ms,
            evaluation_ms=round((time.perf_counter() - started) * 1000, 3),
            results=len(response.results),
            unmapped_results=ranking.unmapped,
            # The chunk hits behind the shown documents, mapped as the ranking was.
            hits=chunk_hits(
                response.results, list(ranking.scores), retrieval[0].resolver if retrieval else None
            ),
        ), response

    def _summarize_mode(
        self,
        mode: str,
        cases: Sequence[BenchmarkCase],
        evaluators: Sequence[BenchmarkEvaluatorProtocol],
        records: dict[tuple[str, str], QueryRecord],
        wall_seconds: float | None,
    ) -> ModeSummary:
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


def _change(key: str, before: Any, after: Any) -> str:
    if key == "documents":
        return f"documents (content fingerprint {before} -> {after})"
    if key == "system" and isinstance(before, dict) and isinstance(after, dict):
        keys = sorted(set(before) | set(after))
        parts = [f"{k} {before.get(k)!r} -> {after.get(k)!r}" for k in keys
                 if before.get(k) != after.get(k)]  # fmt: skip
        return "system (" + ", ".join(parts) + ")"
    if isinstance(before, (str, int, float)) and isinstance(after, (str, int, float)):
        return f"{key} ({before!r} -> {after!r})"
    return key


def _skipped_files(benchmark: Benchmark) -> list[str]:
    return [str(p) for p in getattr(benchmark, "skipped_files", None) or ()]


def _input_warnings(
    benchmark: Benchmark, cases: Sequence[BenchmarkCase], scan: DocumentScan
) -> list[str]:
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
                "document, so they score 0; each result must name its document in "
                "source.document_id (or doc_id / document_id, or an id / reference_id that "
                "is a document id); see docs/runs.md"
            )
    return warnings


def _score_batch(
    records: Sequence[QueryRecord],
    cases: Sequence[BenchmarkCase],
    responses: dict[str, QueryResponse],
    order: Sequence[str],
    retrieval: Sequence[BeirRetrievalMetric],
) -> None:
    """Score one mode's responses with every retrieval metric in one batch and put the
    scores into the records, in evaluator order; the batch time is shared among them."""
    started = time.perf_counter()
    answered = [case for case in cases if case.id in responses]
    batch = score_retrieval_batch(retrieval, answered, responses)
    share_ms = (time.perf_counter() - started) * 1000 / max(1, len(answered))
    for record in records:
        if record.case_id not in responses:
            continue
        merged = {**batch.get(record.case_id, {}), **record.scores}
        record.scores = {name: merged[name] for name in order if name in merged}
        record.evaluation_ms = round((record.evaluation_ms or 0.0) + share_ms, 3)


def _rescore_incomplete(
    done: dict[tuple[str, str], QueryRecord],
    cases: Sequence[BenchmarkCase],
    retrieval: Sequence[BeirRetrievalMetric],
    order: Sequence[str],
) -> None:
    """Records journaled before their mode's batch was scored (an interrupted run) get
    their retrieval scores from their stored documents, mode by mode."""
    names = [metric.name for metric in retrieval]
    # Failed queries (kept for the modes not asked this time) have nothing to score.
    incomplete = [r for r in done.values() if r.ok and any(n not in r.scores for n in names)]
    # The stored documents are already resolved, with self-hits kept: score them as such.
    plain = [
        BeirRetrievalMetric(m.metric, m.k, ignore_identical_ids=m.ignore_identical_ids)
        for m in retrieval
    ]
    for mode in dict.fromkeys(r.mode for r in incomplete):
        records = [r for r in incomplete if r.mode == mode]
        responses = {
            r.case_id: QueryResponse(
                query=r.query,
                results=[{"score": s, "source": {"document_id": d}} for d, s in r.documents],
            )
            for r in records
        }
        _score_batch(records, cases, responses, order, plain)
        configs = [m.config for m in _by_config(retrieval)]
        for record in records:
            for metric in retrieval:
                stored = record.collapse[configs.index(metric.config)]
                score = record.scores[metric.name]
                if not score.skipped:
                    record.scores[metric.name] = score.model_copy(update={"metadata": stored})


def _by_config(retrieval: Sequence[BeirRetrievalMetric]) -> list[BeirRetrievalMetric]:
    """One metric per document-mapping config, in order."""
    return list({metric.config: metric for metric in retrieval}.values())


def _previous_summary(folder: Path | None) -> RunSummary | None:
    if folder is None or not (folder / "summary.json").exists():
        return None
    try:
        return RunSummary.model_validate_json((folder / "summary.json").read_text("utf-8"))
    except ValueError:
        return None  # unreadable: the journal still holds every finished case


#: What the summary records for a run without an executor (no ``--ray``).
LOCAL_EXECUTOR: dict[str, Any] = {"kind": "local", "nodes": 1, "workers": 1, "gpus": 0}


def _executor_record(executor: Any) -> dict[str, Any]:
    return executor.describe() if executor is not None else dict(LOCAL_EXECUTOR)


def _fingerprint(items: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for item in items:
        digest.update(item.encode("utf-8"))
        digest.update(b"\0")
    return f"{len(items)}:{digest.hexdigest()[:16]}"


def _version() -> str:
    return __version__


def _journal_note(journal: Journal) -> str | None:
    """What an interrupted run keeps of its queries (for :mod:`heta_eval.interrupts`)."""
    answered = sum(1 for record in journal.read().values() if record.ok)
    return f"{answered:,} answered queries, in {journal.path}" if answered else None
