"""Ray giving up during a run, said in one line: what failed, its root cause, what is kept.

Ray's own errors are long (a worker's traceback inside an actor's death notice inside a Ray
Data error); a user needs the cause and what to do. :func:`ray_failures` turns any error
raised by Ray while the block runs into a :class:`RayRunError` whose message is that line
(and a second one about what is kept). Ray's errors are recognised by the module of their
class, so nothing here imports ``ray``.
"""

from __future__ import annotations

import os
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Literal

from heta_eval import config

__all__ = [
    "ClusterWatch",
    "RayRunError",
    "explain",
    "is_ray_error",
    "listening",
    "lost_after",
    "probe",
    "quiet_ray_data_console",
    "ray_failures",
    "where",
]

# A traceback's last line: the exception's (possibly dotted) class name and its message.
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*): (.+)$")
_LENGTH = 300


class RayRunError(RuntimeError):
    """Ray gave up during a run (the cluster died, an actor could not start, a task failed
    after its retries); the message says what failed, why, and what was kept."""


def is_ray_error(error: BaseException) -> bool:
    """Whether ``error`` is one of Ray's (a class of its is defined in a ``ray`` module).

    >>> is_ray_error(ValueError("x"))
    False
    """
    return any(
        cls.__module__ == "ray" or cls.__module__.startswith("ray.") for cls in type(error).__mro__
    )


def _root(error: BaseException) -> BaseException:
    """The innermost error: a failed task's own exception (``RayTaskError.cause``), else the
    explicit ``__cause__`` chain (Ray Data raises its internal errors ``from`` an empty
    marker exception, which says nothing and is skipped)."""
    seen: set[int] = set()
    while id(error) not in seen:
        seen.add(id(error))
        inner = getattr(error, "cause", None)
        if not isinstance(inner, BaseException):
            inner = error.__cause__
        if inner is None or not str(inner).strip():
            break
        error = inner
    return error


def explain(error: BaseException) -> str:
    """One line for ``error``: its root cause's type and the first line of its message (for
    an actor whose constructor raised, the constructor's exception, read from the traceback
    Ray puts in the message).

    >>> explain(RuntimeError("disk full\\nmore detail"))
    'RuntimeError: disk full'
    """
    root = _root(error)
    name, text = type(root).__name__, str(root).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if getattr(root, "actor_init_failed", False) and lines:
        # "The actor died because of an error raised in its creation task, <traceback>":
        # the traceback's last line is the constructor's exception.
        match = _EXCEPTION_LINE.match(lines[-1])
        if match:
            cause = match.group(1).rsplit(".", 1)[-1]
            return _cut(f"an actor could not start: {cause}: {match.group(2)}")
    first = lines[0] if lines else "(no message)"
    return _cut(f"{name}: {first}")


def _cut(line: str) -> str:
    return line if len(line) <= _LENGTH else line[: _LENGTH - 3] + "..."


def where(address: str) -> str:
    """The cluster, as a user named it with ``--ray``.

    >>> where("10.0.0.5:6379"), where("local")
    ('the Ray cluster at 10.0.0.5:6379', 'the Ray cluster started in this process')
    """
    if address == "local":
        return "the Ray cluster started in this process"
    if address == "auto":
        return "the Ray cluster of this machine (--ray auto)"
    return f"the Ray cluster at {address}"


@contextmanager
def ray_failures(address: str, doing: str, kept: Callable[[], str] | None = None) -> Iterator[None]:
    """Turn an error Ray raises in the block into a :class:`RayRunError`:
    ``"<the cluster> failed while <doing>: <cause>"``, then what ``kept()`` says (what was
    kept and how to resume; asked once the block failed) on a second line. Other errors
    pass through unchanged.

    >>> died = type("ActorDiedError", (Exception,), {"__module__": "ray.exceptions"})
    >>> try:
    ...     with ray_failures("10.0.0.5:6379", "searching", lambda: "nothing kept"):
    ...         raise died("The actor died.\\n\\tpid: 7")
    ... except RayRunError as error:
    ...     print(error)
    the Ray cluster at 10.0.0.5:6379 failed while searching: ActorDiedError: The actor died.
    nothing kept
    """
    try:
        yield
    except RayRunError:
        raise
    except Exception as error:
        if not is_ray_error(error):
            raise
        message = f"{where(address)} failed while {doing}: {explain(error)}"
        raise RayRunError(message + (f"\n{kept()}" if kept else "")) from error


def quiet_ray_data_console() -> None:
    """Keep Ray Data's error records off the console (its log file still gets them).

    A failed encode is reported by :func:`ray_failures` in one line; Ray Data would first
    print the whole internal traceback to stderr (``RAY_DATA_LOG_LEVEL`` sets the level of
    the file log too, so it cannot be used for this). Importing ``ray.data`` sets up its
    handlers, so this runs after that import.
    """
    import logging

    for handler in logging.getLogger("ray.data").handlers:
        if not isinstance(handler, logging.FileHandler) and "File" not in type(handler).__name__:
            handler.setLevel(logging.CRITICAL + 1)


def lost_after() -> float:
    """Seconds the cluster's head may stay silent before a run gives up
    (:func:`heta_eval.config.ray_lost_after`)."""
    return config.ray_lost_after()


#: How many times ``grace`` a head that is alive but slow may take to answer: a loaded
#: machine (a CPU-bound neighbour, a swapping node) delays its answers, it does not end the run.
SLOW_FACTOR = 6.0
#: Seconds one connection attempt may take before the head counts as slow this time.
PROBE_TIMEOUT = 5.0

Probe = Literal["answers", "refused", "slow"]


def probe(host: str, port: int, timeout: float = PROBE_TIMEOUT) -> Probe:
    """How the head at ``host:port`` takes a connection now: ``"answers"``; ``"refused"``
    (nothing listens there: the head is gone); ``"slow"`` (no answer in ``timeout``: a
    loaded machine or network, or a lost route; a head on this machine whose port still
    listens is alive, merely slow).

    >>> probe("127.0.0.1", 1)
    'refused'
    """
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return "answers"
    except ConnectionRefusedError:
        return "slow" if listening(host, port) else "refused"
    except OSError:
        return "slow"


def listening(host: str, port: int) -> bool:
    """Whether a process on this machine listens on ``port`` (for a loopback ``host``; False
    elsewhere, or where ``/proc`` cannot tell)."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        return False
    wanted = f":{port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table, encoding="ascii").read().splitlines()[1:]  # noqa: SIM115
        except OSError:
            continue
        # local_address is field 1 ("0100007F:1F90"), state field 3 ("0A" is LISTEN).
        if any(f[1].endswith(wanted) and f[3] == "0A" for f in (ln.split() for ln in lines)):
            return True
    return False


class ClusterWatch:
    """Ends the process in one line when the cluster's head is gone.

    Ray's driver, once the head's control store (the GCS) is gone, keeps waiting for it and
    after 60 s ends the whole process from C++: exit status 1, a page of C++ log lines, no
    word on what was kept. This daemon thread connects to the head every ``every`` seconds.
    A head that refuses connections (nothing listens: it stopped) for ``grace`` seconds ends
    the run: ``"<program>: error: <message()>"`` on stderr, exit status 2. A head that is
    slow to answer (a loaded machine) is given :data:`SLOW_FACTOR` times longer, and every
    answer starts the count again, so a run under load is never declared lost while its head
    lives. Finished work is already on disk by then (encoded shards, the per-query journal),
    so a rerun resumes.

    >>> watch = ClusterWatch("127.0.0.1:1", message=lambda: "gone", grace=60)
    >>> watch.host, watch.port
    ('127.0.0.1', 1)
    """

    def __init__(
        self,
        gcs_address: str,
        *,
        message: Callable[[], str],
        program: str = "heta-eval",
        grace: float = 10.0,
        every: float = 1.0,
        probe_timeout: float = PROBE_TIMEOUT,
    ) -> None:
        host, _, port = gcs_address.rpartition(":")
        self.host, self.port = host.strip("[]"), int(port)
        self.message, self.program = message, program
        self.grace, self.every, self.probe_timeout = grace, every, probe_timeout
        self._thread: threading.Thread | None = None

    def start(self) -> ClusterWatch:
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="heta-ray-watch", daemon=True)
            self._thread.start()
        return self

    def answers(self) -> bool:
        """Whether the head accepts a connection now."""
        return probe(self.host, self.port, self.probe_timeout) == "answers"

    def _watch(self) -> None:
        gone_since: float | None = None  # refused since
        silent_since: float | None = None  # no answer (refused or slow) since
        while True:
            state = probe(self.host, self.port, self.probe_timeout)
            now = time.monotonic()
            if state == "answers":
                gone_since = silent_since = None
            else:
                silent_since = now if silent_since is None else silent_since
                gone_since = (
                    (now if gone_since is None else gone_since) if state == "refused" else None
                )
                if gone_since is not None and now - gone_since >= self.grace:
                    self._end()
                if now - silent_since >= self.grace * SLOW_FACTOR:
                    self._end()
            time.sleep(self.every)

    def _end(self) -> None:
        try:
            line = self.message()
        except Exception as error:  # the message must not keep the process alive
            line = f"the Ray cluster stopped answering ({type(error).__name__}: {error})"
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        os.write(2, f"{self.program}: error: {line}\n".encode())
        os._exit(2)  # Ray's threads would otherwise end the process with status 1 later
