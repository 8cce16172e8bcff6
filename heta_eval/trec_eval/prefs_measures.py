"""trec_eval 9.0.8's ``prefs_*`` measures over preference judgments (``-R prefs`` and
``-R qrels_prefs``), computed from :mod:`~heta_eval.trec_eval.prefs_counts` with the
arithmetic of its ``m_prefs_*.c`` files (doubles, in their order, so the printed digits are
its own). Per query:

* ``prefs_num_prefs_poss``, ``prefs_num_prefs_ful``, ``prefs_num_prefs_ful_ret``: counts
  (summed, not averaged, over the queries);
* ``prefs_simp[_ret|_imp]``: preferences fulfilled / possible, all groups pooled;
* ``prefs_pair[_ret|_imp]``: each document pair's share of fulfilled preferences, averaged
  over the pairs;
* ``prefs_avgjg[_ret|_imp]``: fulfilled / possible per judgment group, averaged over groups;
* ``prefs_avgjg_Rnonrel[_ret]``: the same with each group's nonrelevant documents counted
  as if there were as many as relevant ones.

``_ret``: both documents retrieved; ``_imp``: at least one; neither suffix: every
preference (one never retrieved counts as a failure). A ratio with nothing to count is 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from heta_eval.trec_eval.compute import TrecEvalResult, evaluated_queries
from heta_eval.trec_eval.preferences import Prefs
from heta_eval.trec_eval.prefs_counts import QueryPrefs
from heta_eval.trec_eval.prefs_counts import form_prefs_counts as _form
from heta_eval.trec_eval.prefs_rnonrel import recalculate

if TYPE_CHECKING:
    from heta_eval.trec_eval.options import TrecEvalOptions

__all__ = ["evaluate_prefs", "prefs_ranking"]


def _ratio(num: float, den: float) -> float:
    """C's double division (x / 0 is inf, 0 / 0 NaN)."""
    if den:
        return num / den
    return math.nan if num == 0 else math.inf


def _totals(q: QueryPrefs, kinds: tuple[str, ...]) -> int:
    return sum(getattr(jg, kind) for jg in q.jgs for kind in kinds)


_FUL, _FUL_RET = ("ful_ret", "ful_imp"), ("ful_ret",)
_POSS, _POSS_RET = ("poss_ret", "poss_imp", "notoccur"), ("poss_ret",)
_POSS_IMP = ("poss_ret", "poss_imp")


def _simple(q: QueryPrefs, ful: tuple[str, ...], poss: tuple[str, ...]) -> float:
    possible = _totals(q, poss)
    return _totals(q, ful) / possible if possible else 0.0


def _avgjg(q: QueryPrefs, ful: tuple[str, ...], poss: tuple[str, ...]) -> float:
    total = 0.0
    for jg in q.jgs:
        possible = sum(getattr(jg, kind) for kind in poss)
        if possible:
            total += sum(getattr(jg, kind) for kind in ful) / possible
    return total / len(q.jgs) if total > 0.0 else 0.0


def _pair(q: QueryPrefs, areas: str) -> float:
    """m_prefs_pair*.c: areas "r" (both retrieved), "ri" (+ one), "rin" (+ neither). The
    ratios are added in the C loops' order (row by row), as doubles."""
    c = q.counts.astype(np.int64)
    njr = q.num_judged_ret
    either = (c > 0) | (c.T > 0)
    rows, cols = np.nonzero(np.triu(either, 1)[:njr, :njr])
    ratios = [c[i, j] / (c[i, j] + c[j, i]) for i, j in zip(rows, cols, strict=True)]
    pairs = len(ratios)
    if "i" in areas:
        rows, cols = np.nonzero(either[:njr, njr:])
        cols += njr
        ratios += [c[i, j] / (c[i, j] + c[j, i]) for i, j in zip(rows, cols, strict=True)]
        pairs = len(ratios)
    if "n" in areas:
        pairs += int(np.count_nonzero(np.triu(either, 1)[njr:, njr:]))
    total = 0.0
    for ratio in ratios:
        total += float(ratio)
    return total / pairs if pairs else 0.0


def _rnonrel(q: QueryPrefs, retrieved: bool) -> float:
    """m_prefs_avgjg_Rnonrel.c and its ``_ret`` twin."""
    total = 0.0
    for jg in q.jgs:
        rel, nonrel = (
            (jg.num_rel_ret, jg.num_nonrel_ret) if retrieved else (jg.num_rel, jg.num_nonrel)
        )
        if rel >= nonrel:
            ful = jg.ful_ret + (0 if retrieved else jg.ful_imp) + jg.num_rel_ret * (rel - nonrel)
            poss = jg.poss_ret + (0 if retrieved else jg.poss_imp + jg.notoccur)
            poss += jg.num_rel * (rel - nonrel)
        else:
            ful, poss = recalculate(jg, q.num_judged_ret, retrieved)
        total += _ratio(ful, poss)
    return total / len(q.jgs) if total > 0.0 else 0.0


_MEASURES: dict[str, Callable[[QueryPrefs], float]] = {
    "prefs_num_prefs_poss": lambda q: float(_totals(q, _POSS)),
    "prefs_num_prefs_ful": lambda q: float(_totals(q, _FUL)),
    "prefs_num_prefs_ful_ret": lambda q: float(_totals(q, _FUL_RET)),
    "prefs_simp": lambda q: _simple(q, _FUL, _POSS),
    "prefs_pair": lambda q: _pair(q, "rin"),
    "prefs_avgjg": lambda q: _avgjg(q, _FUL, _POSS),
    "prefs_avgjg_Rnonrel": lambda q: _rnonrel(q, False),
    "prefs_simp_ret": lambda q: _simple(q, _FUL_RET, _POSS_RET),
    "prefs_pair_ret": lambda q: _pair(q, "r"),
    "prefs_avgjg_ret": lambda q: _avgjg(q, _FUL_RET, _POSS_RET),
    "prefs_avgjg_Rnonrel_ret": lambda q: _rnonrel(q, True),
    "prefs_simp_imp": lambda q: _simple(q, _FUL, _POSS_IMP),
    "prefs_pair_imp": lambda q: _pair(q, "ri"),
    "prefs_avgjg_imp": lambda q: _avgjg(q, _FUL, _POSS_IMP),
}


def prefs_ranking(docs: Mapping[str, float], limit: int | None) -> list[str]:
    """form_prefs_counts's order: float32 score descending, ties by docno ascending (the
    reverse of the qrels measures' tie order); its top ``limit``."""
    with np.errstate(over="ignore"):  # scores are kept as C floats
        keys = np.asarray(list(docs.values()), dtype=np.float32).tolist()
    order = sorted(zip(keys, docs, strict=True), key=lambda kd: (-kd[0], kd[1]))
    return [doc for _, doc in order[:limit]]


def evaluate_prefs(
    options: TrecEvalOptions, prefs: Prefs, run: Mapping[str, Mapping[str, float]], tag: str
) -> TrecEvalResult:
    """Every evaluated query's values (queries in both files, ``strcmp`` order); a
    PrefsError (a ValueError) for judgments trec_eval stops or aborts on."""
    query_ids = evaluated_queries(prefs, run)
    wanted = [m.family.name for m in options.measures if m.family.name in _MEASURES]
    values: dict[str, dict[str, float]] = {}
    for qid in query_ids:
        values[qid] = {}
        if not wanted:
            continue
        counts = _form(qid, prefs[qid], prefs_ranking(run[qid], options.max_per_topic))
        for name in wanted:
            values[qid][name] = _MEASURES[name](counts)
    return TrecEvalResult(query_ids, values, {}, tag, len(prefs), 0)
