"""BenchmarkRunner: build (or reuse) a knowledge base, query every case in every mode, score
and aggregate, and keep every finished case on disk so an interrupted run resumes."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heta_eval import interrupts
from heta_eval._runtime import run_sync
from heta_eval.models.protocol import BenchmarkEvaluatorProtocol
from heta_eval.models.records import BenchmarkCase
from heta_eval.runner.benchmark import Benchmark, BenchmarkFormatError, corpus_of, query_rows_of
from heta_eval.runner.checks import DocumentScan, inputs_id_problem, scan_store
from heta_eval.runner.folder_lock import folder_lock, status
from heta_eval.runner.plan import (
    RunConfigurationError,
    RunPlan,
    check_knowledge_base,
    claim_folder,
    plan_run,
)
from heta_eval.runner.queries import QueryLoop, rescore_incomplete
from heta_eval.runner.results import BenchmarkResults, Journal, QueryRecord, RunSummary
from heta_eval.runner.slicing import case_values
from heta_eval.runner.summary import (
    BuildRecord,
    assemble_summary,
    earlier_wall_seconds,
    input_warnings,
    previous_summary,
)
from heta_eval.systems.protocol import member

__all__ = ["BenchmarkRunner", "RunConfigurationError"]

logger = logging.getLogger(__name__)


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
    >>> from heta_eval.reference import Recipe
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
        slice_by: Sequence[str] = (),
    ) -> BenchmarkResults:
        """Run synchronously; safe where an event loop is already running (a notebook).

        ``evaluators`` overrides the benchmark's own scoring policy. Pass either a
        ``recipe`` (the knowledge base is built, or reused from the cache) or a ready
        ``knowledge_base`` (e.g. an ``HttpKnowledgeBase``). With ``output_dir`` every
        finished case is kept on disk and a rerun continues where the last one stopped; one
        run writes a folder at a time (another process's run into it is waited for, then
        resumed or extended: :mod:`heta_eval.runner.folder_lock`).
        Ctrl-C stops it at once (:mod:`heta_eval.interrupts`), also mid-encode.
        ``slice_by``: case or query metadata fields (or ``query_length``, ``subset``) whose
        per-slice means the summary keeps (:mod:`heta_eval.slices`); a folder keeps the
        fields an earlier run into it asked for.
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
            slice_by=slice_by,
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
        slice_by: Sequence[str] = (),
    ) -> BenchmarkResults:
        """The async variant of :meth:`run`."""
        plan = plan_run(
            benchmark,
            recipe,
            knowledge_base,
            knowledge_base_name,
            query_modes,
            evaluators,
            self.top_k,
        )
        slices = case_values(benchmark, plan.cases, slice_by)  # a bad field stops it here
        # One pass over the documents: their content fingerprint (a rerun resumes only on
        # the same documents) and their ids (judgments and replies naming none are reported).
        self._say(f"reading the documents of {benchmark.name}")
        status(f"reading the documents of {benchmark.name}")
        store = corpus_of(benchmark, cache=cache_dir is not False, progress=self.progress)
        scan = scan_store(store)
        problem = inputs_id_problem(plan.cases, scan)
        if problem is not None:  # before anything runs: such an id would forge a run file
            raise BenchmarkFormatError(f"{benchmark.name}: {problem}")
        warnings = self._warn(plan, scan)

        folder = Path(output_dir) if output_dir is not None else None
        corpus = _Corpus(store, scan)
        if folder is None:
            return await self._run(plan, corpus, warnings, None, knowledge_base, cache_dir, slices)
        # One writer per folder: what it holds is read, extended and written by one run.
        with folder_lock(folder, modes=plan.modes):
            return await self._run(
                plan, corpus, warnings, folder, knowledge_base, cache_dir, slices
            )

    async def _run(
        self,
        plan: RunPlan,
        corpus: _Corpus,
        warnings: list[str],
        folder: Path | None,
        kb: Any,
        cache_dir: str | Path | bool | None,
        slices: dict[str, dict[str, str]],
    ) -> BenchmarkResults:
        """The run, once its folder (if any) is this process's alone."""
        scan = corpus.scan
        journal: Journal | None = None
        done: dict[tuple[str, str], QueryRecord] = {}
        all_modes = plan.modes
        previous: RunSummary | None = None
        if folder is not None:
            journal = Journal(folder / "per_query.jsonl")
            kept = journal.read()
            claim = claim_folder(
                folder,
                plan.folder_identity(scan.fingerprint),
                plan.modes,
                answered=any(record.ok for record in kept.values()),
            )
            if claim.replaces:
                logger.warning(
                    "note: %s holds only failed queries of another run (changed: %s); "
                    "this run replaces them",
                    folder,
                    claim.replaces,
                )
                kept = {}
            # run.json is written with the first result: a run that stops before one (a
            # service that does not answer) leaves no claim on the folder.
            journal.claim, all_modes = claim.write, claim.modes
            # Finished cases of the modes asked are reused; other modes' records are kept.
            done = {k: r for k, r in kept.items() if r.ok or k[1] not in plan.modes}
            rescore_incomplete(done, plan.cases, plan.retrieval, plan.names)
            # Timings of work an earlier invocation did are kept, not reset by a resumed run.
            previous = None if claim.replaces else previous_summary(folder)

        pending = {m: [c for c in plan.cases if (c.id, m) not in done] for m in plan.modes}
        build = BuildRecord.earlier(previous)
        if any(pending.values()):
            status("opening the knowledge base (building it, or reading it from the cache)")
            kb, build = await self._open(plan, kb, cache_dir, corpus, build)
            warnings = [*warnings, *build.info.get("warnings", [])]
        try:
            records, seconds = await self._query(
                plan, kb, pending, done, journal, scan.ids, previous
            )
        finally:
            await _close(kb)
        if previous is not None and previous.slices:  # the fields an earlier run asked for
            earlier = [field for field in previous.slices if field not in slices]
            slices = {**slices, **case_values(plan.benchmark, plan.cases, earlier)}
        summary, ordered = assemble_summary(
            plan, scan, all_modes, records, seconds, previous, build, warnings, slices
        )
        results = BenchmarkResults(summary, ordered, folder)
        if folder is not None and journal is not None:
            status("writing the results")
            journal.rewrite(ordered)
            results.write(folder)
        return results

    def _warn(self, plan: RunPlan, scan: DocumentScan) -> list[str]:
        """Say what is wrong with the inputs; return it for the summary."""
        warnings = input_warnings(plan.benchmark, plan.cases, scan)
        for line in warnings:
            self._say(f"warning: {line}", logging.WARNING)
        # The data is not the dataset it is named after: said loudly, even without progress.
        data_warnings = list(getattr(plan.benchmark, "warnings", None) or ())
        for line in data_warnings:
            logger.warning("warning: %s", line)
        if plan.top_k != self.top_k:
            self._say(
                f"note: asking the knowledge base for {plan.top_k} hits per query, not top_k="
                f"{self.top_k}: the largest metric k is {plan.top_k - 1} and one extra hit "
                "covers a removed self-hit"
            )
        return data_warnings + warnings

    async def _open(
        self,
        plan: RunPlan,
        kb: Any,
        cache_dir: str | Path | bool | None,
        corpus: _Corpus,
        build: BuildRecord,
    ) -> tuple[Any, BuildRecord]:
        """The knowledge base, built from the recipe (or reused from the cache) when none was
        given, and checked: it has the modes asked and it answers."""
        if kb is None:
            started = time.perf_counter()
            given = getattr(getattr(plan.recipe, "dense", None), "query_vectors", None)
            rows = query_rows_of(plan.benchmark, plan.cases) if given is not None else None
            kb = plan.recipe.build(
                plan.knowledge_base_name,
                corpus.store,
                cache_dir=None if cache_dir is True else cache_dir,
                progress=self.progress,
                fingerprint=corpus.scan.corpus,
                **({"query_rows": rows} if rows is not None else {}),
                **({"executor": self.executor} if self.executor is not None else {}),
            )
            build = BuildRecord.now(kb, round(time.perf_counter() - started, 3), self.executor)
        else:
            build = BuildRecord.given(kb, build)
        await check_knowledge_base(kb, plan.modes, plan.knowledge_base_name)
        return kb, build

    async def _query(
        self,
        plan: RunPlan,
        kb: Any,
        pending: dict[str, list[BenchmarkCase]],
        done: dict[tuple[str, str], QueryRecord],
        journal: Journal | None,
        document_ids: Collection[str],
        previous: RunSummary | None,
    ) -> tuple[dict[tuple[str, str], QueryRecord], dict[str, float]]:
        """Every mode's pending queries, journaled as they finish: all records (``done``
        included) and each mode's seconds (an earlier invocation's added)."""
        loop = QueryLoop(
            self.concurrency, self.query_timeout, self.evaluation_timeout, self.progress
        )
        records = dict(done)
        mode_seconds: dict[str, float] = {}
        if journal is not None:
            interrupts.keep("journal", lambda: _journal_note(journal))
        try:
            for mode in plan.modes:
                started = time.perf_counter()
                if journal is not None:
                    journal.on_append = _progress(mode, len(plan.cases), len(pending[mode]))
                with interrupts.phase(f"running the {mode} queries"):
                    finished = await loop.run_mode(
                        kb,
                        mode,
                        plan.cases,
                        pending[mode],
                        plan.evaluators,
                        plan.retrieval,
                        plan.top_k,
                        journal,
                        document_ids,
                    )
                for record in finished:
                    records[(record.case_id, mode)] = record
                elapsed = time.perf_counter() - started if pending[mode] else 0.0
                earlier = earlier_wall_seconds(previous, mode)
                mode_seconds[mode] = round(elapsed + (earlier or 0.0), 3)
        finally:
            if journal is not None:
                journal.close()
        interrupts.keep("journal", None)
        return records, mode_seconds

    def _say(self, line: str, level: int = logging.INFO) -> None:
        """A line logged for a run with progress on (``heta-eval run`` without ``--quiet``)."""
        if self.progress:
            logger.log(level, line)


@dataclass(frozen=True)
class _Corpus:
    """The benchmark's documents, read once: the store the knowledge base is built from,
    and its scan (fingerprint, ids)."""

    store: Any
    scan: DocumentScan


async def _close(kb: Any) -> None:
    """Await the knowledge base's ``aclose`` (its connection pools) once its queries are
    done; a failure to close is said, and loses nothing."""
    close = member(kb, "aclose") if kb is not None else None
    if close is None:
        return
    try:
        await close()
    except Exception as error:  # the results are kept whatever closing does
        logger.warning("warning: closing the knowledge base failed: %s", error)


def _progress(mode: str, total: int, pending: int) -> Callable[[QueryRecord], None]:
    """Tell a run waiting for the folder how far this mode got (:mod:`folder_lock`)."""
    seen: set[str] = set()

    def note(record: QueryRecord) -> None:
        if record.mode == mode:
            seen.add(record.case_id)  # a case journaled again (rescored) counts once
        status(f"querying {mode}: {total - pending + len(seen):,} of {total:,} cases", now=False)

    status(f"querying {mode}: {total - pending:,} of {total:,} cases")
    return note


def _journal_note(journal: Journal) -> str | None:
    """What an interrupted run keeps of its queries (for :mod:`heta_eval.interrupts`)."""
    answered = sum(1 for record in journal.read().values() if record.ok)
    return f"{answered:,} answered queries, in {journal.path}" if answered else None
