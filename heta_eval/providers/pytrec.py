"""pytrec_eval as a provider: every trec_eval measure, and the rules computed beside it.

This module is the only one in the package that imports pytrec_eval (its C extension,
``pytrec_eval_ext``: trec_eval 9.0.8's own code), and only when a value is computed, so
``import heta_eval`` never loads it. It computes every trec_eval measure, one evaluator per
parameter set (:func:`evaluator_batches`); three rules are computed here beside it:
ir_measures's ``Judged@k`` and ``RR@k`` (on ir_measures's ranking, :func:`ir_measures_ranking`)
and BEIR's ``evaluate_custom`` families, ``MRR@k``, ``R_cap@k``, ``Hole@k`` and ``Accuracy@k``
(a stable sort on the raw scores). The ``trec_eval`` drop-in reaches the extension through
:func:`relevance_evaluator` (raw ``-m`` requests, relevance level, ``-J``).

>>> from heta_eval.measures.measure import Measure
>>> m = Measure.parse("nDCG@10")
>>> PYTREC.supports([m, Measure.parse("bpref"), Measure.parse("MRR@10")])
True
>>> PYTREC.evaluate({"q": {"a": 1}}, {"q": {"b": 2.0, "a": 1.0}}, [m])["q"][m]
0.6309297535714575
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from heta_eval.measures.averaging import empty_ranking_values
from heta_eval.measures.beir import CUSTOM_FAMILIES, beir_ranking, custom_value
from heta_eval.measures.measure import TREC_FAMILIES, Measure
from heta_eval.providers.provider import PerQuery, Qrels, Run

__all__ = [
    "PYTREC",
    "PytrecProvider",
    "TrecEvaluator",
    "beir_custom_values",
    "evaluator_batches",
    "ir_measures_ranking",
    "judged_values",
    "pytrec_values",
    "relevance_evaluator",
    "rr_cut_values",
]


class PytrecProvider:
    """pytrec_eval, with ir_measures's and BEIR's own rules beside it: every measure
    :meth:`Measure.parse <heta_eval.measures.measure.Measure.parse>` gives. Dict runs only."""

    name = "pytrec"
    columnar = False

    def supports(self, measures: Iterable[Measure]) -> bool:
        return all(_computes(m) for m in measures)

    def evaluate(self, qrels: Qrels, run: Run, measures: Sequence[Measure]) -> PerQuery:
        return pytrec_values(qrels, run, measures)

    def __repr__(self) -> str:
        return "PYTREC"


#: The pytrec_eval provider.
PYTREC = PytrecProvider()


def _computes(m: Measure) -> bool:
    """A trec_eval family it knows, with the parameter its key needs (a cutoff or a recall
    level; trec_eval's defaults are several keys); the other rules need their cutoff."""
    if m.rule != "trec_eval":
        return m.param is not None
    kind = TREC_FAMILIES.get(m.family, ("unknown",))[0]
    return kind != "unknown" and (m.param is not None or kind not in ("cutoffs", "levels"))


class TrecEvaluator(Protocol):
    """pytrec_eval's evaluator: ``{qid: {key: value}}`` of a run's judged queries."""

    def evaluate(self, run: Run) -> dict[str, dict[str, float]]: ...


def relevance_evaluator(
    qrels: Qrels, requests: Iterable[str], relevance_level: int, judged_only: bool
) -> TrecEvaluator:
    """pytrec_eval's C evaluator for trec_eval ``-m`` request strings (``"P.5,10"``), as the
    ``trec_eval`` drop-in uses it: ``.evaluate(run)`` gives ``{qid: {key: value}}``.

    Its Python wrapper is bypassed: it re-sorts parameters as text and reads ``-1`` or
    ``.5`` as the end of the name, so ``utility.1,-1,0,0`` became ``utility.1``.

    >>> relevance_evaluator({"q": {"a": 1}}, ["P.1,2"], 1, False).evaluate({"q": {"a": 2.0}})
    {'q': {'P_1': 1.0, 'P_2': 0.5}}
    """
    from pytrec_eval_ext import RelevanceEvaluator  # heavy: loaded when a value is computed

    return RelevanceEvaluator(qrels, set(requests), relevance_level, judged_only)


def evaluator_batches(measures: Iterable[Measure]) -> list[dict[str, list[Measure]]]:
    """The measures grouped into trec_eval requests that one evaluator can answer.

    trec_eval keeps one parameter set per family per evaluator: ``set_F.0.5`` and
    ``set_F.2`` (both reported as ``set_F``) need two evaluators, and so do two recall levels
    printed alike (``iprec_at_recall.0.1`` and ``.0.101``, both ``_0.10``). Cutoffs of one
    family share an evaluator (``P.5,10``). Returns ``[{request string: measures}]``.
    """
    batches: list[dict[str, dict[str, list[Measure]]]] = []  # family -> key -> measures
    for m in measures:
        batch = next((b for b in batches if _fits(b.get(m.family, {}), m)), None)
        if batch is None:
            batch = {}
            batches.append(batch)
        batch.setdefault(m.family, {}).setdefault(m.trec_key or "", []).append(m)
    return [_requests(batch) for batch in batches]


def _fits(taken: dict[str, list[Measure]], m: Measure) -> bool:
    """Whether ``m`` can join an evaluator already computing ``taken`` of its family."""
    if not taken or any(other.param == m.param for ms in taken.values() for other in ms):
        return True
    several = m.cutoff is not None or m.family in ("iprec_at_recall", "Rprec_mult")
    return several and (m.trec_key or "") not in taken


def _requests(batch: dict[str, dict[str, list[Measure]]]) -> dict[str, list[Measure]]:
    out: dict[str, list[Measure]] = {}
    for family, by_key in batch.items():
        group = [m for ms in by_key.values() for m in ms]
        values = list(dict.fromkeys(m.param for m in group))
        if values == [None]:
            out[family] = group  # trec_eval's default parameters
        else:
            out[f"{family}.{','.join(v for v in values if v is not None)}"] = group
    return out


def _run_pytrec(
    qrels: Qrels, run: Run, qids: list[str], measures: list[Measure]
) -> dict[str, dict[Measure, float]]:
    """pytrec_eval's C extension (:func:`relevance_evaluator`), once per
    :func:`evaluator_batches` batch. Query ids are replaced by internal ones: trec_eval
    caches a query's ranking under its id and, after each evaluation, resets the cache's key
    to the literal text ``no_query`` without clearing it, so a query of that name would be
    scored on the previous call's ranking.
    """
    internal_qrels = {str(i): qrels[qid] for i, qid in enumerate(qids)}
    internal_run = {str(i): run[qid] for i, qid in enumerate(qids)}
    out: dict[str, dict[Measure, float]] = {qid: {} for qid in qids}
    for batch in evaluator_batches(measures):
        raw = relevance_evaluator(internal_qrels, batch, 1, False).evaluate(internal_run)
        for i, qid in enumerate(qids):
            values = raw.get(str(i))
            if values is not None:
                out[qid].update((m, values[m.trec_key]) for ms in batch.values() for m in ms)  # type: ignore[index]
    return {qid: values for qid, values in out.items() if values}


def pytrec_values(
    qrels: Qrels, run: Run, measures: Sequence[Measure], qids: Sequence[str] | None = None
) -> dict[str, dict[Measure, float]]:
    """Per-query values of ``measures`` for ``qids`` (default: the run's queries with
    non-empty qrels, and for BEIR's custom families those with any qrels entry), in that
    order. An empty ranking (or a query of ``qids`` missing from the run) has
    :func:`~heta_eval.measures.averaging.empty_ranking_values`."""
    trec_qids = list(qids) if qids is not None else [q for q in run if qrels.get(q)]
    by_rule: dict[str, list[Measure]] = defaultdict(list)
    for m in measures:
        by_rule[m.rule].append(m)
    # An empty ranking scores as trec_eval -c scores a missing query (pytrec_eval gives
    # other values when every ranking is empty, and may crash then).
    empty = [q for q in trec_qids if not run.get(q)]
    out = empty_ranking_values(qrels, empty, by_rule["trec_eval"] + by_rule["judged"])
    ranked = [q for q in trec_qids if run.get(q)]
    out.update({qid: {} for qid in ranked})
    if by_rule["trec_eval"] and ranked:
        for qid, values in _run_pytrec(qrels, run, ranked, by_rule["trec_eval"]).items():
            out[qid].update(values)
    for qid in ranked if by_rule["judged"] else ():
        out[qid].update(judged_values(qrels[qid], run[qid], by_rule["judged"]))
    out = {qid: out[qid] for qid in trec_qids}  # in run order
    for qid in trec_qids if by_rule["rr_cut"] else ():
        out[qid].update(rr_cut_values(qrels[qid], run.get(qid, {}), by_rule["rr_cut"]))
    custom = [m for m in measures if m.family in CUSTOM_FAMILIES]
    if custom:  # BEIR's evaluate_custom: every run query with a qrels entry, even empty
        custom_qids = list(qids) if qids is not None else [q for q in run if q in qrels]
        for qid, values in beir_custom_values(qrels, run, custom, custom_qids).items():
            out.setdefault(qid, {}).update(values)
    return out


def ir_measures_ranking(docs: Mapping[str, float]) -> list[str]:
    """ir_measures's own ranking (its ``Judged`` and ``RR@k``): raw score descending, ties by
    doc id ascending."""
    return [doc for doc, _ in sorted(docs.items(), key=lambda item: (-item[1], item[0]))]


def judged_values(
    labels: Mapping[str, int], docs: Mapping[str, float], measures: Sequence[Measure]
) -> dict[Measure, float]:
    """ir_measures's ``Judged@k``: the share of judged documents (any label) among the first
    ``min(k, len(ranking))`` of :func:`ir_measures_ranking`."""
    ranking = ir_measures_ranking(docs)
    out = {}
    for m in measures:
        top = ranking[: int(m.param or 0)]
        out[m] = sum(1 for doc in top if doc in labels) / len(top) if top else 0.0
    return out


def rr_cut_values(
    labels: Mapping[str, int], docs: Mapping[str, float], measures: Sequence[Measure]
) -> dict[Measure, float]:
    """ir_measures's ``RR@k`` (MS MARCO's MRR@k): 1 / rank of the first document with label
    >= 1 within the first k of :func:`ir_measures_ranking`, else 0."""
    ranking = ir_measures_ranking(docs)
    first = next((r for r, doc in enumerate(ranking, 1) if labels.get(doc, 0) >= 1), 0)
    return {m: 1.0 / first if first and first <= int(m.param or 0) else 0.0 for m in measures}


def beir_custom_values(
    qrels: Qrels, run: Run, measures: Sequence[Measure], qids: Sequence[str]
) -> dict[str, dict[Measure, float]]:
    """BEIR's ``evaluate_custom`` families (MRR, R_cap, Hole, Accuracy; their rules:
    :mod:`heta_eval.measures.beir`): one stable sort per query, each measure on its first k.
    Hole's annotated corpus is every document ``qrels`` judges."""
    k_max = max(int(m.param or 0) for m in measures)
    holes = any(m.family == "hole" for m in measures)
    annotated = {doc for docs in qrels.values() for doc in docs} if holes else set()
    out: dict[str, dict[Measure, float]] = {}
    for qid in qids:
        top = beir_ranking(run.get(qid, {}))[:k_max]
        labels = qrels[qid]
        out[qid] = {}
        for m in measures:
            k = int(m.param or 0)
            out[qid][m] = custom_value(m.family, top[:k], labels, annotated, k)
    return out
