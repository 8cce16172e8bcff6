"""How the text after a trec_eval family's dot is read: one reader per parameter kind.

trec_eval 9.0.8 reads parameters with C's ``atol`` (cutoffs) and ``atof`` (levels, float
lists, gains), so ``ndcg_cut.23.4`` is ``ndcg_cut_23``. These readers accept exactly what
trec_eval reads as the number it means, and refuse what it would silently read as something
else (``P.5x``, ``P.0``, ``utility.1,2``): a refused name raises ``ValueError`` with the
reason, never a wrong number.

Each reader returns the parameter's canonical text, which is what the measure is named by
and what is handed to trec_eval:

>>> cutoff("23.4"), level("0.1"), level("0.125"), floats("1,-1.0,0,0", "utility"), gains("1=0,2=3")
('23', '0.10', '0.125', '1,-1,0,0', '1=0,2=3')
"""

from __future__ import annotations

import math
import re

from heta_eval.io.grammar import NUMBER

__all__ = [
    "GAIN_PAIR",
    "MAX_CUTOFF",
    "NUMBER",
    "check_cutoff",
    "cutoff",
    "floats",
    "gains",
    "level",
    "number_text",
]

#: The largest cutoff: int64's (numpy, numba and trec_eval's ``long`` hold every cutoff).
MAX_CUTOFF = 2**63 - 1

#: One ``LEVEL=GAIN`` pair of the gain families.
GAIN_PAIR = re.compile(rf"[+-]?[0-9]+={NUMBER}")
_CUTOFF = re.compile(r"\+?([0-9]+)(?:\.[0-9]*)?")


def number_text(value: float) -> str:
    """The shortest text that reads back as exactly ``value`` (``%g`` when it does)."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def check_cutoff(k: object) -> int:
    """A cutoff given as a number (``k_values``, ``--k``): an ``int`` from 1 to
    :data:`MAX_CUTOFF`, else ``ValueError`` naming it.

    >>> check_cutoff(10)
    10
    >>> check_cutoff(10**20)
    Traceback (most recent call last):
    ...
    ValueError: every k must be a positive integer up to 2**63 - 1, got 100000000000000000000
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_CUTOFF:
        raise ValueError(f"every k must be a positive integer up to 2**63 - 1, got {k!r}")
    return k


def cutoff(text: str) -> str:
    """A rank cutoff, read as ``atol`` does (``23.4`` is 23); from 1 to :data:`MAX_CUTOFF`."""
    match = _CUTOFF.fullmatch(text.strip())
    if match is None or not 1 <= int(match.group(1)) <= MAX_CUTOFF:
        raise ValueError("the cutoff must be a positive integer up to 2**63 - 1")
    return str(int(match.group(1)))


def level(text: str) -> str:
    """A recall level or R multiplier (``atof``), finite and >= 0; named with two decimals
    as trec_eval prints it (``0.10``) when that is exact, else with every digit needed."""
    if re.fullmatch(NUMBER, text.strip()) is None:
        raise ValueError("the level must be a number")
    value = float(text)
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError("the level must be a finite number >= 0")
    two = f"{value:.2f}"
    return two if float(two) == value else number_text(value)


def floats(text: str, family: str) -> str:
    """A list of numbers (``utility``'s four coefficients, ``set_F``'s beta, ...)."""
    parts = text.split(",")
    if not all(re.fullmatch(NUMBER, part.strip()) for part in parts):
        raise ValueError("its parameters are comma-separated numbers, e.g. utility.1,-1,0,0")
    values = [float(part) for part in parts]
    if not all(math.isfinite(v) for v in values):
        raise ValueError("its parameters must be finite numbers")
    if family == "utility" and len(values) != 4:
        raise ValueError("utility takes exactly 4 coefficients (a, b, c, d)")
    return ",".join(number_text(v) for v in values)


def gains(text: str) -> str:
    """``LEVEL=GAIN`` pairs (integer level, numeric gain), e.g. ``0=0,1=1,2=3``."""
    parts = [part.strip() for part in text.split(",")]
    if not all(GAIN_PAIR.fullmatch(part) for part in parts):
        raise ValueError("gains are LEVEL=GAIN pairs, e.g. ndcg.1=1,2=3")
    levels = [int(part.partition("=")[0]) for part in parts]
    if len(set(levels)) != len(levels):
        raise ValueError("each level may be given one gain")
    pairs = (part.partition("=") for part in parts)
    return ",".join(f"{int(a)}={number_text(float(b))}" for a, _, b in pairs)
