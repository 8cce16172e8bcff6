"""Compiles ranx's numba kernels the suite's comparisons use, into the suite's numba cache,
in a background process that conftest.py starts at low priority when the session starts.

ranx compiles each fusion method, normalization and metric on first use: about three minutes
of one core on a clean checkout, which the tests that compare with ranx would otherwise spend
on the suite's critical path, while the suite leaves the machine's second core mostly idle. A
test that reaches ranx before this is done compiles what it needs itself (numba writes its
cache files whole), so nothing here can change a result: it only moves work off the clock.
"""

from __future__ import annotations

import random
import warnings

import ranx

from heta_eval.fusion.methods import METHODS, RANK_METHODS
from heta_eval.fusion.normalize import NORMS


def runs(n_runs: int) -> list[dict[str, dict[str, float]]]:
    """Small runs shaped like the tests' (queries under and over ranx's 15-document mark)."""
    rng = random.Random(0)
    docs = [f"d{i}" for i in range(80)]
    return [{f"q{q}": {d: rng.uniform(-5, 30) for d in rng.sample(docs, 40 if q % 2 else 8)}
             for q in range(6)} for _ in range(n_runs)]  # fmt: skip


def main() -> None:
    warnings.simplefilter("ignore")  # numba's type-safety warnings inside ranx
    given = runs(2)
    qrels = ranx.Qrels({q: {d: 1 for d in list(docs)[:3]} for q, docs in given[0].items()})
    for method in METHODS:
        params = {"weights": [0.5, 0.5]} if method == "wsum" else {}
        for norm in NORMS:
            if norm == "borda" and method in RANK_METHODS or method == "condorcet" and norm != "none":
                continue
            ranx.fuse([ranx.Run(r) for r in given], norm=None if norm == "none" else norm,
                      method=method, params=params)  # fmt: skip
    run = ranx.Run(given[0], name="a")
    for metric in ("ndcg@10", "recall@100", "precision@10", "map@100", "mrr@10", "hits@10"):
        ranx.evaluate(qrels, ranx.Run(given[0]), metric, make_comparable=True)
    ranx.compare(qrels, [run, ranx.Run(given[1], name="b")], ["ndcg@10", "recall@100"],
                 stat_test="fisher", make_comparable=True, n_permutations=10)  # fmt: skip


if __name__ == "__main__":
    main()
