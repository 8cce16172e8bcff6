"""The CPU the dense encoder runs on, described once: vendor, model, feature flags, the CPUs
this process may use, and whether the int8 runtimes (ONNX Runtime, OpenVINO) are installed.

Everything the encoder decides by the CPU (the precision rule, the default route of each kind
of CPU, the routes worth measuring, a measurement's identity) reads one :class:`CpuInfo`:
:func:`this_cpu`, this machine's, read once from ``/proc/cpuinfo``; or another machine's, put
in its place for a block by :func:`simulated_cpu`. The tests describe each kind of CPU that
way (``tests/support/cpu_kinds.py``), so what they assert does not depend on the CPU they run on.

>>> xeon = CpuInfo.parse(
...     "vendor_id\\t: GenuineIntel\\nmodel name\\t: Intel(R) Xeon(R) Platinum 8375C\\n"
...     "flags\\t\\t: fpu avx2 avx512f avx512_vnni\\n", threads=2, onnxruntime=True)
>>> xeon.kind, xeon.threads, xeon.has_onnxruntime()
('vnni', 2, True)
>>> with simulated_cpu(xeon):
...     this_cpu().model
'Intel(R) Xeon(R) Platinum 8375C'
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from heta_eval._runtime import usable_cpus

__all__ = ["KINDS", "CpuInfo", "cpu_kind", "cpuinfo_field", "simulated_cpu", "this_cpu"]

#: The kinds of CPU the encoding figures and defaults are given by, and what each is.
KINDS: dict[str, str] = {
    "amx": "Intel with AMX (Sapphire Rapids and later)",
    "avx512-bf16-amd": "AMD with AVX512-BF16 (Zen 4 and later)",
    "avx512-bf16-intel": "Intel with AVX512-BF16 but no AMX (Cooper Lake, or AMX hidden)",
    "vnni": "x86 with AVX-512 VNNI or AVX-VNNI, no bfloat16 (Ice Lake, Cascade Lake)",
    "avx2": "x86 with AVX2 (or AVX-512 without VNNI), no VNNI (Zen 2/3, Haswell)",
    "other": "no AVX2 (ARM, older x86)",
}
_AMD = "AuthenticAMD"
_VNNI = frozenset({"avx512_vnni", "avx_vnni"})
_SIMD = frozenset({"avx2", "avx512f"})


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


def cpu_kind(flags: Collection[str], vendor: str = "") -> str:
    """The kind of CPU (:data:`KINDS`) these flags and this vendor make.

    >>> cpu_kind({"avx2", "avx512f", "avx512_vnni", "avx512_bf16"}, "AuthenticAMD")
    'avx512-bf16-amd'
    >>> cpu_kind({"avx2", "avx_vnni"}, "GenuineIntel"), cpu_kind({"avx2", "fma"}, "AuthenticAMD")
    ('vnni', 'avx2')
    >>> cpu_kind({"amx_bf16", "avx512_bf16"}), cpu_kind({"asimd"}, "")
    ('amx', 'other')
    """
    have = frozenset(flags)
    if "amx_bf16" in have:
        return "amx"
    if "avx512_bf16" in have:
        return "avx512-bf16-amd" if vendor == _AMD else "avx512-bf16-intel"
    if have & _VNNI:
        return "vnni"
    return "avx2" if have & (_SIMD | _VNNI) else "other"


@dataclass(frozen=True)
class CpuInfo:
    """One machine's CPU as the encoder sees it. ``onnxruntime`` / ``openvino``: whether those
    runtimes (with what quantizing needs) import; None asks this machine's Python when first
    needed (importing OpenVINO and NNCF takes seconds)."""

    vendor: str = ""
    model: str = ""
    flags: frozenset[str] = frozenset()
    #: The CPUs this process may run on (its affinity).
    threads: int = 1
    onnxruntime: bool | None = None
    openvino: bool | None = None

    @classmethod
    def parse(
        cls,
        cpuinfo: str,
        *,
        threads: int = 1,
        onnxruntime: bool | None = None,
        openvino: bool | None = None,
    ) -> CpuInfo:
        """A CPU from a ``/proc/cpuinfo`` text (its first processor's lines; Arm's
        ``Features`` and ``CPU part`` where x86's ``flags`` and ``model name`` are missing)."""
        lines = cpuinfo.splitlines()
        part = cpuinfo_field(lines, "CPU part")
        return cls(
            vendor=cpuinfo_field(lines, "vendor_id"),
            model=cpuinfo_field(lines, "model name") or (f"CPU part {part}" if part else ""),
            flags=frozenset(cpuinfo_field(lines, "flags", "Features").split()),
            threads=threads,
            onnxruntime=onnxruntime,
            openvino=openvino,
        )

    @classmethod
    def read(cls) -> CpuInfo:
        """This machine's CPU (empty fields where ``/proc/cpuinfo`` cannot be read)."""
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as f:
                text = f.read()
        except OSError:
            text = ""
        return cls.parse(text, threads=usable_cpus())

    @property
    def kind(self) -> str:
        """:func:`cpu_kind` of its flags and vendor."""
        return cpu_kind(self.flags, self.vendor)

    def has_onnxruntime(self) -> bool:
        """Whether the ONNX Runtime int8 route can run (this machine's Python where None)."""
        if self.onnxruntime is None:
            from heta_eval.encoding.onnx_int8 import onnxruntime_available

            return onnxruntime_available()
        return self.onnxruntime

    def has_openvino(self) -> bool:
        """Whether the OpenVINO int8 route can run (this machine's Python where None)."""
        if self.openvino is None:
            from heta_eval.encoding.openvino_int8 import openvino_available

            return openvino_available()
        return self.openvino

    def describe(self) -> str:
        """One line: model, kind and threads.

        >>> CpuInfo("AuthenticAMD", "AMD EPYC 9R14", frozenset({"avx512_bf16"}), 2).describe()
        'AMD EPYC 9R14 (kind avx512-bf16-amd), 2 CPUs'
        """
        return f"{self.model or 'unknown CPU'} (kind {self.kind}), {self.threads} CPUs"


_READ: list[CpuInfo] = []
_SIMULATED: list[CpuInfo] = []


def this_cpu() -> CpuInfo:
    """The CPU the encoder decides by: the innermost :func:`simulated_cpu`, else this
    machine's, read once per process."""
    if _SIMULATED:
        return _SIMULATED[-1]
    if not _READ:
        _READ.append(CpuInfo.read())
    return _READ[0]


@contextmanager
def simulated_cpu(cpu: CpuInfo) -> Iterator[CpuInfo]:
    """:func:`this_cpu` is ``cpu`` inside the block (for tests and what-if questions: which
    route would ``auto`` take on that kind of CPU); nothing is loaded or run on it."""
    _SIMULATED.append(cpu)
    try:
        yield cpu
    finally:
        _SIMULATED.pop()
