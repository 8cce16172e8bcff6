"""The report's paired tests are fast and give exactly the numbers they gave before.

``compare_many`` (and the batch tests ``permutation_tests`` / ``bootstrap_cis`` under it)
draws the random sign patterns and bootstrap indexes once for all comparisons over the same
queries. Each number must stay, to the last bit, the one a comparison on its own gives with
the same seed: pinned here against values ``heta-eval compare`` printed before the batching,
and against the one-pair-at-a-time computation written out below.
"""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from heta_eval.compare import (
    bootstrap_ci,
    bootstrap_cis,
    compare,
    compare_many,
    permutation_test,
    permutation_tests,
)

# The former computation, one pair at a time, in the same random blocks.
_BLOCK_ELEMENTS = 4_000_000


def _permutation_one_at_a_time(a, b, n_resamples, seed):
    d = np.asarray(b, float) - np.asarray(a, float)
    n = d.size
    observed = float(d.mean())
    threshold = abs(observed) - abs(observed) * np.finfo(float).eps * 100
    if n < 63 and 2**n <= n_resamples:
        signs = np.array(list(product((1.0, -1.0), repeat=n)))
        return int(np.count_nonzero(np.abs(signs @ d / n) >= threshold)) / len(signs)
    rng = np.random.default_rng(seed)
    count, done, block = 0, 0, max(1, _BLOCK_ELEMENTS // n)
    while done < n_resamples:
        size = min(block, n_resamples - done)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8).astype(float) * 2.0 - 1.0
        count += int(np.count_nonzero(np.abs(signs @ d / n) >= threshold))
        done += size
    return (count + 1) / (n_resamples + 1)


def _bootstrap_one_at_a_time(a, b, n_resamples, seed, confidence=0.95):
    d = np.asarray(b, float) - np.asarray(a, float)
    n = d.size
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    block = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        means[start:stop] = d[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.percentile(means, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high)


def _golden_systems():
    rng = np.random.default_rng(2026)
    return {
        system: {
            f"q{i}": {
                "ndcg@10": float(np.round(rng.random(), 4)),
                "recall@100": float(rng.random() > 0.4),
            }
            for i in range(1001)
        }
        for system in ("bm25", "dense", "hybrid")
    }


def test_compare_gives_the_numbers_it_gave_before_the_batching():
    # (system, metric): ci_low, ci_high, p_permutation, p_ttest, p_permutation_holm, as
    # compare(..., seed=7) gave them one comparison at a time.
    before = {
        ("dense", "ndcg@10"): (
            -0.035085884115884106,
            0.01496805444555443,
            0.40255974402559747,
            0.40489514079668787,
            1.0,
        ),
        ("hybrid", "ndcg@10"): (
            -0.015532997002997002,
            0.03415050699300699,
            0.47935206479352066,
            0.47538040060765935,
            1.0,
        ),
        ("dense", "recall@100"): (
            -0.07192807192807193,
            0.013986013986013986,
            0.20277972202779723,
            0.1871254163677416,
            0.811118888111189,
        ),
        ("hybrid", "recall@100"): (
            -0.026973026973026972,
            0.056943056943056944,
            0.5265473452654734,
            0.4869481222107942,
            1.0,
        ),
    }
    result = compare(_golden_systems(), seed=7)
    got = {
        (r.system, r.metric): (
            r.ci_low,
            r.ci_high,
            r.p_permutation,
            r.p_ttest,
            r.p_permutation_holm,
        )
        for r in result.rows
    }
    assert got == before


@pytest.mark.parametrize(("n", "seed"), [(1001, 0), (6980, 0), (577, 3), (12, 1)])
def test_batched_tests_equal_one_pair_at_a_time(n, seed):
    # Odd and even lengths (bootstrap draws of odd size use the generator's buffer
    # differently), a length of many blocks, and one small enough to enumerate exactly.
    rng = np.random.default_rng(n)
    pairs = [(rng.random(n), np.round(rng.random(n), 2)) for _ in range(3)]
    pairs.append((rng.random(n // 2 + 1), rng.random(n // 2 + 1)))  # another length
    resamples = 3_000
    permutations = permutation_tests(pairs, n_resamples=resamples, seed=seed)
    cis = bootstrap_cis(pairs, n_resamples=resamples, seed=seed)
    for (a, b), permutation, ci in zip(pairs, permutations, cis, strict=True):
        assert permutation.pvalue == _permutation_one_at_a_time(a, b, resamples, seed)
        assert permutation == permutation_test(a, b, n_resamples=resamples, seed=seed)
        assert (ci.low, ci.high) == _bootstrap_one_at_a_time(a, b, resamples, seed)
        assert ci == bootstrap_ci(a, b, n_resamples=resamples, seed=seed)


def test_compare_many_equals_each_compare_on_its_own():
    systems = _golden_systems()
    families = [
        ({"bm25": systems["bm25"], "dense": systems["dense"]}, "bm25", None),
        ({"bm25": systems["bm25"], "hybrid": systems["hybrid"]}, None, ["ndcg@10"]),
        ({"dense": systems["dense"], "hybrid": systems["hybrid"]}, "hybrid", None),
    ]
    together = compare_many(families, n_resamples=2_000, seed=5)
    for (family, baseline, metrics), result in zip(families, together, strict=True):
        alone = compare(family, baseline, metrics, n_resamples=2_000, seed=5)
        assert result.to_dict() == alone.to_dict()
        assert result.caption() == alone.caption()
