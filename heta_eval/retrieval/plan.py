"""What an evaluation call asks for: BEIR's grid of metrics × cutoffs, or named measures,
checked before any input is read.

>>> ks, metrics, named = plan_measures((10, 1, 10), ["ndcg"], None)
>>> ks, metrics, list(named)
((1, 10), ('ndcg',), ['NDCG@1', 'NDCG@10'])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from heta_eval.measures.measure import (
    BEIR_METRICS,
    Measure,
    legacy_measure,
    measure_key,
    parse_measures,
)
from heta_eval.measures.params import check_cutoff

__all__ = ["plan_measures", "validate_k_values", "validate_metrics"]


def validate_k_values(k_values: Iterable[int]) -> tuple[int, ...]:
    ks = tuple(k_values)
    if not ks:
        raise ValueError("k_values must not be empty")
    for k in ks:
        check_cutoff(k)
    # BEIR double-counts a repeated k (docs/retrieval-core.md); a set of cutoffs is meant.
    return tuple(sorted(set(ks)))


def validate_metrics(metrics: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(metrics))
    for metric in chosen:
        if metric not in BEIR_METRICS:
            raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(BEIR_METRICS)}")
    return chosen


def plan_measures(
    k_values: Iterable[int], metrics: Iterable[str], measures: Any
) -> tuple[tuple[int, ...], tuple[str, ...], dict[str, Measure]]:
    """(k values, metrics, {name: measure}) of a call: BEIR's grid, or the given measures."""
    if measures is None:
        ks = validate_k_values(k_values)
        chosen = validate_metrics(metrics)
        return ks, chosen, {measure_key(m, k): legacy_measure(m, k) for m in chosen for k in ks}
    named = {str(m): m for m in parse_measures(measures)}
    legacy = [m.legacy for m in named.values() if m.legacy is not None]
    ks = tuple(sorted({k for _, k in legacy}))
    chosen = tuple(metric for metric in BEIR_METRICS if any(lm == metric for lm, _ in legacy))
    return ks, chosen, named
