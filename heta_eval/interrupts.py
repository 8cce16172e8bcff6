"""Ctrl-C and SIGTERM: stop within two seconds, keep finished work, say what is kept.

Inside :func:`handled` (the command line wraps every command in it) the first SIGINT or
SIGTERM raises :class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread at once,
wherever the program is: between two batches of an encode, while building an index, while
queries run. What finished is already on disk (each phase writes its work as it goes), and
each phase says what it keeps through :func:`keep`; :func:`report` prints that and how to
resume, and gives the exit status, 128 + the signal's number (130 for Ctrl-C, 143 for
SIGTERM), as a shell reports a process the signal ended.

Where the program sits in native code that does not return to Python soon, a watchdog ends
the process :data:`GRACE` seconds after the signal with the same message and status; a
second signal ends it at once. Writes that must not be cut halfway run inside
:func:`deferred`: a signal arriving there is raised when the block ends.

>>> with handled(hard=False), phase("encoding 3 passages"):
...     keep("demo", lambda: "2 of 3 passages encoded")
...     print(message(Interrupted(2)))
interrupted (Ctrl-C) while encoding 3 passages
kept: 2 of 3 passages encoded
to resume: run the same command again; it continues from what is kept
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

__all__ = [
    "GRACE",
    "Interrupted",
    "check",
    "deferred",
    "handled",
    "keep",
    "message",
    "phase",
    "reclaim",
    "report",
    "unfinished",
]

#: Seconds between the first signal and the watchdog ending the process (the promise is 2 s;
#: the rest is for a loaded machine to schedule the exit).
GRACE = 1.0

_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


class Interrupted(KeyboardInterrupt):
    """The user stopped the program (Ctrl-C or SIGTERM); :attr:`status` is the exit status."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(_NAMES.get(signum, f"signal {signum}"))
        self.signum = signum

    @property
    def status(self) -> int:
        return 128 + self.signum


class _State:
    """What the handlers share: the signal received, the phases running, what is kept."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.signum: int | None = None
        self.hard = False  # the command line: a watchdog and a second signal end the process
        self.installed = 0
        self.deferring = 0
        self.phases: list[str] = []
        self.doing: str | None = None  # the phase running when the signal came
        self.kept: dict[str, tuple[Callable[[], str | None], bool]] = {}
        self.unfinished: set[str] = set()  # files half-written: removed at any exit
        self.reported = False
        self.handler: Callable[[int, Any], None] | None = None
        self.watching = False  # the watchdog runs


_STATE = _State()


@contextmanager
def phase(doing: str) -> Iterator[None]:
    """Name what the program is doing (``"encoding 5,183 passages"``) for the message."""
    _STATE.phases.append(doing)
    try:
        yield
    finally:
        with suppress(ValueError):
            _STATE.phases.remove(doing)


def keep(key: str, note: Callable[[], str | None] | None, *, resumes: bool = True) -> None:
    """Register (or with ``None`` drop) what a phase keeps: ``note()`` is asked only when the
    program is interrupted, and says in a few words what finished work is on disk and where
    (or returns None when there is nothing). ``resumes=False``: a rerun starts that work
    again rather than continuing it (an output file kept as it was)."""
    with _STATE.lock:
        if note is None:
            _STATE.kept.pop(key, None)
        else:
            _STATE.kept[key] = (note, resumes)


@contextmanager
def unfinished(path: str) -> Iterator[None]:
    """A file being written that must not outlive the process if a signal ends it inside
    the block: removed on the way out, by the watchdog and a second signal too (which end
    the process without unwinding the block)."""
    with _STATE.lock:
        _STATE.unfinished.add(path)
    try:
        yield
    finally:
        with _STATE.lock:
            _STATE.unfinished.discard(path)


def check() -> None:
    """Raise :class:`Interrupted` if a signal arrived (for loops outside the main thread)."""
    if _STATE.installed and _STATE.signum is not None:
        raise Interrupted(_STATE.signum)


@contextmanager
def deferred() -> Iterator[None]:
    """Finish the block before acting on a signal that arrives inside it (a short write that
    must not be cut halfway); in other threads this only marks the block."""
    main = threading.current_thread() is threading.main_thread()
    if main:
        _STATE.deferring += 1
    try:
        yield
    finally:
        if main:
            _STATE.deferring -= 1
    if main and _STATE.deferring == 0:
        check()


def message(error: BaseException | None = None) -> str:
    """What the user reads: what was interrupted, what is kept, how to resume."""
    signum = getattr(error, "signum", None) or _STATE.signum or signal.SIGINT
    doing = _STATE.doing or (_STATE.phases[-1] if _STATE.phases else None)
    head = f"interrupted ({_NAMES.get(signum, f'signal {signum}')})"
    lines = [f"{head} while {doing}" if doing else head]
    notes, resumes = [], False
    with _STATE.lock:
        for note, resumable in list(_STATE.kept.values()):
            try:
                text = note()
            except Exception:  # a note must never stand between the user and the exit
                text = None
            if text:
                notes.append(text)
                resumes = resumes or resumable
    if notes:
        lines.append("kept: " + "; ".join(notes))
        if resumes:
            lines.append("to resume: run the same command again; it continues from what is kept")
    else:
        lines.append("nothing had finished yet")
    return "\n".join(lines)


def report(error: BaseException, program: str = "heta-eval") -> int:
    """Print :func:`message` once (on stderr) and return the exit status to end with."""
    status = error.status if isinstance(error, Interrupted) else 128 + signal.SIGINT
    with _STATE.lock:
        if not _STATE.reported:
            _STATE.reported = True
            _write("".join(f"{program}: {line}\n" for line in message(error).splitlines()))
    return status


@contextmanager
def handled(*, hard: bool = True, program: str = "heta-eval") -> Iterator[None]:
    """Handle SIGINT and SIGTERM as described above while the block runs (main thread only;
    elsewhere, or when already handled, it changes nothing). ``hard=False`` (a library
    call, a notebook) leaves out the watchdog and the second signal's immediate exit."""
    if threading.current_thread() is not threading.main_thread() or _STATE.installed:
        yield
        return
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def handler(signum: int, frame: Any) -> None:
        _on_signal(signum, program)

    for number in previous:
        signal.signal(number, handler)
    _STATE.handler = handler
    _STATE.installed, _STATE.hard = 1, hard
    _STATE.signum, _STATE.doing, _STATE.reported = None, None, False
    _STATE.watching = False
    _STATE.kept.clear()  # notes an earlier interrupted block left behind
    stop_listening = _listen_natively(program) if hard else None
    try:
        yield
    except KeyboardInterrupt as error:
        if hard:  # the command line: end now, not after seconds of tearing modules down
            _exit(error if isinstance(error, Interrupted) else Interrupted(), program)
        raise
    finally:
        if stop_listening is not None:
            stop_listening()
        for number, old in previous.items():
            signal.signal(number, old)
        # The signal is spent: code run after the block (a notebook's next cell) starts clean.
        _STATE.installed, _STATE.handler, _STATE.signum = 0, None, None


def reclaim() -> None:
    """Take SIGINT and SIGTERM back from a library that set its own handlers (``ray.init``
    makes SIGTERM a plain ``sys.exit``); nothing happens outside :func:`handled`."""
    main = threading.current_thread() is threading.main_thread()
    if _STATE.installed and _STATE.handler is not None and main:
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, _STATE.handler)


def _on_signal(signum: int, program: str) -> None:
    first = _STATE.signum is None
    if not first and _STATE.hard:  # the second signal: the user means now
        _exit(Interrupted(signum), program, hooks=False)
    _STATE.signum = signum
    if first:
        _STATE.doing = _STATE.phases[-1] if _STATE.phases else None
    if first and _STATE.hard:
        _watch(signum, program)
    if _STATE.deferring == 0:
        raise Interrupted(signum)


def _listen_natively(program: str) -> Callable[[], None] | None:
    """Hear SIGINT and SIGTERM while the main thread sits in native code. Python runs a
    handler only between two steps of Python code, but the interpreter's C-level handler
    writes each signal's number to the wakeup descriptor at once: a thread reading it arms
    the watchdog (first signal) or ends the process (second). Returns the undo."""
    read, write = os.pipe()
    os.set_blocking(write, False)
    try:
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except (ValueError, OSError):
        os.close(read)
        os.close(write)
        return None

    def listen() -> None:
        heard = 0
        while data := _read(read):
            for signum in data:
                if signum in _NAMES:
                    heard += 1
                    if heard > 1:
                        _exit(Interrupted(signum), program, hooks=False)
                    _watch(signum, program)
        os.close(read)

    threading.Thread(target=listen, daemon=True, name="heta-signals").start()

    def stop() -> None:
        signal.set_wakeup_fd(previous)
        os.close(write)  # the listener reads the end and stops

    return stop


def _read(descriptor: int) -> bytes:
    try:
        return os.read(descriptor, 64)
    except OSError:
        return b""


def _watch(signum: int, program: str) -> None:
    """Start the watchdog once per block, from the handler or the native listener."""
    with _STATE.lock:
        if _STATE.watching:
            return
        _STATE.watching = True
        if _STATE.doing is None and _STATE.phases:
            _STATE.doing = _STATE.phases[-1]
    threading.Thread(
        target=_watchdog, args=(signum, program), daemon=True, name="heta-interrupt"
    ).start()


def _watchdog(signum: int, program: str) -> None:
    # Still alive GRACE seconds after the signal: native code that does not return, or a
    # slow shutdown. Finished work is on disk already; end here.
    time.sleep(GRACE)
    _exit(Interrupted(signum), program)


def _exit(error: Interrupted, program: str, *, hooks: bool = True) -> None:
    """Report, run the exit hooks (Ray stops the cluster it started), end: no waiting for
    worker threads, no garbage collection of the interpreter's modules (seconds for torch)."""
    status = report(error, program)
    with _STATE.lock:
        for path in list(_STATE.unfinished):
            with suppress(OSError):
                os.unlink(path)
    if hooks and threading.current_thread() is threading.main_thread():
        with suppress(Exception):
            atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


def _write(text: str) -> None:
    # os.write, not print: safe inside a signal handler and from the watchdog thread.
    with suppress(OSError):
        os.write(2, text.encode("utf-8", "replace"))
