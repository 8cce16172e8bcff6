"""Ray giving up during a run, said in one line: what failed, its root cause, what is kept.

Ray's own errors are long (a worker's traceback inside an actor's death notice inside a Ray
Data error); a user needs the cause and what to do. :func:`ray_failures` turns any error
raised by Ray while the block runs into a :class:`RayRunError` whose message is that line
(and a second one about what is kept). Ray's errors are recognised by the module of their
class, so nothing here imports ``ray``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["RayRunError", "explain", "is_ray_error", "ray_failures", "where"]

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
