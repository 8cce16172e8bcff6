"""The measures trec_eval 9.0.8 computes from judgment groups (``-R qrels_jg``), and which
``-m`` requests need a rel_info format other than the one given (the ``prefs_*`` measures
need ``-R prefs`` or ``qrels_prefs``, see :mod:`~heta_eval.trec_eval.prefs_measures`).

Computed in :mod:`~heta_eval.trec_eval.judgment_groups`.

>>> refusal("map", "qrels_jg")[:40]
'is not computed from judgment groups (-R'
>>> refusal("P_avgjg", "qrels_jg") is None, refusal("P_avgjg", "qrels") is None
(True, False)
>>> refusal("prefs_simp", "qrels_prefs") is None, refusal("map", "prefs") is None
(True, False)
"""

from __future__ import annotations

from heta_eval.measures.trec_catalogue import ALL_TREC, NICKNAMES, TrecFamily

__all__ = ["JG_FAMILIES", "PREFS_FAMILIES", "PREFS_NICKNAMES", "QRELS_JG_MEASURES", "refusal"]

# trec_eval's three measures over judgment groups, in its print order (te_trec_measures:
# after every all_trec measure). They are not in the library's catalogue: no qrels has groups.
JG_FAMILIES: tuple[TrecFamily, ...] = (
    TrecFamily("map_avgjg", "mean average precision, averaged over judgment groups"),
    TrecFamily(
        "P_avgjg",
        "precision at rank cutoffs, averaged over judgment groups",
        params="cutoffs",
        defaults=(5, 10, 15, 20, 30, 100, 200, 500, 1000),
    ),
    TrecFamily(
        "Rprec_mult_avgjg",
        "precision after R * x documents, averaged over judgment groups",
        params="float_cutoffs",
        defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    ),
)


def _count(name: str, text: str) -> TrecFamily:
    return TrecFamily(name, text, summary="sum", integer=True)


# In trec_eval's print order (te_trec_measures: after the all_trec measures).
PREFS_FAMILIES: tuple[TrecFamily, ...] = (
    _count("prefs_num_prefs_poss", "number of possible preferences"),
    _count("prefs_num_prefs_ful", "number of preferences fulfilled"),
    _count("prefs_num_prefs_ful_ret", "number of preferences fulfilled among retrieved docs"),
    TrecFamily("prefs_simp", "preferences fulfilled / possible"),
    TrecFamily("prefs_pair", "per doc pair ratio of preferences fulfilled, averaged"),
    TrecFamily("prefs_avgjg", "preferences fulfilled / possible, averaged over groups"),
    TrecFamily("prefs_avgjg_Rnonrel", "prefs_avgjg with as many nonrelevant docs as relevant"),
    TrecFamily("prefs_simp_ret", "prefs_simp among retrieved docs"),
    TrecFamily("prefs_pair_ret", "prefs_pair among retrieved docs"),
    TrecFamily("prefs_avgjg_ret", "prefs_avgjg among retrieved docs"),
    TrecFamily("prefs_avgjg_Rnonrel_ret", "prefs_avgjg_Rnonrel among retrieved docs"),
    TrecFamily("prefs_simp_imp", "prefs_simp, pairs with a retrieved doc"),
    TrecFamily("prefs_pair_imp", "prefs_pair, pairs with a retrieved doc"),
    TrecFamily("prefs_avgjg_imp", "prefs_avgjg, pairs with a retrieved doc"),
)


# trec_eval's "qrels_jg" nickname: everything it computes from a qrels_jg file.
QRELS_JG_MEASURES = ("runid", "num_q", *(f.name for f in JG_FAMILIES))
_JG_NAMES = frozenset(f.name for f in JG_FAMILIES) | {"qrels_jg"}
# What trec_eval stops on under -R qrels_jg (it forms a plain qrels ranking for them).
_NOT_FROM_GROUPS = frozenset((*ALL_TREC, *NICKNAMES, "yaap")) - set(QRELS_JG_MEASURES)
# trec_eval's preference nicknames (measures.c): "all_prefs" and the shorter "prefs".
_PREFS_NAMES = tuple(f.name for f in PREFS_FAMILIES)
PREFS_NICKNAMES = {
    "all_prefs": ("runid", "num_q", *_PREFS_NAMES),
    "prefs": ("runid", "num_q", *_PREFS_NAMES[:6]),
}
_PREFS_FORMATS = ("prefs", "qrels_prefs")
_NEED_PREFS = frozenset((*_PREFS_NAMES, *PREFS_NICKNAMES))


def refusal(name: str, rel_format: str) -> str | None:
    """Why ``-m name`` cannot be computed with ``-R rel_format`` (None: it can)."""
    if name in _NEED_PREFS and rel_format not in _PREFS_FORMATS:
        return (
            "needs preference judgments (-R prefs or qrels_prefs); trec_eval 9.0.8 stops "
            "on it otherwise"
        )
    if name in _JG_NAMES and rel_format != "qrels_jg":
        return "needs judgment groups (-R qrels_jg); trec_eval 9.0.8 stops on it otherwise"
    if rel_format == "qrels_jg" and name in _NOT_FROM_GROUPS:
        return (
            "is not computed from judgment groups (-R qrels_jg): trec_eval 9.0.8 stops on it "
            f'("Can\'t calculate measure"); it computes {", ".join(QRELS_JG_MEASURES)} '
            "(-m qrels_jg)"
        )
    if rel_format in _PREFS_FORMATS and name in _NOT_FROM_GROUPS:
        return (
            f"is not computed from preference judgments (-R {rel_format}): trec_eval 9.0.8 "
            'stops on it ("Can\'t calculate measure"); it computes runid, num_q and the '
            "prefs_* measures (-m all_prefs)"
        )
    return None
