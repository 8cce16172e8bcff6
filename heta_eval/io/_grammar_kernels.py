"""The compiled form of the grammar's number and text rules (:mod:`heta_eval.io.grammar`),
for the run parser: strict UTF-8, and scores in
``[+-]?(digits[.digits]|.digits)([eE][+-]?digits)?`` with ASCII digits only, converted
exactly where one IEEE operation can (Clinger's fast path)."""

from __future__ import annotations

import numpy as np

from heta_eval._runtime import njit
from heta_eval.io._kernels import at

__all__ = ["POW10", "score", "utf8_ok"]

# Exact powers of ten (10**22 is the largest a float64 holds exactly).
POW10 = np.array([10.0**i for i in range(23)], dtype=np.float64)


@njit(cache=True, nogil=True, inline="always")
def utf8_ok(data, a, b):  # pragma: no cover - compiled
    """Strict UTF-8 (as Python decodes it): no overlongs, surrogates or code points past
    U+10FFFF."""
    i = a
    while i < b:
        c = at(data, i)
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            need, lo, hi = 1, 0x80, 0xBF
        elif c == 0xE0:
            need, lo, hi = 2, 0xA0, 0xBF
        elif 0xE1 <= c <= 0xEC or 0xEE <= c <= 0xEF:
            need, lo, hi = 2, 0x80, 0xBF
        elif c == 0xED:
            need, lo, hi = 2, 0x80, 0x9F
        elif c == 0xF0:
            need, lo, hi = 3, 0x90, 0xBF
        elif 0xF1 <= c <= 0xF3:
            need, lo, hi = 3, 0x80, 0xBF
        elif c == 0xF4:
            need, lo, hi = 3, 0x80, 0x8F
        else:
            return False
        if i + need > b - 1:
            return False
        if not lo <= at(data, i + 1) <= hi:
            return False
        for j in range(i + 2, i + 1 + need):
            if not 0x80 <= at(data, j) <= 0xBF:
                return False
        i += need + 1
    return True


@njit(cache=True, nogil=True, inline="always")
def _digit_run(data, b, fraction, i, mantissa, significant, scale, digits):  # pragma: no cover
    """Read the digits from ``i`` into (the first 19 significant ones) ``mantissa``; ``scale``
    is the decimal exponent that corrects for the digits left out of the integer part or
    read after the point. Returns the updated ``(i, mantissa, significant, scale, digits)``."""
    while i < b and 48 <= at(data, i) <= 57:
        d = at(data, i) - 48
        if significant > 0 or d != 0:
            significant += 1
            if significant <= 19:
                mantissa = mantissa * np.uint64(10) + np.uint64(d)
                if fraction:
                    scale -= 1
            elif not fraction:
                scale += 1
        elif fraction:
            scale -= 1  # a leading zero after the point
        digits += 1
        i += 1
    return i, mantissa, significant, scale, digits


@njit(cache=True, nogil=True, inline="always")
def score(data, a, b, pow10):  # pragma: no cover - compiled
    """(ok, exact, value) of the score text ``data[a:b]`` in the grammar
    ``[+-]?(digits[.digits]|.digits)([eE][+-]?digits)?``; ``exact`` False: leave it to the
    correctly rounded converter (too many digits or too large an exponent)."""
    i = a
    negative = False
    if i < b and (at(data, i) == 43 or at(data, i) == 45):
        negative = at(data, i) == 45
        i += 1
    i, mantissa, significant, scale, digits = _digit_run(data, b, False, i, np.uint64(0), 0, 0, 0)
    if i < b and at(data, i) == 46:
        i, mantissa, significant, scale, digits = _digit_run(
            data, b, True, i + 1, mantissa, significant, scale, digits
        )
    if digits == 0:
        return False, False, 0.0
    exponent = 0
    if i < b and (at(data, i) == 101 or at(data, i) == 69):
        i += 1
        exp_negative = False
        if i < b and (at(data, i) == 43 or at(data, i) == 45):
            exp_negative = at(data, i) == 45
            i += 1
        exp_digits = 0
        while i < b and 48 <= at(data, i) <= 57:
            if exponent < 100_000:
                exponent = exponent * 10 + (at(data, i) - 48)
            exp_digits += 1
            i += 1
        if exp_digits == 0:
            return False, False, 0.0
        if exp_negative:
            exponent = -exponent
    if i != b:
        return False, False, 0.0
    if significant == 0:
        return True, True, -0.0 if negative else 0.0
    if significant > 19 or mantissa > np.uint64(9007199254740992):
        return True, False, 0.0
    e = exponent + scale
    if e < -22 or e > 22:
        return True, False, 0.0
    value = float(mantissa)
    value = value * pow10[e] if e >= 0 else value / pow10[-e]
    return True, True, -value if negative else value
