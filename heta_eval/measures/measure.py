"""Retrieval measures as values: one ``Measure`` for every way a measure is spelled.

A measure is named three ways in the IR world, and all three parse to the same value:

* ir_measures (and Pyserini): ``nDCG@10``, ``AP``, ``AP@100``, ``R@100``, ``P@5``, ``RR``,
  ``RR@10``, ``Rprec``, ``Bpref``, ``infAP``, ``Success@5``, ``Judged@10``, ``IPrec@0.1``,
  ``NumRet``, ``NumRel``, ``NumRelRet``, ``NumQ``, ``SetP``, ``SetR``, ``SetF``, ``SetAP``;
* trec_eval: ``ndcg_cut.10``, ``map``, ``map_cut.100``, ``recall.100``, ``P.5``,
  ``recip_rank``, ``Rprec``, ``bpref``, ``iprec_at_recall.0.10``, ``success.5``,
  ``ndcg.1=0,2=3`` (gain per relevance level), ...: any of trec_eval 9.0.8's families;
* BEIR: ``NDCG@10``, ``MAP@100``, ``Recall@100``, ``P@5``, ``MRR@10``, ``R_cap@10``,
  ``Hole@10``, ``Accuracy@10`` (and ``evaluate_custom``'s ``recall_cap@10``, ``acc@10``...).

A ``Measure`` is ``(family, param, rule)``: ``family`` is the trec_eval family (or
``judged`` / ``mrr``), ``param`` its one parameter as text (a cutoff, a recall level, a gain
list) and ``rule`` says who computes it. ``nDCG@10``, ``NDCG@10`` and ``ndcg_cut.10`` are
equal; BEIR's ``MRR@10`` is **not** ``RR@10``: BEIR ranks by the raw scores with a stable
sort (ties keep the run's order) where ir_measures's ``RR@10`` breaks ties by doc id,
ascending (and trec_eval ranks float32 scores, ties by doc id descending). See
``docs/retrieval-core.md``.

One rendering per context, each defined once here:

* ``str(measure)`` names a measure everywhere heta-eval chooses the name (``measures=``
  result keys, ``heta-eval evaluate --measures`` tables): ir_measures's name where it has
  one (``nDCG@10``, ``AP``, ``Judged@10``), else trec_eval's ``-m`` spelling
  (``Rprec_mult.0.50``, ``utility.1,-1,0,0``), and BEIR's for BEIR's ``MRR@10``;
* :attr:`Measure.beir_name` is BEIR's own key (``NDCG@10``, ``Recall@100``), used where the
  output mirrors BEIR (``beir_dict()``, the default grid's keys, :func:`measure_key`);
* :attr:`Measure.evaluator_name` is the per-case evaluator's name (``ndcg@10``), used by
  reports, result folders and ``heta-eval compare`` (``canonical_metric``);
* :attr:`Measure.trec_name` / :attr:`Measure.trec_key` are trec_eval's ``-m`` spelling and the
  key it prints (``ndcg_cut.10`` / ``ndcg_cut_10``).

>>> m = Measure.parse("nDCG@10")
>>> m == Measure.parse("ndcg_cut.10") == Measure.parse("NDCG@10"), m.trec_name, m.beir_name
(True, 'ndcg_cut.10', 'NDCG@10')
>>> str(Measure.parse("map_cut.100")), str(Measure.parse("recip_rank"))
('AP@100', 'RR')
>>> Measure.parse("MRR@10").rule, Measure.parse("RR@10").rule
('beir_mrr', 'rr_cut')
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from heta_eval.measures import params
from heta_eval.measures.beir import BEIR_TABLE, CUSTOM_ALIASES, CUSTOM_FAMILIES, DEFAULT_METRICS
from heta_eval.measures.names import FAMILY_TO_IR, IR_NAMES, TEXT_FAMILIES, TREC_FAMILIES, Summary
from heta_eval.measures.trec_catalogue import FAMILIES, MIN_GEO_MEAN, float_cutoff_name

__all__ = [
    "BEIR_K_VALUES",
    "BEIR_METRICS",
    "METRICS",
    "TREC_FAMILIES",
    "Measure",
    "UnknownMeasureError",
    "canonical_metric",
    "measure_key",
    "parse_measure",
    "parse_measures",
]

#: The default grid's metrics (the ``metrics=`` default): BEIR's ``evaluate`` and MRR.
METRICS: tuple[str, ...] = DEFAULT_METRICS
#: Every metric of BEIR's (``metrics=`` takes any), in BEIR's order: the default five, then
#: ``evaluate_custom``'s ``r_cap``, ``hole`` and ``accuracy``.
BEIR_METRICS: tuple[str, ...] = tuple(metric for metric, _, _ in BEIR_TABLE)
#: The families of BEIR's metrics (what the compiled engine computes).
BEIR_FAMILIES: frozenset[str] = frozenset(family for _, _, family in BEIR_TABLE)
#: The k values BEIR reports by default.
BEIR_K_VALUES: tuple[int, ...] = (1, 3, 5, 10, 100)

Rule = Literal[
    "trec_eval", "beir_mrr", "beir_r_cap", "beir_hole", "beir_accuracy", "rr_cut", "judged"
]

_BEIR_NAMES = {name: family for _, name, family in BEIR_TABLE}
_BEIR_OF_FAMILY = {family: name for _, name, family in BEIR_TABLE}
_LEGACY = {family: metric for metric, _, family in BEIR_TABLE}
_LEGACY_FAMILY = {metric: family for metric, _, family in BEIR_TABLE}
# BEIR's evaluate_custom names of R_cap, Hole, Accuracy, any case (R_cap@10, recall_cap@10).
_CUSTOM_AT = {name: f for name, f in CUSTOM_ALIASES.items() if f != "mrr"}
_LEGACY_ALIASES = {
    "ndcg": "ndcg",
    "ndcg_cut": "ndcg",
    "map": "map",
    "map_cut": "map",
    "ap": "map",
    "recall": "recall",
    "r": "recall",
    "precision": "precision",
    "p": "precision",
    **CUSTOM_ALIASES,  # not rr / recip_rank: ir_measures's RR@k is not BEIR's mrr
}
_LEGACY_PATTERN = re.compile(r"^\s*([A-Za-z_]+)\s*[@_.]\s*(\d+)\s*$")
_AT = re.compile(r"^([A-Za-z_]+)@(\S+)$")
_NEXT = re.compile(r" |,(?=[A-Za-z])")


class UnknownMeasureError(ValueError):
    """A measure name that no spelling knows; the message lists the known names."""


def _known() -> str:
    ir = ", ".join(f"{n}@k" if c and not f else n for n, (f, c) in IR_NAMES.items())
    return (
        f"ir_measures: {ir}; BEIR: {', '.join(f'{n}@k' for n in _BEIR_NAMES)}; "
        f"trec_eval: {', '.join(TREC_FAMILIES)} (with .params where they take them)"
    )


def _unknown(name: str, why: str = "") -> UnknownMeasureError:
    return UnknownMeasureError(f"unknown measure {name!r}{why}. Known measures: {_known()}")


def _cutoff(text: str, name: str) -> str:
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= params.MAX_CUTOFF:
        raise _unknown(name, ": the cutoff must be a positive integer up to 2**63 - 1")
    return str(int(text))


def _read(reader: Callable[..., str], name: str, *args: str) -> str:
    try:
        return reader(*args)
    except ValueError as error:
        raise _unknown(name, f": {error}") from None


@dataclass(frozen=True, order=True)
class Measure:
    """One retrieval measure; parse any spelling with :meth:`parse`."""

    family: str
    param: str | None = None

    @property
    def rule(self) -> Rule:
        """Who computes it: trec_eval (pytrec_eval), BEIR's ``mrr``, ir_measures's ``RR@k``
        (MS MARCO's MRR@k), or ir_measures's ``Judged@k`` (the judged share of the first
        min(k, ranked) documents); BEIR's ``evaluate_custom`` families are ``beir_FAMILY``
        (:mod:`heta_eval.measures.beir`)."""
        if self.family in CUSTOM_FAMILIES:
            return f"beir_{self.family}"  # type: ignore[return-value]
        if self.family == "judged":
            return "judged"
        if self.family == "recip_rank" and self.param is not None:
            return "rr_cut"
        return "trec_eval"

    @property
    def cutoff(self) -> int | None:
        kind = TREC_FAMILIES.get(self.family, ("cutoffs", "mean"))[0]
        return int(self.param) if kind == "cutoffs" and self.param is not None else None

    @property
    def summary(self) -> Summary:
        """How per-query values become one number: mean, sum (counts), geometric mean."""
        return TREC_FAMILIES.get(self.family, (None, "mean"))[1]

    def missing_value(self, relevant: int) -> float:
        """What a judged query gets when the run has no ranking for it (trec_eval ``-c``,
        ``meas_avg.c``): 0, except ``num_q`` (1), ``num_rel`` (``relevant``, its relevant
        documents) and the ``gm_*`` logs (``log(MIN_GEO_MEAN)``)."""
        if self.rule != "trec_eval":
            return 0.0
        if self.summary == "geometric":
            return math.log(MIN_GEO_MEAN)
        return {"num_q": 1.0, "num_rel": float(relevant)}.get(self.family, 0.0)

    @property
    def trec_name(self) -> str | None:
        """trec_eval's ``-m`` spelling (``ndcg_cut.10``), None for non-trec_eval rules."""
        if self.rule != "trec_eval":
            return None
        return self.family if self.param is None else f"{self.family}.{self.param}"

    @property
    def trec_key(self) -> str | None:
        """The per-query key trec_eval (and pytrec_eval) reports it under."""
        if self.rule != "trec_eval":
            return None
        kind = TREC_FAMILIES[self.family][0]
        if self.param is None or kind in ("floats", "gains"):
            return self.family
        if kind == "levels":  # printed %3.2f whatever the level's digits, cut as trec_eval
            return float_cutoff_name(self.family, float(self.param))
        return f"{self.family}_{self.param}"

    @property
    def beir_name(self) -> str | None:
        """BEIR's key (``NDCG@10``, ``R_cap@10``) for BEIR's families at a cutoff, else None."""
        name = _BEIR_OF_FAMILY.get(self.family)
        return f"{name}@{self.param}" if name and self.param is not None else None

    @property
    def ir_name(self) -> str | None:
        """The ir_measures spelling (``nDCG@10``), None where ir_measures has none."""
        name = FAMILY_TO_IR.get(self.family)
        if name is None or (self.family == "ndcg" and self.param is not None):
            return None
        if self.family == "iprec_at_recall":
            return f"IPrec@{params.number_text(float(self.param or 0))}"
        if self.family == "set_F":
            return name if self.param is None else None
        return name if self.param is None else f"{name}@{self.param}"

    @property
    def legacy(self) -> tuple[str, int] | None:
        """``(metric, k)`` (``("ndcg", 10)``), as ``BeirRetrievalMetric`` takes it, for BEIR's
        families."""
        metric = _LEGACY.get(self.family)
        return (metric, int(self.param)) if metric and self.param is not None else None

    @property
    def evaluator_name(self) -> str | None:
        """The per-case evaluator's name (``ndcg@10``, ``precision@5``), which reports,
        result folders and ``heta-eval compare`` use; None outside BEIR's families."""
        legacy = self.legacy
        return f"{legacy[0]}@{legacy[1]}" if legacy else None

    def __str__(self) -> str:
        if self.family in CUSTOM_FAMILIES:
            return self.beir_name or ""
        return self.ir_name or self.trec_name or ""

    @classmethod
    def parse(cls, name: str | Measure) -> Measure:
        """A measure from any of its spellings; :class:`UnknownMeasureError` otherwise."""
        if isinstance(name, Measure):
            return _checked(name)
        if not isinstance(name, str) or not name.strip():
            raise _unknown(str(name))
        text = name.strip()
        try:
            at = _AT.match(text)
            if at:
                return cls._parse_at(at.group(1), at.group(2), name)
            if text in IR_NAMES and IR_NAMES[text][0] is not None:
                return cls(IR_NAMES[text][0])  # type: ignore[arg-type]
            return cls._parse_trec(text, name)
        except UnknownMeasureError as error:
            # heta-eval's own names (ndcg@10, precision@5, r_cap.10) and pytrec_eval's keys
            # (ndcg_cut_10, P_5); a trec_eval family keeps trec_eval's reading (map.10).
            if text.partition(".")[0] in TREC_FAMILIES:
                raise
            try:
                return legacy_measure(*parse_measure(text))
            except ValueError:
                raise error from None

    @classmethod
    def _parse_at(cls, head: str, tail: str, name: str) -> Measure:
        family = _BEIR_NAMES.get(head) or _CUSTOM_AT.get(head.lower())
        if family is not None:
            return cls(family, _cutoff(tail, name))
        if head in IR_NAMES:
            family = IR_NAMES[head][1]
            if family is None:
                raise _unknown(name, f": {head} takes no cutoff")
            if family == "iprec_at_recall":
                return cls(family, _read(params.level, name, tail))
            return cls(family, _cutoff(tail, name))
        raise _unknown(name)

    @classmethod
    def _parse_trec(cls, text: str, name: str) -> Measure:
        family, _, param = text.partition(".")
        if family not in TREC_FAMILIES:
            if family in TEXT_FAMILIES:
                raise _unknown(name, ": it is text, not a number (see heta-eval trec_eval)")
            raise _unknown(name)
        kind = TREC_FAMILIES[family][0]
        if not param:
            if kind in ("cutoffs", "levels"):
                example = "10" if kind == "cutoffs" else "0.10"
                raise _unknown(
                    name,
                    f": give a parameter ({family}.{example}); parse_measures expands "
                    f"a bare {family} to trec_eval's defaults",
                )
            return cls(family)
        if kind is None:
            raise _unknown(name, f": {family} takes no parameter")
        if "," in param and kind in ("cutoffs", "levels"):
            raise _unknown(name, ": one parameter per measure (see parse_measures)")
        if kind == "cutoffs":
            return cls(family, _read(params.cutoff, name, param))
        if kind == "levels":
            return cls(family, _read(params.level, name, param))
        if kind == "floats":
            return cls(family, _read(params.floats, name, param, family))
        return cls(family, _read(params.gains, name, param))


def _checked(measure: Measure) -> Measure:
    """``measure`` when it is one that a name parses to (a hand-built ``Measure("mrr")`` or
    ``Measure("judged")`` without its cutoff is no measure: it would score a silent 0)."""
    shown = str(measure)
    try:
        if shown:
            Measure.parse(shown)
            return measure
    except UnknownMeasureError:
        pass
    raise UnknownMeasureError(
        f"{measure!r} is no measure heta-eval scores (no name parses to it: "
        f"{shown or 'it has no name'}); build measures with Measure.parse"
    )


def parse_measures(names: str | Measure | list[str | Measure] | tuple) -> tuple[Measure, ...]:
    """Many measures: a list, or one string of names separated by spaces or commas;
    trec_eval's ``family.a,b`` expands to one measure per cutoff, and a bare cutoff family
    (``P``) to trec_eval's default cutoffs. Repeats are dropped.

    >>> [str(m) for m in parse_measures("nDCG@10 recall.100,1000 Rprec")]
    ['nDCG@10', 'R@100', 'R@1000', 'Rprec']
    >>> [str(m) for m in parse_measures("R_cap@10,Hole@10,Accuracy@10")]
    ['R_cap@10', 'Hole@10', 'Accuracy@10']
    """
    # "R_cap@10,Hole@10" is two measures; a comma before a digit or sign is a parameter's.
    if isinstance(names, str):
        items: list = _NEXT.split(" ".join(names.split()))
    else:
        items = list(names)  # type: ignore[arg-type]
    if isinstance(names, Measure):
        items = [names]
    out: list[Measure] = []
    for item in items:
        kind = TREC_FAMILIES.get(item, (None, "mean"))[0] if isinstance(item, str) else None
        if kind in ("cutoffs", "levels"):  # trec_eval's -m P: every default cutoff
            defaults = next(f.defaults for f in FAMILIES if f.name == item)
            out.extend(Measure.parse(f"{item}.{value:g}") for value in defaults)
            continue
        if isinstance(item, str) and "." in item:
            family, _, params = item.partition(".")
            kind = TREC_FAMILIES.get(family, (None, "mean"))[0]
            if kind in ("cutoffs", "levels") and "," in params:
                out.extend(Measure.parse(f"{family}.{p}") for p in params.split(","))
                continue
        out.append(Measure.parse(item))
    if not out:
        raise UnknownMeasureError(f"no measure given. Known measures: {_known()}")
    return tuple(dict.fromkeys(out))


def measure_key(metric: str, k: int) -> str:
    """BEIR's output key for a metric at cutoff k.

    >>> measure_key("ndcg", 10), measure_key("recall", 100), measure_key("precision", 5)
    ('NDCG@10', 'Recall@100', 'P@5')
    """
    return legacy_measure(metric, k).beir_name or ""


def parse_measure(name: str) -> tuple[str, int]:
    """Parse a measure name (``nDCG@10``, ``R@100``, ``P_5``, ``map_cut.10``) into (metric, k)
    of BEIR's families, as ``BeirRetrievalMetric`` takes them (:meth:`Measure.parse` knows
    every measure).

    >>> parse_measure("nDCG@10"), parse_measure("R@100"), parse_measure("mrr@10")
    (('ndcg', 10), ('recall', 100), ('mrr', 10))
    """
    match = _LEGACY_PATTERN.match(name)
    metric = _LEGACY_ALIASES.get(match.group(1).lower()) if match else None
    if match is None or metric is None or not 1 <= int(match.group(2)) <= params.MAX_CUTOFF:
        raise ValueError(
            f"cannot parse measure {name!r}: expected METRIC@K with METRIC one of "
            f"nDCG, MAP, Recall (R), P, MRR, R_cap, Hole, Accuracy and K from 1 to 2**63 - 1, "
            f"e.g. 'nDCG@10'"
        )
    return metric, int(match.group(2))


def legacy_measure(metric: str, k: int) -> Measure:
    """The measure of a ``(metric, k)`` pair: ``("ndcg", 10)`` is ``NDCG@10``."""
    return Measure(_LEGACY_FAMILY[metric], str(k))


def canonical_metric(name: str) -> str:
    """The name results are compared under (``heta-eval compare``, reference checks,
    leaderboards): a retrieval measure's
    :attr:`~heta_eval.measures.measure.Measure.evaluator_name` (``NDCG@10``, ``nDCG@10``,
    ``ndcg_cut.10`` and ``ndcg@10`` all give ``ndcg@10``), another measure's ``str(Measure)``
    lower-cased (``RR@10`` gives ``rr@10``, not BEIR's ``mrr@10``), anything else
    lower-cased.

    >>> [canonical_metric(name) for name in ("NDCG@10", "R@100", "evidence_recall@5")]
    ['ndcg@10', 'recall@100', 'evidence_recall@5']
    """
    try:
        measure = Measure.parse(name)
    except UnknownMeasureError:
        return name.strip().lower()
    return measure.evaluator_name or str(measure).lower()
