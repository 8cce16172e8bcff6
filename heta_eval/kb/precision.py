"""Which device and numeric precision the dense encoder runs in.

``precision="auto"`` picks, per device kind, CPU vendor and CPU flags:

* CUDA: ``float16`` (half precision; the host side, not the GPU, is the bottleneck there).
* a CPU where bfloat16 is fast: AMX (Intel Sapphire Rapids and later), or AVX512-BF16 on AMD
  (Zen 4 and later): ``bfloat16``.
* an x86 CPU without that but with AVX2 or AVX-512: ``int8`` (ONNX Runtime, weights per
  output channel; see :mod:`heta_eval.kb.onnx_int8`), or ``float32`` where ONNX Runtime is
  missing. This includes Intel CPUs with AVX512-BF16 but no AMX (Cooper Lake, or a guest
  whose hypervisor hides AMX): there, bfloat16 dot products issue on one port while float32
  FMAs use two, so bfloat16 encoding measured 0.85x float32 (int8: 1.52x). On Zen 4 a
  512-bit float32 FMA takes two passes and bfloat16 measured 3.2x float32.
* anything else: ``float32``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from functools import lru_cache
from typing import Literal

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
#: an int8 route (engine and precision, see :mod:`heta_eval.kb.routes`); plain "int8" is
#: ONNX Runtime's.
PRECISIONS: tuple[str, ...] = (
    "auto", "float32", "bfloat16", "float16", "int8", "onnxruntime-int8", "openvino-int8"
)  # fmt: skip

_AMD = "AuthenticAMD"
_INT8_FLAGS = frozenset({"avx2", "avx512f", "avx512_vnni", "avx_vnni"})
_VNNI = frozenset({"avx512_vnni", "avx_vnni"})


def cpuinfo_field(lines: Iterable[str], *names: str) -> str:
    """The first line of a ``/proc/cpuinfo`` text starting with one of ``names``, after its
    colon (empty where none does).

    >>> text = ["processor\t: 0", "vendor_id\t: AuthenticAMD", "flags\t\t: fpu avx2 avx512_bf16"]
    >>> cpuinfo_field(text, "flags", "Features"), cpuinfo_field(text, "vendor_id")
    ('fpu avx2 avx512_bf16', 'AuthenticAMD')
    >>> cpuinfo_field(["Features\t: fp asimd"], "flags", "Features")  # Arm's name for them
    'fp asimd'
    """
    for line in lines:
        if line.startswith(names):
            return line.split(":", 1)[1].strip()
    return ""


@lru_cache(maxsize=4)
def _cpuinfo_field(*names: str) -> str:
    """:func:`cpuinfo_field` of this machine's ``/proc/cpuinfo`` (empty where unreadable)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return cpuinfo_field(f, *names)
    except OSError:
        return ""


def cpu_flags() -> frozenset[str]:
    """The CPU feature flags of this machine (``/proc/cpuinfo``: its first ``flags`` line, or
    ``Features`` on Arm; empty where unreadable). ``tests/test_dense_encoding.py`` checks them
    against the file read independently."""
    return frozenset(_cpuinfo_field("flags", "Features").split())


def cpu_vendor() -> str:
    """The CPU vendor of this machine (``GenuineIntel``, ``AuthenticAMD``; empty where
    unreadable), from the same file."""
    return _cpuinfo_field("vendor_id")


def cpu_kind(flags: Collection[str] | None = None, vendor: str | None = None) -> str:
    """The kind of CPU the encoding figures are given by (docs/encoding.md's table): ``amx``,
    ``avx512-bf16-amd``, ``avx512-bf16-intel`` (no AMX), ``vnni`` (AVX-512 VNNI or AVX-VNNI,
    no bfloat16), ``avx2`` (AVX2 or AVX-512 without VNNI) or ``other`` (ARM, no AVX2); this
    machine's by default.

    >>> cpu_kind({"avx2", "avx512f", "avx512_vnni", "avx512_bf16"}, "AuthenticAMD")
    'avx512-bf16-amd'
    >>> cpu_kind({"avx2", "avx_vnni"}, "GenuineIntel"), cpu_kind({"avx2", "fma"}, "AuthenticAMD")
    ('vnni', 'avx2')
    >>> cpu_kind({"amx_bf16", "avx512_bf16"}), cpu_kind({"asimd"}, "")
    ('amx', 'other')
    """
    if flags is None:
        flags, vendor = cpu_flags(), cpu_vendor() if vendor is None else vendor
    have = frozenset(flags)
    if "amx_bf16" in have:
        return "amx"
    if "avx512_bf16" in have:
        return "avx512-bf16-amd" if vendor == _AMD else "avx512-bf16-intel"
    if have & _VNNI:
        return "vnni"
    return "avx2" if have & _INT8_FLAGS else "other"


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
        flags, vendor = cpu_flags(), cpu_vendor() if vendor is None else vendor
    have = frozenset(flags)
    if "amx_bf16" in have or ("avx512_bf16" in have and vendor == _AMD):
        return "bfloat16"
    if have & _INT8_FLAGS:
        return "int8"
    return "float32"


def resolve_precision(precision: str, device: str = "cpu") -> str:
    """``"auto"`` becomes :func:`choose_precision` for ``device`` (the flag rule; the encoder
    itself measures, see :mod:`heta_eval.kb.routes`); a route name becomes its precision;
    others are checked.

    >>> resolve_precision("float32")
    'float32'
    >>> resolve_precision("auto", "cuda")
    'float16'
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    from heta_eval.kb.onnx_int8 import onnxruntime_available

    kind = device_kind(device)
    if precision == "openvino-int8":
        from heta_eval.kb.openvino_int8 import openvino_available

        if kind != "cpu":
            raise ValueError(f"precision 'openvino-int8' runs on the CPU only, not on {device!r}")
        if not openvino_available():
            raise ValueError("precision 'openvino-int8' needs openvino, nncf and onnx")
        return "int8"
    precision = "int8" if precision == "onnxruntime-int8" else precision
    if precision == "auto":
        chosen = choose_precision(kind)
        # Without ONNX Runtime (a light install) int8 is not there: float32, as before.
        return "float32" if chosen == "int8" and not onnxruntime_available() else chosen
    if precision == "int8" and kind != "cpu":
        raise ValueError(f"precision 'int8' runs on the CPU only, not on {device!r}")
    if precision == "int8" and not onnxruntime_available():
        raise ValueError(
            "precision 'int8' needs onnxruntime and onnx: pip install onnxruntime onnx"
        )
    return precision
