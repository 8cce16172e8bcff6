"""What an approximate index costs: the same queries through exact search and each index,
side by side: nDCG@10 and Recall@100 (BEIR's numbers, scored as ``heta-eval run`` scores
them), the recall of the exact top 10 and top 100, queries per second and build seconds.

The recall of the exact top ``k`` is ``|index's top k ∩ exact top k| / k`` per query,
averaged. Two things can move it without the index being wrong, and both are stated, never
hidden: ties (the exact score at rank ``k`` equal to the one at ``k + 1``, within
:data:`TIE`: the exact top ``k`` is then one of several), and float rounding (an index sums
a product in another order; the largest difference of a score from the exact one, for the
rows both found, is reported).

>>> from heta_eval.ann import parse_ann
>>> rng = np.random.default_rng(0)
>>> corpus = rng.normal(size=(300, 8)).astype(np.float32)
>>> queries = rng.normal(size=(5, 8)).astype(np.float32)
>>> qrels = {f"q{i}": {f"d{i}": 1} for i in range(5)}
>>> found = compare_indexes(corpus, None, queries, list(qrels), [f"d{i}" for i in range(300)],
...                         qrels, [parse_ann("faiss-flat")])
>>> [row.label for row in found.rows], found.rows[1].overlap
(['exact', 'faiss-flat'], {10: 1.0, 100: 1.0})
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from heta_eval.ann import build_index
from heta_eval.ann.base import scored_rows
from heta_eval.ann.exact_search import exact_search
from heta_eval.ann.spec import AnnSpec
from heta_eval.io.tables import Table
from heta_eval.retrieval.run import evaluate_run

__all__ = ["TIE", "AnnComparison", "AnnRow", "compare_indexes", "overlap_at"]

#: Scores this close count as tied (float32 rounding of a product of unit vectors: ~1e-7).
TIE = 1e-6
#: The cutoffs of the recall of the exact top k; the run asks the largest + 1 hits.
CUTOFFS = (10, 100)


@dataclass
class AnnRow:
    """One index's line: what ran (``record``), its numbers, what moved them."""

    label: str
    record: dict[str, Any]
    ndcg_10: float | None
    recall_100: float | None
    overlap: dict[int, float]
    qps: float
    build_seconds: float | None
    max_score_difference: float | None = None
    short_queries: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "index": self.label,
            "record": self.record,
            "nDCG@10": self.ndcg_10,
            "Recall@100": self.recall_100,
            "recall_of_exact": {f"top{k}": v for k, v in self.overlap.items()},
            "queries_per_second": self.qps,
            "build_seconds": self.build_seconds,
            "max_score_difference": self.max_score_difference,
            "queries_with_fewer_hits": self.short_queries,
        }


@dataclass
class AnnComparison:
    """Exact search first, then each index; ``ties``: queries whose exact top ``k`` is not
    unique (rank ``k``'s score tied with ``k + 1``'s)."""

    rows: list[AnnRow]
    queries: int
    documents: int
    ties: dict[int, int] = field(default_factory=dict)

    def table(self) -> Table:
        header = [
            "index",
            "settings",
            "nDCG@10",
            "Recall@100",
            *(f"recall of exact top {k}" for k in CUTOFFS),
            "queries/s",
            "build s",
        ]
        rows = [
            [
                row.label.partition(":")[0],
                _settings(row),
                _five(row.ndcg_10),
                _five(row.recall_100),
                *(_five(row.overlap.get(k)) for k in CUTOFFS),
                f"{row.qps:,.0f}",
                _seconds(row.build_seconds),
            ]
            for row in self.rows
        ]
        return Table(header, rows, align="llrrrrrr")

    def notes(self) -> list[str]:
        """What moved the recall of the exact top k besides the index, in words."""
        lines = [
            f"{self.queries:,} queries over {self.documents:,} documents; queries/s: "
            "every query searched in one call, after one warm-up query"
        ]
        for k, count in self.ties.items():
            if count:
                lines.append(
                    f"{count:,} queries have a tie at exact rank {k} (scores within "
                    f"{TIE:g}): their exact top {k} is one of several, so an index "
                    "may miss a row of it without an error"
                )
        differences = [
            f"{row.label} {row.max_score_difference:.2g}"
            for row in self.rows[1:]
            if row.max_score_difference
        ]
        if differences:
            lines.append(
                "largest difference of a score from exact search's, on the rows both "
                "found (float rounding; a compressed index: its approximation): "
                + ", ".join(differences)
            )
        for row in self.rows[1:]:
            if row.short_queries:
                lines.append(
                    f"{row.label}: {row.short_queries:,} queries got fewer than "
                    f"{max(CUTOFFS) + 1} hits (the index found no more; missing rows "
                    "count as misses)"
                )
        return lines

    def as_json(self) -> dict[str, Any]:
        return {
            "queries": self.queries,
            "documents": self.documents,
            "tie_tolerance": TIE,
            "ties_at_cutoff": {f"top{k}": v for k, v in self.ties.items()},
            "indexes": [row.as_json() for row in self.rows],
        }


def compare_indexes(
    embeddings: np.ndarray,
    row_scale: np.ndarray | None,
    queries: np.ndarray,
    query_ids: Sequence[str],
    document_ids: Sequence[str],
    qrels: Mapping[str, Mapping[str, int]],
    specs: Sequence[AnnSpec],
    *,
    ignore_identical_ids: bool = True,
    on_index: Callable[[str], None] | None = None,
) -> AnnComparison:
    """Search ``queries`` (float32, one row per id of ``query_ids``, as exact search takes
    them) exactly and through each of ``specs``' indexes over ``embeddings`` (scaled by
    ``row_scale`` as exact search scales them); score each run against ``qrels``.
    ``on_index(label)`` is called before each index is built (progress)."""
    depth = max(CUTOFFS) + 1  # a run's rule: the largest k + 1 (a self-hit removed)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    exact_search(embeddings, queries[:1], depth, row_scale=row_scale)  # warm-up (the kernel)
    started = time.perf_counter()
    exact_rows, exact_scores = exact_search(embeddings, queries, depth, row_scale=row_scale)
    seconds = time.perf_counter() - started
    record = {"library": "heta-eval", "index": "exact_search (blocked, float32)"}
    rows = [
        _row(
            "exact",
            record,
            None,
            seconds,
            exact_rows,
            exact_scores,
            exact_rows,
            exact_scores,
            query_ids,
            document_ids,
            qrels,
            ignore_identical_ids,
        )
    ]
    vectors = scored_rows(embeddings, row_scale) if specs else None
    for spec in specs:
        if on_index is not None:
            on_index(spec.label)
        index = build_index(spec, vectors)
        try:
            index.search(queries[:1], depth)  # warm-up
            started = time.perf_counter()
            found_rows, found_scores = index.search(queries, depth)
            seconds = time.perf_counter() - started
        finally:
            index.close()
        rows.append(
            _row(
                spec.label,
                index.record,
                index.record["build_seconds"],
                seconds,
                found_rows,
                found_scores,
                exact_rows,
                exact_scores,
                query_ids,
                document_ids,
                qrels,
                ignore_identical_ids,
            )
        )
    ties = {k: _ties(exact_scores, k) for k in CUTOFFS}
    return AnnComparison(rows, len(queries), len(embeddings), ties)


def _row(
    label: str,
    record: dict[str, Any],
    build: float | None,
    seconds: float,
    rows: np.ndarray,
    scores: np.ndarray,
    exact_rows: np.ndarray,
    exact_scores: np.ndarray,
    query_ids: Sequence[str],
    document_ids: Sequence[str],
    qrels: Mapping[str, Mapping[str, int]],
    ignore_identical_ids: bool,
) -> AnnRow:
    run = {
        qid: {document_ids[r]: float(s) for r, s in zip(rr, ss, strict=True) if r >= 0}
        for qid, rr, ss in zip(query_ids, rows, scores, strict=True)
    }
    judged = {qid: dict(qrels[qid]) for qid in query_ids if qid in qrels}
    numbers = evaluate_run(
        judged,
        run,
        (10, 100),
        metrics=("ndcg", "recall"),
        ignore_identical_ids=ignore_identical_ids,
    ).beir_dict()
    return AnnRow(
        label,
        record,
        numbers["ndcg"]["NDCG@10"],
        numbers["recall"]["Recall@100"],
        {k: overlap_at(rows, exact_rows, k) for k in CUTOFFS},
        round(len(rows) / seconds, 1) if seconds > 0 else float("inf"),
        build,
        _score_difference(rows, scores, exact_rows, exact_scores),
        int(((rows < 0).any(axis=1)).sum()),
    )


def overlap_at(rows: np.ndarray, exact_rows: np.ndarray, k: int) -> float:
    """The mean over queries of ``|rows' top k ∩ exact top k| / k`` (``k``: at most the
    exact rows found; ``-1`` rows never count).

    >>> overlap_at(np.array([[1, 2, 3]]), np.array([[1, 3, 4]]), 2)
    0.5
    """
    k = min(k, exact_rows.shape[1])
    if not len(rows) or k == 0:
        return float("nan")
    shared = [
        len(set(r[:k][r[:k] >= 0].tolist()) & set(e[:k].tolist()))
        for r, e in zip(rows, exact_rows, strict=True)
    ]
    return round(float(np.mean(shared)) / k, 5)


def _ties(exact_scores: np.ndarray, k: int) -> int:
    if exact_scores.shape[1] <= k:
        return 0
    return int((exact_scores[:, k - 1] - exact_scores[:, k] <= TIE).sum())


def _score_difference(
    rows: np.ndarray, scores: np.ndarray, exact_rows: np.ndarray, exact_scores: np.ndarray
) -> float:
    worst = 0.0
    for r, s, er, es in zip(rows, scores, exact_rows, exact_scores, strict=True):
        exact = dict(zip(er.tolist(), es.tolist(), strict=True))
        for row, score in zip(r.tolist(), s.tolist(), strict=True):
            if row >= 0 and row in exact:
                worst = max(worst, abs(score - exact[row]))
    return float(f"{worst:.3g}")


def _five(value: float | None) -> str:
    return "–" if value is None or value != value else f"{value:.5f}"


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _settings(row: AnnRow) -> str:
    settings = row.record.get("settings")
    if not settings:
        return "–"
    return ", ".join(f"{name}={value}" for name, value in settings.items())
