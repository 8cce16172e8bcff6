"""Fusion speed: ``heta_eval.fusion.fuse`` against ``ranx.fuse`` on the same two runs.

Two seeded runs of 7,000 queries x 1,000 documents (quick: 700 x 200), MS MARCO dev-sized,
the second sharing half its documents with the first; scores are distinct, so every method's
scores must agree (checked on every query, 1e-9 relative). Both sides start from the same
Python dicts and end with the fused run in memory: ours a dict cut at no depth, ranx a
``Run`` (its ``Run(dict)`` construction counted, its conversion back to a dict not).
Methods: ``rrf`` (k 60) and ``wsum`` (weights 0.3, 0.7, min-max). Times are medians of
``--repeats`` alternated rounds after one warm-up call each (numba compiles or loads ranx's
kernels on its first call). ``ratio``: our time / ranx's (below 1, ours is faster).

Usage: ``python bench/bench_fusion.py [--quick] [--repeats N] [--output FILE]``.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _rows import emit, interleaved, log, row

from heta_eval.fusion import fuse

SETTINGS = {
    "rrf": ("min-max", {"k": 60}),
    "wsum": ("min-max", {"weights": [0.3, 0.7]}),
}


def make_runs(queries: int, depth: int, seed: int = 0) -> list[dict[str, dict[str, float]]]:
    """Two runs; the second keeps a random half of the first's documents per query."""
    rng = np.random.default_rng(seed)
    first: dict[str, dict[str, float]] = {}
    second: dict[str, dict[str, float]] = {}
    for q in range(queries):
        qid = str(100000 + q)
        ids = rng.choice(8_841_823, size=depth + depth // 2, replace=False).astype(str)
        own, extra = ids[:depth], ids[depth:]
        shared = rng.choice(own, size=depth // 2, replace=False)
        first[qid] = dict(zip(own.tolist(), np.sort(rng.random(depth))[::-1].tolist(), strict=True))
        docs = np.concatenate([shared, extra]).tolist()
        second[qid] = dict(zip(docs, (rng.random(len(docs)) * 30).tolist(), strict=True))
    return [first, second]


def ranx_side(runs: list[dict], method: str):
    import ranx

    norm, params = SETTINGS[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety warnings inside ranx
        return ranx.fuse([ranx.Run(r) for r in runs], norm=norm, method=method, params=params)


def ours_side(runs: list[dict], method: str) -> dict:
    norm, params = SETTINGS[method]
    return fuse(runs, method=method, norm=norm, params=params, depth=None)


def same(ours: dict, theirs) -> bool:
    for qid, docs in theirs.to_dict().items():
        mine = ours[qid]
        if set(mine) != set(docs):
            return False
        a = np.array([mine[d] for d in docs])
        b = np.array(list(docs.values()))
        if not np.allclose(a, b, rtol=1e-9, atol=1e-12):
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output")
    args = parser.parse_args()
    queries, depth = (700, 200) if args.quick else (7000, 1000)
    log(f"fusion: 2 runs x {queries:,} queries x {depth:,}")
    runs = make_runs(queries, depth)
    tiny = make_runs(3, 20, seed=1)
    rows = []
    for method in SETTINGS:
        ours_side(tiny, method), ranx_side(tiny, method)  # warm-up: numba loads or compiles
        ours_s, ours, peer_s, theirs = interleaved(
            lambda m=method: ours_side(runs, m), lambda m=method: ranx_side(runs, m), args.repeats
        )
        log(f"  {method}: ours {ours_s:.2f} s, ranx {peer_s:.2f} s")
        rows.append(
            row(
                f"fusion, 2 runs x {queries:,} queries x {depth:,}, {method}",
                peer="ranx.fuse",
                goal="<= 1.0",
                ours_s=ours_s,
                peer_s=peer_s,
                ratio=ours_s / peer_s,
                met=ours_s <= peer_s,
                identical=same(ours, theirs),
                notes="from the same dicts; ranx's Run() construction counted, to_dict() not",
            )
        )
    emit(rows, args.output)


if __name__ == "__main__":
    main()
