"""Which device and numeric precision the dense encoder runs in.

``precision="auto"`` picks, per device kind and CPU flags:

* CUDA: ``float16`` (half precision; the host side, not the GPU, is the bottleneck there).
* a CPU with native bfloat16 (AVX512-BF16 or AMX): ``bfloat16``.
* an x86 CPU without it but with AVX2 or AVX-512: ``int8`` (ONNX Runtime, weights per output
  channel; see :mod:`heta_eval.kb.onnx_int8`), or ``float32`` where ONNX Runtime is missing.
* anything else: ``float32``.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import lru_cache
from typing import Literal

__all__ = [
    "PRECISIONS",
    "Precision",
    "choose_precision",
    "cpu_flags",
    "device_kind",
    "resolve_device",
    "resolve_precision",
]

Precision = Literal["auto", "float32", "bfloat16", "float16", "int8"]
#: Every precision a caller may name; "auto" resolves to one of the others.
PRECISIONS: tuple[str, ...] = ("auto", "float32", "bfloat16", "float16", "int8")

_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})
_INT8_FLAGS = frozenset({"avx2", "avx512f", "avx512_vnni", "avx_vnni"})


@lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The CPU feature flags of this machine (``/proc/cpuinfo``; empty where unreadable).

    >>> isinstance(cpu_flags(), frozenset)
    True
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


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


def choose_precision(kind: str, flags: Collection[str] | None = None) -> str:
    """The precision ``"auto"`` means on a device of ``kind`` (CPU: with these ``flags``).

    >>> choose_precision("cpu", {"avx2", "avx512f", "avx512_bf16"})
    'bfloat16'
    >>> choose_precision("cpu", {"avx2", "fma"})
    'int8'
    >>> choose_precision("cpu", set()), choose_precision("cuda")
    ('float32', 'float16')
    """
    if kind == "cuda":
        return "float16"
    if kind != "cpu":
        return "float32"
    have = frozenset(cpu_flags() if flags is None else flags)
    if have & _BF16_FLAGS:
        return "bfloat16"
    if have & _INT8_FLAGS:
        return "int8"
    return "float32"


def resolve_precision(precision: str, device: str = "cpu") -> str:
    """``"auto"`` becomes :func:`choose_precision` for ``device``; others are checked.

    >>> resolve_precision("float32")
    'float32'
    >>> resolve_precision("auto", "cuda")
    'float16'
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    from .onnx_int8 import onnxruntime_available

    kind = device_kind(device)
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
