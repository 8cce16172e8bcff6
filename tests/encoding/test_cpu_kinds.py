"""The one description of the CPU every CPU-dependent choice reads (``heta_eval.encoding.cpu``): each
kind of CPU read from its ``/proc/cpuinfo`` text, put in place of this machine's for a block,
its default route and precision (the two rules agree on every kind), and the suite's header
naming the CPU it ran on."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import pytest_report_header
from support.cpu_kinds import ARM, KIND_IDS, KINDS, VNNI_XEON

from heta_eval.encoding import cpu as cpu_module
from heta_eval.encoding.cpu import KINDS as KIND_NAMES
from heta_eval.encoding.cpu import CpuInfo, simulated_cpu, this_cpu
from heta_eval.encoding.precision import choose_precision
from heta_eval.encoding.route_defaults import DEFAULT_ROUTES, FALLBACK, default_route
from heta_eval.encoding.routes import ROUTES, route_precision


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_each_kind_is_read_from_its_cpuinfo_and_takes_its_route(kind) -> None:
    assert kind.cpu.kind == kind.kind
    assert default_route(kind.cpu).route == kind.route
    # The precision rule and the table of default routes agree.
    assert choose_precision("cpu", kind.cpu.flags, kind.cpu.vendor) == kind.precision
    assert route_precision(kind.route) == kind.precision
    with simulated_cpu(kind.cpu):
        assert this_cpu() is kind.cpu and default_route().route == kind.route


def test_the_tests_cover_every_kind_and_the_table_names_a_route_for_each() -> None:
    assert {kind.kind for kind in KINDS} == set(KIND_NAMES) == set(DEFAULT_ROUTES)
    for name, default in DEFAULT_ROUTES.items():
        assert default.route in ROUTES and default.evidence, name
    assert set(FALLBACK.values()) <= set(ROUTES)


@pytest.mark.parametrize("name", sorted(KIND_NAMES))
def test_every_kinds_default_precision_is_the_precision_rules(name) -> None:
    # Kinds given by their deciding flags alone, beside the full descriptions of cpu_kinds.py.
    flags = {
        "amx": {"amx_bf16", "avx512_bf16", "avx2"},
        "avx512-bf16-amd": {"avx512_bf16", "avx2"},
        "avx512-bf16-intel": {"avx512_bf16", "avx2"},
        "vnni": {"avx_vnni", "avx2"},
        "avx2": {"avx2"},
        "other": set(),
    }[name]
    vendor = "AuthenticAMD" if name == "avx512-bf16-amd" else "GenuineIntel"
    cpu = CpuInfo(vendor, "", frozenset(flags), 2, onnxruntime=True, openvino=True)
    assert cpu.kind == name
    assert choose_precision("cpu", flags, vendor) == route_precision(default_route(cpu).route)


def test_a_default_whose_runtime_is_missing_falls_back_and_says_so() -> None:
    choice = default_route(replace(VNNI_XEON, onnxruntime=False))
    assert choice.route == "torch-float32"
    assert choice.reason == (
        "the default for vnni CPUs (Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz) is "
        "onnxruntime-int8, but onnxruntime-int8 cannot run here (not installed)"
    )
    assert choice.evidence == DEFAULT_ROUTES["vnni"].evidence


def test_arm_is_read_from_its_features_and_cpu_part() -> None:
    assert (ARM.vendor, ARM.model, ARM.kind) == ("", "CPU part 0xd40", "other")
    assert {"asimd", "sve", "bf16"} <= ARM.flags  # Arm's bf16 is not x86's: float32 there
    assert ARM.describe() == "CPU part 0xd40 (kind other), 2 CPUs"


def test_simulations_nest_and_this_machine_comes_back(monkeypatch) -> None:
    real = this_cpu()
    assert this_cpu() is real  # read once
    with simulated_cpu(VNNI_XEON):
        with simulated_cpu(ARM):
            assert this_cpu() is ARM
        assert this_cpu() is VNNI_XEON
    assert this_cpu() is real
    # An unreadable /proc/cpuinfo is an empty description, not an error: float32.
    monkeypatch.setattr(cpu_module, "open", _refuse, raising=False)
    unread = CpuInfo.read()
    assert (unread.flags, unread.vendor, unread.kind) == (frozenset(), "", "other")
    assert unread.threads >= 1


def _refuse(*args, **kwargs):
    raise PermissionError("no /proc/cpuinfo here")


def test_the_suites_header_names_the_cpu_it_runs_on() -> None:
    [line] = pytest_report_header(None)
    cpu = this_cpu()
    assert line.startswith(f"cpu: {cpu.describe()}: {KIND_NAMES[cpu.kind]}")
    assert f"auto's encoding route here: {default_route(cpu).route}" in line
