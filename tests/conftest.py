"""Shared fixtures: the real data under ../shared/datasets; the suite's header (the CPU it
runs on) and its count of the live comparisons with trec_eval's binary."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path

import pytest
from support.paths import REPO, SUITE_HOME, shared_path

# The suite's indexes, embeddings and judge replies live in a cache folder of its own, kept
# between runs of this checkout, never in the user's ~/.cache/heta-eval. Subprocesses
# started by tests inherit it.
os.environ["HETA_EVAL_CACHE_DIR"] = str(REPO / ".test-cache")
# One cache of compiled kernels for the whole suite, subprocesses included, even those a test
# gives a cache folder of their own: each kernel is compiled once a suite, not once a process.
os.environ.setdefault("NUMBA_CACHE_DIR", str(REPO / ".test-cache" / "numba"))
# A home folder of the suite's own, inside that cache: what libraries save in the user's home
# (ONNX Runtime's telemetry database, Chromium's crash-report settings, Ray's token, pip's
# cache) stays in the checkout, and the user's ~ is left as it was. Subprocesses inherit it.
SUITE_HOME.mkdir(parents=True, exist_ok=True)
os.environ["HOME"] = str(SUITE_HOME)
# The encoder's automatic route is its kind of CPU's default (heta_eval.encoding.route_defaults),
# never a timing; a route forced or measured by the developer's environment does not leak in.
# What depends on the kind of CPU is tested on every kind by describing it
# (tests/support/cpu_kinds.py); the measurement itself with injected timings
# (tests/encoding/test_encode_routes.py).
os.environ.pop("HETA_EVAL_ENCODE_ROUTE", None)


def pytest_report_header(config) -> list[str]:
    """The CPU the suite runs on: the tests that assert what depends on the kind of CPU
    describe every kind themselves; what runs for real (encoding) runs this one's route."""
    from heta_eval.encoding.cpu import KINDS, this_cpu
    from heta_eval.encoding.route_defaults import default_route

    cpu = this_cpu()
    return [
        f"cpu: {cpu.describe()}: {KINDS[cpu.kind]}; auto's encoding route here: "
        f"{default_route(cpu).route} (every kind is simulated where it matters: tests/support/cpu_kinds.py)"
    ]


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    return shared_path("datasets", "beir", "scifact")


@pytest.fixture(scope="session")
def scifact_run_file() -> Path:
    return shared_path("datasets", "runs", "scifact-test.reranked.trec")


@pytest.fixture
def chat_servers():
    """Keeps the loopback chat servers a test starts (``tests/support/chat_server.py``) and shuts
    them down after it: ``server = chat_servers(ChatServer(respond))``."""
    servers: list = []

    def keep(server):
        servers.append(server)
        return server

    yield keep
    for server in servers:
        server.close()


#: The marker of a live comparison with trec_eval 9.0.8's binary (``support.trec_eval_pinned.BINARY``:
#: ``$TREC_EVAL``, which ``.ci/run`` sets when it builds one). Without a binary such a test is
#: skipped, saying why; where ``$TREC_EVAL`` names one that does not run, it fails (the oracle
#: was asked for). The terminal summary says how many ran, and against what.
LIVE = "live_trec_eval"
# Counted from the tests' reports, which reach the main process also when test workers
# (pytest-xdist, `make test`) ran the tests: "started" is every live test that was set up.
_LIVE: dict[str, int] = {"started": 0, "passed": 0, "failed": 0}


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", f"{LIVE}: compares with trec_eval 9.0.8's C binary")
    # Test workers compile ranx's kernels side by side in the suite's one numba cache, ranx
    # through its own numba import: the cache's lock (heta_eval._runtime.import_numba) must be
    # in place before anything compiles, not only once a heta_eval kernel loads.
    if find_spec("numba") is not None:
        from heta_eval._runtime import import_numba

        import_numba()


def _test_worker() -> bool:
    """Whether this process is one of pytest-xdist's test workers (``make test`` runs one per
    CPU, at most four): the workers keep both cores busy, so nothing is warmed beside them."""
    return "PYTEST_XDIST_WORKER" in os.environ


def pytest_collection_finish(session) -> None:
    if not session.config.option.collectonly and not _test_worker():
        _start_warming(session)


def _binary() -> str:
    from support.trec_eval_pinned import BINARY

    return BINARY


def pytest_runtest_setup(item) -> None:
    if item.get_closest_marker(LIVE) is None or shutil.which(_binary()):
        return
    if os.environ.get("TREC_EVAL"):
        pytest.fail(f"TREC_EVAL={_binary()} is not an executable trec_eval", pytrace=False)
    pytest.skip(
        f"trec_eval 9.0.8's binary is not at {_binary()} (set TREC_EVAL; .ci/run builds it "
        "where its source is in ../shared/reference/trec_eval-9.0.8): live comparison "
        "skipped, the pinned outputs still run"
    )


def pytest_runtest_logreport(report) -> None:
    if LIVE not in report.keywords:
        return
    if report.when == "setup":
        _LIVE["started"] += 1
    if report.when == "call":
        _LIVE["passed" if report.passed else "failed"] += 1


def pytest_terminal_summary(terminalreporter, config) -> None:
    if not _LIVE["started"] or config.option.collectonly:
        return
    ran = _LIVE["passed"] + _LIVE["failed"]
    where = f"against {_binary()}" if ran else f"(no binary at {_binary()}: set TREC_EVAL)"
    terminalreporter.write_line(
        f"live trec_eval comparisons: {ran} of {_LIVE['started']} ran {where}"
        + (f", {_LIVE['failed']} failed" if _LIVE["failed"] else "")
    )


# ranx compiles each fusion method, normalization and metric (per type of its input) on first
# use: about three minutes of one core on a clean checkout. `make test` runs the suite on test
# workers (pytest-xdist, one per CPU), which take those files first, so one worker compiles
# while the others run the rest. A whole-suite run in one process (more than WARM_FROM tests,
# no workers) leaves the second core mostly idle, so it starts those test files once more in a
# background pytest at the lowest priority, output discarded, and runs them last (in their own
# order): the compiled kernels are in the shared numba cache by the time the suite reaches
# them. It cannot change a result: a kernel is compiled from the same code whoever gets there
# first, numba's cache is locked while it is written (heta_eval._runtime.import_numba), and the
# suite's own run of these files is the one that counts.
RANX_FILES = (
    "compare/test_compare_exports.py",
    "fusion/test_fusion_parity.py",
    "io/test_interop.py",
    "cli/test_options_at_the_boundary.py",
)
WARM_FROM = 1000
_WARMING: dict[str, object] = {}


def pytest_collection_modifyitems(session, config, items) -> None:
    if os.environ.get("HETA_EVAL_TEST_WARMING") or len(items) < WARM_FROM:
        return
    tests = REPO / "tests"
    ranx = {str(tests / name) for name in RANX_FILES}
    # Stable: each part keeps its order. Test workers take files in this order, so the files
    # that compile ranx's kernels (the longest) go first there, while the other worker runs
    # the rest, instead of one worker finishing them alone at the end.
    first = _test_worker()  # ranx's files first on workers, last in one process
    items.sort(key=lambda item: (str(item.fspath) in ranx) != first)


def _start_warming(session) -> None:
    if os.environ.get("HETA_EVAL_TEST_WARMING") or find_spec("ranx") is None:
        return
    tests = REPO / "tests"
    files = {
        Path(str(item.fspath)).relative_to(tests).as_posix()
        for item in session.items
        if Path(str(item.fspath)).is_relative_to(tests)
    }
    if len(session.items) < WARM_FROM or not files.intersection(RANX_FILES):
        return
    folder = tempfile.TemporaryDirectory(prefix="heta-warm-")
    files = [str(tests / name) for name in RANX_FILES]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not system",
            "--basetemp",
            str(Path(folder.name) / "tmp"),
            *files,
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "HETA_EVAL_TEST_WARMING": "1"},
        start_new_session=True,
    )
    if hasattr(os, "setpriority"):  # the lowest priority: it takes only what the suite leaves
        os.setpriority(os.PRIO_PROCESS, process.pid, 19)
    # A new session is a scheduling group of its own where Linux groups them (autogroup), and
    # a process's nice value then counts only inside its group: the group is niced too.
    with contextlib.suppress(OSError):
        Path(f"/proc/{process.pid}/autogroup").write_text("19")
    _WARMING.update(folder=folder, process=process)


def pytest_sessionfinish(session) -> None:
    process = _WARMING.pop("process", None)
    if isinstance(process, subprocess.Popen):
        if process.poll() is None:
            process.kill()
        process.wait()
    folder = _WARMING.pop("folder", None)
    if isinstance(folder, tempfile.TemporaryDirectory):
        folder.cleanup()
