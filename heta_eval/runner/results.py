"""Results of a benchmark run: the per-query journal, the summary, and the results folder.

A results folder holds:

* ``run.json``: what was run (benchmark, content fingerprints of the cases and documents,
  the system: recipe or service URL, modes, evaluators, top_k); a rerun into the same
  folder must match it, and then resumes (a new mode extends the folder); written just
  before the run's first result, so a run that stopped before one leaves no claim;
* ``run.lock``: while a run writes the folder, its lock (one writer per folder: see
  :mod:`heta_eval.runner.folder_lock`), saying who holds it and what it is doing;
* ``per_query.jsonl``: one line per case and mode (query, retrieved document ids and scores,
  answer, every evaluator's score and metadata, the query error if it failed), appended as
  each case finishes, so a killed run loses nothing it finished;
* ``hits.jsonl``: per case and mode, the chunk hits that collapsed into each of the first
  documents (chunk id, rank, score; see :mod:`heta_eval.runner.hits`), written beside the
  journal;
* ``summary.json``: per mode and evaluator the aggregates (BEIR and strict for retrieval
  metrics), counts and timings;
* ``runs/<mode>.trec``: a TREC run per mode (real ranks, the system's order);
* ``table.md``: the markdown table printed at the end.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from heta_eval.evaluation import EvaluationScore
from heta_eval.extras import require
from heta_eval.io.ids import id_problem
from heta_eval.io.trec import write_run
from heta_eval.io.write import open_whole, write_whole
from heta_eval.models.report import EvaluationFailure, MetricSummary
from heta_eval.models.validation import one_line
from heta_eval.runner.hits import HITS_FILE, Hits, hits_line, read_hits
from heta_eval.runner.ranking import ModeRun, Ranking
from heta_eval.runner.table import results_table

__all__ = [
    "BenchmarkResults",
    "Journal",
    "ModeSummary",
    "QueryRecord",
    "ResultsFormatError",
    "RunSummary",
    "latency_summary",
    "load_results",
]


class ResultsFormatError(ValueError):
    """A results folder that cannot be read; the message names the file and line."""


class QueryRecord(BaseModel):
    """One case answered in one mode, with every evaluator's score."""

    case_id: str
    mode: str
    query: str
    #: ``(document id, score)`` pairs, best first: a list of pairs in, a :class:`Ranking`
    #: (a compact stand-in for the list) held, the list written.
    documents: Ranking = Field(default_factory=Ranking)
    answer: str | None = None
    scores: dict[str, EvaluationScore] = Field(default_factory=dict)
    failures: list[EvaluationFailure] = Field(default_factory=list)
    error: str | None = None
    latency_ms: float | None = None
    evaluation_ms: float | None = None
    #: How many results the reply held, and how many of them named no document.
    results: int = 0
    unmapped_results: int = 0
    # Per retrieval-metric config, what the chunk collapse dropped: lets an interrupted run
    # score journaled records from ``documents`` exactly as their mode's batch would have.
    collapse: list[dict[str, Any]] = Field(default_factory=list)
    #: Per shown document, the chunk hits that collapsed into it (``hits.jsonl``, not
    #: ``per_query.jsonl``); empty where the folder does not keep them.
    hits: Hits = Field(default_factory=list, exclude=True)

    @property
    def ok(self) -> bool:
        """True when the query itself succeeded (evaluators may still have failed)."""
        return self.error is None


class ModeSummary(BaseModel):
    """Aggregates, counts and timings of one query mode.

    When queries failed, each metric's headline ``value`` counts them as 0 (the strict
    aggregate for retrieval metrics) and ``answered_only`` holds the mean over the answered
    cases. ``failure_reasons`` counts failed queries by error message. ``timings`` holds
    ``wall_s`` (elapsed) and ``evaluation_summed_s`` (per-case scoring time summed over
    cases scored concurrently: not elapsed time).
    """

    mode: str
    metrics: dict[str, MetricSummary]
    answered_only: dict[str, float | None] = Field(default_factory=dict)
    cases: int
    answered: int
    failed_queries: int
    failure_reasons: dict[str, int] = Field(default_factory=dict)
    evaluator_failures: int
    results: int = 0
    unmapped_results: int = 0
    partial: bool
    timings: dict[str, float | None] = Field(default_factory=dict)


class RunSummary(BaseModel):
    """Everything ``summary.json`` holds."""

    benchmark: str
    knowledge_base: str
    #: The system under test: ``{"kind": "recipe" | "service" | "object", ...}``; a service
    #: run records its ``url``.
    system: dict[str, Any] = Field(default_factory=dict)
    #: Content fingerprint of the benchmark's documents (``count:sha256-prefix``).
    documents: str | None = None
    recipe: dict[str, Any] | None = None
    evaluators: list[str]
    #: Hits asked of the knowledge base per query: max(top_k_requested, largest k) + 1.
    top_k: int
    top_k_requested: int | None = None
    modes: dict[str, ModeSummary]
    timings: dict[str, float | None] = Field(default_factory=dict)
    build: dict[str, Any] = Field(default_factory=dict)
    #: Input checks: documents, judgments naming no document, skipped document files.
    checks: dict[str, int] = Field(default_factory=dict)
    #: Everything the run warned about (also logged: the command line prints it; and listed
    #: under the table).
    warnings: list[str] = Field(default_factory=list)
    #: Where the knowledge base was built: kind (local / ray), nodes, workers, GPUs.
    executor: dict[str, Any] = Field(default_factory=dict)
    created_at: str = ""
    heta_eval_version: str = ""
    # Per evaluator that spends (an LLM judge): calls, tokens, cost, failures, agreement.
    usage: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: Where a dataset's files came from: name, folder, split, whether it is registered, and
    #: how the folder differs from the registry (then no reference check applies).
    data: dict[str, Any] = Field(default_factory=dict)
    #: Per slice field (``--slice-by``): each case's slice, and per mode and evaluator each
    #: slice's cases, scored cases, failed queries and mean, with the slices' mean
    #: (:func:`heta_eval.slices.slice_summary`).
    slices: dict[str, Any] = Field(default_factory=dict)

    @property
    def partial(self) -> bool:
        return any(mode.partial for mode in self.modes.values())


def latency_summary(latencies_ms: Sequence[float]) -> dict[str, float | None]:
    """Mean and p50 / p90 / p99 of query latencies in milliseconds.

    >>> latency_summary([10.0, 20.0, 30.0, 40.0])["latency_p50_ms"]
    25.0
    """
    if not latencies_ms:
        return {
            key: None
            for key in ("latency_mean_ms", "latency_p50_ms", "latency_p90_ms", "latency_p99_ms")
        }
    values = sorted(latencies_ms)
    if len(values) == 1:
        p50 = p90 = p99 = values[0]
    else:
        cuts = statistics.quantiles(values, n=100, method="inclusive")
        p50, p90, p99 = cuts[49], cuts[89], cuts[98]
    return {
        "latency_mean_ms": round(statistics.fmean(values), 3),
        "latency_p50_ms": round(p50, 3),
        "latency_p90_ms": round(p90, 3),
        "latency_p99_ms": round(p99, 3),
    }


class Journal:
    """The append-only per-query file: one JSON record per line, flushed as it is written.

    A line cut short by a killed process is ignored when the journal is read back; for the
    same (case, mode) the last record wins, so a query retried after a failure replaces it.
    Each record's chunk hits go to ``hits.jsonl`` beside it, written just before the record.
    """

    def __init__(
        self,
        path: Path,
        *,
        claim: Callable[[], None] | None = None,
        on_append: Callable[[QueryRecord], None] | None = None,
    ) -> None:
        self.path = path
        self.hits_path = path.with_name(HITS_FILE)
        #: Called before the first line is written (``run.json``: the run's claim).
        self.claim = claim
        #: Called after each record is written (the folder lock's progress).
        self.on_append = on_append
        self._handle: Any = None
        self._hits_handle: Any = None
        self._hits_written: dict[tuple[str, str], Hits] = {}

    def read(self) -> dict[tuple[str, str], QueryRecord]:
        records: dict[tuple[str, str], QueryRecord] = {}
        for record in _read_records(self.path, tolerate_truncated_tail=True):
            ids = record.documents.ids
            if "" in ids or (ids and id_problem("".join(ids)) is not None):
                continue  # kept by an earlier version, would break the run file: asked again
            records[(record.case_id, record.mode)] = record
        _attach_hits(records, self.hits_path)
        return records

    def append(self, record: QueryRecord) -> None:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.claim is not None:
                self.claim()
            for path in (self.path, self.hits_path):
                _repair_tail(path)
            self._handle = self.path.open("a", encoding="utf-8")
            self._hits_handle = self.hits_path.open("a", encoding="utf-8")
        key = (record.case_id, record.mode)
        # A record journaled again (now with its retrieval scores) has its hits written once.
        if record.hits and self._hits_written.get(key) is not record.hits:
            self._hits_handle.write(hits_line(record.case_id, record.mode, record.hits))
            self._hits_handle.flush()
            self._hits_written[key] = record.hits
        self._handle.write(record.model_dump_json() + "\n")
        self._handle.flush()  # in the kernel's hands now: survives a killed process
        if self.on_append is not None:
            self.on_append(record)

    def close(self) -> None:
        for handle in (self._handle, self._hits_handle):
            if handle is not None:
                handle.close()
        self._handle = self._hits_handle = None

    def rewrite(self, records: Iterable[QueryRecord]) -> None:
        """Replace the journal and its hits with ``records`` (compacted, in order), atomically."""
        self.close()
        if self.claim is not None:
            self.claim()
        # The hits are renamed first (the inner file), then the journal.
        with open_whole(self.path) as out, open_whole(self.hits_path) as hits:
            for record in records:
                if record.hits:
                    hits.write(hits_line(record.case_id, record.mode, record.hits))
                out.write(record.model_dump_json() + "\n")


def _repair_tail(path: Path) -> None:
    # A killed writer can leave a partial last line; cut it so new lines start clean.
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return
        data = path.read_bytes()
        handle.truncate(data.rfind(b"\n") + 1)


def _attach_hits(records: dict[tuple[str, str], QueryRecord], path: Path) -> None:
    try:
        found = read_hits(path)
    except ValueError as error:
        raise ResultsFormatError(str(error)) from None
    for key, hits in found.items():
        record = records.get(key)
        if record is not None and record.ok:
            record.hits = hits


def _read_records(path: Path, *, tolerate_truncated_tail: bool) -> Iterator[QueryRecord]:
    if not path.exists():
        return
    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield QueryRecord.model_validate_json(line)
        except ValidationError as error:
            last = number == len(lines) or (number == len(lines) - 1 and not lines[-1])
            if tolerate_truncated_tail and last and not line.endswith("}"):
                return  # the process was killed while writing this line
            why = one_line(error)
            raise ResultsFormatError(f"{path}:{number}: not a per-query record: {why}") from None


class BenchmarkResults:
    """A finished (or partial) run: the summary and every per-query record.

    Load a results folder with :func:`load_results`; ``table()`` gives the markdown table,
    ``to_dataframe()`` one row per case, mode and evaluator.
    """

    def __init__(
        self, summary: RunSummary, records: Sequence[QueryRecord], path: Path | None = None
    ) -> None:
        self.summary = summary
        self.records = list(records)
        self.path = path

    def __repr__(self) -> str:
        modes = ", ".join(self.summary.modes)
        return f"BenchmarkResults(benchmark={self.summary.benchmark!r}, modes=[{modes}])"

    @property
    def partial(self) -> bool:
        return self.summary.partial

    def metric(self, mode: str, evaluator: str) -> MetricSummary:
        """The aggregate of one evaluator in one mode."""
        try:
            return self.summary.modes[mode].metrics[evaluator]
        except KeyError:
            raise KeyError(
                f"no {evaluator!r} in mode {mode!r}; modes: {list(self.summary.modes)}, "
                f"evaluators: {self.summary.evaluators}"
            ) from None

    def per_query_values(self, mode: str, evaluator: str) -> dict[str, float]:
        """``{case id: value}`` of one evaluator in one mode (skipped cases left out)."""
        values: dict[str, float] = {}
        for record in self.records:
            score = record.scores.get(evaluator)
            if record.mode == mode and score is not None and not score.skipped:
                values[record.case_id] = float(score.value)  # type: ignore[arg-type]
        return values

    def run(self, mode: str) -> dict[str, dict[str, float]]:
        """The document-level run of one mode, ``{case id: {doc id: score}}``."""
        return {
            record.case_id: dict(record.documents)
            for record in self.records
            if record.mode == mode and record.ok
        }

    def table(self) -> str:
        """The results table in markdown (``table.md``): what was run (dataset, split,
        system, dense precision and device), retrieval metrics as a grid (mode and metric ×
        k; BEIR values, ``*`` when partial), other evaluators one row each, the published
        reference numbers beside ours, then per-mode counts."""
        return results_table(self.summary)

    def to_dataframe(self) -> Any:
        """A pandas DataFrame, one row per case, mode and evaluator."""
        pd = require("pandas")  # the 'compare' extra; its absence is one line naming it

        rows = []
        for record in self.records:
            for name, score in record.scores.items():
                rows.append(
                    {
                        "case_id": record.case_id,
                        "mode": record.mode,
                        "evaluator": name,
                        "value": score.value,
                        "passed": score.passed,
                        "skipped": score.skipped,
                        "latency_ms": record.latency_ms,
                    }
                )
        return pd.DataFrame(
            rows,
            columns=["case_id", "mode", "evaluator", "value", "passed", "skipped", "latency_ms"],
        )

    def write(self, folder: Path) -> None:
        """Write ``summary.json``, ``runs/<mode>.trec`` and ``table.md`` (the journal is
        written as the run goes)."""
        folder.mkdir(parents=True, exist_ok=True)
        write_whole(folder / "summary.json", self.summary.model_dump_json(indent=2) + "\n")
        (folder / "runs").mkdir(exist_ok=True)
        for mode in self.summary.modes:
            run = ModeRun(r for r in self.records if r.mode == mode and r.ok)
            write_run(run, folder / "runs" / f"{mode}.trec", tag=mode, sort=False)
        write_whole(folder / "table.md", self.table() + "\n")


def load_results(path: str | Path) -> BenchmarkResults:
    """Load a results folder written by the runner.

    A folder that is not one gets a clear error (``+ELLIPSIS`` below only shortens it):

    >>> load_results("/nonexistent")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    heta_eval.runner.results.ResultsFormatError: /nonexistent: no summary.json here; ...
    """
    folder = Path(path)
    summary_path = folder / "summary.json"
    if not summary_path.exists():
        raise ResultsFormatError(f"{folder}: no summary.json here; is this a results folder?")
    try:
        summary = RunSummary.model_validate_json(summary_path.read_text(encoding="utf-8"))
    except ValidationError as error:
        why = one_line(error)
        raise ResultsFormatError(f"{summary_path}: not a heta-eval summary: {why}") from None
    records = list(_read_records(folder / "per_query.jsonl", tolerate_truncated_tail=False))
    _attach_hits({(r.case_id, r.mode): r for r in records}, folder / HITS_FILE)
    return BenchmarkResults(summary, records, folder)
