"""Condorcet fusion (Montague and Aslam, 2002), as ranx computes it.

Per query, the candidates are sorted with a pairwise comparison: ``x`` goes before ``y`` when
at least half the runs rank ``x`` above ``y`` (a run that ranks neither votes for ``y``; one
that ranks only one votes for that one). The first of ``N`` candidates scores ``N``, the next
``N - 1``, and so on. The comparison is not a total order (ties and majority cycles), so
the result then depends on the order the candidates start in: heta-eval starts from the
order the runs list them (the first run's ranking, then what only the second run ranks, ...);
ranx starts from a Python ``set``'s order, which changes between processes.

>>> ranks = np.array([[1, 1, 2], [2, 2, 1], [0, 3, 3]])
>>> condorcet(ranks, np.array([0, 3])).tolist()
[3.0, 2.0, 1.0]
"""

from __future__ import annotations

from functools import cmp_to_key

import numpy as np

__all__ = ["condorcet"]

UNRANKED = 1_000_000  # ranx's position for a run that does not rank the candidate


def condorcet(ranks: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each row's Condorcet score; ``ranks`` rows × runs (0 = not ranked), a query's rows
    ``offsets[q]:offsets[q + 1]``."""
    fused = np.zeros(ranks.shape[0])
    n_runs = ranks.shape[1]
    positions = np.where(ranks > 0, ranks - 1, UNRANKED)
    # First-seen order: the first run that ranks the candidate, then its rank there.
    first_run = np.argmax(ranks > 0, axis=1)
    first_rank = ranks[np.arange(len(ranks)), first_run]
    half = n_runs / 2

    for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
        if end == start:
            continue
        rows = np.lexsort((first_rank[start:end], first_run[start:end])) + start
        votes = [tuple(positions[row].tolist()) for row in rows]

        def before(x: int, y: int, votes: list[tuple[int, ...]] = votes) -> int:
            wins = sum(a < b for a, b in zip(votes[x], votes[y], strict=True))
            return -1 if wins >= half else 1

        order = sorted(range(len(rows)), key=cmp_to_key(before))
        fused[rows[order]] = np.arange(len(rows), 0, -1, dtype=float)
    return fused
