"""Passages/s of corpus encoding through Ray on one GPU, and the projected time for MS MARCO
(8.8M passages). Not part of `make bench`: it needs a CUDA build of torch and a GPU.

    python bench/gpu_ray_encode.py [--passages 200000] [--shard-size 16384]

Ray runs in-process (``--ray local``); its encoder pool gets one actor per GPU, each with
``num_gpus=1``. The passages are SciFact abstracts repeated to ``--passages`` (synthetic text
where SciFact is absent). The same passages are also encoded by the local encoder on the
GPU (``DenseEncoder(device="cuda")``) for a same-run comparison. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
MSMARCO = 8_841_823


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=200_000)
    parser.add_argument("--shard-size", type=int, default=16_384)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--precision", default="bfloat16", choices=["float32", "bfloat16"])
    args = parser.parse_args()
    import numpy as np
    import torch

    if not torch.cuda.is_available():
        print(json.dumps({"error": f"no CUDA device (torch {torch.__version__})"}))
        return 1
    from bench_kb import scifact_texts

    from heta_eval.kb.dense import DenseEncoder
    from heta_eval.scale.executor import RayExecutor

    base, what = scifact_texts(5183)
    texts = [base[i % len(base)] + ("" if i < len(base) else f" #{i}")
             for i in range(args.passages)]  # fmt: skip
    encoder = DenseEncoder(precision=args.precision, batch_size=args.batch_size, device="cuda")
    encoder.encode(texts[:1024])  # load and warm up
    torch.cuda.synchronize()
    started = time.perf_counter()
    local = encoder.encode(texts)
    local_s = time.perf_counter() - started

    paths = [str(ROOT), os.environ.get("PYTHONPATH")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    executor = RayExecutor("local", shard_size=args.shard_size).start()
    with tempfile.TemporaryDirectory() as cache:
        started = time.perf_counter()
        vectors = executor.encode_corpus(encoder, texts, cache_root=cache)
        ray_s = time.perf_counter() - started
    record = executor.describe()
    ray_rate = len(texts) / ray_s
    print(json.dumps({
        "gpu": torch.cuda.get_device_name(0),
        "passages": len(texts), "text": what, "precision": args.precision,
        "batch_size": args.batch_size, "shard_size": args.shard_size,
        "local_encoder_passages_per_s": round(len(texts) / local_s, 1),
        "ray_passages_per_s": round(ray_rate, 1),
        "ray_seconds_incl_actor_start": round(ray_s, 1),
        "ray_workers": record["workers"], "ray_gpus": record["gpus"],
        "max_abs_diff_ray_vs_local": float(np.abs(vectors - local).max()),
        "projected_msmarco_hours_one_gpu": round(MSMARCO / ray_rate / 3600, 2),
        "projected_msmarco_hours_eight_gpus": round(MSMARCO / ray_rate / 3600 / 8, 2),
    }, indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
