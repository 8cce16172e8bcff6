"""The one retrieval evaluator: ``evaluate_run`` and ``BeirRetrievalMetric``.

* ``evaluate_run(qrels, run)`` scores a document-level run with BEIR's exact semantics
  (``EvaluateRetrieval.evaluate`` and ``evaluate_custom(..., "mrr")``) by default, and with
  ``measures=[...]`` any trec_eval measure (:mod:`heta_eval.measures.measure`); it also
  reports the strict ``trec_eval -c`` aggregate. Input is validated once
  (:mod:`heta_eval.io.validate`), then a backend is chosen
  (:mod:`heta_eval.providers.backends`); averaging is :mod:`heta_eval.measures.averaging`.
* ``evaluate_columnar_run`` is the same on a columnar run (a run file read into arrays).
* ``BeirRetrievalMetric`` is the per-case evaluator: it collapses a chunk-level
  ``QueryResponse`` to documents (:mod:`heta_eval.retrieval.collapse`) and scores it with the
  same evaluator; ``evaluate_responses`` and the runner score many cases in one batch.

The BEIR rules reproduced here (``../shared/reference/beir-semantics.md``): self-hits (a
document whose id equals the query id) are removed; pytrec_eval ranks by float32 scores, ties
broken by document id descending; MRR@k follows BEIR's ``mrr`` (a stable sort on the raw
scores, relevant means label > 0).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_eval.io.interop import as_qrels, as_run
from heta_eval.io.validate import InputError, validate_qrels, validate_run
from heta_eval.measures.averaging import AggregateValue
from heta_eval.measures.measure import (
    BEIR_K_VALUES,
    METRICS,
    Measure,
    legacy_measure,
    measure_key,
    parse_measure,
    parse_measures,
)
from heta_eval.providers.backends import choose_backend, compiled_run_file, pytrec_values
from heta_eval.retrieval.collapse import (
    CollapsedBatch,
    DocumentRanking,
    DocumentResolver,
    collapse_batch,
    collapse_to_documents,
    default_document_resolver,
)
from heta_eval.retrieval.result import RunEvaluation, assemble

if TYPE_CHECKING:  # pydantic's models load with the evaluator, not for a run file
    from heta_eval.models.records import BenchmarkCase, EvaluationScore, QueryResponse

__all__ = [
    "BEIR_K_VALUES",
    "METRICS",
    "AggregateValue",
    "BeirRetrievalMetric",
    "CollapsedBatch",
    "DocumentRanking",
    "DocumentResolver",
    "DuplicateRowsError",
    "InputError",
    "Measure",
    "RunEvaluation",
    "beir_default_metrics",
    "collapse_batch",
    "collapse_to_documents",
    "default_document_resolver",
    "evaluate_columnar_run",
    "evaluate_run",
    "evaluate_run_file",
    "measure_key",
    "parse_measure",
]


def _validate_k_values(k_values: Iterable[int]) -> tuple[int, ...]:
    ks = tuple(k_values)
    if not ks:
        raise ValueError("k_values must not be empty")
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"every k must be a positive integer, got {k!r}")
    # BEIR double-counts a repeated k (beir-semantics §1); a set of cutoffs is what is meant.
    return tuple(sorted(set(ks)))


def _validate_metrics(metrics: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(metrics))
    for metric in chosen:
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")
    return chosen


def _plan(
    k_values: Iterable[int], metrics: Iterable[str], measures: Any
) -> tuple[tuple[int, ...], tuple[str, ...], dict[str, Measure]]:
    """(k values, metrics, {name: measure}) of a call: BEIR's grid, or the given measures."""
    if measures is None:
        ks = _validate_k_values(k_values)
        chosen = _validate_metrics(metrics)
        return ks, chosen, {measure_key(m, k): legacy_measure(m, k) for m in chosen for k in ks}
    named = {str(m): m for m in parse_measures(measures)}
    legacy = [m.legacy for m in named.values() if m.legacy is not None]
    ks = tuple(sorted({k for _, k in legacy}))
    chosen = tuple(metric for metric in METRICS if any(lm == metric for lm, _ in legacy))
    return ks, chosen, named


def _without_self_hits(
    run: Mapping[str, Mapping[str, float]],
) -> tuple[dict[str, Mapping[str, float]], int]:
    # BEIR pops self-hits from the caller's dict; we copy only the queries that have one.
    cleaned: dict[str, Mapping[str, float]] = {}
    removed = 0
    for qid, docs in run.items():
        if qid in docs:
            docs = {doc: score for doc, score in docs.items() if doc != qid}
            removed += 1
        cleaned[qid] = docs
    return cleaned, removed


def evaluate_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    k_values: Iterable[int] = BEIR_K_VALUES,
    *,
    metrics: Iterable[str] = METRICS,
    measures: Iterable[str | Measure] | str | None = None,
    ignore_identical_ids: bool = True,
    engine: str = "auto",
) -> RunEvaluation:
    """Score a document-level run with BEIR's exact semantics, plus strict aggregates.

    ``qrels`` maps query id to ``{doc id: label}`` (integers; negative = non-relevant);
    ``run`` maps query id to ``{doc id: score}``; either may also be a pandas DataFrame or a
    ranx ``Qrels``/``Run`` (:mod:`heta_eval.io.interop`). Neither is modified; bad
    input raises :class:`~heta_eval.io.validate.InputError`. Without ``measures`` the
    result is BEIR's grid (``metrics`` × ``k_values``, keyed ``NDCG@10``...); ``measures`` names any
    measures in any spelling (``["nDCG@10", "Rprec", "bpref"]``, keyed ``str(Measure)``).
    ``engine``: ``"pytrec"``, ``"fast"`` (the compiled engine, BEIR's five families only) or
    ``"auto"``; every choice gives the same numbers.

    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    >>> run = {"q1": {"d2": 3.0, "d1": 2.0, "q1": 9.0}, "q2": {"d3": 1.0}}
    >>> result = evaluate_run(qrels, run, k_values=(1, 10))
    >>> result.beir_dict()["ndcg"]
    {'NDCG@1': 0.5, 'NDCG@10': 0.81546}
    >>> result.counts["self_hits_removed"]
    1
    >>> evaluate_run(qrels, run, k_values=(1, 10), engine="fast").beir_dict()["ndcg"]
    {'NDCG@1': 0.5, 'NDCG@10': 0.81546}
    >>> evaluate_run(qrels, run, measures="nDCG@10 Rprec bpref").values()
    {'nDCG@10': 0.81546, 'Rprec': 0.5, 'Bpref': 0.5}
    """
    ks, chosen, named = _plan(k_values, metrics, measures)
    qrels = validate_qrels(as_qrels(qrels))  # a pandas DataFrame or ranx Qrels works too
    run = validate_run(as_run(run))
    rows = sum(map(len, run.values()))
    if choose_backend(engine, rows, list(named.values())) == "fast":
        from heta_eval.providers.engine import columnar_run_from_dict

        columnar = columnar_run_from_dict(run, ignore_identical_ids=ignore_identical_ids)
        return _evaluate_columnar(qrels, columnar, ks, chosen, named)
    self_hits = 0
    if ignore_identical_ids:
        run, self_hits = _without_self_hits(run)
    values = pytrec_values(qrels, run, list(named.values()))
    names = {m: name for name, m in named.items()}
    per_query = {qid: {names[m]: v for m, v in row.items()} for qid, row in values.items() if row}
    return assemble(qrels, list(run), per_query, ks, chosen, named, self_hits)


def evaluate_run_file(
    qrels: Mapping[str, Mapping[str, int]],
    path: Any,
    k_values: Iterable[int] = BEIR_K_VALUES,
    *,
    metrics: Iterable[str] = METRICS,
    measures: Iterable[str | Measure] | str | None = None,
    duplicates: str = "error",
    ignore_identical_ids: bool = True,
    engine: str = "auto",
) -> RunEvaluation:
    """:func:`evaluate_run` on a run file (TREC or BEIR results JSON), read by the project's
    one run reader (:mod:`heta_eval.io.trec`). A large TREC file the engine can score is read
    straight into arrays; anything else, or any doubt (a repeated pair, a parse problem),
    goes through :func:`heta_eval.io.trec.read_run`, which names the bad line. Same numbers
    either way. Raises :class:`~heta_eval.io.trec.TrecFormatError` or ``OSError``.
    """
    from heta_eval.io.run import read_run
    from heta_eval.io.source import open_input

    path = open_input(path)  # read once: a pipe, a FIFO or "-" is never reopened
    named = _plan(k_values, metrics, measures)[2]
    # Below COMPILED_MIN_BYTES, loading numba costs more than the engine saves.
    large = compiled_run_file(path)
    rows = 1 << 62 if large or engine == "fast" else 0
    if choose_backend(engine, rows, list(named.values())) == "fast":
        columnar = _read_while_kernel_loads(path, ignore_identical_ids)
        if columnar is not None and choose_backend(engine, columnar.rows, []) == "fast":
            try:
                return evaluate_columnar_run(
                    qrels, columnar, k_values, metrics=metrics, measures=measures,
                    reject_duplicates=True,
                )  # fmt: skip
            except DuplicateRowsError:
                pass  # read_run names the line (or keeps the last value)
    run = read_run(path, duplicates=duplicates)  # type: ignore[arg-type]
    # A small file's dict may still hold ENGINE_MIN_ROWS results; loading numba for it
    # would cost a one-shot command more than pytrec_eval takes.
    if engine == "auto" and not large:
        engine = "pytrec"
    return evaluate_run(
        qrels, run, k_values, metrics=metrics, measures=measures,
        ignore_identical_ids=ignore_identical_ids, engine=engine,
    )  # fmt: skip


def _read_while_kernel_loads(path: Any, ignore_identical_ids: bool) -> Any:
    """:func:`~heta_eval.io.trec.read_run_columnar`, the metric kernel loading from numba's
    cache in a thread meanwhile (the parse's threads release the GIL)."""
    import threading

    from heta_eval.io.run import read_run_columnar
    from heta_eval.providers.engine import load_kernel

    loader = threading.Thread(target=_load_quietly, args=(load_kernel,), daemon=True)
    loader.start()
    try:
        return read_run_columnar(path, ignore_identical_ids=ignore_identical_ids)
    finally:
        loader.join()


def _load_quietly(load: Any) -> None:
    # On failure the engine's own call meets the same error and reports it.
    with contextlib.suppress(Exception):
        load()


class DuplicateRowsError(ValueError):
    """A columnar run repeats a (query, doc) pair."""


def evaluate_columnar_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Any,
    k_values: Iterable[int] = BEIR_K_VALUES,
    *,
    metrics: Iterable[str] = METRICS,
    measures: Iterable[str | Measure] | str | None = None,
    reject_duplicates: bool = False,
) -> RunEvaluation:
    """:func:`evaluate_run` on a :class:`~heta_eval.providers.engine.ColumnarRun` (query ids
    unique; self-hits already masked in ``run.skip``), through the compiled engine.

    A doc id repeated within a query keeps its first row; with ``reject_duplicates`` it
    raises :class:`DuplicateRowsError` instead (callers then re-read the file with the
    validating reader, which names the line).

    >>> from heta_eval.providers.engine import columnar_run_from_dict
    >>> run = columnar_run_from_dict({"q1": {"d2": 3.0, "d1": 2.0}})
    >>> evaluate_columnar_run({"q1": {"d1": 1}}, run, (1, 10)).beir_dict()["mrr"]
    {'MRR@1': 0.0, 'MRR@10': 0.5}
    """
    ks, chosen, named = _plan(k_values, metrics, measures)
    choose_backend("fast", run.rows, list(named.values()))
    _validate_columnar(run)
    return _evaluate_columnar(
        validate_qrels(qrels), run, ks, chosen, named, reject_duplicates=reject_duplicates
    )


def _validate_columnar(run: Any) -> None:
    """:func:`~heta_eval.io.validate.validate_run`'s rules on arrays."""
    if run.rows and not np.all(run.doc_data):
        raise InputError("run: a doc id contains a NUL character")
    if any("\x00" in qid for qid in run.query_ids):
        raise InputError("run: a query id contains a NUL character")
    scores = run.scores if run.valid is None else run.scores[run.valid]
    if not np.isfinite(scores).all():
        raise InputError("run: a score is NaN or infinite")


def _evaluate_columnar(
    qrels: dict[str, dict[str, int]],
    run: Any,
    ks: tuple[int, ...],
    chosen: tuple[str, ...],
    named: dict[str, Measure],
    *,
    reject_duplicates: bool = False,
) -> RunEvaluation:
    from heta_eval.providers.engine import evaluate_columnar, measure_column

    engine_ks = tuple(sorted({int(m.param or 0) for m in named.values()}))
    values, stats = evaluate_columnar(run, qrels, engine_ks)
    if reject_duplicates and stats[:, 1].any():
        raise DuplicateRowsError(f"{int(stats[:, 1].sum())} repeated (query, doc) rows")
    columns = [(name, measure_column(m, engine_ks)) for name, m in named.items()]
    trec_columns = [
        (n, c) for (n, c), m in zip(columns, named.values(), strict=True) if m.family != "mrr"
    ]
    mrr_columns = [
        (n, c) for (n, c), m in zip(columns, named.values(), strict=True) if m.family == "mrr"
    ]
    per_query: dict[str, dict[str, float]] = {}
    rows = values.tolist()
    for qid, row in zip(run.query_ids, rows, strict=True):
        judged = qrels.get(qid)
        if judged is None:
            continue
        entry: dict[str, float] = {}
        if judged:
            for key, column in trec_columns:
                entry[key] = row[column]
        for key, column in mrr_columns:
            entry[key] = row[column]
        if entry:
            per_query[qid] = entry
    self_hits = int(np.count_nonzero(stats[:, 2]))
    return assemble(qrels, run.query_ids, per_query, ks, chosen, named, self_hits)


class BeirRetrievalMetric:
    """A BEIR retrieval metric (``ndcg``, ``map``, ``recall``, ``precision`` or ``mrr``) at k.

    Chunk hits are mapped to benchmark documents (see ``collapse_to_documents``); ``k`` counts
    documents after deduplication. The per-case value is the pytrec_eval (or BEIR ``mrr``)
    value of that query; aggregated with ``evaluate_responses`` the means equal BEIR's.

    >>> import asyncio
    >>> metric = BeirRetrievalMetric(metric="ndcg", k=10)
    >>> from heta_eval.evaluation import BenchmarkCase, QueryResponse
    >>> case = BenchmarkCase(id="q1", query="?", expected={"relevance": {"d1": 1}})
    >>> response = QueryResponse(query="?", results=[
    ...     {"score": 2.0, "source": {"document_id": "d2"}},
    ...     {"score": 1.0, "source": {"document_id": "d1"}}])
    >>> score = asyncio.run(metric.evaluate(case=case, response=response))
    >>> score.name, round(score.value, 5)
    ('ndcg@10', 0.63093)
    """

    def __init__(
        self,
        metric: str = "ndcg",
        k: int = 10,
        *,
        resolver: DocumentResolver | None = None,
        ignore_identical_ids: bool = True,
    ) -> None:
        _validate_metrics([metric])
        _validate_k_values([k])
        self.metric = metric
        self.k = k
        self.resolver = resolver
        self.ignore_identical_ids = ignore_identical_ids

    @property
    def name(self) -> str:
        return f"{self.metric}@{self.k}"

    @property
    def key(self) -> str:
        """BEIR's key for this measure, e.g. ``NDCG@10``."""
        return measure_key(self.metric, self.k)

    @property
    def measure(self) -> Measure:
        """This metric as a :class:`~heta_eval.measures.measure.Measure`."""
        return legacy_measure(self.metric, self.k)

    @property
    def config(self) -> tuple[Any, ...]:
        """Evaluators with equal configs share their document mapping (one batch pass)."""
        return (self.resolver, self.ignore_identical_ids)

    def __repr__(self) -> str:
        return f"BeirRetrievalMetric(metric={self.metric!r}, k={self.k})"

    def collapse(self, case: BenchmarkCase, response: QueryResponse) -> DocumentRanking:
        return collapse_to_documents(
            response,
            query_id=case.id,
            resolver=self.resolver,
            ignore_identical_ids=self.ignore_identical_ids,
        )

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """One case, through the one evaluator (``evaluate_responses`` batches many)."""
        from heta_eval.models.records import EvaluationScore

        if not case.expected.relevance:
            return EvaluationScore.skip(self.name, "case has no relevance judgments")
        ranking = self.collapse(case, response)
        result = evaluate_run(
            {case.id: dict(case.expected.relevance)},
            {case.id: ranking.scores},
            [self.k],
            metrics=[self.metric],
            ignore_identical_ids=False,
            engine="pytrec",
        )
        return self.score_from(result.per_query[case.id][self.key], ranking)

    def score_from(self, value: float, ranking: DocumentRanking) -> EvaluationScore:
        from heta_eval.models.records import EvaluationScore

        return EvaluationScore(name=self.name, value=value, metadata=ranking.metadata())


def beir_default_metrics(
    k_values: Iterable[int] = BEIR_K_VALUES,
    *,
    metrics: Iterable[str] = METRICS,
    resolver: DocumentResolver | None = None,
    ignore_identical_ids: bool = True,
) -> tuple[BeirRetrievalMetric, ...]:
    """One ``BeirRetrievalMetric`` per metric and k (25 with the defaults).

    >>> evaluators = beir_default_metrics(k_values=(1, 3, 5, 10, 100))
    >>> len(evaluators), evaluators[3].name
    (25, 'ndcg@10')
    """
    ks = _validate_k_values(k_values)
    return tuple(
        BeirRetrievalMetric(metric, k, resolver=resolver, ignore_identical_ids=ignore_identical_ids)
        for metric in _validate_metrics(metrics)
        for k in ks
    )
