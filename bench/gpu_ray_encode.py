"""Passages/s of corpus encoding through Ray on one GPU, and the projected time for MS MARCO
(8.8M passages). Not part of `make bench`: it needs a CUDA build of torch and a GPU.

    python bench/gpu_ray_encode.py [--passages 200000] [--shard-size 16384]
        [--corpus corpus.jsonl] [--model FOLDER] [--device cpu]

Ray runs in-process (``--ray local``); its encoder pool gets one actor per GPU, each with
``num_gpus=1``. After a small warm-up encode (Ray's one-off costs), Ray encodes N and then 2N
passages (``--passages`` N): the difference gives the marginal rate, without the fixed cost
of a run (starting the actors, loading the model), and the projection for 8.8M passages is
that fixed cost plus 8.8M passages at the marginal rate. The local encoder on the same
device encodes the first N for a same-run comparison (and the largest difference between
the two sets of vectors).

The passages are SciFact abstracts repeated to N (a BEIR ``corpus.jsonl`` with
``--corpus``; synthetic text where neither is found). ``--model`` names a sentence-transformers
folder (default: the bundled MiniLM); ``--device cpu --passages 512 --shard-size 256`` is a
smoke test anywhere (its rates mean nothing: the 2 CPU actors compete for the cores).
Prints one JSON object.
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
    parser.add_argument(
        "--precision", default="float16", choices=["float32", "bfloat16", "float16"]
    )
    parser.add_argument("--corpus", type=Path, help="a BEIR corpus.jsonl")
    parser.add_argument("--model", help="a sentence-transformers model folder")
    parser.add_argument("--device", default="cuda", help="cpu: a smoke test of this script")
    args = parser.parse_args()
    import numpy as np
    import torch

    on_gpu = args.device.startswith("cuda")
    if on_gpu and not torch.cuda.is_available():
        print(json.dumps({"error": f"no CUDA device (torch {torch.__version__})"}))
        return 1
    from _passages import read_passages
    from bench_kb import scifact_texts

    from heta_eval.encoding.dense import DEFAULT_MODEL, DenseEncoder
    from heta_eval.scale.executor import RayExecutor

    if args.corpus is not None:
        base, what = read_passages(args.corpus), str(args.corpus)
    else:
        base, what = scifact_texts(5183)
    # N passages, and 2N for the marginal rate: the second N's time without the fixed cost
    # (Ray's start, actor start, model load) that a run of any size pays once.
    n = args.passages
    texts = [base[i % len(base)] + ("" if i < len(base) else f" #{i}") for i in range(2 * n)]
    encoder = DenseEncoder(
        args.model or DEFAULT_MODEL,
        precision=args.precision,
        batch_size=args.batch_size,
        device=args.device,
    )
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    encoder.encode(texts[:1024])  # load and warm up
    sync()
    started = time.perf_counter()
    local = encoder.encode(texts[:n])
    local_s = time.perf_counter() - started

    paths = [str(ROOT), os.environ.get("PYTHONPATH")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    executor = RayExecutor("local", shard_size=args.shard_size).start()

    def ray_encode(size: int) -> tuple[float, np.ndarray]:
        with tempfile.TemporaryDirectory() as cache:
            started = time.perf_counter()
            out = executor.encode_corpus(encoder, texts[:size], cache_root=cache)
            return time.perf_counter() - started, np.array(out)

    # A first small encode pays Ray's one-off costs (worker processes, first imports), which
    # would otherwise fall on N alone and inflate the marginal rate.
    warm_up_s, _ = ray_encode(min(n, args.shard_size))
    seconds = {}
    seconds[n], vectors = ray_encode(n)
    seconds[2 * n], _ = ray_encode(2 * n)
    record = executor.describe()
    marginal = n / max(seconds[2 * n] - seconds[n], 1e-9)
    fixed = max(seconds[n] - n / marginal, 0.0)
    hours = (fixed + MSMARCO / marginal) / 3600
    print(
        json.dumps(
            {
                "gpu": torch.cuda.get_device_name(0) if on_gpu else None,
                "passages": [n, 2 * n],
                "text": what,
                "precision": args.precision,
                "batch_size": args.batch_size,
                "shard_size": args.shard_size,
                "local_encoder_passages_per_s": round(n / local_s, 1),
                "ray_warm_up_seconds": round(warm_up_s, 1),
                "ray_seconds": {str(k): round(v, 1) for k, v in seconds.items()},
                "ray_passages_per_s_incl_start": round(n / seconds[n], 1),
                "ray_marginal_passages_per_s": round(marginal, 1),
                "ray_fixed_seconds": round(fixed, 1),
                "ray_workers": record["workers"],
                "ray_gpus": record["gpus"],
                "max_abs_diff_ray_vs_local": float(np.abs(vectors - local).max()),
                "projected_msmarco_hours_one_gpu": round(hours, 2),
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
