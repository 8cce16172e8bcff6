"""Encoding routes on the CPU, and the one ``precision="auto"`` takes.

A route is an engine and a precision: ``torch-float32`` (the model as it is),
``torch-bfloat16``, ``onnxruntime-int8`` (:mod:`heta_eval.encoding.onnx_int8`) and ``openvino-int8``
(:mod:`heta_eval.encoding.openvino_int8`). Which is fastest depends on the CPU (AMX, AVX512-BF16,
VNNI, AVX2 only), its vendor and the libraries installed. ``auto`` takes, on each kind of CPU
(:func:`heta_eval.encoding.cpu.cpu_kind`), the route
:data:`heta_eval.encoding.route_defaults.DEFAULT_ROUTES` names for it: the one ``make bench``'s
recorded measurements on that kind found fastest within the bounds, with those measurements
beside it. It depends on the kind and the runtimes installed (a default
whose runtime is missing falls back), never on a timing, so the same command
on the same machine and libraries takes the same route, warm cache or cold.

Timing on the user's machine is opt-in (``HETA_EVAL_ENCODE_ROUTE=measure``): the encoder
encodes a few batches of fixed passages (:mod:`heta_eval.encoding.calibration_texts`) through every
route available there, in rotation over :data:`ROUNDS` rounds, compares each route's vectors
with float32's, and a route displaces the kind's default only when its every vector keeps a
cosine of at least :data:`COSINE_BOUND` to float32's and it is clearly faster: its median at
least :data:`MARGIN` below the default's and its slowest round faster than the default's
fastest (:func:`choose_route`). The choice and the timings are stored in the knowledge-base
cache folder (``routes-<key>.json``), keyed by the CPU model, its flags, the thread count and
the library versions, so later runs read it. A route name forces that route; ``static`` is the
default, as unset. Every choice comes with its reason (:class:`RouteChoice`), which the
results folder records.
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
from heta_eval.cache.store import cache_key
from heta_eval.encoding.calibration_texts import CALIBRATION_TEXTS
from heta_eval.encoding.cpu import this_cpu
from heta_eval.encoding.precision import PRECISIONS, device_kind, resolve_precision
from heta_eval.encoding.route_defaults import RouteChoice, default_route

__all__ = [
    "COSINE_BOUND",
    "MARGIN",
    "ROUTES",
    "RouteChoice",
    "RouteTiming",
    "auto_route",
    "calibrate",
    "candidate_routes",
    "choose_route",
    "resolve_route",
    "route_choice",
    "route_precision",
]

#: Every route and the precision it computes in, in the fixed order that breaks ties.
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
#: How much faster (median seconds) a measured route must be to displace the kind's default.
MARGIN = 0.10
_X86_SIMD = frozenset({"avx2", "avx512f"})
_BF16 = frozenset({"avx512_bf16", "amx_bf16"})
#: Calibration shape: the passages repeated this many times, in batches of this size, timed
#: over this many rounds.
_REPEAT, _BATCH, ROUNDS = 3, 24, 3


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RouteTiming:
    """One route measured: median seconds over the rounds, the fastest and slowest round,
    and the least cosine of its vectors to float32's."""

    seconds: float
    min_cosine: float
    fastest: float | None = None
    slowest: float | None = None

    @property
    def spread(self) -> tuple[float, float]:
        """(fastest, slowest) round; the median where the rounds were not kept."""
        return (self.fastest or self.seconds, self.slowest or self.seconds)


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
        routes += [
            name
            for name, ok in [("onnxruntime-int8", onnxruntime), ("openvino-int8", openvino)]
            if ok
        ]
    return routes


def choose_route(
    measured: Mapping[str, RouteTiming],
    default: str = "torch-float32",
    *,
    bound: float = COSINE_BOUND,
    margin: float = MARGIN,
) -> str:
    """``default``, unless a measured route keeps every vector within cosine ``bound`` of
    float32's and is clearly faster: its median at least ``margin`` below the default's and
    its slowest round faster than the default's fastest. Of those, the fastest median; equal
    medians go to the route first in :data:`ROUTES`. An unmeasured default (it failed to
    run) gives way to the fastest route within the bound.

    >>> measured = {"torch-float32": RouteTiming(2.0, 1.0, 1.9, 2.1),
    ...             "openvino-int8": RouteTiming(0.6, 0.995, 0.58, 0.63),
    ...             "onnxruntime-int8": RouteTiming(0.62, 0.995, 0.6, 0.7)}
    >>> choose_route(measured, "onnxruntime-int8"), choose_route(measured, "torch-float32")
    ('onnxruntime-int8', 'openvino-int8')
    """
    order = list(ROUTES)
    good = {name: m for name, m in measured.items() if m.min_cosine >= bound}
    base = good.get(default)
    if base is None:
        fastest = sorted(good, key=lambda name: (good[name].seconds, order.index(name)))
        return fastest[0] if fastest else default
    faster = [
        name
        for name, m in good.items()
        if m.seconds <= base.seconds * (1 - margin) and m.spread[1] < base.spread[0]
    ]
    if not faster:
        return default
    return min(faster, key=lambda name: (good[name].seconds, order.index(name)))


def resolve_route(
    precision: str, device: str, model: str, encoder: Callable[..., Any] | None = None
) -> str:
    """:func:`route_choice`'s route.

    >>> resolve_route("float32", "cpu", "all-MiniLM-L6-v2")
    'torch-float32'
    """
    return route_choice(precision, device, model, encoder).route


def route_choice(
    precision: str, device: str, model: str, encoder: Callable[..., Any] | None = None
) -> RouteChoice:
    """The route an encoder of ``model`` runs on ``device`` for ``precision``, and why: a
    route name as given, a precision's own route, or for ``"auto"`` on the CPU
    :func:`default_route`; ``HETA_EVAL_ENCODE_ROUTE`` overrides ``auto`` (a route name;
    ``measure``: :func:`auto_route` with ``encoder``, the encoder class). Off the CPU
    ``"auto"`` is the device's precision.

    >>> route_choice("bfloat16", "cpu", "all-MiniLM-L6-v2")
    RouteChoice(route='torch-bfloat16', reason='asked for: bfloat16', evidence='')
    """
    if precision in ROUTES:  # checks that the route runs on the device
        resolve_precision(precision if precision in PRECISIONS else ROUTES[precision], device)
        return RouteChoice(precision, f"asked for: {precision}")
    resolved = resolve_precision(precision, device)  # checks the name and the device
    if precision != "auto":
        return RouteChoice(_PRECISION_ROUTE[resolved], f"asked for: {precision}")
    if device_kind(device) != "cpu":
        return RouteChoice(_PRECISION_ROUTE[resolved], f"the default on {device_kind(device)}")
    forced = config.encode_route()
    if forced is None or forced == "static":
        return default_route()
    if forced == "measure":
        return auto_route(model, device, encoder)
    route = resolve_route(forced, device, model, encoder)
    return RouteChoice(route, f"HETA_EVAL_ENCODE_ROUTE={forced}")


def cpu_kind() -> str:
    """This machine's kind of CPU (:attr:`heta_eval.encoding.cpu.CpuInfo.kind` of
    :func:`~heta_eval.encoding.cpu.this_cpu`)."""
    return this_cpu().kind


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
    from heta_eval.encoding import onnx_int8, openvino_int8

    return [onnx_int8.SCHEME, openvino_int8.SCHEME]


def auto_route(
    model: str, device: str = "cpu", encoder: Callable[..., Any] | None = None
) -> RouteChoice:
    """The route measured for ``model`` on this CPU (``HETA_EVAL_ENCODE_ROUTE=measure``): read
    from the cache folder when this CPU, thread count and these libraries were measured
    before, else measured now with ``encoder`` (the encoder class,
    :class:`heta_eval.encoding.dense.DenseEncoder`, passed in by it; :func:`calibrate`,
    :func:`choose_route` against the kind's :func:`default_route`) and stored."""
    import torch

    cpu, default = this_cpu(), default_route()
    routes = candidate_routes(
        cpu.flags, onnxruntime=cpu.has_onnxruntime(), openvino=cpu.has_openvino()
    )
    if len(routes) == 1:
        return RouteChoice(routes[0], f"the only route on {cpu.kind} CPUs (nothing to measure)")
    identity = {
        "cpu": cpu.model,
        "vendor": cpu.vendor,
        "flags": sorted(cpu.flags),
        "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA", ""),
        "cpus": cpu.threads,
        "threads": torch.get_num_threads(),
        "versions": _versions(),
        "model": model,
        "routes": routes,
        "bound": COSINE_BOUND,
        "schemes": _schemes(),
        "default": default.route,
        "margin": MARGIN,
        "rounds": ROUNDS,
    }
    key = cache_key(identity, CALIBRATION_TEXTS, _REPEAT, _BATCH)
    path = config.cache_dir("kb") / f"routes-{key}.json"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored.get("route") in routes and isinstance(stored.get("reason"), str):
            evidence = f"{stored.get('evidence', '')} (stored in {path})"
            return RouteChoice(str(stored["route"]), stored["reason"], evidence)
    except (OSError, ValueError):
        pass
    log.warning(
        "measuring the encoding routes on this CPU once (%s, HETA_EVAL_ENCODE_ROUTE=measure): %s",
        cpu.kind,
        ", ".join(routes),
    )
    if encoder is None:
        raise ValueError("measuring the encoding routes needs the encoder class")
    measured = calibrate(model, device, routes, encoder)
    route = choose_route(measured, default.route)
    verdict = (
        f"kept the default {route}: no route clearly faster"
        if route == default.route
        else f"{route} displaced the default {default.route}"
    )
    reason = f"measured on this machine (HETA_EVAL_ENCODE_ROUTE=measure): {verdict}"
    evidence = f"{cpu.kind} CPU, {ROUNDS} rounds: {_describe(measured)}"
    record = {
        "route": route,
        "reason": reason,
        "evidence": evidence,
        "measured": {k: asdict(v) for k, v in measured.items()},
    }
    _store(path, {**record, "identity": identity})
    log.warning("encoding route: %s (%s)", reason, evidence)
    return RouteChoice(route, reason, evidence)


def _describe(measured: Mapping[str, RouteTiming]) -> str:
    """Each route's median seconds, its spread over the rounds and its least cosine.

    >>> _describe({"torch-float32": RouteTiming(1.31, 1.0, 1.3, 1.35)})
    'torch-float32 1.31 s (1.30-1.35), min cosine 1.0000'
    """
    return ", ".join(
        f"{name} {m.seconds:.2f} s ({m.spread[0]:.2f}-{m.spread[1]:.2f}), "
        f"min cosine {m.min_cosine:.4f}"
        for name, m in measured.items()
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
    per route the median, fastest and slowest seconds and the least cosine to
    ``torch-float32``'s vectors (which
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
    for turn in range(ROUNDS):
        for name in names[turn % len(names) :] + names[: turn % len(names)]:
            started = time.perf_counter()
            vectors[name] = encoders[name].encode(passages)
            times[name].append(time.perf_counter() - started)
    reference = vectors["torch-float32"]
    return {
        name: RouteTiming(
            seconds=float(np.median(times[name])),
            min_cosine=float(np.min(np.sum(vectors[name] * reference, axis=1))),
            fastest=min(times[name]),
            slowest=max(times[name]),
        )
        for name in names
    }
