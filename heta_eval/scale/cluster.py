"""Connecting to Ray, and what the cluster holds. ``ray`` is imported only when called."""

from __future__ import annotations

import logging
import os
import secrets
import time
from typing import Any

from heta_eval import interrupts
from heta_eval.scale.errors import probe

__all__ = ["RayUnavailableError", "cluster_resources", "connect", "parse_address"]

logger = logging.getLogger(__name__)


#: Seconds ``--ray HOST:PORT`` waits for a head that is there but slow to answer.
CONNECT_PATIENCE = 60.0
#: The priority (nice value) of the workers of a cluster started in this process. Ray's
#: default, 15, gives its workers almost no CPU beside other busy processes (docs/ray.md);
#: 0 is every process's.
WORKER_NICENESS = "0"
#: Where Ray looks for an authentication token or mode the user configured.
RAY_AUTH_VARIABLES = ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE")


class RayUnavailableError(RuntimeError):
    """Ray is not installed or the cluster cannot be reached; the message says what to do."""


def parse_address(address: str) -> str | None:
    """``"local"`` (start Ray in this process: ``None``), ``"auto"`` or ``"host:port"``.

    >>> parse_address("local") is None, parse_address("auto"), parse_address("10.0.0.5:6379")
    (True, 'auto', '10.0.0.5:6379')
    >>> parse_address("nowhere")
    Traceback (most recent call last):
    ...
    ValueError: --ray must be 'local', 'auto', HOST:PORT or ray://HOST:PORT, got 'nowhere'
    """
    text = address.strip()
    if text == "local":
        return None
    if text == "auto" or text.startswith("ray://"):
        return text
    host, _, port = text.rpartition(":")
    if host and port.isdigit():
        return text
    raise ValueError(
        f"--ray must be 'local', 'auto', HOST:PORT or ray://HOST:PORT, got {address!r}"
    )


def connect(address: str) -> Any:
    """Join the cluster at ``address`` (or start one in this process for ``"local"``) and
    return the ``ray`` module. Joining twice is a no-op."""
    target = parse_address(address)
    host, _, port = (target or "").rpartition(":")
    if target is None:
        # An in-process cluster is this machine only: keep it on the loopback interface
        # (Ray would otherwise use the machine's outward address). Read when ray imports.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        # Read by the node processes ray.init starts; a value the user set is kept.
        os.environ.setdefault("RAY_worker_niceness", WORKER_NICENESS)
        keep_token_out_of_home()
    if host and port.isdigit() and not _reachable(address, host, int(port)):
        raise RayUnavailableError(
            f"no Ray cluster answers at {address} (start one with `ray start --head`)"
        )
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(
            "--ray needs Ray: pip install 'heta-eval[ray]' (or pip install 'ray[data]')"
        ) from None
    if ray.is_initialized():
        return ray
    # Ray Data's INFO lines would drown the run's output (RAY_DATA_LOG_LEVEL=INFO shows them).
    os.environ.setdefault("RAY_DATA_LOG_LEVEL", "ERROR")
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if target is None:
        options["include_dashboard"] = False
    try:
        # "local" always starts a new cluster: with None, Ray would join the newest one that
        # `ray start` left on this machine (/tmp/ray/ray_current_cluster) or RAY_ADDRESS.
        ray.init(address=target or "local", **options)
    except (ConnectionError, RuntimeError) as error:
        raise RayUnavailableError(f"cannot join the Ray cluster at {address}: {error}") from None
    interrupts.reclaim()  # ray.init turns SIGTERM into a bare sys.exit
    return ray


def keep_token_out_of_home() -> None:
    """Give an in-process cluster a token of its own, held in this process's environment.

    Ray (2.5x on) turns token authentication on for a new local cluster and, with no token
    configured, saves a fresh one to ``~/.ray/auth_token``. That file then switches token
    authentication on for every later ``ray start`` on the machine, whose second node is
    refused ("InvalidAuthToken") unless it finds the same file. A token in
    ``RAY_AUTH_TOKEN`` keeps authentication on for our cluster (its node processes inherit
    the variable) and writes nothing. A token or mode the user configured is kept.
    """
    if not any(os.environ.get(name) for name in RAY_AUTH_VARIABLES):
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)


def _reachable(address: str, host: str, port: int, patience: float = CONNECT_PATIENCE) -> bool:
    """Whether a head answers at ``host:port``. Ray retries an unreachable address for
    minutes; a plain TCP connect says at once when nothing listens, and a head that is only
    slow (a loaded machine) is waited for, out loud, up to ``patience`` seconds."""
    deadline = time.monotonic() + patience
    state = probe(host.strip("[]"), port)
    if state == "slow":
        logger.info("waiting for the Ray cluster at %s to answer (up to %.0f s)", address, patience)
    while state == "slow" and time.monotonic() < deadline:
        state = probe(host.strip("[]"), port)
    return state == "answers"


def cluster_resources() -> dict[str, Any]:
    """Alive nodes, and the CPUs and GPUs they offer in total."""
    import ray

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return {
        "nodes": len(nodes),
        "cpus": sum(n["Resources"].get("CPU", 0.0) for n in nodes),
        "gpus": sum(n["Resources"].get("GPU", 0.0) for n in nodes),
    }
