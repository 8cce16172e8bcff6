"""Scoring a columnar run (a run file read into arrays, or a batch of chunk responses
collapsed to documents) with the compiled engine (:mod:`heta_eval.providers.engine`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from heta_eval.io.validate import InputError, validate_qrels
from heta_eval.measures.measure import BEIR_K_VALUES, METRICS, Measure
from heta_eval.providers.backends import choose_provider
from heta_eval.providers.compiled import COMPILED, per_query_values
from heta_eval.retrieval.plan import plan_measures
from heta_eval.retrieval.result import RunEvaluation, assemble

__all__ = ["DuplicateRowsError", "evaluate_columnar_run", "score_columnar", "validate_columnar"]


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
    """:func:`~heta_eval.retrieval.run.evaluate_run` on a
    :class:`~heta_eval.providers.engine.ColumnarRun` (query ids unique; self-hits already
    masked in ``run.skip``), through the compiled engine.

    A doc id repeated within a query keeps its first row; with ``reject_duplicates`` it
    raises :class:`DuplicateRowsError` instead (callers then re-read the file with the
    validating reader, which names the line).

    >>> from heta_eval.providers.engine import columnar_run_from_dict
    >>> run = columnar_run_from_dict({"q1": {"d2": 3.0, "d1": 2.0}})
    >>> evaluate_columnar_run({"q1": {"d1": 1}}, run, (1, 10)).beir_dict()["mrr"]
    {'MRR@1': 0.0, 'MRR@10': 0.5}
    """
    ks, chosen, named = plan_measures(k_values, metrics, measures)
    choose_provider("fast", list(named.values()), large=True)  # refuses what it cannot compute
    validate_columnar(run)
    return score_columnar(
        validate_qrels(qrels), run, ks, chosen, named, reject_duplicates=reject_duplicates
    )


def validate_columnar(run: Any) -> None:
    """:func:`~heta_eval.io.validate.validate_run`'s rules on arrays."""
    if run.rows and not np.all(run.doc_data):
        raise InputError("run: a doc id contains a NUL character")
    if any("\x00" in qid for qid in run.query_ids):
        raise InputError("run: a query id contains a NUL character")
    scores = run.scores if run.valid is None else run.scores[run.valid]
    if not np.isfinite(scores).all():
        raise InputError("run: a score is NaN or infinite")


def score_columnar(
    qrels: dict[str, dict[str, int]],
    run: Any,
    ks: tuple[int, ...],
    chosen: tuple[str, ...],
    named: dict[str, Measure],
    *,
    reject_duplicates: bool = False,
) -> RunEvaluation:
    """The :class:`RunEvaluation` of ``named`` measures on a validated columnar run."""
    table = COMPILED.table(qrels, run, list(named.values()))
    if reject_duplicates and table.stats[:, 1].any():
        raise DuplicateRowsError(f"{int(table.stats[:, 1].sum())} repeated (query, doc) rows")
    per_query = per_query_values(qrels, run.query_ids, table, named)
    self_hits = int(np.count_nonzero(table.stats[:, 2]))
    return assemble(qrels, run.query_ids, per_query, ks, chosen, named, self_hits)
