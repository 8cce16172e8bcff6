"""Encoding routes on the CPU, and how ``precision="auto"`` chooses one by measuring.

A route is an engine and a precision: ``torch-float32`` (the model as it is),
``torch-bfloat16``, ``onnxruntime-int8`` (:mod:`heta_eval.kb.onnx_int8`) and ``openvino-int8``
(:mod:`heta_eval.kb.openvino_int8`). Which is fastest depends on the CPU (AMX, AVX512-BF16,
VNNI, AVX2 only), its vendor and the libraries installed, in ways the CPU flags do not predict
well, so on the CPU ``"auto"`` measures wherever the CPU-flag rule
(:func:`heta_eval.kb.precision.choose_precision`) was not measured to be right on that kind of
CPU (:data:`RULE_MEASURED`: AMX so far): the first time on a machine it encodes a few batches
of fixed passages (:mod:`heta_eval.kb.calibration_texts`) through every route available
there, in rotation, compares each route's vectors with float32's, and picks the fastest route
whose every vector keeps a cosine of at least :data:`COSINE_BOUND` to float32's. The choice
and the timings are stored in the knowledge-base cache folder (``routes-<key>.json``), keyed by
the CPU model, its flags, the thread count and the library versions, so later runs read it
(about 10-30 s once, plus the first export and quantization of the int8 models).

``HETA_EVAL_ENCODE_ROUTE`` (see :mod:`heta_eval.config`): ``measure`` measures on any CPU, a
route name forces that route, ``static`` applies the CPU-flag rule on any CPU; unset, the
choice above.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval import config
from heta_eval.kb.cache import cache_key
from heta_eval.kb.calibration_texts import CALIBRATION_TEXTS
from heta_eval.kb.precision import (
    PRECISIONS,
    _cpuinfo_field,
    cpu_flags,
    cpu_vendor,
    device_kind,
    resolve_precision,
)
from heta_eval.kb.precision import cpu_kind as cpu_kind_of

__all__ = [
    "COSINE_BOUND",
    "ROUTES",
    "RULE_MEASURED",
    "RouteTiming",
    "auto_route",
    "calibrate",
    "candidate_routes",
    "choose_route",
    "resolve_route",
    "route_precision",
]

#: Every route and the precision it computes in.
ROUTES: dict[str, str] = {
    "torch-float32": "float32",
    "torch-bfloat16": "bfloat16",
    "torch-float16": "float16",
    "onnxruntime-int8": "int8",
    "openvino-int8": "int8",
}
#: The route a precision names when a caller gives a precision rather than a route.
_PRECISION_ROUTE = {precision: f"torch-{precision}" for precision in ("float32", "bfloat16")}
_PRECISION_ROUTE.update({"float16": "torch-float16", "int8": "onnxruntime-int8"})
#: The least cosine to float32's vector any passage may have under a route ``auto`` picks.
COSINE_BOUND = 0.99
_X86_SIMD = frozenset({"avx2", "avx512f"})
_BF16 = frozenset({"avx512_bf16", "amx_bf16"})
#: The CPU kinds (:func:`heta_eval.kb.precision.cpu_kind`) where the CPU-flag rule's route was
#: measured to be the fastest that keeps the bounds, and the evidence (docs/encoding.md):
#: ``auto`` applies the rule there, and measures once per machine on every other kind.
RULE_MEASURED: dict[str, str] = {
    "amx": "torch-bfloat16 2.55-2.65x sentence-transformers float32 on 256 SciFact abstracts, "
    "openvino-int8 2.0-2.2x, onnxruntime-int8 1.0-1.2x (2-core AMX Xeon, 2026-12-05)",
    "other": "torch-float32 is the only route",
}
#: Calibration shape: the passages repeated this many times, in batches of this size.
_REPEAT, _BATCH, _ROUNDS = 3, 24, 2

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RouteTiming:
    """One route measured: median seconds over the calibration passages, and the least
    cosine of its vectors to float32's."""

    seconds: float
    min_cosine: float


def route_precision(route: str) -> str:
    """The precision a route computes in.

    >>> route_precision("openvino-int8")
    'int8'
    """
    return ROUTES[route]


def candidate_routes(flags: Collection[str], *, onnxruntime: bool, openvino: bool) -> list[str]:
    """The routes worth measuring on a CPU with these ``flags`` and these libraries
    (float32 first: it is the reference every other route is compared with).

    >>> candidate_routes({"avx2", "avx512f", "avx512_vnni"}, onnxruntime=True, openvino=True)
    ['torch-float32', 'onnxruntime-int8', 'openvino-int8']
    >>> candidate_routes({"amx_bf16", "avx2"}, onnxruntime=False, openvino=False)
    ['torch-float32', 'torch-bfloat16']
    >>> candidate_routes({"neon"}, onnxruntime=True, openvino=True)
    ['torch-float32']
    """
    have = frozenset(flags)
    routes = ["torch-float32"]
    if have & _BF16:
        routes.append("torch-bfloat16")
    if have & _X86_SIMD:
        routes += [name for name, ok in [("onnxruntime-int8", onnxruntime),
                                         ("openvino-int8", openvino)] if ok]  # fmt: skip
    return routes


def choose_route(measured: Mapping[str, RouteTiming], bound: float = COSINE_BOUND) -> str:
    """The fastest measured route whose vectors all keep a cosine of at least ``bound`` to
    float32's (``torch-float32`` when none does, or none was measured).

    >>> choose_route({"torch-float32": RouteTiming(2.0, 1.0),
    ...               "openvino-int8": RouteTiming(0.6, 0.995),
    ...               "onnxruntime-int8": RouteTiming(0.5, 0.98)})
    'openvino-int8'
    """
    good = {name: m.seconds for name, m in measured.items() if m.min_cosine >= bound}
    return min(good, key=lambda name: (good[name], name)) if good else "torch-float32"


def resolve_route(
    precision: str, device: str, model: str, encoder: Callable[..., Any] | None = None
) -> str:
    """The route an encoder of ``model`` runs on ``device`` for ``precision``: a route name
    as given, a precision's own route, or for ``"auto"`` on the CPU the route of the CPU-flag
    rule's precision where this kind of CPU is in :data:`RULE_MEASURED`, else the route
    measured on this machine (:func:`auto_route`); ``HETA_EVAL_ENCODE_ROUTE`` overrides
    (``static``: the rule; ``measure``: measure; a route name). Off the CPU ``"auto"`` is the
    device's precision.

    >>> resolve_route("float32", "cpu", "all-MiniLM-L6-v2")
    'torch-float32'
    """
    if precision in ROUTES:  # checks that the route runs on the device
        resolve_precision(precision if precision in PRECISIONS else ROUTES[precision], device)
        return precision
    resolved = resolve_precision(precision, device)  # checks the name and the device
    if precision != "auto" or device_kind(device) != "cpu":
        return _PRECISION_ROUTE[resolved]
    # Measuring costs tens of seconds once per machine (an export, a quantization, timing):
    # worth it where the rule was not measured to be right (RULE_MEASURED), not elsewhere.
    forced = config.encode_route()
    if forced == "static" or (forced is None and cpu_kind() in RULE_MEASURED):
        return _PRECISION_ROUTE[resolved]
    if forced is None or forced == "measure":
        return auto_route(model, device, encoder)
    return resolve_route(forced, device, model, encoder)


def cpu_kind() -> str:
    """This machine's kind of CPU (:func:`heta_eval.kb.precision.cpu_kind`)."""
    return cpu_kind_of(cpu_flags(), cpu_vendor())


def _available() -> tuple[bool, bool]:
    from heta_eval.kb.onnx_int8 import onnxruntime_available
    from heta_eval.kb.openvino_int8 import openvino_available

    return onnxruntime_available(), openvino_available()


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for package in ("torch", "onnxruntime", "openvino", "nncf", "sentence-transformers"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = "-"
    return out


def _schemes() -> list[str]:
    from heta_eval.kb import onnx_int8, openvino_int8

    return [onnx_int8.SCHEME, openvino_int8.SCHEME]


def _cpu_model() -> str:
    return _cpuinfo_field("model name")


def auto_route(model: str, device: str = "cpu", encoder: Callable[..., Any] | None = None) -> str:
    """The route ``"auto"`` picks for ``model`` on this CPU: read from the cache folder when
    this CPU, thread count and these libraries were measured before, else measured now with
    ``encoder`` (the encoder class, :class:`heta_eval.kb.dense.DenseEncoder`, passed in by
    it; :func:`calibrate`, :func:`choose_route`) and stored."""
    import torch

    onnxruntime, openvino = _available()
    routes = candidate_routes(cpu_flags(), onnxruntime=onnxruntime, openvino=openvino)
    if len(routes) == 1:
        return routes[0]
    identity = {
        "cpu": _cpu_model(), "vendor": cpu_vendor(), "flags": sorted(cpu_flags()),
        "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA", ""),
        "threads": torch.get_num_threads(), "versions": _versions(), "model": model,
        "routes": routes, "bound": COSINE_BOUND, "schemes": _schemes(),
    }  # fmt: skip
    key = cache_key(identity, CALIBRATION_TEXTS, _REPEAT, _BATCH)
    path = config.cache_dir("kb") / f"routes-{key}.json"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored.get("route") in routes:
            return str(stored["route"])
    except (OSError, ValueError):
        pass
    log.warning(
        "measuring the encoding routes on this CPU once (%s; HETA_EVAL_ENCODE_ROUTE=static "
        "skips it): %s", cpu_kind(), ", ".join(routes),
    )  # fmt: skip
    if encoder is None:
        raise ValueError("measuring the encoding routes needs the encoder class")
    measured = calibrate(model, device, routes, encoder)
    route = choose_route(measured)
    record = {"route": route, "measured": {k: asdict(v) for k, v in measured.items()}}
    _store(path, {**record, "identity": identity})
    log.warning("encoding route: %s (%s)", route, _describe(measured))
    return route


def _describe(measured: Mapping[str, RouteTiming]) -> str:
    return ", ".join(
        f"{name} {m.seconds:.2f} s, min cosine {m.min_cosine:.4f}" for name, m in measured.items()
    )


def _store(path: Path, record: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        partial.replace(path)
    except OSError:  # an unwritable cache: measured again by the next process
        pass


def calibrate(
    model: str,
    device: str,
    routes: Collection[str],
    encoder: Callable[..., Any],
    texts: Collection[str] | None = None,
) -> dict[str, RouteTiming]:
    """Encode ``texts`` (default: the calibration passages, repeated) through each route,
    in batches through the encoder's own loop, rotated over a few rounds after a warm-up;
    per route the median seconds and the least cosine to ``torch-float32``'s vectors (which
    is measured too, whether listed or not). A route that fails to load or run here (a
    library without kernels for this CPU) is left out of the result."""
    passages = list(texts) if texts is not None else list(CALIBRATION_TEXTS) * _REPEAT
    names = list(dict.fromkeys(["torch-float32", *routes]))
    encoders = {
        name: encoder(model, precision=name, device=device, batch_size=_BATCH) for name in names
    }
    for name in names[1:]:  # load, export or quantize once; warm up
        try:
            encoders[name].encode(passages[:_BATCH])
        except Exception as error:  # a route this machine cannot run is left out
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            log.warning("encoding route %s left out: %s", name, first)
            del encoders[name]
    encoders["torch-float32"].encode(passages[:_BATCH])
    names = list(encoders)
    times: dict[str, list[float]] = {name: [] for name in names}
    vectors: dict[str, np.ndarray] = {}
    for turn in range(_ROUNDS):
        for name in names[turn % len(names) :] + names[: turn % len(names)]:
            started = time.perf_counter()
            vectors[name] = encoders[name].encode(passages)
            times[name].append(time.perf_counter() - started)
    reference = vectors["torch-float32"]
    return {
        name: RouteTiming(
            seconds=float(np.median(times[name])),
            min_cosine=float(np.min(np.sum(vectors[name] * reference, axis=1))),
        )
        for name in names
    }
