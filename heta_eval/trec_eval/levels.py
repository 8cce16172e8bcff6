"""``-l N`` below 1: trec_eval 9.0.8's values at relevance level 0 and below, exactly.

pytrec_eval's trec_eval takes levels of 1 and above only; this forms the values at lower
levels from level-1 computations, following what trec_eval's C code does with the level:

* a label is relevant when it is >= the level; ``num_rel`` counts the judged documents
  (labels >= 0) at or above it, ``num_rel_ret`` the retrieved ones; a negative label is
  "pooled, unjudged" and never counted, whatever the level;
* the families that never read the level (:data:`LEVEL_FREE`: nDCG and its kin, G,
  ``num_ret``) get their level-1 values on the qrels as given;
* every other family reads the level as a cut between labels: at level 0 its value is its
  level-1 value on the qrels with every label >= 0 raised by one (negative ones kept), which
  moves that cut and nothing else. ``Rndcg`` also takes labels as gains, so it gets explicit
  gains for the raised labels: each keeps its own;
* below 0, trec_eval's own loops also test the rank list's markers for a document outside
  the qrels (-1) and for a negative label (-2) against the level (``rel >= level``), while
  ``num_rel`` and ``num_rel_ret`` stay those of level 0. So at -1 a document outside the qrels
  counts as relevant inside :data:`LOOPS`' families, and at -2 and below every retrieved
  document does; :func:`loop_values` computes those families with trec_eval's own
  arithmetic for the queries where this changes anything (a retrieved document outside the
  qrels or with a negative label). ``-J`` leaves only judged documents in the list, so with
  it every level below 1 gives level 0's values.

>>> from heta_eval.trec_eval import per_query_values
>>> qrels, run = {"q": {"a": 0, "b": 1}}, {"q": {"a": 2.0, "x": 1.0}}  # x: outside the qrels
>>> for level in (1, 0, -1):
...     print(level, sorted(per_query_values(qrels, run, ["P.2", "num_rel"], level)["q"].items()))
1 [('P_2', 0.0), ('num_rel', 1.0)]
0 [('P_2', 0.5), ('num_rel', 2.0)]
-1 [('P_2', 1.0), ('num_rel', 2.0)]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from heta_eval.measures.trec_catalogue import MIN_GEO_MEAN
from heta_eval.trec_eval.options import RequestedMeasure, resolve_measures
from heta_eval.trec_eval.params import atol

__all__ = ["LEVEL_FREE", "LOOPS", "below_one", "loop_values"]

#: Families whose values never read the relevance level (their C code has no such test).
LEVEL_FREE = frozenset({"ndcg", "ndcg_rel", "G", "ndcg_cut", "num_ret", "relstring", "runid"})
#: Families whose loops test ``rel >= level`` on the rank list's markers too (see above).
LOOPS = frozenset(
    {
        "map",
        "gm_map",
        "Rprec",
        "recip_rank",
        "iprec_at_recall",
        "P",
        "recall",
        "Rprec_mult",
        "11pt_avg",
        "binG",
        "map_cut",
        "relative_P",
        "success",
    }
)

# trec_eval's markers in a query's rank list (RELVALUE_NONPOOL, RELVALUE_UNJUDGED).
_NONPOOL, _UNJUDGED = -1, -2


def below_one(
    per_query: Callable[..., dict[str, dict[str, float]]],
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    specs: set[str],
    level: int,
    judged_only: bool,
    max_label: int,
    **options: Any,
) -> dict[str, dict[str, float]]:
    """Values at ``level`` < 1 from ``per_query`` (the level-1 computation,
    :func:`~heta_eval.trec_eval.compute.per_query_values`, with its ``options``), which
    refuses labels above ``max_label``: here, raised by one, from ``max_label`` on."""
    free = {spec for spec in specs if _name(spec) in LEVEL_FREE}
    cut = specs - free
    visit = options.pop("visit", None)  # each query is visited once
    values: dict[str, dict[str, float]] = {}
    if free:
        values = per_query(qrels, run, free, 1, judged_only, visit=visit, **options)
        visit = None
    if cut:
        _check_labels(qrels, max_label)
        raised = {
            qid: {doc: lab + 1 if lab >= 0 else lab for doc, lab in docs.items()}
            for qid, docs in qrels.items()
        }
        specs_raised = {
            _raised_gains(spec, qrels) if _name(spec) == "Rndcg" else spec for spec in cut
        }
        got = per_query(raised, run, specs_raised, 1, judged_only, visit=visit, **options)
        for qid, row in got.items():
            values.setdefault(qid, {}).update(row)
    loops = [resolve_measures([spec])[0][0] for spec in cut if _name(spec) in LOOPS]
    if level < 0 and loops and not judged_only:
        for qid, row in values.items():
            rels = _rank_list(run[qid], qrels[qid])
            if any(level <= rel < 0 for rel in rels):
                row.update(loop_values(rels, qrels[qid], loops, level))
    return values


def _check_labels(qrels: Mapping[str, Mapping[str, int]], max_label: int) -> None:
    for qid, docs in qrels.items():
        for doc, label in docs.items():
            if label >= max_label:
                raise ValueError(
                    f"qrels ({qid!r}, {doc!r}): label {label}: below -l 1, labels of "
                    f"{max_label:,} and above are refused (trec_eval allocates a counter for "
                    "every label value up to the largest)"
                )


def _name(spec: str) -> str:
    return spec.partition(".")[0]


def _raised_gains(spec: str, qrels: Mapping[str, Mapping[str, int]]) -> str:
    """``Rndcg``'s gains for the raised labels: a given ``a=g`` as ``(a+1)=g`` (``a`` read
    with ``atol``, as trec_eval reads it; negative ones kept), and every label L >= 0 of the
    qrels that has none its default gain L, as ``(L+1)=L``."""
    _, _, text = spec.partition(".")
    pairs = [part.partition("=") for part in text.split(",")] if text else []
    given = [(atol(name), gain) for name, _, gain in pairs]
    out = [f"{lab + 1 if lab >= 0 else lab}={gain}" for lab, gain in given]
    named = {lab for lab, _ in given}
    labels = {lab for docs in qrels.values() for lab in docs.values() if lab >= 0}
    out += [f"{lab + 1}={lab}" for lab in sorted(labels - named)]
    return "Rndcg." + ",".join(out) if out else "Rndcg"


def _rank_list(docs: Mapping[str, float], labels: Mapping[str, int]) -> list[int]:
    """trec_eval's ``results_rel_list``: each ranked document's label, -1 outside the qrels,
    -2 for a negative label. Its ranking: float32 score, then doc id, both descending (as
    :func:`heta_eval.io.trec.ranked`)."""
    ids = list(docs)
    with np.errstate(over="ignore"):  # |score| > 3.4e38 is +-inf in float32, as in C
        scores = np.asarray(list(docs.values()), dtype=np.float32)
    order = np.lexsort((np.asarray(ids, dtype=object), scores))[::-1].tolist()
    marked = {doc: label if label >= 0 else _UNJUDGED for doc, label in labels.items()}
    return [marked.get(ids[position], _NONPOOL) for position in order]


def _div(a: float, b: float) -> float:
    """C's double division: x/0 is inf (signed) or NaN, not an exception."""
    if b:
        return a / b
    return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a)


def loop_values(
    rels: list[int], labels: Mapping[str, int], measures: Iterable[RequestedMeasure], level: int
) -> dict[str, float]:
    """The values of ``measures`` (:data:`LOOPS` families) for one query's rank list ``rels``
    at ``level`` < 0, each as trec_eval 9.0.8's ``te_calc_*`` computes it (same operations in
    the same order, so the same doubles), under pytrec_eval's keys."""
    num_rel = sum(1 for label in labels.values() if label >= 0)
    num_rel_ret = sum(1 for rel in rels if rel >= 0)
    ranks = _Ranks(rels, level)
    out: dict[str, float] = {}
    for measure in measures:
        got = _LOOP[measure.family.name](measure, ranks, num_rel, num_rel_ret)
        out.update(zip(measure.keys(), got, strict=True))
    return out


class _Ranks:
    """One rank list at one level: which ranks count as relevant, and the running counts
    and average-precision sums trec_eval's forward loops keep (index k: the first k ranks)."""

    def __init__(self, rels: list[int], level: int):
        hits = np.asarray(rels, dtype=np.int64) >= level
        self.hits: list[bool] = hits.tolist()
        self.n = len(rels)
        self.count = np.concatenate(([0], np.cumsum(hits)))
        # rel_so_far / rank at each relevant rank, summed in rank order (accumulate adds one
        # term after another, as the C loop does; a 0.0 term changes no sum).
        terms = np.where(hits, self.count[1:] / np.arange(1, self.n + 1), 0.0)
        self.ap_sum = np.concatenate(([0.0], np.add.accumulate(terms)))

    def at(self, k: int) -> tuple[int, float]:
        """The relevant count and average-precision sum over the first ``k`` ranks."""
        k = min(k, self.n)
        return int(self.count[k]), float(self.ap_sum[k])


Loop = Callable[[RequestedMeasure, _Ranks, int, int], list[float]]


def _at_cutoffs(
    cutoffs: list[int], ranks: _Ranks, value: Callable[[int, int, float], float]
) -> list[float]:
    """trec_eval's cutoff loop (P, recall, map_cut, relative_P, success): ``value(cutoff,
    rel_so_far, ap_sum)`` over the ranks before each cutoff, or all of them past the list.
    Cutoffs in trec_eval's order that is not ascending (more than 2**31 apart) are reached
    by its loop one after another: past the first that is not, all get the whole list's."""
    out, reached = [], 0
    for c in cutoffs:
        if c <= reached:  # the loop's rank only grows: it never meets this one
            reached = ranks.n
        reached = min(max(c, reached), ranks.n)
        out.append(value(c, *ranks.at(reached)))
    return out


def _cutoffs(measure: RequestedMeasure) -> list[int]:
    return [int(c) for c in measure.values]


def _p(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list[float]:
    return _at_cutoffs(_cutoffs(m), ranks, lambda i, rel, _: rel / float(i))


def _recall(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list:
    if num_rel == 0:
        return [0.0] * len(m.values)
    return _at_cutoffs(_cutoffs(m), ranks, lambda i, rel, _: rel / num_rel)


def _map_cut(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list:
    if num_rel == 0:
        return [0.0] * len(m.values)
    return _at_cutoffs(_cutoffs(m), ranks, lambda i, rel, ap: ap / num_rel)


def _relative_p(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list:
    if num_rel == 0:
        return [0.0] * len(m.values)
    return _at_cutoffs(
        _cutoffs(m), ranks, lambda i, rel, _: rel / float(num_rel if i > num_rel else i)
    )


def _success(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list:
    return _at_cutoffs(_cutoffs(m), ranks, lambda i, rel, _: 1.0 if rel else 0.0)


def _map(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list[float]:
    rel_so_far, total = ranks.at(ranks.n)
    return [_div(total, num_rel) if rel_so_far else 0.0]


def _gm_map(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list:
    rel_so_far, total = ranks.at(ranks.n)
    if rel_so_far:
        total = _div(total, num_rel)
    return [math.log(max(total, MIN_GEO_MEAN))]


def _rprec(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list:
    look = min(ranks.n, num_rel)
    return [ranks.at(look)[0] / num_rel] if look else [0.0]


def _recip_rank(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list:
    first = next((i for i, hit in enumerate(ranks.hits) if hit), None)
    return [1.0 / (first + 1)] if first is not None else [0.0]


def _interpolated(
    fractions: tuple[float, ...], hits: list[bool], num_rel: int, num_rel_ret: int
) -> list[float]:
    """iprec_at_recall's loop: the interpolated precision at each recall fraction."""
    cutoffs = [int(f * num_rel + 0.9) for f in fractions]
    out = [0.0] * len(cutoffs)
    cut = len(cutoffs) - 1
    while cut >= 0 and cutoffs[cut] > num_rel_ret:
        cut -= 1
    int_precis = _div(num_rel_ret, len(hits))
    rel_so_far = num_rel_ret
    i = len(hits)
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        if int_precis < precis:
            int_precis = precis
        if hits[i - 1]:
            while cut >= 0 and rel_so_far == cutoffs[cut]:
                out[cut] = int_precis
                cut -= 1
            rel_so_far -= 1
        i -= 1
    while cut >= 0:
        out[cut] = int_precis
        cut -= 1
    return out


def _iprec(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list:
    return _interpolated(m.values, ranks.hits, num_rel, num_rel_ret)


def _11pt(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list:
    # trec_eval adds each cutoff's value as the loop reaches it: highest fraction first.
    total = 0.0
    for value in reversed(_interpolated(m.values, ranks.hits, num_rel, num_rel_ret)):
        total += value
    return [total / len(m.values)]


def _rprec_mult(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list:
    hits = ranks.hits
    cutoffs = [int(f * num_rel + 0.9) for f in m.values]
    out = [0.0] * len(cutoffs)
    num_ret = len(hits)
    cut = len(cutoffs) - 1
    while cut >= 0 and cutoffs[cut] > num_ret:
        out[cut] = _div(num_rel_ret, cutoffs[cut])
        cut -= 1
    rel_so_far, i = num_rel_ret, num_ret
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        while cut >= 0 and i == cutoffs[cut]:
            out[cut] = precis
            cut -= 1
        if hits[i - 1]:
            rel_so_far -= 1
        i -= 1
    return out


def _bin_g(m: RequestedMeasure, ranks: _Ranks, num_rel: int, num_rel_ret: int) -> list:
    # The j-th relevant rank i (from 0) adds 1 / log2(3 + i - (j + 1)): i - j is the count of
    # ranks before it that are not relevant.
    before = np.flatnonzero(ranks.hits) - np.arange(int(ranks.count[-1]))
    if not len(before):
        return [0.0]
    terms = _inverse_log2(int(before[-1]))[before]
    return [_div(float(np.add.accumulate(terms)[-1]), num_rel)]


_INVERSE_LOG2: list[float] = []


def _inverse_log2(k: int) -> np.ndarray:
    """``1.0 / log2(2 + j)`` for j = 0..k, with libm's ``log2`` (trec_eval's; numpy's own may
    differ in the last bit), kept between calls."""
    while len(_INVERSE_LOG2) <= k:
        _INVERSE_LOG2.append(1.0 / math.log2(2 + len(_INVERSE_LOG2)))
    return np.asarray(_INVERSE_LOG2[: k + 1])


_LOOP: dict[str, Loop] = {
    "P": _p,
    "recall": _recall,
    "map_cut": _map_cut,
    "relative_P": _relative_p,
    "success": _success,
    "map": _map,
    "gm_map": _gm_map,
    "Rprec": _rprec,
    "recip_rank": _recip_rank,
    "iprec_at_recall": _iprec,
    "11pt_avg": _11pt,
    "Rprec_mult": _rprec_mult,
    "binG": _bin_g,
}
