"""``evaluate_run``: a document-level run scored with BEIR's exact semantics (by default) or
any trec_eval measure, with the strict ``trec_eval -c`` aggregate beside BEIR's.

Input is validated once (:mod:`heta_eval.io.validate`), then a provider is chosen
(:mod:`heta_eval.providers.backends`); averaging is :mod:`heta_eval.measures.averaging`. The
BEIR rules reproduced (see docs/retrieval-core.md): self-hits (a document whose id equals the
query id) are removed; pytrec_eval ranks by float32 scores, ties broken by document id
descending; MRR@k follows BEIR's ``mrr`` (a stable sort on the raw scores, relevant means
label > 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from heta_eval.io.interop import as_qrels, as_run
from heta_eval.io.validate import validate_qrels, validate_run
from heta_eval.measures.measure import BEIR_K_VALUES, METRICS, Measure
from heta_eval.providers.backends import choose_provider, large_run
from heta_eval.retrieval.columnar_run import score_columnar
from heta_eval.retrieval.plan import plan_measures
from heta_eval.retrieval.result import RunEvaluation, assemble

__all__ = ["evaluate_run"]


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
    ks, chosen, named = plan_measures(k_values, metrics, measures)
    qrels = validate_qrels(as_qrels(qrels))  # a pandas DataFrame or ranx Qrels works too
    run = validate_run(as_run(run))
    rows = sum(map(len, run.values()))
    provider = choose_provider(engine, list(named.values()), large=large_run(rows))
    if provider.columnar:
        # Heavy (numba): loaded only once a run is large enough for the engine.
        from heta_eval.io.columnar import columnar_run_from_dict

        columnar = columnar_run_from_dict(run, ignore_identical_ids=ignore_identical_ids)
        return score_columnar(qrels, columnar, ks, chosen, named)
    self_hits = 0
    if ignore_identical_ids:
        run, self_hits = _without_self_hits(run)
    values = provider.evaluate(qrels, run, list(named.values()))
    names = {m: name for name, m in named.items()}
    per_query = {qid: {names[m]: v for m, v in row.items()} for qid, row in values.items() if row}
    return assemble(qrels, list(run), per_query, ks, chosen, named, self_hits)
