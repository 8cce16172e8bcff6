"""Corpus encoding through Ray (``RayExecutor``: Ray Data over encoder actors, shards) vs the
local encoder (``DenseEncoder.encode``), on SciFact abstracts, on this machine.

Ray runs in-process (``--ray local``): one encoder actor per CPU, each loading the model once
and running single-threaded, against the local encoder's one process using every core. The
Ray time includes starting the actors and loading the model in each (what a run pays); the
cluster's own start is timed apart and reported in the notes. The vectors must be identical.

    python bench/bench_ray.py [--quick] [--texts N] [--output FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _rows import emit, log, row, timed  # noqa: E402
from bench_kb import scifact_texts  # noqa: E402


def ray_rows(n: int, shard_size: int) -> list[dict[str, Any]]:
    from heta_eval.encoding.dense import DenseEncoder
    from heta_eval.scale.executor import RayExecutor

    texts, what = scifact_texts(n)
    encoder = DenseEncoder()
    encoder.encode(texts[:8])  # load + warm up before timing
    log(f"ray encoding: {what}, local encoder first")
    local_s, local = timed(lambda: encoder.encode(texts))
    # Ray workers must import this checkout's heta_eval.
    paths = [str(ROOT), os.environ.get("PYTHONPATH")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    executor = RayExecutor("local", shard_size=shard_size)
    start_s, _ = timed(executor.start)
    with tempfile.TemporaryDirectory() as cache:
        ray_s, vectors = timed(lambda: executor.encode_corpus(encoder, texts, cache_root=cache))
    record = executor.describe()
    import ray

    ray.shutdown()
    return [
        row(
            "ray encoding vs local encoder",
            ours_s=ray_s,
            peer="DenseEncoder.encode (this process)",
            peer_s=local_s,
            units=len(texts),
            goal="identical vectors",
            met=bool(np.array_equal(vectors, local)),
            identical=bool(np.array_equal(vectors, local)),
            notes=(
                f"texts/s, {what}, precision {encoder.precision}, batch {encoder.batch_size}; "
                f"Ray in-process: {record['workers']} actors on {int(record['cluster_cpus'])} "
                f"CPUs, {record['encoding']['shards']} shards of {shard_size}; cluster start "
                f"{start_s:.1f} s not included"
            ),
        )
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="scaled-down size")
    parser.add_argument("--repeats", type=int, default=None, help="accepted; one run is timed")
    parser.add_argument("--texts", type=int, default=None, help="texts to encode")
    parser.add_argument("--shard-size", type=int, default=128)
    parser.add_argument("--output", default=None, help="write the JSON rows here")
    args = parser.parse_args(argv)
    try:
        import ray  # noqa: F401
    except ImportError:
        emit(
            [
                {
                    "target": "ray encoding vs local encoder",
                    "error": "ray not installed (pip install 'heta-eval[ray]')",
                    "met": None,
                }
            ],
            args.output,
        )
        return 0
    emit(ray_rows(args.texts or (256 if args.quick else 1024), args.shard_size), args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
