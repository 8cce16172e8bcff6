"""Numbers on trec_eval's command line, read as its C code reads them.

trec_eval reads ``-l``, ``-M`` and rank cutoffs with ``atol`` (the leading integer: ``23.4``
is 23, ``99999999999999999999`` saturates to the largest C ``long``) and other parameters
with ``atof``. It sorts rank cutoffs with ``qsort`` and a comparator that subtracts two
``long`` values and keeps the low 32 bits, so cutoffs more than 2**31 apart can come out of
order; the order is reproduced here (glibc's merge sort), because it is the order trec_eval
prints them in. Names of fractional cutoffs are ``%3.2f`` cut to the buffer trec_eval gives
them (``Rprec_mult_1000000.``).

>>> atol("23.4"), atol("99999999999999999999"), atol(" -7x")
(23, 9223372036854775807, -7)
>>> trec_eval_cutoff_order([5, 2**63 - 1, 3])
[9223372036854775807, 3, 5]
>>> float_cutoff_name("Rprec_mult", 1e6)
'Rprec_mult_1000000.'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from heta_eval.io.grammar import INT64_MAX, INT64_MIN, NUMBER, atol
from heta_eval.measures.trec_catalogue import float_cutoff_name

__all__ = [
    "LONG_MAX",
    "alike_rounds",
    "atol",
    "c_long",
    "float_cutoff_keys",
    "float_cutoff_name",
    "in_rounds",
    "is_number",
    "trec_eval_cutoff_order",
]

LONG_MAX = INT64_MAX
_LONG_MIN = INT64_MIN


def is_number(text: str) -> bool:
    """A plain decimal number (what this command accepts where trec_eval calls atol/atof)."""
    return re.fullmatch(NUMBER, text) is not None


def c_long(value: float) -> int:
    """C's ``(long)`` cast of a double on x86-64: toward zero; out of range gives LONG_MIN."""
    if value != value or not -(2.0**63) <= value < 2.0**63:
        return _LONG_MIN
    return int(value)


def _comp_long(a: int, b: int) -> int:
    """trec_eval's ``comp_long``: ``(int) (a - b)`` on 64-bit longs (wraps, then truncates)."""
    diff = (a - b) & 0xFFFFFFFF
    return diff - (1 << 32) if diff >= 1 << 31 else diff


def _msort(values: list[int], compare: Callable[[int, int], int]) -> list[int]:
    """glibc's qsort for small arrays: a top-down merge sort, left taken on ``<= 0``."""
    if len(values) <= 1:
        return values
    half = len(values) // 2
    left, right = _msort(values[:half], compare), _msort(values[half:], compare)
    out: list[int] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if compare(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def trec_eval_cutoff_order(cutoffs: Sequence[int]) -> list[int]:
    """Rank cutoffs in the order trec_eval sorts (and prints) them."""
    return _msort(list(cutoffs), _comp_long)


def float_cutoff_keys(name: str, values: Sequence[float]) -> tuple[str, ...]:
    """The keys of sorted ``values`` of a ``%3.2f`` family: the printed name, and for a level
    that prints like an earlier one (``0.1`` and ``0.104``: both ``_0.10``, and trec_eval
    prints both lines) the name with ``#n``, its n-th repeat, so each keeps its own value.

    >>> float_cutoff_keys("iprec_at_recall", [0.1, 0.104, 0.5])
    ('iprec_at_recall_0.10', 'iprec_at_recall_0.10#1', 'iprec_at_recall_0.50')
    """
    seen: dict[str, int] = {}
    keys = []
    for value in values:
        printed = float_cutoff_name(name, value)
        repeat = seen.get(printed, 0)
        seen[printed] = repeat + 1
        keys.append(f"{printed}#{repeat}" if repeat else printed)
    return tuple(keys)


def alike_rounds(
    specs: Sequence[str], float_families: set[str]
) -> list[tuple[list[str], dict[str, str]]]:
    """pytrec_eval keys its values by the printed name, so levels that print alike cannot be
    computed in one evaluation: ``specs`` split into rounds, each without such a pair, with
    the renaming of each round's keys to :func:`float_cutoff_keys`' (empty: as computed).

    >>> first, second = alike_rounds(["P.5", "iprec_at_recall.0.104,0.1,0.5"], {"iprec_at_recall"})
    >>> first
    (['P.5', 'iprec_at_recall.0.1,0.5'], {})
    >>> second
    (['iprec_at_recall.0.104'], {'iprec_at_recall_0.10': 'iprec_at_recall_0.10#1'})
    """
    rounds: list[tuple[list[str], dict[str, str]]] = [([], {})]
    for spec in specs:
        family, _, text = spec.partition(".")
        if family not in float_families or not text:
            rounds[0][0].append(spec)
            continue
        parts = sorted(text.split(","), key=float)
        keys = float_cutoff_keys(family, [float(part) for part in parts])
        by_round: dict[int, list[str]] = {}
        for part, key in zip(parts, keys, strict=True):
            repeat = int(key.partition("#")[2] or 0)
            by_round.setdefault(repeat, []).append(part)
            while len(rounds) <= repeat:
                rounds.append(([], {}))
            if repeat:
                rounds[repeat][1][key.partition("#")[0]] = key
        for repeat, round_parts in by_round.items():
            rounds[repeat][0].append(f"{family}.{','.join(round_parts)}")
    return rounds


def in_rounds(
    specs: Sequence[str],
    float_families: set[str],
    compute: Callable[[list[str], bool], dict[str, dict[str, Any]]],
) -> dict[str, dict[str, Any]] | None:
    """``compute(specs, first)`` once per round of :func:`alike_rounds`, the values merged
    under their keys; None when one round holds every spec (nothing prints alike)."""
    rounds = alike_rounds(specs, float_families)
    if len(rounds) == 1:
        return None
    out = compute(rounds[0][0], True)
    for more, renamed in rounds[1:]:
        for qid, got in compute(more, False).items():
            out[qid].update((renamed.get(key, key), value) for key, value in got.items())
    return out
