"""The two backends behind the one retrieval evaluator, and the choice between them.

Input reaches this module validated (:mod:`heta_eval.io.validate`): ``str`` ids
without NUL, ``int`` labels >= 0, finite ``float`` scores. Then:

* **pytrec_eval** computes every trec_eval 9.0.8 measure; three rules are computed here on
  its ranking: ir_measures's ``Judged@k`` (pytrec_eval's ``P.k`` on qrels where every judged
  document is relevant: ir_measures's own definition), ``RR@k`` (``recip_rank`` of the
  trec_eval ranking cut at k) and BEIR's ``MRR@k`` (a stable sort on the raw scores);
* the **compiled engine** (:mod:`heta_eval.providers.engine`) computes BEIR's five families
  (nDCG, MAP, recall, P at cutoffs, and MRR) with trec_eval's arithmetic, for large runs.

:func:`choose_backend` picks the engine for runs of ``ENGINE_MIN_ROWS`` results or more when
every measure is one it has; both give identical numbers on identical input (tested).

>>> from heta_eval.measures.measure import Measure
>>> m = Measure.parse("nDCG@10")
>>> pytrec_values({"q": {"a": 1}}, {"q": {"b": 2.0, "a": 1.0}}, [m])["q"][m]
0.6309297535714575
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import pytrec_eval

from heta_eval.measures.measure import Measure
from heta_eval.measures.trec_catalogue import MIN_GEO_MEAN

__all__ = [
    "COMPILED_MIN_BYTES",
    "ENGINE_FAMILIES",
    "ENGINE_MIN_ROWS",
    "choose_backend",
    "compiled_run_file",
    "empty_ranking_values",
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
    from heta_eval.io.source import input_size

    size = input_size(path)
    return size is not None and size >= COMPILED_MIN_BYTES


#: The measure families the compiled engine computes.
ENGINE_FAMILIES = frozenset({"ndcg_cut", "map_cut", "recall", "P", "mrr"})

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


def engine_can(measures: Iterable[Measure]) -> bool:
    return all(m.family in ENGINE_FAMILIES and m.param is not None for m in measures)


def choose_backend(engine: str, rows: int, measures: Sequence[Measure]) -> str:
    """``"pytrec"`` or ``"fast"`` (the compiled engine) for ``engine`` = auto/pytrec/fast."""
    if engine not in ("auto", "pytrec", "fast"):
        raise ValueError(f"engine must be 'auto', 'pytrec' or 'fast', got {engine!r}")
    if engine == "fast" and not engine_can(measures):
        others = [str(m) for m in measures if m.family not in ENGINE_FAMILIES or m.param is None]
        raise ValueError(f"the compiled engine has no {', '.join(others)}; use engine='pytrec'")
    if engine == "auto":
        if rows < ENGINE_MIN_ROWS or not engine_can(measures):
            return "pytrec"
        from heta_eval.providers.engine import HAVE_NUMBA  # numba loads only for input large enough

        return "fast" if HAVE_NUMBA else "pytrec"
    return engine


def _trec_request(measures: Iterable[Measure]) -> set[str]:
    """pytrec_eval's measure strings, cutoffs of one family merged (``P.5,10``)."""
    params: dict[str, list[str]] = defaultdict(list)
    for m in measures:
        params[m.family].append(m.param or "")
    out = set()
    for family, values in params.items():
        given = [v for v in dict.fromkeys(values) if v]
        if "" in values:
            out.add(family)  # trec_eval's default parameters
        if given:
            out.add(f"{family}.{','.join(given)}")
    return out


def _run_pytrec(
    qrels: Qrels, run: Run, qids: list[str], measures: list[Measure]
) -> dict[str, dict[Measure, float]]:
    # Internal query ids dodge trec_eval's "no_query" cache key (beir-semantics §3.6).
    internal_qrels = {str(i): qrels[qid] for i, qid in enumerate(qids)}
    internal_run = {str(i): run[qid] for i, qid in enumerate(qids)}
    raw = pytrec_eval.RelevanceEvaluator(internal_qrels, _trec_request(measures)).evaluate(
        internal_run
    )
    out: dict[str, dict[Measure, float]] = {}
    for i, qid in enumerate(qids):
        values = raw.get(str(i))
        if values is not None:
            out[qid] = {m: values[m.trec_key] for m in measures}  # type: ignore[index]
    return out


def _gain_qrels(qrels: Qrels, qids: Iterable[str], gains: str) -> dict[str, dict[str, int]]:
    # trec_eval's ndcg.LEVEL=GAIN: pytrec_eval cannot take pair parameters (it aborts), so
    # each label becomes its gain, which is what trec_eval's nDCG then sums.
    table = {int(a): int(b) for a, b in (pair.split("=") for pair in gains.split(","))}
    return {q: {d: table.get(label, label) for d, label in qrels[q].items()} for q in qids}


def _ranking(docs: Mapping[str, float]) -> list[str]:
    """trec_eval's ranking: float32 score descending, ties by doc id descending."""
    from heta_eval.io.trec import ranked

    return [doc for doc, _ in ranked(docs)]


def pytrec_values(
    qrels: Qrels, run: Run, measures: Sequence[Measure], qids: Sequence[str] | None = None
) -> dict[str, dict[Measure, float]]:
    """Per-query values of ``measures`` for ``qids`` (default: the run's queries with
    non-empty qrels, and for BEIR's MRR those with any qrels entry), in that order. An empty
    ranking (or a query of ``qids`` missing from the run) has :func:`empty_ranking_values`."""
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
    plain = [m for m in by_rule["trec_eval"] if not (m.family == "ndcg" and m.param)]
    if plain and ranked:
        for qid, values in _run_pytrec(qrels, run, ranked, plain).items():
            out[qid].update(values)
    for m in by_rule["trec_eval"]:
        if m.family == "ndcg" and m.param and ranked:
            gained = _gain_qrels(qrels, ranked, m.param)
            for qid, values in _run_pytrec(gained, run, ranked, [Measure("ndcg")]).items():
                out[qid][m] = values[Measure("ndcg")]
    if by_rule["judged"] and ranked:
        judged = {q: dict.fromkeys(qrels[q], 1) for q in ranked}
        as_p = [Measure("P", m.param) for m in by_rule["judged"]]
        for qid, values in _run_pytrec(judged, run, ranked, as_p).items():
            for m, p in zip(by_rule["judged"], as_p, strict=True):
                out[qid][m] = values[p]
    out = {qid: out[qid] for qid in trec_qids}  # in run order
    for m in by_rule["rr_cut"]:
        k = int(m.param or 0)
        for qid in trec_qids:
            labels = qrels[qid]
            top = _ranking(run.get(qid, {}))[:k]
            rank = next((r for r, doc in enumerate(top, 1) if labels.get(doc, 0) > 0), 0)
            out[qid][m] = 1.0 / rank if rank else 0.0
    if by_rule["beir_mrr"]:
        mrr_qids = list(qids) if qids is not None else [q for q in run if q in qrels]
        for qid, values in beir_mrr_values(qrels, run, by_rule["beir_mrr"], mrr_qids).items():
            out.setdefault(qid, {}).update(values)
    return out


def beir_mrr_values(
    qrels: Qrels, run: Run, measures: Sequence[Measure], qids: Sequence[str]
) -> dict[str, dict[Measure, float]]:
    """BEIR's ``mrr``: stable sort on the raw scores, relevant = label > 0, 1/rank of the
    first relevant document within k."""
    k_max = max(int(m.param or 0) for m in measures)
    out: dict[str, dict[Measure, float]] = {}
    for qid in qids:
        judged = qrels[qid]
        docs = run.get(qid, {})
        ranked = sorted(docs.items(), key=lambda item: item[1], reverse=True)[:k_max]
        first = next((r for r, (doc, _) in enumerate(ranked, 1) if judged.get(doc, 0) > 0), 0)
        out[qid] = {
            m: (1.0 / first if first and first <= int(m.param or 0) else 0.0) for m in measures
        }
    return out


def empty_ranking_values(
    qrels: Qrels, qids: Sequence[str], measures: Sequence[Measure]
) -> dict[str, dict[Measure, float]]:
    """What each measure gives a judged query missing from the run under trec_eval ``-c``
    (``meas_avg.c``): 0, except ``num_q`` (1), ``num_rel`` (its relevant documents) and the
    ``gm_*`` logs (``log(MIN_GEO_MEAN)``). Closed forms: pytrec_eval crashes on a run whose
    every query is empty."""
    floor = math.log(MIN_GEO_MEAN)
    out: dict[str, dict[Measure, float]] = {}
    for qid in qids:
        relevant = float(sum(1 for label in qrels[qid].values() if label > 0))
        special = {"num_q": 1.0, "num_rel": relevant, "gm_map": floor, "gm_bpref": floor}
        out[qid] = {
            m: special.get(m.family, 0.0) if m.rule == "trec_eval" else 0.0 for m in measures
        }
    return out
