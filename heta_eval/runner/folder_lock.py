"""One writer per results folder: the folder's lock, who holds it and what it is doing.

A run holds ``<folder>/run.lock`` (``fcntl.flock``, exclusive) for its whole life, from before
it reads what the folder holds until its last file is written. The operating system frees
the lock when the holder's process ends, however it ends (Ctrl-C, SIGTERM, SIGKILL). The
holder writes into the lock file, as one JSON line, who it is (pid, host, command, modes,
start time) and what it is doing (``status``: its phase, ``querying keyword_search: 120 of
300``), rewritten at each phase and at most once a second while queries run. A second run
into the folder waits for the first, saying once who holds it and what it is doing (and
again every :data:`SAY_EVERY` seconds while the wait lasts), then reads what the first left
and resumes or extends it; with ``wait=False`` it refuses at once (:class:`FolderBusy`).

The holder removes the lock file when it is done (and the folder, when it made it and left
nothing in it). A process that took the lock checks that the file it locked is still the one
at the path, so a lock file removed while it waited is never held by two processes.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import socket
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from heta_eval import interrupts
from heta_eval.redaction import shown_command

__all__ = [
    "LOCK_FILE",
    "SAY_EVERY",
    "FolderBusy",
    "empty_folder",
    "folder_lock",
    "holder_line",
    "status",
]

logger = logging.getLogger(__name__)

LOCK_FILE = "run.lock"
#: Seconds between two reminders of a process waiting for a folder.
SAY_EVERY = 60.0
_POLL = 0.2
_STATUS_EVERY = 1.0


class FolderBusy(RuntimeError):
    """Another process holds the results folder and the caller would not wait."""


class _Held:
    """The lock this process holds on one folder (taken once, re-entered by nested users)."""

    def __init__(self, folder: Path, descriptor: int, made_folder: bool, record: dict) -> None:
        self.folder = folder
        self.descriptor = descriptor
        self.made_folder = made_folder
        self.record = record
        self.depth = 1
        self.written_at = 0.0

    def write(self, text: str, *, now: bool) -> None:
        moment = time.monotonic()
        if not now and moment - self.written_at < _STATUS_EVERY:
            return  # a query's progress: at most once a second
        self.written_at = moment
        self.record["status"] = text
        data = (json.dumps(self.record, ensure_ascii=True) + "\n").encode("ascii")
        with suppress(OSError):  # a full disk: the lock holds, only the news is missing
            # One write from offset 0, then the cut: a reader sees the new line first.
            os.pwrite(self.descriptor, data, 0)
            os.ftruncate(self.descriptor, len(data))


_HELD: dict[str, _Held] = {}


@contextmanager
def folder_lock(
    folder: str | Path, *, modes: Sequence[str] = (), wait: bool = True
) -> Iterator[None]:
    """Hold ``folder`` (made if missing) for the block. Re-entrant within a process: the
    command line takes it before ``--fresh`` empties the folder, the runner again inside."""
    folder = Path(folder)
    key = os.path.realpath(folder)
    held = _HELD.get(key)
    if held is not None:
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
        return
    made = not folder.exists()
    with interrupts.phase(f"waiting for {folder} (another run writes it)"):
        descriptor = _acquire(folder, wait)
    record = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": shown_command()[:500],
        "modes": list(modes),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    held = _HELD[key] = _Held(folder, descriptor, made, record)
    held.write("starting", now=True)
    try:
        yield
    finally:
        del _HELD[key]
        _release(held)


def status(text: str, *, now: bool = True) -> None:
    """Say what this process is doing, in the lock file of every folder it holds (``now=False``:
    a progress count, written at most once a second)."""
    for held in list(_HELD.values()):
        held.write(text, now=now)


def empty_folder(folder: str | Path) -> None:
    """Remove everything in ``folder`` but its lock (``--fresh``, holding the lock: removing
    the folder itself would let a second run lock a new file beside this one's)."""
    for child in Path(folder).iterdir():
        if child.name == LOCK_FILE:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def holder_line(folder: str | Path) -> str:
    """Who holds ``folder``'s lock and what it is doing, as the holder wrote it."""
    try:
        text = (Path(folder) / LOCK_FILE).read_text(encoding="utf-8", errors="replace")
        record: dict[str, Any] = json.loads(text.split("\n", 1)[0])
        who = (
            f"pid {record['pid']} on {record['host']} (`{record['command']}`), modes "
            f"{', '.join(record['modes']) or '?'}, started {record['started']}"
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "a process that has not said who it is yet"
    doing = record.get("status")
    return f"{who}; now {doing}" if isinstance(doing, str) and doing else who


def _acquire(folder: Path, wait: bool) -> int:
    """The descriptor of the lock file, locked; waits (out loud) or raises FolderBusy."""
    path = folder / LOCK_FILE
    waited_since: float | None = None
    said = 0.0
    while True:
        folder.mkdir(parents=True, exist_ok=True)  # again: a holder may have removed it
        try:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:
            continue  # the folder went away between the two calls
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            line = holder_line(folder)
            if not wait:
                raise FolderBusy(
                    f"{folder} is in use by another run: {line}; wait for it (without "
                    "--no-wait) or choose another output folder"
                ) from None
            now = time.monotonic()
            if waited_since is None or now - said >= SAY_EVERY:
                again = "still " if waited_since is not None else ""
                logger.warning("%swaiting for %s: another run writes it: %s", again, folder, line)
                said = now
                waited_since = waited_since or now
            time.sleep(_POLL)  # short naps: Ctrl-C is acted on at once
            continue
        if _same_file(descriptor, path):
            if waited_since is not None:
                took = time.monotonic() - waited_since
                logger.info(
                    "%s is free after %.0f s of waiting; reading what the other run left",
                    folder,
                    took,
                )
            return descriptor
        os.close(descriptor)  # its holder removed that file as it let go: lock the new one


def _same_file(descriptor: int, path: Path) -> bool:
    try:
        here, there = os.fstat(descriptor), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _release(held: _Held) -> None:
    # Removed while still locked: a process that waits on this file sees it is gone.
    with suppress(OSError):
        os.unlink(held.folder / LOCK_FILE)
    os.close(held.descriptor)
    if held.made_folder:
        with suppress(OSError):  # not empty: results, or another run's lock
            held.folder.rmdir()
