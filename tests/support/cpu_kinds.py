"""The kinds of CPU the encoder's choices are tested on, each as its ``/proc/cpuinfo`` shows it
(the first processor's lines the encoder reads; the flags abridged to the x86 or Arm features
around the ones that matter), with a thread count and the int8 runtimes installed. A test puts
one in place of this machine with :func:`heta_eval.encoding.cpu.simulated_cpu`, so what it asserts
holds on whatever CPU the suite runs on."""

from __future__ import annotations

from dataclasses import dataclass

from heta_eval.encoding.cpu import CpuInfo

_X86 = (
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr "
    "sse sse2 ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc "
    "cpuid pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx "
    "f16c rdrand hypervisor lahf_lm abm 3dnowprefetch fsgsbase bmi1 avx2 smep bmi2 erms invpcid"
)
_AVX512 = "avx512f avx512dq avx512cd avx512bw avx512vl avx512ifma avx512vbmi avx512_vbmi2"


def _x86(vendor: str, model: str, flags: str) -> str:
    return (
        f"processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: 6\nmodel name\t: {model}\n"
        f"stepping\t: 8\ncpu MHz\t\t: 2900.000\nflags\t\t: {_X86} {flags}\n"
        "bugs\t\t: spectre_v1 spectre_v2\n"
    )


@dataclass(frozen=True)
class Kind:
    """A kind of CPU: its description, and what ``auto`` must take there."""

    name: str
    cpu: CpuInfo
    kind: str
    route: str
    precision: str


#: Sapphire Rapids: AMX, AVX512-BF16, VNNI.
AMX_XEON = CpuInfo.parse(
    _x86(
        "GenuineIntel",
        "Intel(R) Xeon(R) Platinum 8488C",
        f"{_AVX512} avx512_vnni avx512_bf16 avx512_fp16 amx_bf16 amx_tile amx_int8",
    ),
    threads=2,
    onnxruntime=True,
    openvino=True,
)
#: Ice Lake server: AVX-512 VNNI, no bfloat16, no AMX (the issue's failing machine).
VNNI_XEON = CpuInfo.parse(
    _x86(
        "GenuineIntel",
        "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz",
        f"{_AVX512} avx512_vnni avx512_bitalg avx512_vpopcntdq",
    ),
    threads=2,
    onnxruntime=True,
    openvino=True,
)
#: Cooper Lake, or a Sapphire Rapids guest whose hypervisor hides AMX.
BF16_XEON = CpuInfo.parse(
    _x86(
        "GenuineIntel",
        "Intel(R) Xeon(R) Platinum 8380HL CPU @ 2.90GHz",
        f"{_AVX512} avx512_vnni avx512_bf16",
    ),
    threads=4,
    onnxruntime=True,
    openvino=False,
)
#: Zen 4 (Genoa): AVX512-BF16 and VNNI on AMD.
BF16_EPYC = CpuInfo.parse(
    _x86(
        "AuthenticAMD",
        "AMD EPYC 9R14 96-Core Processor",
        f"{_AVX512} avx512_vnni avx512_bitalg avx512_vpopcntdq avx512_bf16 clzero sse4a",
    ),
    threads=2,
    onnxruntime=True,
    openvino=True,
)
#: Zen 3 (Milan): AVX2 only.
AVX2_EPYC = CpuInfo.parse(
    _x86("AuthenticAMD", "AMD EPYC 7R13 Processor", "clzero sse4a vaes vpclmulqdq"),
    threads=8,
    onnxruntime=True,
    openvino=True,
)
#: Graviton 3 (Neoverse V1): Arm's ``Features``, no ``vendor_id`` nor ``model name``.
ARM = CpuInfo.parse(
    "processor\t: 0\nBogoMIPS\t: 2100.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 "
    "crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp "
    "sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm svebf16 i8mm bf16 "
    "dgh rng\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\n"
    "CPU part\t: 0xd40\nCPU revision\t: 1\n",
    threads=2,
    onnxruntime=True,
    openvino=False,
)

#: Every kind, and what ``auto`` takes there (the expectation each test checks).
KINDS: list[Kind] = [
    Kind("amx-xeon", AMX_XEON, "amx", "torch-bfloat16", "bfloat16"),
    Kind("vnni-xeon", VNNI_XEON, "vnni", "onnxruntime-int8", "int8"),
    Kind("bf16-xeon-no-amx", BF16_XEON, "avx512-bf16-intel", "onnxruntime-int8", "int8"),
    Kind("bf16-epyc", BF16_EPYC, "avx512-bf16-amd", "torch-bfloat16", "bfloat16"),
    Kind("avx2-epyc", AVX2_EPYC, "avx2", "onnxruntime-int8", "int8"),
    Kind("arm", ARM, "other", "torch-float32", "float32"),
]
KIND_IDS = [kind.name for kind in KINDS]
