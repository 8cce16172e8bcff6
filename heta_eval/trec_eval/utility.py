"""trec_eval's ``-N NUM_DOCS``: the collection size in ``utility``'s 4th coefficient.

trec_eval's ``utility.p1,p2,p3,p4`` is ``p1*a + p2*b + p3*c + p4*d`` over the contingency
table of the retrieved and relevant documents, where ``d`` (relevant nor retrieved) is
``N + num_rel_ret - num_ret - num_rel``, in C ``long`` arithmetic, ``N`` being ``-N`` (0
when not given, as pytrec_eval always has it). With ``-N`` this recomputes utility from
the query's counts (pytrec_eval's ``num_ret``, ``num_rel``, ``num_rel_ret``, under the same
``-l``/``-J``/``-M``) in trec_eval's order of operations, so the doubles are the same.

>>> utility((1.0, -1.0, 0.0, 0.5), num_docs=1000, num_ret=10, num_rel=4, num_rel_ret=3)
490.5
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from heta_eval.trec_eval.compute import TrecEvalResult

__all__ = ["missing_counts", "utility", "with_num_docs"]

_COUNTS = ("num_ret", "num_rel", "num_rel_ret")


def _long(value: int) -> int:
    """A C ``long`` sum on x86-64: it wraps."""
    return (value + 2**63) % 2**64 - 2**63


def utility(
    params: Sequence[float], *, num_docs: int, num_ret: int, num_rel: int, num_rel_ret: int
) -> float:
    """m_utility.c's value, term by term as the C code adds them."""
    p1, p2, p3, p4 = params
    unretrieved_nonrel = _long(_long(_long(num_docs + num_rel_ret) - num_ret) - num_rel)
    return (
        p1 * float(num_rel_ret)
        + p2 * float(num_ret - num_rel_ret)
        + p3 * float(num_rel - num_rel_ret)
        + p4 * float(unretrieved_nonrel)
    )


def missing_counts(specs: Sequence[str]) -> list[str]:
    """The count measures utility needs that ``specs`` does not already ask for."""
    return [name for name in _COUNTS if name not in specs]


def with_num_docs(
    result: TrecEvalResult, params: Sequence[float], num_docs: int, added: Sequence[str]
) -> None:
    """Recompute each query's ``utility`` with ``num_docs``, in place, and drop the counts
    in ``added`` (asked for only to compute it)."""
    for values in result.values.values():
        if "utility" in values:
            counts = {name: int(values[name]) for name in _COUNTS}
            values["utility"] = utility(params, num_docs=num_docs, **counts)
        for name in added:
            values.pop(name, None)
