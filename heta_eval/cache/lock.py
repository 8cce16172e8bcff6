"""The lock of one cache entry, which says who holds it and how far the holder got.

Two processes building the same index or the same embeddings build it once: the second waits
for the first. The holder writes beside the lock who it is (``<lock>.holder.json``: pid,
command, start time) and, as it goes, how far it got (``<lock>.progress``); the waiter prints
what it waits for, who holds it and that progress, when it starts waiting and then every
:data:`SAY_EVERY` seconds, so a wait is never silent. A holder that died leaves its files
behind; the operating system frees its lock, and the next process takes it and rewrites them.
"""

from __future__ import annotations

import json
import logging
import os
import time
from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from heta_eval.io.write import write_whole
from heta_eval.redaction import shown_command

__all__ = ["SAY_EVERY", "CacheLock", "holder_line", "progress"]

logger = logging.getLogger(__name__)

#: Seconds between two lines of a process waiting for a lock (at most; sooner on news).
SAY_EVERY = 10.0
_POLL = 0.5
_PROGRESS_EVERY = 1.0

_held: list[CacheLock] = []


class CacheLock:
    """``with CacheLock(path, "the BM25 index"):`` holds ``path``, waiting out loud."""

    def __init__(self, path: str | Path, what: str) -> None:
        self.path = Path(path)
        self.what = what
        self.holder = self.path.with_name(self.path.name + ".holder.json")
        self.progress_file = self.path.with_name(self.path.name + ".progress")
        self._lock = FileLock(str(self.path))
        self._last_progress = 0.0

    def __enter__(self) -> CacheLock:
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            self._wait()
        self.progress_file.unlink(missing_ok=True)  # a dead holder's last word
        record = {
            "pid": os.getpid(),
            "command": shown_command()[:500],
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        _write_atomic(self.holder, json.dumps(record) + "\n")
        _held.append(self)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self in _held:
            _held.remove(self)
        for path in (self.progress_file, self.holder):
            path.unlink(missing_ok=True)
        self._lock.release()

    def _wait(self) -> None:
        said, last = "", 0.0
        while True:
            line = f"waiting for {self.what} (another process is building it): {holder_line(self)}"
            now = time.monotonic()
            if (line != said and now - last >= 2.0) or now - last >= SAY_EVERY:
                logger.warning(line)
                said, last = line, now
            try:
                self._lock.acquire(timeout=_POLL)  # short polls: Ctrl-C is acted on at once
                return
            except Timeout:
                continue

    def report(self, text: str) -> None:
        """Write the holder's progress (at most once a second)."""
        now = time.monotonic()
        if now - self._last_progress >= _PROGRESS_EVERY:
            self._last_progress = now
            _write_atomic(self.progress_file, text + "\n")


def holder_line(lock: CacheLock) -> str:
    """Who holds ``lock`` and how far it got, as the holder wrote it."""
    try:
        record = json.loads(lock.holder.read_text(encoding="utf-8"))
        who = f"pid {record['pid']} (`{record['command']}`), started {record['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        who = "a process that has not said who it is"
    try:
        done = lock.progress_file.read_text(encoding="utf-8").strip()
    except OSError:
        done = ""
    return f"{who}; {done}" if done else who


def progress(text: str) -> None:
    """Tell processes waiting for the lock this process holds how far it got (no lock held:
    nothing happens)."""
    if _held:
        _held[-1].report(text)


def _write_atomic(path: Path, text: str) -> None:
    with suppress(OSError):  # a read-only cache: the lock still works, only the news is missing
        write_whole(path, text)
