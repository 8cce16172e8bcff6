"""The two backends behind the one retrieval evaluator, and the choice between them.

Input reaches this module validated (:mod:`heta_eval.io.validate`): ``str`` ids
without NUL, ``int`` labels >= 0, finite ``float`` scores. Then:

* **pytrec_eval** (its C extension: trec_eval 9.0.8's own code) computes every trec_eval
  measure, one evaluator per parameter set (:func:`evaluator_batches`); three rules are
  computed here: ir_measures's ``Judged@k`` and ``RR@k`` (on ir_measures's ranking,
  :func:`ir_measures_ranking`) and BEIR's ``evaluate_custom`` families, ``MRR@k``,
  ``R_cap@k``, ``Hole@k`` and ``Accuracy@k`` (a stable sort on the raw scores);
* the **compiled engine** (:mod:`heta_eval.providers.engine`) computes BEIR's families
  (nDCG, MAP, recall, P at cutoffs with trec_eval's arithmetic, and the four custom ones),
  for large runs.

:func:`choose_backend` picks the engine for runs of ``ENGINE_MIN_ROWS`` results or more when
every measure is one it has; both give identical numbers on identical input (tested).

>>> from heta_eval.measures.measure import BEIR_FAMILIES, Measure
>>> m = Measure.parse("nDCG@10")
>>> pytrec_values({"q": {"a": 1}}, {"q": {"b": 2.0, "a": 1.0}}, [m])["q"][m]
0.6309297535714575
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from heta_eval.io.source import input_size
from heta_eval.measures.averaging import empty_ranking_values
from heta_eval.measures.beir import CUSTOM_FAMILIES, beir_ranking, custom_value
from heta_eval.measures.measure import BEIR_FAMILIES, Measure

__all__ = [
    "COMPILED_MIN_BYTES",
    "ENGINE_FAMILIES",
    "ENGINE_MIN_ROWS",
    "choose_backend",
    "compiled_run_file",
    "pytrec_values",
]

#: Runs (or batches of responses) with at least this many results go to the compiled
#: engine under ``engine="auto"``; below it pytrec_eval is as fast and needs no JIT.
ENGINE_MIN_ROWS = 100_000
#: Run files smaller than this are read for pytrec_eval without trying the engine (about
#: ENGINE_MIN_ROWS TREC lines): loading numba costs more than it saves below it.
COMPILED_MIN_BYTES = 8 * 2**20


def compiled_run_file(path: str | os.PathLike[str] | object) -> bool:
    """Whether a run file (or an opened input, :func:`heta_eval.io.source.open_input`) is
    large enough (:data:`COMPILED_MIN_BYTES`) to be read for the compiled engine; False
    when it cannot be sized without reading it (its reader then reports it)."""
    size = input_size(path)
    return size is not None and size >= COMPILED_MIN_BYTES


#: The measure families the compiled engine computes: BEIR's.
ENGINE_FAMILIES = BEIR_FAMILIES

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


def engine_can(measures: Iterable[Measure]) -> bool:
    return all(
        m.family in ENGINE_FAMILIES
        and m.param is not None
        # Hole@k divides by k as a float64: exact (as BEIR's int division) up to 2**53.
        and (m.family != "hole" or int(m.param) <= 2**53)
        for m in measures
    )


def large_run(rows: int) -> bool:
    """Whether a run of ``rows`` results is large enough for the compiled engine
    (:data:`ENGINE_MIN_ROWS`); a run file is sized by :func:`compiled_run_file` instead."""
    return rows >= ENGINE_MIN_ROWS


def choose_backend(engine: str, measures: Sequence[Measure], *, large: bool) -> str:
    """``"pytrec"`` or ``"fast"`` (the compiled engine) for ``engine`` = auto/pytrec/fast;
    ``auto`` takes the engine for a ``large`` input (:func:`large_run`,
    :func:`compiled_run_file`) whose measures it computes."""
    if engine not in ("auto", "pytrec", "fast"):
        raise ValueError(f"engine must be 'auto', 'pytrec' or 'fast', got {engine!r}")
    if engine == "fast" and not engine_can(measures):
        others = [str(m) for m in measures if not engine_can([m])]
        raise ValueError(f"the compiled engine has no {', '.join(others)}; use engine='pytrec'")
    if engine == "auto":
        if not large or not engine_can(measures):
            return "pytrec"
        from heta_eval.providers.engine import HAVE_NUMBA  # numba loads only for input large enough

        return "fast" if HAVE_NUMBA else "pytrec"
    return engine


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
    """pytrec_eval's C extension, once per :func:`evaluator_batches` batch.

    Its Python wrapper is bypassed: it re-sorts parameters as text and reads ``-1`` or
    ``.5`` as the end of the name, so ``utility.1,-1,0,0`` became ``utility.1``. Query ids
    are replaced by internal ones: trec_eval caches a query's ranking under its id and,
    after each evaluation, resets the cache's key to the literal text ``no_query`` without
    clearing it, so a query of that name would be scored on the previous call's ranking.
    """
    from pytrec_eval_ext import RelevanceEvaluator

    internal_qrels = {str(i): qrels[qid] for i, qid in enumerate(qids)}
    internal_run = {str(i): run[qid] for i, qid in enumerate(qids)}
    out: dict[str, dict[Measure, float]] = {qid: {} for qid in qids}
    for batch in evaluator_batches(measures):
        raw = RelevanceEvaluator(internal_qrels, set(batch), 1, False).evaluate(internal_run)
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
