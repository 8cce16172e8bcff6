"""How a score shows in a table cell, the same in every table the package prints: a value to
five decimals (the precision :func:`~heta_eval.measures.averaging.round5` keeps), a
categorical score as its counts, and ``–`` where there is nothing to show.

>>> value_cell(0.123456), value_cell(None), counts_cell({"SUPPORT": 3, "REFUTE": 1})
('0.12346', '–', 'SUPPORT: 3, REFUTE: 1')
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["EMPTY_CELL", "counts_cell", "value_cell"]

#: What a cell without a value shows.
EMPTY_CELL = "–"


def value_cell(value: float | None) -> str:
    """A score to five decimals, or :data:`EMPTY_CELL`."""
    return EMPTY_CELL if value is None else f"{value:.5f}"


def counts_cell(counts: Mapping[str, int]) -> str:
    """Categorical counts as ``label: count, ...``, or :data:`EMPTY_CELL` when there are none."""
    return ", ".join(f"{key}: {count}" for key, count in counts.items()) or EMPTY_CELL
