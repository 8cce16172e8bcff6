"""The compiled engine as a provider: BEIR's families, on runs held as arrays.

The engine itself (numba kernels, loaded or compiled on first use) is
:mod:`heta_eval.providers.engine`; this module is what callers see, and it imports the engine
only when a value is computed, so asking what it supports costs nothing. It computes BEIR's
families at a cutoff (nDCG, MAP, recall and P with trec_eval's arithmetic; MRR, R_cap, Hole
and Accuracy with BEIR's rules) on a ``{qid: {doc: score}}`` dict or a
:class:`~heta_eval.io.columnar.ColumnarRun`; :meth:`CompiledProvider.table` keeps the
result as arrays, with each query's statistics, for callers that never build per-query dicts.

>>> from heta_eval.measures.measure import Measure
>>> ndcg, bpref = Measure.parse("nDCG@10"), Measure.parse("bpref")
>>> COMPILED.supports([ndcg]), COMPILED.supports([ndcg, bpref])
(True, False)
>>> COMPILED.evaluate({"q": {"a": 1}}, {"q": {"b": 2.0, "a": 1.0}}, [ndcg])["q"][ndcg]
0.6309297535714575
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from heta_eval.measures.beir import CUSTOM_FAMILIES
from heta_eval.measures.measure import BEIR_FAMILIES, Measure
from heta_eval.providers.provider import PerQuery, Qrels, Run

if TYPE_CHECKING:
    import numpy as np

    from heta_eval.io.columnar import ColumnarRun

__all__ = ["COMPILED", "ENGINE_FAMILIES", "CompiledProvider", "EngineTable", "per_query_values"]

Key = TypeVar("Key")

#: The measure families the compiled engine computes: BEIR's.
ENGINE_FAMILIES = BEIR_FAMILIES
# Hole@k divides by k as a float64: exact (as BEIR's int division) up to 2**53.
_MAX_HOLE_CUTOFF = 2**53


@dataclass(frozen=True)
class EngineTable:
    """The engine's answer as arrays: ``values`` (float64, one row per run query),
    ``stats`` (int64 rows: documents kept, duplicate rows dropped, self-hits removed,
    rank-derived flag) and the column of ``values`` holding each measure asked for."""

    values: np.ndarray
    stats: np.ndarray
    columns: dict[Measure, int]


class CompiledProvider:
    """The compiled engine (:mod:`heta_eval.providers.engine`): BEIR's families at a cutoff,
    identical to pytrec_eval's and BEIR's numbers (tested), on dict or columnar runs."""

    name = "fast"
    columnar = True

    def supports(self, measures: Iterable[Measure]) -> bool:
        return not self.missing(measures)

    def missing(self, measures: Iterable[Measure]) -> list[Measure]:
        """The measures of ``measures`` it does not compute."""
        return [
            m
            for m in measures
            if m.family not in ENGINE_FAMILIES
            or m.param is None
            or (m.family == "hole" and int(m.param) > _MAX_HOLE_CUTOFF)
        ]

    def require(self, measures: Iterable[Measure]) -> None:
        """Raise ``ValueError`` naming the measures it does not compute, if any."""
        missing = self.missing(measures)
        if missing:
            names = ", ".join(str(m) for m in missing)
            raise ValueError(f"the compiled engine has no {names}; use engine='pytrec'")

    def available(self) -> bool:
        """Whether numba is installed (without it the kernels would run as Python).
        Loads the engine: asked only once an input is large enough for it."""
        from heta_eval.providers.engine import HAVE_NUMBA

        return HAVE_NUMBA

    def table(self, qrels: Qrels, run: ColumnarRun, measures: Sequence[Measure]) -> EngineTable:
        """The engine on a validated columnar ``run`` (self-hits already in ``run.skip``):
        only ``measures`` are computed, each up to its own cutoff. Every run query has a
        row; which rows are meaningful is the caller's choice (see :meth:`evaluate`).

        >>> from heta_eval.io.columnar import columnar_run_from_dict
        >>> run = columnar_run_from_dict({"q": {"b": 2.0, "a": 1.0}})
        >>> p1, p2 = Measure.parse("P@1"), Measure.parse("P@2")
        >>> table = COMPILED.table({"q": {"a": 1}}, run, [p1, p2])
        >>> table.values[0, [table.columns[p1], table.columns[p2]]].tolist()
        [0.0, 0.5]
        >>> table.stats[0].tolist()  # documents, duplicates, self-hits, rank-derived
        [2, 0, 0, 0]
        """
        self.require(measures)
        # Heavy (numba): loaded only once a run is large enough for the engine.
        from heta_eval.providers.engine import evaluate_columnar, measure_column

        ks = tuple(sorted({int(m.param or 0) for m in measures})) or (1,)
        values, stats = evaluate_columnar(run, qrels, ks, [m.legacy for m in measures])  # type: ignore[misc]
        return EngineTable(values, stats, {m: measure_column(m, ks) for m in measures})

    def evaluate(
        self, qrels: Qrels, run: Run | ColumnarRun, measures: Sequence[Measure]
    ) -> PerQuery:
        """Per-query values, for the queries pytrec_eval and BEIR score: trec_eval's
        families on run queries with non-empty qrels, BEIR's custom ones on any with a
        qrels entry. A dict ``run`` is scored as given (self-hits included)."""
        if isinstance(run, Mapping):
            from heta_eval.io.columnar import columnar_run_from_dict  # heavy (numba)

            run = columnar_run_from_dict(run, ignore_identical_ids=False)
        table = self.table(qrels, run, measures)
        return per_query_values(qrels, run.query_ids, table, {m: m for m in measures})

    def __repr__(self) -> str:
        return "COMPILED"


def per_query_values(
    qrels: Qrels, query_ids: Sequence[str], table: EngineTable, keyed: Mapping[Key, Measure]
) -> dict[str, dict[Key, float]]:
    """``{qid: {key: value}}`` from a :class:`EngineTable` whose rows are ``query_ids``, for
    the rows pytrec_eval and BEIR would score (see :meth:`CompiledProvider.evaluate`);
    ``keyed`` names each measure's key in the output."""
    trec = [(key, table.columns[m]) for key, m in keyed.items() if m.family not in CUSTOM_FAMILIES]
    custom = [(key, table.columns[m]) for key, m in keyed.items() if m.family in CUSTOM_FAMILIES]
    out: dict[str, dict[Key, float]] = {}
    for qid, row in zip(query_ids, table.values.tolist(), strict=True):
        judged = qrels.get(qid)
        if judged is None:
            continue
        entry = {key: row[column] for key, column in trec} if judged else {}
        entry.update((key, row[column]) for key, column in custom)
        if entry:
            out[qid] = entry
    return out


#: The compiled-engine provider.
COMPILED = CompiledProvider()
