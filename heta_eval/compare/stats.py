"""Paired statistics for comparing two systems query by query.

Every function takes two equal-length arrays of per-query scores, ``a`` (the baseline) and
``b`` (the system), paired by position; differences are always ``b - a``.

* :func:`paired_ttest` — two-sided paired t-test, equal to ``scipy.stats.ttest_rel(b, a)``;
* :func:`permutation_test` — paired randomization test (random sign flips of the differences),
  two-sided, seeded; exact enumeration when ``2**n <= n_resamples``;
* :func:`bootstrap_ci` — percentile bootstrap confidence interval of the mean difference;
* :func:`holm` — Holm–Bonferroni adjusted p-values across a family of comparisons;
* :func:`win_tie_loss` — per-query wins, ties and losses with a tie tolerance.

:func:`permutation_tests` and :func:`bootstrap_cis` test many pairs at once, each result equal
to the single function's with the same seed; pairs of equal length share one set of draws.

>>> a = [0.2, 0.5, 0.1, 0.7, 0.4]
>>> b = [0.3, 0.6, 0.1, 0.9, 0.5]
>>> round(paired_ttest(a, b).pvalue, 4)
0.0341
>>> permutation_test(a, b).pvalue  # 2**5 = 32 sign patterns: enumerated exactly
0.125
>>> win_tie_loss(a, b)
(4, 1, 0)
>>> holm([0.01, 0.04, 0.03])
[0.03, 0.06, 0.06]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product

import numpy as np

from heta_eval.extras import require
from heta_eval.sizes import MAX_RESAMPLES

# The 'compare' extra; without it, importing this module is one line naming the extra.
_scipy_stats = require("scipy.stats")

__all__ = [
    "BootstrapResult",
    "PermutationResult",
    "TTestResult",
    "bootstrap_ci",
    "bootstrap_cis",
    "holm",
    "paired_ttest",
    "permutation_test",
    "permutation_tests",
    "win_tie_loss",
]

ArrayLike = Sequence[float] | np.ndarray

#: Default number of random resamples (permutation and bootstrap).
N_RESAMPLES = 10_000
#: Default seed: results are reproducible unless a caller asks otherwise.
SEED = 0
# Keep each random block at about this many elements (8 bytes each) to bound memory.
_BLOCK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class TTestResult:
    """A paired t-test: ``statistic`` is t of the mean difference ``b - a``."""

    statistic: float
    pvalue: float
    df: int


@dataclass(frozen=True)
class PermutationResult:
    """A paired randomization test of the mean difference ``b - a``."""

    statistic: float  # observed mean difference
    pvalue: float
    n_resamples: int  # sign patterns used (2**n when exact)
    exact: bool


@dataclass(frozen=True)
class BootstrapResult:
    """A percentile bootstrap confidence interval of the mean difference ``b - a``."""

    mean: float
    low: float
    high: float
    confidence: float
    n_resamples: int


def _differences(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"a and b must be 1-D and of equal length, got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("a and b must hold finite numbers only")
    return y - x


def paired_ttest(a: ArrayLike, b: ArrayLike) -> TTestResult:
    """Two-sided paired t-test of ``b - a``; p-value equal to ``scipy.stats.ttest_rel(b, a)``.

    Degenerate inputs get defined answers instead of scipy's NaN: fewer than two pairs or all
    differences zero give p = 1 (no evidence of a difference).

    >>> r = paired_ttest([0.1, 0.2, 0.3], [0.2, 0.4, 0.3])
    >>> round(r.statistic, 4), round(r.pvalue, 4), r.df
    (1.7321, 0.2254, 2)
    """
    d = _differences(a, b)
    n = d.size
    if n < 2 or not np.any(d):
        return TTestResult(0.0, 1.0, max(n - 1, 0))
    if np.all(d == d[0]):
        # Constant non-zero difference: zero variance, t is infinite, p is 0 (scipy agrees).
        return TTestResult(math.copysign(math.inf, d[0]), 0.0, n - 1)
    result = _scipy_stats.ttest_rel(np.asarray(b, float), np.asarray(a, float))
    return TTestResult(float(result.statistic), float(result.pvalue), n - 1)


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def permutation_test(
    a: ArrayLike,
    b: ArrayLike,
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int | np.random.Generator | None = SEED,
) -> PermutationResult:
    """Paired randomization test: two-sided p-value of the mean difference under sign flips.

    Under the null hypothesis the two systems are exchangeable within each query, so each
    difference's sign is a fair coin. The p-value counts sign patterns whose mean difference
    is at least as extreme as the observed one, ``(count + 1) / (n_resamples + 1)`` for random
    patterns (never 0), ``count / 2**n`` when all ``2**n <= n_resamples`` patterns are
    enumerated exactly — the same conventions as ``scipy.stats.permutation_test`` with
    ``permutation_type="samples"``.

    >>> r = permutation_test([0.1, 0.2, 0.3, 0.4], [0.3, 0.3, 0.4, 0.6])
    >>> r.exact, r.n_resamples, r.pvalue
    (True, 16, 0.125)
    >>> r = permutation_test([0.0] * 20, [0.1] * 10 + [0.0] * 10, seed=1)
    >>> r.exact, round(r.pvalue, 3)
    (False, 0.002)
    """
    return permutation_tests([(a, b)], n_resamples=n_resamples, seed=seed)[0]


def permutation_tests(
    pairs: Sequence[tuple[ArrayLike, ArrayLike]],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int | np.random.Generator | None = SEED,
) -> list[PermutationResult]:
    """:func:`permutation_test` of each ``(a, b)`` pair, each result equal to that function's
    with the same ``seed``; pairs of equal length share one set of random sign patterns (drawn
    once), which is what makes many comparisons of the same queries fast.

    With a :class:`numpy.random.Generator` as ``seed``, each length draws from it in turn.
    """
    _check_resamples(n_resamples)
    differences = [_differences(a, b) for a, b in pairs]
    results: list[PermutationResult | None] = [None] * len(differences)
    for n, members in _by_length(differences).items():
        ds = [differences[i] for i in members]
        for i, result in zip(
            members, _permutation_same_length(ds, n, n_resamples, seed), strict=True
        ):
            results[i] = result
    return results  # type: ignore[return-value]


def _check_resamples(n_resamples: int) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise ValueError(f"n_resamples must be an integer, got {n_resamples!r}")
    if not 1 <= n_resamples <= MAX_RESAMPLES:
        raise ValueError(f"n_resamples must be from 1 to {MAX_RESAMPLES:,}, got {n_resamples}")


def _by_length(differences: Sequence[np.ndarray]) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for i, d in enumerate(differences):
        groups.setdefault(d.size, []).append(i)
    return groups


def _permutation_same_length(
    ds: Sequence[np.ndarray], n: int, n_resamples: int, seed: int | np.random.Generator | None
) -> list[PermutationResult]:
    if n == 0:
        return [PermutationResult(0.0, 1.0, 0, True) for _ in ds]
    observed = [float(d.mean()) for d in ds]
    # Comparisons tolerate rounding noise: sums of the same numbers in another order differ
    # in the last bits (scipy uses the same relative tolerance).
    thresholds = [abs(o) - abs(o) * np.finfo(float).eps * 100 for o in observed]
    if n < 63 and 2**n <= n_resamples:
        signs = np.array(list(product((1.0, -1.0), repeat=n)))
        return [
            PermutationResult(
                o, int(np.count_nonzero(np.abs(signs @ d / n) >= t)) / len(signs), len(signs), True
            )
            for o, t, d in zip(observed, thresholds, ds, strict=True)
        ]
    rng = _rng(seed)
    counts = [0] * len(ds)
    block = max(1, _BLOCK_ELEMENTS // n)
    buffer = np.empty((min(block, n_resamples), n))
    done = 0
    while done < n_resamples:
        size = min(block, n_resamples - done)
        bits = rng.integers(0, 2, size=(size, n), dtype=np.int8)
        # bits * 2.0 - 1.0 into one reused buffer: fresh arrays cost more than the arithmetic.
        signs = np.multiply(bits, 2.0, out=buffer[:size])
        signs -= 1.0
        for k, (d, t) in enumerate(zip(ds, thresholds, strict=True)):
            counts[k] += int(np.count_nonzero(np.abs(signs @ d / n) >= t))
        done += size
    return [
        PermutationResult(o, (c + 1) / (n_resamples + 1), n_resamples, False)
        for o, c in zip(observed, counts, strict=True)
    ]


def bootstrap_ci(
    a: ArrayLike,
    b: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int | np.random.Generator | None = SEED,
) -> BootstrapResult:
    """Paired percentile bootstrap CI of the mean difference ``b - a``.

    Queries are resampled with replacement (keeping each pair together); the interval is the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles (numpy's linear
    interpolation) of the resampled means, as ``scipy.stats.bootstrap(method="percentile")``.

    >>> r = bootstrap_ci([0.1, 0.2, 0.3, 0.4, 0.5], [0.2, 0.2, 0.5, 0.4, 0.9], seed=3)
    >>> round(r.mean, 2), r.low <= r.mean <= r.high, r.confidence
    (0.14, True, 0.95)
    """
    return bootstrap_cis([(a, b)], confidence=confidence, n_resamples=n_resamples, seed=seed)[0]


def bootstrap_cis(
    pairs: Sequence[tuple[ArrayLike, ArrayLike]],
    *,
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int | np.random.Generator | None = SEED,
) -> list[BootstrapResult]:
    """:func:`bootstrap_ci` of each ``(a, b)`` pair, each result equal to that function's with
    the same ``seed``; pairs of equal length share one set of resampled query indexes."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    _check_resamples(n_resamples)
    differences = [_differences(a, b) for a, b in pairs]
    results: list[BootstrapResult | None] = [None] * len(differences)
    alpha = (1 - confidence) / 2
    for n, members in _by_length(differences).items():
        ds = [differences[i] for i in members]
        if n == 0:
            nan = float("nan")
            for i in members:
                results[i] = BootstrapResult(nan, nan, nan, confidence, n_resamples)
            continue
        for i, d, means in zip(
            members, ds, _bootstrap_means(ds, n, n_resamples, seed), strict=True
        ):
            low, high = np.percentile(means, [100 * alpha, 100 * (1 - alpha)])
            results[i] = BootstrapResult(
                float(d.mean()), float(low), float(high), confidence, n_resamples
            )
    return results  # type: ignore[return-value]


# Rows of resampled indexes gathered at a time: small enough to stay in the CPU's cache.
_GATHER_ROWS = 64


def _bootstrap_means(
    ds: Sequence[np.ndarray], n: int, n_resamples: int, seed: int | np.random.Generator | None
) -> list[np.ndarray]:
    rng = _rng(seed)
    means = [np.empty(n_resamples) for _ in ds]
    block = max(1, _BLOCK_ELEMENTS // n)
    gathered = np.empty((min(_GATHER_ROWS, block), n))
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        # Drawn in the same blocks as ever: the draws, so the numbers, do not change.
        index = rng.integers(0, n, size=(stop - start, n))
        for row in range(0, stop - start, _GATHER_ROWS):
            rows = index[row : row + _GATHER_ROWS]
            out = gathered[: len(rows)]
            for d, m in zip(ds, means, strict=True):
                # mode "raise" would copy through a buffer; no index is out of range.
                np.take(d, rows, out=out, mode="clip")
                m[start + row : start + row + len(rows)] = out.mean(axis=1)
    return means


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni step-down adjusted p-values, in the input order.

    Sorted ascending, the i-th smallest of m p-values (i from 1) is multiplied by
    ``m - i + 1``; adjusted values are made non-decreasing along that order and capped at 1.
    NaN p-values are passed through and not counted in m.

    >>> holm([0.01, 0.02, 0.03, 0.5])
    [0.04, 0.06, 0.06, 0.5]
    """
    values = [float(p) for p in pvalues]
    finite = [i for i, p in enumerate(values) if not math.isnan(p)]
    order = sorted(finite, key=lambda i: values[i])
    m = len(order)
    adjusted = list(values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * values[i]))
        adjusted[i] = round(running, 15)  # drop float noise such as 0.060000000000000005
    return adjusted


def win_tie_loss(a: ArrayLike, b: ArrayLike, *, tolerance: float = 1e-9) -> tuple[int, int, int]:
    """Queries where ``b`` beats ``a`` by more than ``tolerance``, ties, and losses.

    >>> win_tie_loss([0.5, 0.5, 0.5], [0.6, 0.5 + 1e-12, 0.4])
    (1, 1, 1)
    """
    d = _differences(a, b)
    wins = int(np.count_nonzero(d > tolerance))
    losses = int(np.count_nonzero(d < -tolerance))
    return wins, d.size - wins - losses, losses
