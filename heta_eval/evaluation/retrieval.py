"""BEIR-exact retrieval metrics.

Two layers:

* ``evaluate_run(qrels, run)`` scores a document-level run exactly as BEIR's
  ``EvaluateRetrieval.evaluate`` (nDCG, MAP, Recall, P through pytrec_eval) and
  ``evaluate_custom(..., "mrr")`` do, and also reports the strict ``trec_eval -c`` aggregate.
* ``BeirRetrievalMetric`` is the evaluator: it collapses a chunk-level ``QueryResponse`` to a
  document-level ranking (``collapse_to_documents``) and scores it with the same engine.

The BEIR rules reproduced here (``../shared/reference/beir-semantics.md``):

* self-hits (a document whose id equals the query id) are removed, on every dataset;
* pytrec_eval ranks by float32 scores, ties broken by document id descending;
* the BEIR mean is over queries present in both the run and the (non-empty) qrels; the strict
  mean is over every judged query, a query missing from the run scoring 0;
* MRR@k follows BEIR's ``mrr``: a stable sort on the raw scores (ties keep run order), relevant
  means label > 0, the mean divides by the number of qrels queries;
* sums accumulate in run order in a plain loop and means are rounded with ``round(x, 5)``.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import pytrec_eval

from .columns import ResultColumns
from .interop import as_qrels, as_run

if TYPE_CHECKING:  # pydantic's models load with the evaluator, not for a run file
    from .models import BenchmarkCase, EvaluationScore, QueryResponse, QueryResult

__all__ = [
    "BEIR_K_VALUES",
    "METRICS",
    "AggregateValue",
    "BeirRetrievalMetric",
    "CollapsedBatch",
    "DocumentRanking",
    "DuplicateRowsError",
    "RunEvaluation",
    "beir_default_metrics",
    "collapse_batch",
    "collapse_to_documents",
    "default_document_resolver",
    "evaluate_columnar_run",
    "evaluate_run",
    "measure_key",
    "parse_measure",
]

#: Metrics a ``BeirRetrievalMetric`` accepts.
METRICS: tuple[str, ...] = ("ndcg", "map", "recall", "precision", "mrr")
#: The k values BEIR reports by default.
BEIR_K_VALUES: tuple[int, ...] = (1, 3, 5, 10, 100)

_PYTREC_MEASURE = {"ndcg": "ndcg_cut", "map": "map_cut", "recall": "recall", "precision": "P"}
_BEIR_PREFIX = {"ndcg": "NDCG", "map": "MAP", "recall": "Recall", "precision": "P", "mrr": "MRR"}
_ALIASES = {
    "ndcg": "ndcg", "ndcg_cut": "ndcg",
    "map": "map", "map_cut": "map", "ap": "map",
    "recall": "recall", "r": "recall",
    "precision": "precision", "p": "precision",
    "mrr": "mrr", "rr": "mrr", "mrr_cut": "mrr", "recip_rank": "mrr",
}  # fmt: skip
_MEASURE_PATTERN = re.compile(r"^\s*([A-Za-z_]+)\s*[@_.]\s*(\d+)\s*$")

DocumentResolver = Callable[["QueryResult"], "str | None"]


def measure_key(metric: str, k: int) -> str:
    """BEIR's output key for a metric at cutoff k.

    >>> measure_key("ndcg", 10), measure_key("recall", 100), measure_key("precision", 5)
    ('NDCG@10', 'Recall@100', 'P@5')
    """
    return f"{_BEIR_PREFIX[metric]}@{k}"


def parse_measure(name: str) -> tuple[str, int]:
    """Parse a measure name (``nDCG@10``, ``R@100``, ``P_5``, ``map_cut.10``) into (metric, k).

    >>> parse_measure("nDCG@10"), parse_measure("R@100"), parse_measure("mrr@10")
    (('ndcg', 10), ('recall', 100), ('mrr', 10))
    """
    match = _MEASURE_PATTERN.match(name)
    metric = _ALIASES.get(match.group(1).lower()) if match else None
    if match is None or metric is None or int(match.group(2)) < 1:
        raise ValueError(
            f"cannot parse measure {name!r}: expected METRIC@K with METRIC one of "
            f"nDCG, MAP, Recall (R), P, MRR and K a positive integer, e.g. 'nDCG@10'"
        )
    return metric, int(match.group(2))


# --------------------------------------------------------------------------------------
# Document-level evaluation
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AggregateValue:
    """A metric aggregated over queries, BEIR-style and strict (``trec_eval -c``)."""

    name: str
    beir: float | None
    beir_unrounded: float | None
    strict: float | None
    strict_unrounded: float | None
    queries: int  # queries in the BEIR mean
    judged_queries: int  # queries in the strict mean

    @property
    def differs(self) -> bool:
        """True when the BEIR and strict numbers disagree after rounding."""
        return self.beir != self.strict


@dataclass
class RunEvaluation:
    """Per-query values and BEIR / strict aggregates of one document-level run."""

    k_values: tuple[int, ...]
    metrics: tuple[str, ...]
    per_query: dict[str, dict[str, float]]
    aggregates: dict[str, AggregateValue]
    counts: dict[str, int] = field(default_factory=dict)

    def beir_dict(self) -> dict[str, dict[str, float | None]]:
        """Rounded BEIR numbers keyed like BEIR: ``{"ndcg": {"NDCG@10": ...}, "map": ...}``."""
        return self._as_dict("beir")

    def strict_dict(self) -> dict[str, dict[str, float | None]]:
        """Rounded strict (``trec_eval -c``) numbers, same shape as :meth:`beir_dict`."""
        return self._as_dict("strict")

    def _as_dict(self, attribute: str) -> dict[str, dict[str, float | None]]:
        return {
            metric: {
                measure_key(metric, k): getattr(self.aggregates[measure_key(metric, k)], attribute)
                for k in self.k_values
            }
            for metric in self.metrics
        }

    def table(self) -> str:
        """A markdown table with one row per measure and BEIR / strict columns."""
        lines = ["| measure | BEIR | strict (trec_eval -c) |", "|---|---:|---:|"]
        for aggregate in self.aggregates.values():
            lines.append(
                f"| {aggregate.name} | {_fmt(aggregate.beir)} | {_fmt(aggregate.strict)} |"
            )
        return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.5f}"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 5)


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


def _pytrec_values(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str],
    k_values: Sequence[int],
) -> dict[str, dict[str, float]]:
    """Per-query pytrec_eval values for the judged queries of ``run``, keyed by BEIR names."""
    trec_metrics = [m for m in metrics if m in _PYTREC_MEASURE]
    if not trec_metrics:
        return {}
    # Internal query ids dodge trec_eval's "no_query" cache key (beir-semantics §3.6) and let
    # us pass the caller's inner dicts through without copying them.
    qids = [qid for qid in run if qrels.get(qid)]
    internal_run = {str(i): run[qid] for i, qid in enumerate(qids)}
    internal_qrels = {str(i): qrels[qid] for i, qid in enumerate(qids)}
    cutoffs = ",".join(str(k) for k in k_values)
    measures = {f"{_PYTREC_MEASURE[m]}.{cutoffs}" for m in trec_metrics}
    try:
        evaluator = pytrec_eval.RelevanceEvaluator(internal_qrels, measures)
        raw = evaluator.evaluate(internal_run)
    except TypeError as error:
        raise TypeError(
            f"pytrec_eval rejected the input ({error}): qrels labels must be Python ints and "
            "run scores Python floats (not numpy.float32), keyed by str ids"
        ) from error
    output: dict[str, dict[str, float]] = {}
    for i, qid in enumerate(qids):
        values = raw.get(str(i))
        if values is None:
            continue
        output[qid] = {
            measure_key(m, k): values[f"{_PYTREC_MEASURE[m]}_{k}"]
            for m in trec_metrics
            for k in k_values
        }
    return output


def _mrr_values(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    k_values: Sequence[int],
) -> dict[str, dict[str, float]]:
    """BEIR's ``mrr``: stable sort on raw scores, relevant = label > 0, 1/rank of the first hit."""
    k_max = max(k_values)
    output: dict[str, dict[str, float]] = {}
    for qid, docs in run.items():
        judged = qrels.get(qid)
        if judged is None:
            continue  # BEIR raises KeyError here; an unjudged query simply has no MRR.
        ranked = sorted(docs.items(), key=lambda item: item[1], reverse=True)[:k_max]
        first_hit = next(
            (rank for rank, (doc, _) in enumerate(ranked, 1) if judged.get(doc, 0) > 0), None
        )
        output[qid] = {
            measure_key("mrr", k): (1.0 / first_hit if first_hit and first_hit <= k else 0.0)
            for k in k_values
        }
    return output


#: Runs with at least this many results go to the compiled engine under ``engine="auto"``
#: (below it, pytrec_eval is as fast and needs no JIT-compiled code).
AUTO_ENGINE_ROWS = 200_000


def evaluate_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    k_values: Iterable[int] = BEIR_K_VALUES,
    *,
    metrics: Iterable[str] = METRICS,
    ignore_identical_ids: bool = True,
    engine: str = "auto",
) -> RunEvaluation:
    """Score a document-level run with BEIR's exact semantics, plus strict aggregates.

    ``qrels`` maps query id to ``{doc id: int label}``; ``run`` maps query id to
    ``{doc id: float score}``. Neither is modified. Either may also be a pandas DataFrame
    (``query_id``/``q_id``, ``doc_id``, ``score``/``relevance``) or a ranx ``Run``/``Qrels``
    (:mod:`heta_eval.evaluation.interop`). ``engine``: ``"pytrec"`` (pytrec_eval
    and BEIR's mrr, as BEIR computes them), ``"fast"`` (the compiled columnar engine of
    :mod:`heta_eval.evaluation.engine`, equal to the last digit), or ``"auto"`` (the engine
    for runs of ``AUTO_ENGINE_ROWS`` results or more, when numba is available).

    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    >>> run = {"q1": {"d2": 3.0, "d1": 2.0, "q1": 9.0}, "q2": {"d3": 1.0}}
    >>> result = evaluate_run(qrels, run, k_values=(1, 10))
    >>> result.beir_dict()["ndcg"]
    {'NDCG@1': 0.5, 'NDCG@10': 0.81546}
    >>> result.counts["self_hits_removed"]
    1
    >>> evaluate_run(qrels, run, k_values=(1, 10), engine="fast").beir_dict()["ndcg"]
    {'NDCG@1': 0.5, 'NDCG@10': 0.81546}
    """
    qrels, run = as_qrels(qrels), as_run(run)
    ks = _validate_k_values(k_values)
    chosen = _validate_metrics(metrics)
    if engine not in ("auto", "pytrec", "fast"):
        raise ValueError(f"engine must be 'auto', 'pytrec' or 'fast', got {engine!r}")
    if engine == "auto":
        engine = "pytrec"
        if sum(map(len, run.values())) >= AUTO_ENGINE_ROWS:
            from .engine import HAVE_NUMBA  # numba loads only for a run large enough

            engine = "fast" if HAVE_NUMBA else "pytrec"
    if engine == "fast":
        from .engine import columnar_run_from_dict

        columnar = columnar_run_from_dict(run, ignore_identical_ids=ignore_identical_ids)
        return evaluate_columnar_run(qrels, columnar, ks, metrics=chosen)

    self_hits = 0
    if ignore_identical_ids:
        run, self_hits = _without_self_hits(run)

    per_query = _pytrec_values(qrels, run, chosen, ks)
    if "mrr" in chosen:
        for qid, values in _mrr_values(qrels, run, ks).items():
            per_query.setdefault(qid, {}).update(values)
    return _aggregate(qrels, list(run), per_query, chosen, ks, self_hits)


class DuplicateRowsError(ValueError):
    """A columnar run repeats a (query, doc) pair."""


def evaluate_columnar_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Any,
    k_values: Iterable[int] = BEIR_K_VALUES,
    *,
    metrics: Iterable[str] = METRICS,
    reject_duplicates: bool = False,
) -> RunEvaluation:
    """:func:`evaluate_run` on a :class:`~heta_eval.evaluation.engine.ColumnarRun` (query ids
    unique; self-hits already masked in ``run.skip``), through the compiled engine.

    A doc id repeated within a query keeps its first row; with ``reject_duplicates`` it
    raises :class:`DuplicateRowsError` instead (callers then re-read the file with the
    validating reader, which names the line).

    >>> from heta_eval.evaluation.engine import columnar_run_from_dict
    >>> run = columnar_run_from_dict({"q1": {"d2": 3.0, "d1": 2.0}})
    >>> evaluate_columnar_run({"q1": {"d1": 1}}, run, (1, 10)).beir_dict()["mrr"]
    {'MRR@1': 0.0, 'MRR@10': 0.5}
    """
    from .engine import METRIC_ORDER, evaluate_columnar

    ks = _validate_k_values(k_values)
    chosen = _validate_metrics(metrics)
    values, stats = evaluate_columnar(run, qrels, ks)
    if reject_duplicates and stats[:, 1].any():
        raise DuplicateRowsError(f"{int(stats[:, 1].sum())} repeated (query, doc) rows")
    nk = len(ks)
    columns = {
        metric: [(measure_key(metric, k), block * nk + c) for c, k in enumerate(ks)]
        for block, metric in enumerate(METRIC_ORDER)
        if metric in chosen
    }
    trec_columns = [pair for metric in chosen if metric != "mrr" for pair in columns[metric]]
    mrr_columns = columns.get("mrr", [])
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
    return _aggregate(qrels, run.query_ids, per_query, chosen, ks, self_hits)


def _aggregate(
    qrels: Mapping[str, Mapping[str, int]],
    run_qids: Sequence[str],
    per_query: dict[str, dict[str, float]],
    chosen: tuple[str, ...],
    ks: tuple[int, ...],
    self_hits: int,
) -> RunEvaluation:
    """BEIR and strict means of per-query values, summed in run order as BEIR does."""
    in_run = set(run_qids)
    judged = [qid for qid, docs in qrels.items() if docs]
    trec_evaluated = [qid for qid in run_qids if qrels.get(qid)]  # pytrec_eval's output order
    mrr_evaluated = [qid for qid in run_qids if qid in qrels]
    aggregates: dict[str, AggregateValue] = {}
    for metric in chosen:
        evaluated = mrr_evaluated if metric == "mrr" else trec_evaluated
        # BEIR's mrr divides by len(qrels); evaluate() by the number of evaluated queries.
        beir_denominator = len(qrels) if metric == "mrr" else len(evaluated)
        for k in ks:
            key = measure_key(metric, k)
            beir_sum = 0.0
            for qid in evaluated:
                beir_sum += per_query[qid][key]
            strict_sum = 0.0
            for qid in judged:
                values = per_query.get(qid)
                if values is not None:
                    strict_sum += values[key]
            beir = beir_sum / beir_denominator if beir_denominator else None
            strict = strict_sum / len(judged) if judged else None
            aggregates[key] = AggregateValue(
                name=key,
                beir=_round(beir),
                beir_unrounded=beir,
                strict=_round(strict),
                strict_unrounded=strict,
                queries=len(evaluated),
                judged_queries=len(judged),
            )
    counts = {
        "judged_queries": len(judged),
        "evaluated_queries": len(trec_evaluated),
        "missing_queries": len(judged) - sum(1 for qid in judged if qid in in_run),
        "unjudged_queries": sum(1 for qid in run_qids if not qrels.get(qid)),
        "self_hits_removed": self_hits,
    }
    return RunEvaluation(ks, chosen, per_query, aggregates, counts)


# --------------------------------------------------------------------------------------
# Chunk-level responses -> document-level rankings
# --------------------------------------------------------------------------------------


def default_document_resolver(result: QueryResult) -> str | None:
    """The benchmark document id of a result: ``source`` field ``document_id``, then
    ``source_key``, then ``object_key``.

    >>> from heta_eval.evaluation import QueryResult
    >>> default_document_resolver(QueryResult(source={"source_key": "doc-7", "chunk_id": 2}))
    'doc-7'
    """
    source = result.source
    for key in ("document_id", "source_key", "object_key"):
        value = source.get(key)
        if value is not None and value != "":
            return str(value)
    return None


@dataclass(frozen=True)
class DocumentRanking:
    """A response collapsed to documents: ``scores`` in rank order, plus what was dropped."""

    scores: dict[str, float]
    unmapped: int = 0
    duplicates: int = 0
    self_hits: int = 0
    rank_derived: bool = False

    def metadata(self) -> dict[str, Any]:
        return {
            "documents": len(self.scores),
            "unmapped_results": self.unmapped,
            "duplicate_chunks": self.duplicates,
            "self_hits_removed": self.self_hits,
            "rank_derived_scores": self.rank_derived,
        }


def collapse_to_documents(
    response: QueryResponse,
    *,
    query_id: str | None = None,
    resolver: DocumentResolver | None = None,
    ignore_identical_ids: bool = True,
) -> DocumentRanking:
    """Map chunk hits to document ids, keeping each document's best-ranked chunk.

    A document's score is its best-ranked chunk's score. When any mapped result has no
    score, every document gets a rank-derived score (n, n-1, ..., 1) instead, which keeps
    the response's order exactly. Results that map to no document are dropped and counted;
    with ``ignore_identical_ids`` a document whose id equals ``query_id`` is dropped too.

    >>> from heta_eval.evaluation import QueryResponse
    >>> response = QueryResponse(query="q", results=[
    ...     {"score": 0.9, "source": {"document_id": "a"}},
    ...     {"score": 0.8, "source": {"document_id": "b"}},
    ...     {"score": 0.7, "source": {"document_id": "a"}},
    ...     {"score": 0.6, "source": {}}])
    >>> ranking = collapse_to_documents(response)
    >>> ranking.scores, ranking.duplicates, ranking.unmapped
    ({'a': 0.9, 'b': 0.8}, 1, 1)
    """
    ids, kept_scores, unmapped, duplicates, self_hits = _collapse_ids(
        response.results, query_id, resolver, ignore_identical_ids
    )
    scores = dict(zip(ids, kept_scores, strict=True))
    rank_derived = any(score is None for score in scores.values())
    if rank_derived:
        n = len(scores)
        final = {doc_id: float(n - i) for i, doc_id in enumerate(scores)}
    else:
        final = {doc_id: float(score) for doc_id, score in scores.items()}  # type: ignore[arg-type]
    return DocumentRanking(final, unmapped, duplicates, self_hits, rank_derived)


_SOURCE = attrgetter("source")
_SCORE = attrgetter("score")


@dataclass
class CollapsedBatch:
    """Many responses collapsed to documents at once, as a columnar run for the engine.

    ``run`` holds the kept documents of each query in first-occurrence order (scores may
    be missing: ``run.valid``); ``unmapped`` / ``duplicates`` / ``self_hits`` count dropped
    results per query, aligned with ``run.query_ids``.
    """

    run: Any  # engine.ColumnarRun
    unmapped: list[int]
    duplicates: list[int]
    self_hits: list[int]


def _collapse_ids(
    results: Sequence[QueryResult],
    query_id: str | None,
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> tuple[list[str], list[float | None], int, int, int]:
    """Kept doc ids, their scores, and unmapped / duplicate / self-hit counts of a response.

    Same rules as :func:`collapse_to_documents`; the common case (the default resolver,
    every ``source`` has a non-empty str ``document_id``) runs in C-level passes, and
    ``ResultColumns`` in array operations.
    """
    n = len(results)
    if resolver is None and isinstance(results, ResultColumns):
        return _collapse_columns(results, query_id, ignore_identical_ids)
    if resolver is None:
        ids = list(map(dict.get, map(_SOURCE, results), repeat("document_id")))
        # doc id -> first position: built from the end so the first occurrence wins.
        first = dict(zip(reversed(ids), range(n - 1, -1, -1), strict=False))
        if None not in first and "" not in first and set(map(type, first)) <= {str}:
            self_hits = 0
            if ignore_identical_ids and query_id in first:
                self_hits = ids.count(query_id)
                del first[query_id]
            positions = sorted(first.values())
            if not positions:
                return [], [], 0, n - self_hits, self_hits
            pick = itemgetter(*positions)
            kept_ids = list(pick(ids)) if len(positions) > 1 else [pick(ids)]
            kept = pick(results)
            scores = list(map(_SCORE, kept)) if len(positions) > 1 else [kept.score]
            return kept_ids, scores, 0, n - self_hits - len(positions), self_hits
    resolve = resolver or default_document_resolver
    chosen: dict[str, float | None] = {}
    unmapped = duplicates = self_hits = 0
    for result in results:
        doc_id = resolve(result)
        if doc_id is None:
            unmapped += 1
        elif ignore_identical_ids and doc_id == query_id:
            self_hits += 1
        elif doc_id in chosen:
            duplicates += 1
        else:
            chosen[doc_id] = result.score
    return list(chosen), list(chosen.values()), unmapped, duplicates, self_hits


def _collapse_columns(
    results: ResultColumns, query_id: str | None, ignore_identical_ids: bool
) -> tuple[list[str], list[float | None], int, int, int]:
    """:func:`_collapse_ids` of one ``ResultColumns`` (every row has a document id)."""
    codes = results.table.codes[results.rows]
    n = len(codes)
    _, first = np.unique(codes, return_index=True)
    first.sort()
    doc_ids = results.table.document_ids
    kept_ids = [doc_ids[row] for row in results.rows[first].tolist()]
    self_hits = 0
    if ignore_identical_ids and query_id in kept_ids:
        j = kept_ids.index(query_id)
        self_hits = int((codes == codes[first[j]]).sum())
        del kept_ids[j]
        first = np.delete(first, j)
    if results.scores is None:
        scores: list[float | None] = [None] * len(kept_ids)
    else:
        scores = [None if v != v else v for v in results.scores[first].tolist()]
    return kept_ids, scores, 0, n - self_hits - len(kept_ids), self_hits


def collapse_batch(
    pairs: Iterable[tuple[str, QueryResponse]],
    *,
    resolver: DocumentResolver | None = None,
    ignore_identical_ids: bool = True,
) -> CollapsedBatch:
    """:func:`collapse_to_documents` for many ``(query id, response)`` pairs, into arrays.

    Consecutive ``ResultColumns`` responses of one chunk table are collapsed together by a
    compiled pass over their integer document codes, without building result objects.

    >>> from heta_eval.evaluation import QueryResponse
    >>> response = QueryResponse(query="q", results=[
    ...     {"score": 0.9, "source": {"document_id": "a"}},
    ...     {"score": 0.8, "source": {"document_id": "b"}},
    ...     {"score": 0.7, "source": {"document_id": "a"}}])
    >>> batch = collapse_batch([("q1", response)])
    >>> batch.run.scores.tolist(), batch.duplicates
    ([0.9, 0.8], [1])
    """
    from .engine import ColumnarRun

    parts: list[_Part] = []
    segment: list[tuple[str, QueryResponse]] = []
    segment_table: Any = None
    for query_id, response in pairs:
        results = response.results
        table = results.table if resolver is None and isinstance(results, ResultColumns) else None
        if segment and table is not segment_table:
            parts.append(_collapse_segment(segment, segment_table, resolver, ignore_identical_ids))
            segment = []
        segment.append((query_id, response))
        segment_table = table
    if segment or not parts:
        parts.append(_collapse_segment(segment, segment_table, resolver, ignore_identical_ids))
    if len(parts) == 1:
        part = parts[0]
        data, doc_offsets = part.data, part.doc_offsets
    else:
        data = np.concatenate([part.data for part in parts])
        shifts = np.cumsum([0] + [len(part.data) for part in parts[:-1]])
        doc_offsets = np.concatenate(
            [parts[0].doc_offsets[:1]]
            + [part.doc_offsets[1:] + shift for part, shift in zip(parts, shifts, strict=True)]
        )
    query_ids = [qid for part in parts for qid in part.query_ids]
    lengths = np.concatenate([part.lengths for part in parts])
    offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    scores = np.concatenate([part.scores for part in parts])
    missing = np.isnan(scores)
    valid = None
    if missing.any():
        valid = ~missing
        scores[missing] = 0.0
    run = ColumnarRun(query_ids, offsets, data, doc_offsets, scores, valid)
    return CollapsedBatch(
        run,
        [n for part in parts for n in part.unmapped],
        [n for part in parts for n in part.duplicates],
        [n for part in parts for n in part.self_hits],
    )


@dataclass
class _Part:
    """A collapsed run of consecutive queries: kept doc ids as UTF-8 buffers, NaN = no score."""

    query_ids: list[str]
    lengths: np.ndarray
    data: np.ndarray
    doc_offsets: np.ndarray
    scores: np.ndarray
    unmapped: list[int]
    duplicates: list[int]
    self_hits: list[int]


def _collapse_segment(
    pairs: list[tuple[str, QueryResponse]],
    table: Any,
    resolver: DocumentResolver | None,
    ignore_identical_ids: bool,
) -> _Part:
    if table is not None:
        return _collapse_table_segment(pairs, table, ignore_identical_ids)
    import pyarrow as pa

    from .engine import string_buffers

    query_ids: list[str] = []
    all_ids: list[str] = []
    all_scores: list[float | None] = []
    lengths: list[int] = []
    unmapped: list[int] = []
    duplicates: list[int] = []
    self_hits: list[int] = []
    for query_id, response in pairs:
        ids, scores, n_unmapped, n_duplicates, n_self = _collapse_ids(
            response.results, query_id, resolver, ignore_identical_ids
        )
        query_ids.append(query_id)
        all_ids.extend(ids)
        all_scores.extend(scores)
        lengths.append(len(ids))
        unmapped.append(n_unmapped)
        duplicates.append(n_duplicates)
        self_hits.append(n_self)
    score_array = pa.array(all_scores, type=pa.float64()).fill_null(float("nan"))
    data, doc_offsets = string_buffers(all_ids)
    return _Part(
        query_ids,
        np.asarray(lengths, dtype=np.int64),
        data,
        doc_offsets,
        score_array.to_numpy(zero_copy_only=False).copy(),
        unmapped,
        duplicates,
        self_hits,
    )


def _collapse_table_segment(
    pairs: list[tuple[str, QueryResponse]], table: Any, ignore_identical_ids: bool
) -> _Part:
    from .engine import first_occurrences, gather_strings, string_buffers

    query_ids = [query_id for query_id, _ in pairs]
    columns: list[ResultColumns] = [response.results for _, response in pairs]  # type: ignore[misc]
    sizes = np.fromiter(map(len, columns), dtype=np.int64, count=len(columns))
    offsets = np.zeros(len(columns) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    rows = np.concatenate([c.rows for c in columns]) if columns else np.zeros(0, np.int64)
    scores = np.concatenate(
        [c.scores if c.scores is not None else np.full(len(c), np.nan) for c in columns]
        or [np.zeros(0)]
    )
    codes = table.codes[rows]
    doc_data, doc_offsets = table.document_buffers
    query_data, query_offsets = string_buffers(query_ids)
    keep, kept, duplicates, self_hits = first_occurrences(
        codes, offsets, doc_data, doc_offsets, query_data, query_offsets,
        ignore_identical_ids,
    )  # fmt: skip
    data, kept_offsets = gather_strings(doc_data, doc_offsets, codes[keep])
    return _Part(
        query_ids,
        kept,
        data,
        kept_offsets,
        scores[keep],
        [0] * len(query_ids),
        duplicates.tolist(),
        self_hits.tolist(),
    )


# --------------------------------------------------------------------------------------
# The evaluator
# --------------------------------------------------------------------------------------

# Recently scored (case, response) pairs: all default evaluators of one response share one
# pytrec_eval pass. Strong references keep ids from being reused while an entry lives.
_CACHE_SIZE = 256
_cache: OrderedDict[tuple[Any, ...], tuple[Any, Any, DocumentRanking, dict[str, float]]] = (
    OrderedDict()
)


class BeirRetrievalMetric:
    """A BEIR retrieval metric (``ndcg``, ``map``, ``recall``, ``precision`` or ``mrr``) at k.

    Chunk hits are mapped to benchmark documents (see ``collapse_to_documents``); ``k`` counts
    documents after deduplication. The per-case value is the pytrec_eval (or BEIR ``mrr``)
    value of that query; aggregated with ``evaluate_responses`` the means equal BEIR's.

    >>> import asyncio
    >>> from heta_eval.evaluation import BenchmarkCase, QueryResponse
    >>> metric = BeirRetrievalMetric(metric="ndcg", k=10)
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
    def config(self) -> tuple[Any, ...]:
        """Evaluators with equal configs share their document mapping and pytrec_eval pass."""
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
        if not case.expected.relevance:
            from .models import EvaluationScore

            return EvaluationScore.skip(self.name, "case has no relevance judgments")
        ranking, values = self._values(case, response)
        return self.score_from(values[self.key], ranking)

    def score_from(self, value: float, ranking: DocumentRanking) -> EvaluationScore:
        from .models import EvaluationScore

        return EvaluationScore(name=self.name, value=value, metadata=ranking.metadata())

    def _values(
        self, case: BenchmarkCase, response: QueryResponse
    ) -> tuple[DocumentRanking, dict[str, float]]:
        cache_key = (id(case), id(response), *self.config)
        hit = _cache.get(cache_key)
        if hit is not None and hit[0] is case and hit[1] is response:
            _cache.move_to_end(cache_key)
            ranking, values = hit[2], hit[3]
            if self.key in values:
                return ranking, values
        else:
            ranking, values = self.collapse(case, response), {}
        # Compute every metric at BEIR's k values (and ours) at once: the other default
        # evaluators of this response will read them from the cache.
        ks = sorted({*BEIR_K_VALUES, self.k})
        qrels = {case.id: dict(case.expected.relevance)}
        run = {case.id: ranking.scores}
        values.update(evaluate_run(qrels, run, ks, ignore_identical_ids=False).per_query[case.id])
        _cache[cache_key] = (case, response, ranking, values)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
        return ranking, values


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
