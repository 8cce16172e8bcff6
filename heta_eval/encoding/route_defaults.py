"""The encoding route ``precision="auto"`` takes on each kind of CPU, and the measurements
each was chosen from: a record of ``make bench``'s results per kind (docs/encoding.md), so the
route depends on the kind of CPU and the runtimes installed, never on a timing.

>>> from heta_eval.encoding.cpu import CpuInfo
>>> default_route(CpuInfo("GenuineIntel", "Xeon", frozenset({"amx_bf16"}), 2)).route
'torch-bfloat16'
"""

from __future__ import annotations

from dataclasses import dataclass

from heta_eval.encoding.cpu import CpuInfo, this_cpu

__all__ = ["DEFAULT_ROUTES", "FALLBACK", "DefaultRoute", "RouteChoice", "default_route"]


@dataclass(frozen=True)
class DefaultRoute:
    """A kind of CPU's default route and the measurements it was chosen from."""

    route: str
    evidence: str


#: The route ``auto`` takes on each kind of CPU (:data:`heta_eval.encoding.cpu.KINDS`), chosen from
#: ``make bench``'s measurements on a CPU of that kind (speed against sentence-transformers
#: float32 in one rotation; docs/encoding.md). A kind's row changes only with a new
#: measurement on that kind, recorded here and in the docs.
DEFAULT_ROUTES: dict[str, DefaultRoute] = {
    "amx": DefaultRoute(
        "torch-bfloat16",
        "make bench 2026-12-05 on a 2-core Xeon with AMX (bench/results.json): torch-bfloat16 "
        "4.40x, openvino-int8 2.57x, onnxruntime-int8 1.72x, torch-float32 1.37x",
    ),
    "avx512-bf16-amd": DefaultRoute(
        "torch-bfloat16",
        "make bench 2026-12-07 on a 2-core AMD EPYC (Zen 4; bench/records/avx512-bf16-amd.json): "
        "torch-bfloat16 4.23x, torch-float32 2.57x; openvino-int8 8.64x and onnxruntime-int8 "
        "5.83x, but their SciFact nDCG@10 moved +0.0033 and -0.0025 from float32 (agreement "
        "goal 0.002), bfloat16's -0.0011",
    ),
    "avx512-bf16-intel": DefaultRoute(
        "onnxruntime-int8",
        "make bench 2026-12-01 on a 2-core Xeon with AVX512-BF16, no AMX: onnxruntime-int8 "
        "1.53x, torch-bfloat16 0.87x",
    ),
    "vnni": DefaultRoute(
        "onnxruntime-int8",
        "2-core Xeon with AVX-512 VNNI, no AMX or bfloat16: onnxruntime-int8 0.635-0.638 s and "
        "openvino-int8 0.632-0.650 s on the calibration passages (a tie), torch-float32 1.31 s; "
        "make bench onnxruntime-int8 1.59x",
    ),
    "avx2": DefaultRoute(
        "onnxruntime-int8",
        "make bench 2026-12-04 on a 2-core AMD EPYC (Zen 3, AVX2 only): onnxruntime-int8 1.42x",
    ),
    "other": DefaultRoute("torch-float32", "the only route (no int8 kernels, no bfloat16)"),
}
#: Where a default's runtime is not installed, the route taken instead.
FALLBACK: dict[str, str] = {
    "openvino-int8": "onnxruntime-int8",
    "onnxruntime-int8": "torch-float32",
}


@dataclass(frozen=True)
class RouteChoice:
    """The route an encoder runs, why in a few words, and the measurements that reason rests
    on where there are any (``summary.json``'s ``build.route``, ``build.route_reason`` and
    ``build.route_evidence``)."""

    route: str
    reason: str
    evidence: str = ""


def _installed(route: str, cpu: CpuInfo) -> bool:
    if route == "onnxruntime-int8":
        return cpu.has_onnxruntime()
    return cpu.has_openvino() if route == "openvino-int8" else True


def default_route(cpu: CpuInfo | None = None) -> RouteChoice:
    """The route ``auto`` takes on ``cpu`` (default :func:`~heta_eval.encoding.cpu.this_cpu`): its
    kind's :data:`DEFAULT_ROUTES` row, or where that route's runtime is not installed, the
    first of its :data:`FALLBACK` that is.

    >>> from heta_eval.encoding.cpu import CpuInfo
    >>> zen3 = CpuInfo("AuthenticAMD", "AMD EPYC 7R13", frozenset({"avx2"}), 2, onnxruntime=True)
    >>> default_route(zen3).reason
    'the default for avx2 CPUs (AMD EPYC 7R13)'
    >>> from dataclasses import replace
    >>> fallback = default_route(replace(zen3, onnxruntime=False))
    >>> fallback.route, fallback.reason.endswith("is onnxruntime-int8, but onnxruntime-int8 "
    ...                                          "cannot run here (not installed)")
    ('torch-float32', True)
    """
    cpu = cpu or this_cpu()
    default = DEFAULT_ROUTES[cpu.kind]
    reason = f"the default for {cpu.kind} CPUs ({cpu.model or 'model unknown'})"
    route, missing = default.route, []
    while not _installed(route, cpu):
        missing.append(route)
        route = FALLBACK[route]
    if missing:
        reason += f" is {missing[0]}, but {' and '.join(missing)} cannot run here (not installed)"
    return RouteChoice(route, reason, default.evidence)
