"""A real two-node Ray cluster on 127.0.0.1 for the tests, and a small slice of SciFact.

Both nodes run on this machine (``ray start --head`` and ``ray start --address``), one CPU
each, with distinct custom resources (``node_head`` / ``node_worker``) so a test can tell
which node did what. Everything is bounded in time, and the cluster is always stopped at the
end: its own processes only (``ray stop`` would stop every Ray cluster on the machine, those
of another checkout's tests running beside these among them).

Ray replaces 127.0.0.1 with the machine's outward address for a multi-node cluster, so the
nodes and every client run inside a network namespace of the test's own that holds only a
loopback interface: all of the cluster's traffic stays on loopback.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import suppress
from importlib.util import find_spec
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RAY = str(Path(sys.executable).with_name("ray"))
#: Ray's package folder: node processes run programs from it (gcs_server, raylet, dashboard).
RAY_PACKAGE = (find_spec("ray").submodule_search_locations[0] if find_spec("ray") else "?").encode()
#: Seconds a test waits for a command, a shard or a cluster before failing: generous, since
#: the suite must pass on a 2-core machine with six CPU-bound processes beside it (a local
#: run of the slice took over 300 s there).
PATIENCE = 900.0
#: Attempts at starting the cluster (Ray's own start-up limit is 30 s per node).
STARTS = 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_env() -> dict[str, str]:
    """The environment the nodes' workers run in: they import this checkout's heta_eval."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    # An in-process `ray.init()` elsewhere may have left ~/.ray/auth_token, which would turn
    # token authentication on for these nodes but not for their clients.
    env["RAY_AUTH_MODE"] = "disabled"
    # Workers at the priority of every other process, as docs/ray.md asks of a cluster on a
    # shared machine: Ray's default (nice 15) starves them beside CPU-bound neighbours.
    env["RAY_worker_niceness"] = "0"
    return env


class LoopbackNamespace:
    """``with LoopbackNamespace() as ns:`` a network namespace with only ``lo`` (up), removed
    on exit; ``ns.wrap(argv)`` runs a command inside it. Needs root and iproute2."""

    def __init__(self) -> None:
        self.name = f"heta-ray-{os.getpid()}"

    def __enter__(self) -> LoopbackNamespace:
        subprocess.run(
            ["ip", "netns", "add", self.name], check=True, timeout=30, capture_output=True
        )
        subprocess.run(self.wrap(["ip", "link", "set", "lo", "up"]), check=True, timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        subprocess.run(["ip", "netns", "delete", self.name], timeout=30, capture_output=True)

    def wrap(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name, *argv]

    @staticmethod
    def available() -> str | None:
        """None when namespaces can be made here, else why not."""
        probe = LoopbackNamespace()
        probe.name += "-probe"
        try:
            with probe:
                return None
        except (OSError, subprocess.SubprocessError) as error:
            return f"cannot make a network namespace (needs root and iproute2): {error}"


NETNS = LoopbackNamespace()


def _ray(*args: str, timeout: float = PATIENCE) -> None:
    result = subprocess.run(
        NETNS.wrap([RAY, *args]), env=cluster_env(), timeout=timeout, capture_output=True, text=True
    )
    if result.returncode != 0:
        raise RuntimeError(f"ray {' '.join(args)} failed:\n{result.stderr[-2000:]}")


class TwoNodeCluster:
    """``with TwoNodeCluster() as address:`` a head and a worker node, stopped on exit
    (``port``: the head's, to start a cluster again at an address a client knows)."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port

    def __enter__(self) -> str:
        port = self.port or free_port()
        self.address = f"127.0.0.1:{port}"
        for attempt in range(STARTS):
            NETNS.__enter__()
            try:
                _ray(
                    "start",
                    "--head",
                    "--node-ip-address",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--num-cpus",
                    "1",
                    "--num-gpus",
                    "0",
                    "--resources",
                    '{"node_head": 1}',
                    "--include-dashboard",
                    "false",
                    "--disable-usage-stats",
                )
                _ray(
                    "start",
                    "--address",
                    self.address,
                    "--node-ip-address",
                    "127.0.0.1",
                    "--num-cpus",
                    "1",
                    "--num-gpus",
                    "0",
                    "--resources",
                    '{"node_worker": 1}',
                    "--disable-usage-stats",
                )
                return self.address
            except RuntimeError:
                # Ray gives a node 30 s to register (hard-coded in ray._private.node): a
                # loaded machine can miss that; start again from scratch.
                self.stop()
                if attempt == STARTS - 1:
                    raise
            except BaseException:
                self.stop()
                raise
        raise AssertionError("unreachable")

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @staticmethod
    def stop() -> None:
        """Kill the Ray processes in the test's namespace (nodes, workers, agents; not a
        driver running there), wait until they are gone, and remove the namespace."""
        deadline = time.monotonic() + PATIENCE
        while (pids := _ray_processes()) and time.monotonic() < deadline:
            for pid in pids:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        NETNS.__exit__()


def _ray_processes() -> list[int]:
    """Live Ray processes inside the test's namespace: started from Ray's package (a program
    of it, or a script of it run as ``python -u script``: the autoscaler's monitor and the log
    monitor), or titled by Ray (``ray::...``, its workers and agents)."""
    listed = subprocess.run(
        ["ip", "netns", "pids", NETNS.name], capture_output=True, text=True, timeout=PATIENCE
    )
    found = []
    for pid in listed.stdout.split():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone meanwhile
        if argv[0].startswith(b"ray::") or any(RAY_PACKAGE in arg for arg in argv[:3]):
            found.append(int(pid))
    return found


def encoder_processes() -> dict[int, str]:
    """Live encoder actor processes on this machine: PID -> their node (``node_head`` or
    ``node_worker``). Ray titles an actor's process after it
    (``ray::MapWorker(MapBatches(ShardEncoder))...``); its parent is its node's raylet,
    whose command line lists the node's resources."""
    found: dict[int, str] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b"MapBatches(ShardEncoder)" not in (proc / "cmdline").read_bytes():
                continue
            state, parent = (proc / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            raylet = (Path("/proc") / parent / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue  # gone meanwhile
        if state != "Z":
            found[int(proc.name)] = next(
                (n for n in ("node_worker", "node_head") if n.encode() in raylet), "unknown"
            )
    return found


def scifact_slice(scifact_dir: Path, target: Path, *, queries: int, extra_docs: int) -> Path:
    """A BEIR folder with the first ``queries`` test queries, the documents they judge and
    ``extra_docs`` more from the start of the corpus."""
    rows = list(csv.reader((scifact_dir / "qrels" / "test.tsv").open(), delimiter="\t"))[1:]
    chosen: list[str] = []
    for qid, _, _ in rows:
        if qid not in chosen:
            chosen.append(qid)
    chosen = chosen[:queries]
    judged = [r for r in rows if r[0] in chosen]
    needed = {r[1] for r in judged}
    docs = []
    with (scifact_dir / "corpus.jsonl").open() as f:
        for number, line in enumerate(f):
            doc = json.loads(line)
            if number < extra_docs or doc["_id"] in needed:
                docs.append(line)
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    (target / "corpus.jsonl").write_text("".join(docs))
    with (scifact_dir / "queries.jsonl").open() as f:
        wanted = [line for line in f if json.loads(line)["_id"] in set(chosen)]
    (target / "queries.jsonl").write_text("".join(wanted))
    with (target / "qrels" / "test.tsv").open("w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        f.writelines("\t".join(r) + "\n" for r in judged)
    return target
