"""The measures trec_eval 9.0.8 computes from judgment groups (``-R qrels_jg``), and which
``-m`` requests need a rel_info format other than the one given.

Computed in :mod:`~heta_eval.trec_eval.judgment_groups`. The preference formats (``-R
prefs``, ``qrels_prefs``) and their ``prefs_*`` measures are not supported.

>>> refusal("map", "qrels_jg")[:40]
'is not computed from judgment groups (-R'
>>> refusal("P_avgjg", "qrels_jg") is None, refusal("P_avgjg", "qrels") is None
(True, False)
"""

from __future__ import annotations

from heta_eval.measures.trec_catalogue import ALL_TREC, NICKNAMES, TrecFamily

__all__ = ["JG_FAMILIES", "QRELS_JG_MEASURES", "refusal"]

# trec_eval's three measures over judgment groups, in its print order (te_trec_measures:
# after every all_trec measure). They are not in the library's catalogue: no qrels has groups.
JG_FAMILIES: tuple[TrecFamily, ...] = (
    TrecFamily("map_avgjg", "mean average precision, averaged over judgment groups"),
    TrecFamily("P_avgjg", "precision at rank cutoffs, averaged over judgment groups",
               params="cutoffs", defaults=(5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    TrecFamily("Rprec_mult_avgjg", "precision after R * x documents, averaged over judgment "
               "groups", params="float_cutoffs",
               defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
)  # fmt: skip
# trec_eval's "qrels_jg" nickname: everything it computes from a qrels_jg file.
QRELS_JG_MEASURES = ("runid", "num_q", *(f.name for f in JG_FAMILIES))
_JG_NAMES = frozenset(f.name for f in JG_FAMILIES) | {"qrels_jg"}
# What trec_eval stops on under -R qrels_jg (it forms a plain qrels ranking for them).
_NOT_FROM_GROUPS = frozenset((*ALL_TREC, *NICKNAMES, "yaap")) - set(QRELS_JG_MEASURES)


def refusal(name: str, rel_format: str) -> str | None:
    """Why ``-m name`` cannot be computed with ``-R rel_format`` (None: it can)."""
    if name in ("prefs", "all_prefs") or name.startswith("prefs_"):
        return ("needs preference judgments (-R prefs or qrels_prefs), which are not "
                "supported")  # fmt: skip
    if name in _JG_NAMES and rel_format != "qrels_jg":
        return "needs judgment groups (-R qrels_jg); trec_eval 9.0.8 stops on it otherwise"
    if rel_format == "qrels_jg" and name in _NOT_FROM_GROUPS:
        return (
            "is not computed from judgment groups (-R qrels_jg): trec_eval 9.0.8 stops on it "
            f'("Can\'t calculate measure"); it computes {", ".join(QRELS_JG_MEASURES)} '
            "(-m qrels_jg)"
        )
    return None
