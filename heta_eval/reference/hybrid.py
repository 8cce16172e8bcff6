"""Reciprocal rank fusion (RRF) of several rankings, through :func:`heta_eval.fusion.methods.rrf`
(the code ``heta-eval fuse --method rrf`` runs)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

import numpy as np

from heta_eval.fusion.methods import rrf

__all__ = ["reciprocal_rank_fusion"]

K = TypeVar("K", bound=Hashable)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[K]], *, k: int = 60
) -> list[tuple[K, float]]:
    """Fuse rankings (best first) by RRF: ``score(d) = sum over rankings of 1 / (k + rank)``.

    Ranks start at 1 (Cormack et al., 2009), ranx's ``rrf`` to the bit. An item missing from
    a ranking gets nothing from it. Ties keep the order in which items were first seen (the
    rankings' own order; ``heta-eval fuse`` ranks equal scores by doc id instead, as it reads
    scored runs). An item twice in one ranking is refused.

    >>> reciprocal_rank_fusion([["a", "b"], ["b", "c"]], k=60)
    [('b', 0.03252247488101534), ('a', 0.01639344262295082), ('c', 0.016129032258064516)]
    """
    index: dict[K, int] = {}
    for ranking in rankings:
        for item in ranking:
            index.setdefault(item, len(index))
    ranks = np.zeros((len(index), len(rankings)), np.int64)
    for column, ranking in enumerate(rankings):
        rows = np.fromiter((index[item] for item in ranking), np.int64, len(ranking))
        if len(np.unique(rows)) != len(rows):
            raise ValueError(f"ranking {column} holds an item twice")
        ranks[rows, column] = np.arange(1, len(rows) + 1)
    fused = rrf(ranks, k)
    # A stable sort: equal scores keep first-seen order.
    order = np.argsort(-fused, kind="stable").tolist()
    items = list(index)
    return [(items[i], float(fused[i])) for i in order]
