"""Reciprocal rank fusion (RRF) of several rankings."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

__all__ = ["reciprocal_rank_fusion"]

K = TypeVar("K", bound=Hashable)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[K]], *, k: int = 60
) -> list[tuple[K, float]]:
    """Fuse rankings (best first) by RRF: ``score(d) = sum over rankings of 1 / (k + rank)``.

    Ranks start at 1 (Cormack et al., 2009). An item missing from a ranking gets nothing
    from it. Ties keep the order in which items were first seen.

    >>> reciprocal_rank_fusion([["a", "b"], ["b", "c"]], k=60)
    [('b', 0.03252247488101534), ('a', 0.01639344262295082), ('c', 0.016129032258064516)]
    """
    scores: dict[K, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    # sorted() is stable, so equal scores keep first-seen order.
    return sorted(scores.items(), key=lambda kv: -kv[1])
