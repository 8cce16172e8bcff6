"""The names of trec_eval's and ir_measures's measure families: trec_eval 9.0.8's families
with their parameter kind and summary (from :mod:`heta_eval.measures.trec_catalogue`), and
ir_measures's spelling of each. :class:`heta_eval.measures.measure.Measure` parses with them.

>>> TREC_FAMILIES["ndcg_cut"], TREC_FAMILIES["gm_map"], IR_NAMES["nDCG"]
(('cutoffs', 'mean'), (None, 'geometric'), ('ndcg', 'ndcg_cut'))
"""

from __future__ import annotations

from typing import Literal

from heta_eval.measures.trec_catalogue import FAMILIES

__all__ = ["FAMILY_TO_IR", "IR_NAMES", "TEXT_FAMILIES", "TREC_FAMILIES", "Summary"]

Summary = Literal["mean", "sum", "geometric"]

# trec_eval 9.0.8's families, from the catalogue (trec_measures.py): parameter kind and how
# trec_eval summarises them over queries. Kinds: "cutoffs" (integer ranks, key family_k),
# "levels" (float levels, key family_0.10), "floats" (a list of numbers, one key), "gains"
# (LEVEL=GAIN pairs, one key), None. gm_* are geometric means (pytrec_eval gives the logs).
_KIND = {
    "none": None,
    "cutoffs": "cutoffs",
    "float_cutoffs": "levels",
    "floats": "floats",
    "gains": "gains",
}
_SUMMARY: dict[str, Summary] = {
    "mean": "mean",
    "geometric_mean": "geometric",
    "sum": "sum",
    "num_q": "sum",
}
TREC_FAMILIES: dict[str, tuple[str | None, Summary]] = {
    f.name: (_KIND[f.params], _SUMMARY[f.summary]) for f in FAMILIES if f.summary in _SUMMARY
}
#: trec_eval families that are text, not numbers (``heta-eval trec_eval`` prints them).
TEXT_FAMILIES = tuple(f.name for f in FAMILIES if f.summary not in _SUMMARY)

IR_NAMES = {  # ir_measures name -> (family without cutoff, family with cutoff)
    "nDCG": ("ndcg", "ndcg_cut"),
    "AP": ("map", "map_cut"),
    "P": (None, "P"),
    "R": (None, "recall"),
    "RR": ("recip_rank", "recip_rank"),
    "Rprec": ("Rprec", None),
    "Bpref": ("bpref", None),
    "infAP": ("infAP", None),
    "Success": (None, "success"),
    "Judged": (None, "judged"),
    "NumRet": ("num_ret", None),
    "NumRel": ("num_rel", None),
    "NumRelRet": ("num_rel_ret", None),
    "NumQ": ("num_q", None),
    "SetP": ("set_P", None),
    "SetR": ("set_recall", None),
    "SetF": ("set_F", None),
    "SetAP": ("set_map", None),
    "IPrec": (None, "iprec_at_recall"),
}
FAMILY_TO_IR = {
    family: name for name, pair in IR_NAMES.items() for family in pair if family is not None
}
