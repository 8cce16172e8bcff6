"""heta_eval.fusion against ranx.fuse (0.3.x, the real package) on seeded random runs.

Scores must agree to 1e-9 relative (1e-12 absolute near 0): sums of normalised scores may
add in another order than ranx's numba loops (a few units in the last place). Every method
meets every normalisation except ``borda`` with a rank-based method, which heta-eval refuses
(ranx ranks in a set's order there). Ties: heta-eval ranks equal scores by doc id, highest
first; ranx keeps the input order for up to 15 documents (numba's insertion sort) and is
unspecified beyond, so the runs here hold ties only in queries of at most 15 documents, and
ranx is given each query in heta-eval's order.
"""

from __future__ import annotations

import random
import warnings

import pytest

from heta_eval.fusion import METHODS, NORMS, FusionError, fuse
from heta_eval.fusion.methods import RANK_METHODS

ranx = pytest.importorskip("ranx")

REL, ABS = 1e-9, 1e-12


def _query(rng: random.Random, docs: list[str], big: bool) -> dict[str, float]:
    chosen = rng.sample(docs, rng.randint(40, 60) if big else rng.randint(1, 15))
    if big:  # distinct scores
        return {d: rng.uniform(-5, 30) for d in chosen}
    return {d: float(rng.choice([0.5, 1.0, 1.0, 2.0, 3.5, -1.0])) for d in chosen}  # ties


def random_runs(seed: int, n_runs: int) -> list[dict[str, dict[str, float]]]:
    """Queries with ties (small) and big ones without, in every run (ranx 0.3.21 fuses an
    empty ranking wrongly: other queries come back empty; tests below pin those cases)."""
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(80)]
    runs: list[dict[str, dict[str, float]]] = [{} for _ in range(n_runs)]
    for q in range(12):
        big = q % 3 == 0
        for run in runs:
            run[f"q{q}"] = _query(rng, docs, big)
    return runs


def in_our_order(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Each query's documents by score descending, then doc id descending (heta-eval's
    ranking); ranx keeps this order for ties in queries of 15 documents or fewer."""
    return {
        q: dict(sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True))
        for q, docs in run.items()
    }


def ranx_fuse(runs, method, norm, params) -> dict[str, dict[str, float]]:
    queries = sorted({q for run in runs for q in run})
    # ranx wants every run to hold every query: a missing one is an empty ranking.
    full = [in_our_order({q: run.get(q, {}) for q in queries}) for run in runs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety warnings inside ranx
        fused = ranx.fuse([ranx.Run(r) for r in full], norm=norm, method=method, params=params)
    return {q: dict(fused[q]) for q in queries}


def assert_same(ours: dict, theirs: dict, label: str) -> None:
    for qid, docs in theirs.items():
        mine = ours.get(qid, {})
        assert set(mine) == set(docs), (label, qid)
        for doc, value in docs.items():
            assert mine[doc] == pytest.approx(value, rel=REL, abs=ABS), (label, qid, doc)
    assert set(ours) == set(theirs), label


def _params(method: str, n_runs: int, rng: random.Random) -> dict:
    if method == "wsum":
        return {"weights": [round(rng.uniform(0, 1), 3) for _ in range(n_runs)]}
    if method == "rrf":
        return {"k": rng.choice([0, 1, 60, 100])}
    return {}


SCORED = [m for m in METHODS if m != "condorcet"]
PAIRS = [(m, n) for m in SCORED for n in NORMS if not (n == "borda" and m in RANK_METHODS)]


@pytest.mark.parametrize(("method", "norm"), PAIRS)
@pytest.mark.parametrize("n_runs", [2, 3])
def test_every_method_and_norm_equals_ranx_fuse(method: str, norm: str, n_runs: int) -> None:
    rng = random.Random(f"{method}{norm}{n_runs}")
    seed = PAIRS.index((method, norm)) + 100 * n_runs  # other runs for every pair
    runs = random_runs(seed, n_runs)
    params = _params(method, n_runs, rng)
    ranx_norm = None if norm == "none" else norm
    ours = fuse(runs, method=method, norm=norm, params=params, depth=None)
    assert_same(ours, ranx_fuse(runs, method, ranx_norm, params), (method, norm, seed))


def _majority_is_a_total_order(docs: list[str], runs: list[dict[str, float]]) -> bool:
    position = [{d: i for i, d in enumerate(r)} for r in runs]

    def wins(x: str, y: str) -> int:
        return sum(p.get(x, 10**6) < p.get(y, 10**6) for p in position)

    order = sorted(docs, key=lambda d: -sum(wins(d, o) > len(runs) / 2 for o in docs if o != d))
    return all(wins(a, b) > len(runs) / 2 for i, a in enumerate(order) for b in order[i + 1 :])


def test_condorcet_equals_ranx_where_the_majority_order_is_defined() -> None:
    """With three runs ranking the same documents, the majority relation is a total order in
    most queries; there ranx's order (from a set's order) and heta-eval's are the same."""
    rng = random.Random(7)
    compared = 0
    for seed in range(40):
        docs = [f"d{i}" for i in range(rng.randint(2, 9))]
        base = {d: rng.uniform(0, 1) for d in docs}
        runs = [{"q": {d: base[d] + rng.gauss(0, 0.2) for d in docs}} for _ in range(3)]
        ordered = [in_our_order(r)["q"] for r in runs]
        if not _majority_is_a_total_order(docs, ordered):
            continue
        compared += 1
        assert_same(fuse(runs, method="condorcet"), ranx_fuse(runs, "condorcet", None, {}), seed)
    assert compared >= 20


def test_borda_norm_with_a_rank_method_is_refused() -> None:
    runs = random_runs(1, 2)
    with pytest.raises(FusionError, match="norm 'borda' gives 'rrf' no ranking"):
        fuse(runs, method="rrf", norm="borda")
