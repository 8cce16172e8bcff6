"""Dense encoding speed and agreement per route on this CPU, against plain
sentence-transformers float32 (the peer), for ``bench_kb.py``.

One row per route available here (``heta_eval.encoding.routes.candidate_routes``: torch float32 and
bfloat16, ONNX Runtime int8, OpenVINO int8), each encoding the same SciFact abstracts in the
same rotation as the peer (the order rotates every round, so load from other jobs hits all
alike); the route ``precision="auto"`` takes here (its kind's default,
``heta_eval.encoding.route_defaults.DEFAULT_ROUTES``) is marked with its reason, and a route more
than ``MARGIN`` (10%) faster than it, within the cosine bound, says so: the evidence for
changing that kind's default. Beside the speed: the least and mean
cosine of the route's vectors to the peer's, and (full run) SciFact nDCG@10 of the route minus
float32's through ``heta-eval run``. The notes name the CPU, its flags, the load average and
``ONEDNN_MAX_CPU_ISA`` when set (an emulated CPU kind).

    python bench/bench_kb.py --only vector [--texts N] [--repeats N]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from _rows import log, row, timed


def rotated(fns: dict[str, Any], repeats: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Median seconds and last result of each function, run in a rotating order so that load
    from other jobs on a shared machine hits all alike."""
    names = list(fns)
    times: dict[str, list[float]] = {name: [] for name in names}
    results: dict[str, Any] = {}
    for i in range(max(1, repeats)):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            seconds, results[name] = timed(fns[name])
            times[name].append(seconds)
    return {name: float(np.median(t)) for name, t in times.items()}, results


#: The encoding goal per CPU kind (issue "Encoding near the hardware's limit"): auto at least
#: this many times sentence-transformers float32's throughput.
GOALS = {"amx": 2.5, "avx512-bf16-amd": 2.5, "avx512-bf16-intel": 2.5, "vnni": 2.5, "avx2": 1.8}


def encoding_goal() -> str:
    """The goal of this machine's kind of CPU, as a row's ``goal`` (none without AVX2)."""
    from heta_eval.encoding.routes import cpu_kind

    goal = GOALS.get(cpu_kind())
    return f">= {goal}" if goal else "none (no AVX2)"


def cpu_label() -> str:
    """The CPU model and kind, the flags that decide the routes, the load and any oneDNN ISA
    cap."""
    from heta_eval.encoding.cpu import this_cpu

    cpu = this_cpu()
    keys = {"avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8"}
    flags = ",".join(sorted(cpu.flags & keys))
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA")
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    emulated = f"; EMULATED: ONEDNN_MAX_CPU_ISA={cap}" if cap else ""
    return f"{cpu.model} (kind {cpu.kind}) [{flags}], {os.cpu_count()} CPUs, load {load}{emulated}"


def encoding_rows(texts: list[str], what: str, repeats: int) -> tuple[list[dict], list[str]]:
    """The encoding rows, and the routes measured (for the nDCG rows)."""
    import torch
    from sentence_transformers import SentenceTransformer

    from heta_eval.encoding.cpu import this_cpu
    from heta_eval.encoding.dense import DenseEncoder, default_model_path
    from heta_eval.encoding.routes import COSINE_BOUND, MARGIN, candidate_routes

    auto = DenseEncoder(device="cpu")  # the kind's default route (HETA_EVAL_ENCODE_ROUTE aside)
    cpu = this_cpu()
    names = candidate_routes(
        cpu.flags, onnxruntime=cpu.has_onnxruntime(), openvino=cpu.has_openvino()
    )
    encoders = {name: DenseEncoder(device="cpu", precision=name) for name in names}  # type: ignore[arg-type]
    batch = 64  # the peer's batch (BEIR's path); ours run in their own default batches
    peer = SentenceTransformer(default_model_path(), device="cpu")
    for name in list(encoders):  # load (int8: export and quantize once) + warm up
        try:
            encoders[name].encode(texts[:8])
        except Exception as error:  # a library without kernels for this (emulated) CPU
            log(f"vector_search: route {name} cannot run here: {str(error).strip()[:200]}")
            del encoders[name]
    names = list(encoders)
    peer.encode(texts[:8], batch_size=batch, show_progress_bar=False)

    def peer_encode() -> np.ndarray:
        with torch.inference_mode():
            return peer.encode(
                texts, batch_size=batch, convert_to_numpy=True, show_progress_bar=False
            )

    fns: dict[str, Any] = {"peer": peer_encode}
    fns.update({name: (lambda e=encoder: e.encode(texts)) for name, encoder in encoders.items()})
    log(f"vector_search: encoding {what}, routes {', '.join(names)}, auto -> {auto.route}")
    seconds, results = rotated(fns, repeats)
    theirs = results["peer"] / np.linalg.norm(results["peer"], axis=1, keepdims=True)
    label = cpu_label()
    rows = []
    for name in names:
        cosines = np.sum(results[name] * theirs, axis=1)
        marker = " (auto)" if name == auto.route else ""
        if name != auto.route and auto.route in seconds and cosines.min() >= COSINE_BOUND:
            ahead = seconds[auto.route] / seconds[name] - 1
            if ahead > MARGIN:  # the kind's default may be due for a change (DEFAULT_ROUTES)
                marker = f" ({ahead:.0%} faster than auto's {auto.route})"
        rows.append(
            row(
                f"vector_search encoding {name}{marker}",
                ours_s=seconds[name],
                peer="sentence-transformers float32",
                peer_s=seconds["peer"],
                units=len(texts),
                goal=encoding_goal() if name == auto.route else "route",
                identical=None,
                notes=(
                    (f"auto: {auto.route_choice.reason}; " if name == auto.route else "")
                    + f"texts/s, {what}, all-MiniLM-L6-v2, ours each text alone on "
                    f"{auto.workers} single-threaded workers, the peer in batches of {batch} on "
                    f"{torch.get_num_threads()} threads; CPU {label}; cosine to float32 "
                    f"min {cosines.min():.4f} mean {cosines.mean():.5f}"
                ),
            )
        )
    return rows, names


def ndcg_row(route: str, data: Path) -> dict[str, Any]:
    """SciFact nDCG@10 of vector_search through ``route`` and in float32, through the CLI with
    the default (persistent) recipe cache, so only a machine's first bench encodes SciFact."""
    target = f"vector_search nDCG@10 {route} vs float32"
    if not (data / "scifact" / "corpus.jsonl").is_file():
        return row(
            target, peer=None, goal="abs(delta) <= 0.002", notes=f"SciFact not found under {data}"
        )
    values: dict[str, float] = {}
    seconds: dict[str, float] = {}
    cli = str(Path(sys.executable).with_name("heta-eval"))
    precision = route.removeprefix("torch-")  # the recipe names torch's routes by precision
    with tempfile.TemporaryDirectory() as tmp:
        for p in dict.fromkeys(["float32", precision]):
            log(f"vector_search: SciFact nDCG@10 in {p} (encodes only on a cold cache)")
            recipe = Path(tmp) / f"{p}.json"
            recipe.write_text(
                json.dumps({"modes": ["vector_search"], "dense": {"precision": p, "device": "cpu"}})
            )
            out = Path(tmp) / p
            cmd = [
                cli,
                "run",
                "--dataset",
                "scifact",
                "--data-dir",
                str(data),
                "--recipe",
                str(recipe),
                "--modes",
                "vector_search",
                "--output",
                str(out),
                "--quiet",
            ]
            seconds[p], proc = timed(
                lambda c=cmd: subprocess.run(c, capture_output=True, text=True)
            )
            if proc.returncode != 0:
                return row(
                    target,
                    peer="float32",
                    goal="abs(delta) <= 0.002",
                    met=False,
                    notes=f"heta-eval run failed: {proc.stderr[-300:]}",
                )
            summary = json.loads((out / "summary.json").read_text())
            metric = summary["modes"]["vector_search"]["metrics"]["ndcg@10"]
            values[p] = float(metric.get("beir_unrounded", metric["value"]))
    delta = values[precision] - values["float32"]
    runs = ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items())
    out = row(
        target,
        peer="float32",
        goal="abs(delta) <= 0.002",
        met=abs(delta) <= 0.002,
        identical=None,
        notes=(
            f"SciFact test: {route} {values[precision]:.5f}, float32 {values['float32']:.5f},"
            f" delta {delta:+.5f}; heta-eval run times {runs}"
        ),
    )
    # Scores, not times: shown as they are in the table.
    out["ours_value"], out["peer_value"] = round(values[precision], 5), round(values["float32"], 5)
    return out
