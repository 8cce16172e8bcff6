"""The catalogue of trec_eval 9.0.8's measures: what ``trec_eval -m all_trec`` computes.

Pure data, read from trec_eval's C source at tag v9.0.8 (``measures.c``, ``m_*.c``,
``meas_init.c``, ``meas_avg.c``) — the version pytrec_eval embeds, so these are BEIR's numbers.

Each :class:`TrecFamily` says, for one trec_eval measure name (a *family*: ``P`` gives
``P_5``, ``P_10``, ...):

* ``params`` — how the part after the dot in ``-m name.params`` is read:
  ``"none"``; ``"cutoffs"`` (integer ranks, sorted, unique, > 0: ``P.5,10``);
  ``"float_cutoffs"`` (``iprec_at_recall.0.1,0.5``, names printed with ``%3.2f``);
  ``"floats"`` (an ordered list of numbers: ``utility.1,-1,0,0``, ``set_F.0.5``);
  ``"gains"`` (``label=gain`` pairs: ``ndcg.0=0,1=1,2=3``).
* ``defaults`` — the parameters trec_eval uses when none are given.
* ``summary`` — how the ``all`` line is formed from the per-query values:
  ``"mean"`` (sum over queries / number of queries; with ``-c`` the divisor is every query in
  the qrels, so missing queries count 0), ``"geometric_mean"`` (per-query value is
  ``log(max(v, 1e-5))``; summary ``exp(sum / n)``; with ``-c`` each missing query adds
  ``log(1e-5)``), ``"sum"`` (counts; with ``-c``, ``num_rel`` is recounted from the whole qrels
  file as labels ``> 0``, whatever ``-l`` says), ``"num_q"`` (the number of queries averaged
  over), ``"run_tag"`` (the last run line's tag), ``"none"`` (per-query only).
* ``per_query`` — printed on ``-q`` per-query lines (``gm_*``, ``num_q`` and ``runid`` are not).
* ``integer`` — printed as ``%ld`` (counts) rather than ``%6.4f``.
* ``official`` — in ``-m official``, trec_eval's default set.

pytrec_eval returns one value per key of :meth:`TrecFamily.pytrec_eval_keys`: a cutoff family
gives ``name_cutoff`` keys (the names trec_eval prints), every other family one ``name`` key.
Two keys carry no value there: ``runid`` and ``relstring`` come back as 0.0 (the tag and the
relevance string are text; callers build them). ``gm_map``/``gm_bpref`` come back as logs.

trec_eval's ``all_trec`` lists 34 names: 33 measures plus ``runid`` (a label, not a measure).

>>> len(ALL_TREC), len(OFFICIAL)
(34, 12)
>>> ndcg_cut = family("ndcg_cut")
>>> ndcg_cut.pytrec_eval_keys((10,)), ndcg_cut.summary, ndcg_cut.official
(('ndcg_cut_10',), 'mean', False)
>>> family("iprec_at_recall").pytrec_eval_keys()[:2]
('iprec_at_recall_0.00', 'iprec_at_recall_0.10')
>>> family("gm_map").summary, family("num_rel").summary, family("recall").defaults[-1]
('geometric_mean', 'sum', 1000)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ALL_TREC",
    "FAMILIES",
    "MIN_GEO_MEAN",
    "NICKNAMES",
    "OFFICIAL",
    "TrecFamily",
    "family",
    "float_cutoff_name",
]

ParamKind = Literal["none", "cutoffs", "float_cutoffs", "floats", "gains"]
Summary = Literal["mean", "geometric_mean", "sum", "num_q", "run_tag", "none"]

# trec_eval's floor for a query's value inside a geometric mean (MIN_GEO_MEAN in trec_eval.h).
MIN_GEO_MEAN = 0.00001

_RANKS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class TrecFamily:
    """One trec_eval measure name and its rules (see the module docstring)."""

    name: str
    description: str
    params: ParamKind = "none"
    defaults: tuple[float, ...] = ()
    summary: Summary = "mean"
    per_query: bool = True
    integer: bool = False
    official: bool = False

    def pytrec_eval_keys(self, cutoffs: Sequence[float] | None = None) -> tuple[str, ...]:
        """The per-query keys pytrec_eval returns for this family (cutoff families: one per
        cutoff, sorted as trec_eval sorts them; ``cutoffs`` defaults to ``defaults``)."""
        if self.params == "cutoffs":
            values = sorted(int(c) for c in (cutoffs or self.defaults))
            return tuple(f"{self.name}_{c}" for c in values)
        if self.params == "float_cutoffs":
            values = sorted(float(c) for c in (cutoffs or self.defaults))
            return tuple(float_cutoff_name(self.name, c) for c in values)
        return (self.name,)


def float_cutoff_name(name: str, value: float) -> str:
    """trec_eval's ``append_float``: ``name_%3.2f`` in a buffer of ``len(name) + 10`` bytes
    (``Rprec_mult.1e18`` is ``Rprec_mult_10000000``).

    >>> float_cutoff_name("iprec_at_recall", 0.104), float_cutoff_name("Rprec_mult", 1e18)
    ('iprec_at_recall_0.10', 'Rprec_mult_10000000')
    """
    return f"{name}_{value:3.2f}"[: len(name) + 9]


def _f(name: str, description: str, **rules: object) -> TrecFamily:
    return TrecFamily(name, description, **rules)  # type: ignore[arg-type]


# In trec_eval's print order (te_trec_measures in measures.c): output lines follow it,
# whatever order -m named the measures in.
FAMILIES: tuple[TrecFamily, ...] = (
    _f(
        "runid",
        "the run's tag (last line of the run file)",
        summary="run_tag",
        per_query=False,
        official=True,
    ),
    _f(
        "num_q",
        "number of queries averaged over (qrels queries with -c)",
        summary="num_q",
        per_query=False,
        integer=True,
        official=True,
    ),
    _f("num_ret", "documents retrieved", summary="sum", integer=True, official=True),
    _f("num_rel", "relevant documents (label >= -l)", summary="sum", integer=True, official=True),
    _f("num_rel_ret", "relevant documents retrieved", summary="sum", integer=True, official=True),
    _f("map", "mean average precision", official=True),
    _f(
        "gm_map",
        "geometric mean of average precision",
        summary="geometric_mean",
        per_query=False,
        official=True,
    ),
    _f("Rprec", "precision after R documents (R = relevant count)", official=True),
    _f("bpref", "binary preference (judged documents only)", official=True),
    _f("recip_rank", "reciprocal rank of the first relevant document", official=True),
    _f(
        "iprec_at_recall",
        "interpolated precision at recall levels",
        params="float_cutoffs",
        defaults=_RECALL_POINTS,
        official=True,
    ),
    _f("P", "precision at rank cutoffs", params="cutoffs", defaults=_RANKS, official=True),
    _f(
        "relstring",
        "relevance labels of the first N documents (per query only)",
        params="floats",
        defaults=(10.0,),
        summary="none",
    ),
    _f("recall", "recall at rank cutoffs", params="cutoffs", defaults=_RANKS),
    _f("infAP", "inferred average precision (labels < 0: pooled, unjudged)"),
    _f("gm_bpref", "geometric mean of bpref", summary="geometric_mean", per_query=False),
    _f(
        "Rprec_mult",
        "precision after R * x documents",
        params="float_cutoffs",
        defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    ),
    _f(
        "utility",
        "utility a*rel_ret + b*nonrel_ret + c*rel_not_ret + d*nonrel_not_ret",
        params="floats",
        defaults=(1.0, -1.0, 0.0, 0.0),
    ),
    _f(
        "11pt_avg",
        "interpolated precision averaged over 11 recall points",
        params="floats",
        defaults=_RECALL_POINTS,
    ),
    _f("binG", "binary gain (Kishida)"),
    _f("G", "normalized cumulative gain (Kishida)", params="gains"),
    _f("ndcg", "nDCG over the whole ranking (gain = label unless gains given)", params="gains"),
    _f("ndcg_rel", "nDCG averaged over relevant documents", params="gains"),
    _f("Rndcg", "nDCG at rank R", params="gains"),
    _f("ndcg_cut", "nDCG at rank cutoffs", params="cutoffs", defaults=_RANKS),
    _f("map_cut", "average precision at rank cutoffs", params="cutoffs", defaults=_RANKS),
    _f(
        "relative_P",
        "precision at cutoff / best possible precision there",
        params="cutoffs",
        defaults=_RANKS,
    ),
    _f(
        "success",
        "1 if a relevant document is at or above the cutoff",
        params="cutoffs",
        defaults=(1, 5, 10),
    ),
    _f("set_P", "precision of the whole retrieved set"),
    _f("set_relative_P", "set precision / best possible for the set size"),
    _f("set_recall", "recall of the whole retrieved set"),
    _f("set_map", "unranked set map: recall * precision of the set"),
    _f(
        "set_F",
        "set F-measure, recall weighted x times precision",
        params="floats",
        defaults=(1.0,),
    ),
    _f(
        "num_nonrel_judged_ret",
        "judged non-relevant documents retrieved",
        summary="sum",
        integer=True,
    ),
)

_BY_NAME: dict[str, TrecFamily] = {f.name: f for f in FAMILIES}

ALL_TREC: tuple[str, ...] = tuple(f.name for f in FAMILIES)
OFFICIAL: tuple[str, ...] = tuple(f.name for f in FAMILIES if f.official)
# trec_eval's "set" nickname: measures of the unranked retrieved set.
_SET = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "utility",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
)

NICKNAMES: Mapping[str, tuple[str, ...]] = {
    "official": OFFICIAL,
    "set": _SET,
    "all_trec": ALL_TREC,
}


def family(name: str) -> TrecFamily:
    """The family named ``name`` (exact trec_eval spelling); a ValueError lists the known ones.

    >>> family("P").defaults
    (5, 10, 15, 20, 30, 100, 200, 500, 1000)
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(
            f"unknown trec_eval measure {name!r}; known: {', '.join(ALL_TREC)} "
            f"(nicknames: {', '.join(NICKNAMES)})"
        ) from None
