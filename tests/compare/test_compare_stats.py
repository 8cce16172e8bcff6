"""Paired statistics against scipy.stats on the same inputs."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from heta_eval.compare import stats


def mean_diff(x, y, axis=-1):
    return np.mean(x - y, axis=axis)


def pair(n: int, seed: int, shift: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 1, n)
    b = np.clip(a + rng.normal(shift, 0.15, n), 0, 1)
    return a, b


def test_doctests():
    assert doctest.testmod(stats).failed == 0


@pytest.mark.parametrize("n,seed", [(2, 0), (5, 1), (30, 2), (300, 3), (1000, 4)])
def test_ttest_equals_scipy_ttest_rel(n, seed):
    a, b = pair(n, seed)
    ours = stats.paired_ttest(a, b)
    theirs = sps.ttest_rel(b, a)
    assert ours.pvalue == theirs.pvalue
    assert ours.statistic == theirs.statistic
    assert ours.df == n - 1


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=3, max_size=40))
def test_ttest_matches_scipy_on_arbitrary_pairs(pairs):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    d = b - a
    ours = stats.paired_ttest(a, b)
    if not np.any(d):
        assert ours.pvalue == 1.0
    elif np.all(d == d[0]):
        assert ours.pvalue == 0.0
    else:
        theirs = sps.ttest_rel(b, a)
        if np.isfinite(theirs.pvalue):
            assert ours.pvalue == pytest.approx(theirs.pvalue, rel=1e-12, abs=1e-300)


def test_ttest_degenerate_inputs():
    assert stats.paired_ttest([0.5], [0.7]).pvalue == 1.0
    assert stats.paired_ttest([0.1, 0.2], [0.1, 0.2]).pvalue == 1.0
    assert stats.paired_ttest([0.0, 0.5], [0.25, 0.75]).pvalue == 0.0
    with pytest.raises(ValueError):
        stats.paired_ttest([0.1, 0.2], [0.1])
    with pytest.raises(ValueError):
        stats.paired_ttest([0.1, float("nan")], [0.1, 0.2])


@pytest.mark.parametrize("n,seed", [(3, 0), (8, 1), (12, 2)])
def test_exact_permutation_equals_scipy_exact(n, seed):
    a, b = pair(n, seed, shift=0.1)
    ours = stats.permutation_test(a, b, n_resamples=10_000)
    theirs = sps.permutation_test(
        (b, a), mean_diff, permutation_type="samples", n_resamples=np.inf, vectorized=True
    )
    assert ours.exact
    assert ours.pvalue == pytest.approx(theirs.pvalue, rel=1e-12)
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-12)


@pytest.mark.parametrize("n,seed,shift", [(50, 5, 0.05), (300, 6, 0.02), (300, 7, 0.0)])
def test_random_permutation_consistent_with_scipy(n, seed, shift):
    a, b = pair(n, seed, shift)
    ours = stats.permutation_test(a, b, n_resamples=10_000, seed=1)
    theirs = sps.permutation_test(
        (b, a),
        mean_diff,
        permutation_type="samples",
        n_resamples=10_000,
        vectorized=True,
        random_state=2,
    )
    # Two independent Monte Carlo estimates of the same p: within 5 standard errors.
    p = (ours.pvalue + theirs.pvalue) / 2
    se = np.sqrt(max(p * (1 - p), 1e-4) / 10_000) * np.sqrt(2)
    assert abs(ours.pvalue - theirs.pvalue) <= 5 * se + 2e-4
    assert not ours.exact and ours.n_resamples == 10_000


def test_permutation_reproducible_and_seed_sensitive():
    a, b = pair(200, 8, 0.02)
    first = stats.permutation_test(a, b, seed=42)
    assert first == stats.permutation_test(a, b, seed=42)
    assert first.pvalue != stats.permutation_test(a, b, seed=43).pvalue
    assert 0 < first.pvalue <= 1


def test_permutation_identical_systems_give_p_one():
    a, _ = pair(100, 9)
    assert stats.permutation_test(a, a).pvalue == 1.0


@pytest.mark.parametrize("n,seed,confidence", [(40, 10, 0.95), (300, 11, 0.95), (300, 12, 0.9)])
def test_bootstrap_consistent_with_scipy(n, seed, confidence):
    a, b = pair(n, seed)
    ours = stats.bootstrap_ci(a, b, confidence=confidence, n_resamples=10_000, seed=3)
    theirs = sps.bootstrap(
        (b - a,),
        np.mean,
        confidence_level=confidence,
        method="percentile",
        n_resamples=10_000,
        random_state=4,
    ).confidence_interval
    width = theirs.high - theirs.low
    # Percentile endpoints from 10,000 resamples agree to a few percent of the width.
    assert ours.low == pytest.approx(theirs.low, abs=0.05 * width)
    assert ours.high == pytest.approx(theirs.high, abs=0.05 * width)
    assert ours.low < ours.mean < ours.high
    assert ours.mean == pytest.approx(np.mean(b - a))


def test_bootstrap_reproducible():
    a, b = pair(100, 13)
    assert stats.bootstrap_ci(a, b, seed=5) == stats.bootstrap_ci(a, b, seed=5)
    assert stats.bootstrap_ci(a, b, seed=5) != stats.bootstrap_ci(a, b, seed=6)


def test_bootstrap_blocks_do_not_change_the_answer(monkeypatch):
    # Memory-bounded blocks draw the same random numbers as one big block.
    a, b = pair(50, 14)
    whole = stats.bootstrap_ci(a, b, seed=7, n_resamples=1000)
    monkeypatch.setattr(stats, "_BLOCK_ELEMENTS", 50 * 37)
    assert stats.bootstrap_ci(a, b, seed=7, n_resamples=1000).n_resamples == 1000
    assert stats.bootstrap_ci(a, b, seed=7, n_resamples=1000).mean == whole.mean


def test_holm_hand_computed():
    # m = 5; sorted p: 0.001 (x5 = 0.005), 0.01 (x4 = 0.04), 0.02 (x3 = 0.06),
    # 0.04 (x2 = 0.08), 0.5 (x1 = 0.5); then monotone: unchanged.
    assert stats.holm([0.02, 0.5, 0.001, 0.04, 0.01]) == [0.06, 0.5, 0.005, 0.08, 0.04]
    # Monotonicity enforced: sorted 0.03 (x3 = 0.09), 0.035 (x2 = 0.07 -> 0.09),
    # 0.04 (x1 = 0.04 -> 0.09).
    assert stats.holm([0.04, 0.03, 0.035]) == [0.09, 0.09, 0.09]
    assert stats.holm([0.6, 0.9]) == [1.0, 1.0]
    assert stats.holm([float("nan"), 0.01, 0.02])[1:] == [0.02, 0.02]
    assert stats.holm([]) == []


def test_win_tie_loss_tolerance():
    a = [0.5, 0.5, 0.5, 0.5]
    b = [0.6, 0.5 + 1e-12, 0.49, 0.5]
    assert stats.win_tie_loss(a, b) == (1, 2, 1)
    assert stats.win_tie_loss(a, b, tolerance=0.05) == (1, 3, 0)
