"""What makes a candidate worse than its baseline on one measure: the conditions of a
regression gate (``heta-eval compare --fail-if-worse``), read from their text.

A condition names a measure and what counts as worse, in one of three forms:

* ``nDCG@10>0.005``: the candidate's mean is more than 0.005 below the baseline's (an
  absolute margin);
* ``nDCG@10>1%``: more than 1% of the baseline's mean below it (a relative margin);
* ``nDCG@10:p<0.05``: lower, and significantly so: the paired randomization test's
  Holm-adjusted p-value (the ``*`` of ``heta-eval compare``) below 0.05;

or both, ``nDCG@10>0.005:p<0.05``: failed only when the drop passes the margin *and* is
significant. Every difference is the paired one, candidate − baseline, over the queries the
two share (:func:`heta_eval.compare.compare`); every measure is read as higher-is-better, and
``Hole@k`` (the share of unjudged documents) is refused. Light on purpose: the command line
reads conditions before it imports anything heavy.

>>> Condition.parse("nDCG@10>0.005").describe()
'a drop of more than 0.005 fails'
>>> Condition.parse("ndcg@10>1%:p<0.05").label()
'ndcg@10 > 1% : p < 0.05'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from heta_eval.measures.measure import canonical_metric

__all__ = ["Condition"]

# Float slack: a drop equal to the margin, up to rounding of the means, is not past it.
_SLACK = 1e-12
#: Measures that are not "higher is better": a gate on them would pass a regression.
_NOT_QUALITY = ("hole@",)

_CONDITION = re.compile(
    r"^\s*(?P<metric>[^\s>:]+?)\s*"
    r"(?:>\s*(?P<margin>[^\s:%]+)\s*(?P<percent>%)?)?\s*"
    r"(?::\s*p\s*<\s*(?P<alpha>\S+))?\s*$"
)

Kind = Literal["absolute", "relative"]


@dataclass(frozen=True)
class Condition:
    """When a candidate is worse than the baseline on ``metric``: a drop past ``margin``
    (``kind`` absolute, or relative: a fraction of the baseline's mean), a significant drop
    (``alpha``: Holm-adjusted permutation p below it), or both. ``text`` is as given."""

    metric: str
    margin: float | None = None
    kind: Kind = "absolute"
    alpha: float | None = None
    text: str = ""

    def __post_init__(self) -> None:
        if self.margin is None and self.alpha is None:
            raise ValueError(f"{self.text or self.metric}: give a margin (>0.005, >1%) or p<ALPHA")
        if self.margin is not None and not (math.isfinite(self.margin) and self.margin >= 0):
            raise ValueError(f"{self.text}: the margin must be a finite number ≥ 0")
        if self.kind == "relative" and self.margin is not None and self.margin > 1:
            raise ValueError(f"{self.text}: a relative margin is at most 100%")
        if self.alpha is not None and not 0 < self.alpha < 1:
            raise ValueError(f"{self.text}: p must be compared with a number in (0, 1)")
        if self.metric.startswith(_NOT_QUALITY):
            raise ValueError(
                f"{self.text or self.metric}: {self.metric} counts unjudged documents, it is "
                "not a measure where higher is better; gate on nDCG, recall, MAP, P or MRR"
            )

    @classmethod
    def parse(cls, text: str) -> Condition:
        """A condition from its text (``nDCG@10>0.005``, ``recall@100>1%``,
        ``ndcg@10:p<0.05``, ``ndcg@10>0.005:p<0.05``); a :class:`ValueError` saying what it
        takes otherwise.

        >>> Condition.parse("R@100 > 2%")
        Condition(metric='recall@100', margin=0.02, kind='relative', alpha=None, text='R@100 > 2%')
        """
        found = _CONDITION.match(text)
        if not found or not (found["margin"] or found["alpha"]):
            raise ValueError(
                f"{text!r} is not a condition: write METRIC>MARGIN (nDCG@10>0.005), "
                "METRIC>PERCENT% (nDCG@10>1%), METRIC:p<ALPHA (nDCG@10:p<0.05) or both "
                "(nDCG@10>0.005:p<0.05)"
            )
        margin = _number(text, found["margin"]) if found["margin"] else None
        relative = bool(found["percent"])
        if relative and margin is not None:
            margin /= 100
        alpha = _number(text, found["alpha"]) if found["alpha"] else None
        return cls(
            canonical_metric(found["metric"]),
            margin,
            "relative" if relative else "absolute",
            alpha,
            text.strip(),
        )

    def allowed_drop(self, baseline_mean: float) -> float | None:
        """The largest drop that passes (None: no margin)."""
        if self.margin is None:
            return None
        return self.margin * abs(baseline_mean) if self.kind == "relative" else self.margin

    def fails(self, row: Any) -> bool:
        """Whether ``row`` (a :class:`~heta_eval.compare.MetricComparison`: a candidate
        against the baseline on this metric) is worse."""
        drop = -row.diff
        allowed = self.allowed_drop(row.mean_baseline)
        past_margin = allowed is None or drop > allowed + _SLACK
        significant = self.alpha is None or (row.diff < 0 and row.p_permutation_holm < self.alpha)
        return past_margin and significant

    def describe(self) -> str:
        """What fails, in words: ``a drop of more than 0.005``, ``... and significant``."""
        parts = []
        if self.margin is not None:
            amount = (
                f"{self.margin * 100:g}% of the baseline"
                if self.kind == "relative"
                else (f"{self.margin:g}")
            )
            parts.append(f"a drop of more than {amount}")
        if self.alpha is not None:
            parts.append(f"a significant drop (Holm p (perm) < {self.alpha:g})")
        return " that is also ".join(parts) + " fails"

    def label(self) -> str:
        """The condition as one canonical text: ``ndcg@10 > 0.005``, ``ndcg@10 : p < 0.05``."""
        text = self.metric
        if self.margin is not None:
            relative = self.kind == "relative"
            text += f" > {self.margin * 100:g}%" if relative else f" > {self.margin:g}"
        if self.alpha is not None:
            text += f" : p < {self.alpha:g}"
        return text


def _number(text: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{text!r}: {value!r} is not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"{text!r}: {value!r} is not a finite number")
    return number
