"""Which device and numeric precision the dense encoder runs in.

``precision="auto"`` picks, per device kind, CPU vendor and CPU flags (the CPU
:func:`heta_eval.encoding.cpu.this_cpu` describes), the precision of the route ``auto`` takes
on that kind of CPU (:data:`heta_eval.encoding.route_defaults.DEFAULT_ROUTES`;
``tests/encoding/test_cpu_kinds.py`` holds the two in agreement on every kind):

* CUDA: ``float16`` (half precision; the host side, not the GPU, is the bottleneck there).
* a CPU where bfloat16 is fast: AMX (Intel Sapphire Rapids and later), or AVX512-BF16 on AMD
  (Zen 4 and later): ``bfloat16``.
* an x86 CPU without that but with AVX2 or AVX-512: ``int8`` (ONNX Runtime, weights per
  output channel; see :mod:`heta_eval.encoding.onnx_int8`), or ``float32`` where ONNX Runtime is
  missing. This includes Intel CPUs with AVX512-BF16 but no AMX (Cooper Lake, or a guest
  whose hypervisor hides AMX): there, bfloat16 dot products issue on one port while float32
  FMAs use two, so bfloat16 encodes slower than float32 there and int8 faster. On Zen 4 a
  512-bit float32 FMA takes two passes and bfloat16 is faster than float32 (docs/encoding.md).
* anything else: ``float32``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

from heta_eval.encoding.cpu import cpu_kind as kind_of
from heta_eval.encoding.cpu import this_cpu

__all__ = [
    "PRECISIONS",
    "Precision",
    "choose_precision",
    "cpu_flags",
    "cpu_kind",
    "cpu_vendor",
    "device_kind",
    "resolve_device",
    "resolve_precision",
]

Precision = Literal[
    "auto", "float32", "bfloat16", "float16", "int8", "onnxruntime-int8", "openvino-int8"
]
#: Every precision a caller may name; "auto" resolves to one of the others. The last two name
#: an int8 route (engine and precision, see :mod:`heta_eval.encoding.routes`); plain "int8" is
#: ONNX Runtime's.
PRECISIONS: tuple[str, ...] = (
    "auto",
    "float32",
    "bfloat16",
    "float16",
    "int8",
    "onnxruntime-int8",
    "openvino-int8",
)

_AMD = "AuthenticAMD"
_INT8_FLAGS = frozenset({"avx2", "avx512f", "avx512_vnni", "avx_vnni"})


def cpu_flags() -> frozenset[str]:
    """The CPU feature flags :func:`~heta_eval.encoding.cpu.this_cpu` holds (``/proc/cpuinfo``: its
    first ``flags`` line, or ``Features`` on Arm; empty where unreadable).
    ``tests/encoding/test_dense_encoding.py`` checks them against the file read independently."""
    return this_cpu().flags


def cpu_vendor() -> str:
    """The CPU vendor :func:`~heta_eval.encoding.cpu.this_cpu` holds (``GenuineIntel``,
    ``AuthenticAMD``; empty where unreadable)."""
    return this_cpu().vendor


def cpu_kind(flags: Collection[str] | None = None, vendor: str | None = None) -> str:
    """The kind of CPU the encoding figures and defaults are given by
    (:data:`heta_eval.encoding.cpu.KINDS`: ``amx``, ``avx512-bf16-amd``, ``avx512-bf16-intel``,
    ``vnni``, ``avx2``, ``other``) of these flags and vendor; by default
    :func:`~heta_eval.encoding.cpu.this_cpu`'s.

    >>> cpu_kind({"avx2", "avx_vnni"}, "GenuineIntel"), cpu_kind({"avx2", "fma"}, "AuthenticAMD")
    ('vnni', 'avx2')
    """
    if flags is None:
        return this_cpu().kind if vendor is None else kind_of(this_cpu().flags, vendor)
    return kind_of(flags, vendor or "")


def resolve_device(device: str = "auto") -> str:
    """``"auto"`` becomes ``"cuda"`` where a CUDA GPU is visible, else ``"cpu"``; any other
    name is checked and returned as given.

    >>> resolve_device("cpu")
    'cpu'
    """
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    kind = device_kind(device)
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: no CUDA GPU is visible to this torch build")
    if kind not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda[:N]' or 'mps', got {device!r}")
    return device


def device_kind(device: str) -> str:
    """``"cuda:1"`` -> ``"cuda"``: what the cache key and the precision choice depend on.

    >>> device_kind("cuda:1"), device_kind("cpu")
    ('cuda', 'cpu')
    """
    return device.split(":", 1)[0]


def choose_precision(
    kind: str, flags: Collection[str] | None = None, vendor: str | None = None
) -> str:
    """The precision ``"auto"`` means on a device of ``kind`` (CPU: with these ``flags``
    and this ``vendor``; both default to this machine's when ``flags`` is None, and the
    vendor to unknown when only ``flags`` is given).

    >>> choose_precision("cpu", {"avx2", "avx512f", "avx512_bf16"}, "AuthenticAMD")
    'bfloat16'
    >>> choose_precision("cpu", {"avx2", "avx512f", "avx512_bf16"}, "GenuineIntel")
    'int8'
    >>> choose_precision("cpu", {"avx2", "fma"})
    'int8'
    >>> choose_precision("cpu", set()), choose_precision("cuda")
    ('float32', 'float16')
    """
    if kind == "cuda":
        return "float16"
    if kind != "cpu":
        return "float32"
    if flags is None:
        flags, vendor = this_cpu().flags, this_cpu().vendor if vendor is None else vendor
    have = frozenset(flags)
    if "amx_bf16" in have or ("avx512_bf16" in have and vendor == _AMD):
        return "bfloat16"
    if have & _INT8_FLAGS:
        return "int8"
    return "float32"


def resolve_precision(precision: str, device: str = "cpu") -> str:
    """``"auto"`` becomes :func:`choose_precision` for ``device`` (float32 where its int8 runtime
    is not installed); a route name becomes its precision; others are checked (the runtime a
    route needs: :meth:`heta_eval.encoding.cpu.CpuInfo.has_onnxruntime`).

    >>> resolve_precision("float32")
    'float32'
    >>> resolve_precision("auto", "cuda")
    'float16'
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    kind, cpu = device_kind(device), this_cpu()
    if precision == "openvino-int8":
        if kind != "cpu":
            raise ValueError(f"precision 'openvino-int8' runs on the CPU only, not on {device!r}")
        if not cpu.has_openvino():
            raise ValueError("precision 'openvino-int8' needs openvino, nncf and onnx")
        return "int8"
    precision = "int8" if precision == "onnxruntime-int8" else precision
    if precision == "auto":
        chosen = choose_precision(kind)
        # Without ONNX Runtime (a light install) int8 is not there: float32, as before.
        return "float32" if chosen == "int8" and not cpu.has_onnxruntime() else chosen
    if precision == "int8" and kind != "cpu":
        raise ValueError(f"precision 'int8' runs on the CPU only, not on {device!r}")
    if precision == "int8" and not cpu.has_onnxruntime():
        raise ValueError(
            "precision 'int8' needs onnxruntime and onnx: pip install onnxruntime onnx"
        )
    return precision
