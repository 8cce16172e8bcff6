"""The finished batches of an encode that did not complete, kept for the rerun.

An encode writes its finished vectors as it goes to ``<cache>/partial-dense-<key>/``: the
encoder's identity (``meta.json``) and pairs of files ``<n>.vectors.npy`` and
``<n>.digests.npy`` (one SHA-256 prefix per text). The digests file is renamed into place
last, so a pair is whole once it exists. The folder is never a cache entry (another name, no
``COMPLETE`` marker): a rerun reuses its rows text by text, like rows of a complete entry of
the same identity, encodes the rest, and deletes it once the entry is complete.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval import interrupts
from heta_eval.cache.lock import progress
from heta_eval.cache.store import load_array, save_array

__all__ = ["PartialEmbeddings", "kept_rows"]


def kept_rows(root: Path, meta: dict[str, Any]) -> dict[bytes, tuple[Path, int]]:
    """``{digest: (vectors file, row)}`` over the kept batches of every unfinished encode
    with the same identity (``meta``); unreadable pairs are ignored, never trusted."""
    found: dict[bytes, tuple[Path, int]] = {}
    for entry in sorted(root.glob("partial-dense-*/meta.json")):
        try:
            if json.loads(entry.read_text("utf-8")) != meta:
                continue
        except (OSError, ValueError):
            continue
        for digests_file in sorted(entry.parent.glob("*.digests.npy")):
            vectors = digests_file.with_name(digests_file.name.replace(".digests", ".vectors"))
            try:
                digests = load_array(digests_file)
            except (OSError, ValueError):
                continue
            for row, digest in enumerate(digests.tolist()):
                found.setdefault(digest, (vectors, row))
    return found


class PartialEmbeddings:
    """Keeps finished batches of one encode: :meth:`add` them as they come, :meth:`flush`
    on the way out, :meth:`discard` once the complete entry is written.

    Batches are written every 2 s at first, then every 2% of the time the encode has run
    (at most once a minute), and whenever the encode stops early.
    """

    def __init__(
        self, root: Path, key: str, meta: dict[str, Any], digests: np.ndarray, earlier: int = 0
    ) -> None:
        self.folder = root / f"partial-dense-{key}"
        self.meta = meta
        self.digests = digests  # of the texts this encode encodes, in its order
        self.total = len(digests) + earlier
        self.kept = earlier  # rows kept before this encode started (reused ones)
        self._rows: list[np.ndarray] = []
        self._vectors: list[np.ndarray] = []
        self._started = self._flushed = time.monotonic()

    def add(self, rows: np.ndarray, vectors: np.ndarray) -> None:
        """One finished batch: its row numbers into the texts being encoded, its vectors."""
        self._rows.append(np.asarray(rows).copy())
        self._vectors.append(np.asarray(vectors, dtype=np.float32).copy())
        now = time.monotonic()
        if now - self._flushed >= min(60.0, max(2.0, 0.02 * (now - self._started))):
            self.flush()
        progress(f"encoding: {self.kept + self.pending:,} of {self.total:,} passages encoded")

    @property
    def pending(self) -> int:
        """Rows added but not written yet."""
        return sum(len(rows) for rows in self._rows)

    def flush(self) -> None:
        """Write the batches added since the last flush (a signal waits until it is done)."""
        if not self._rows:
            return
        with interrupts.deferred():
            rows = np.concatenate(self._rows)
            vectors = np.concatenate(self._vectors)
            self.folder.mkdir(parents=True, exist_ok=True)
            meta = self.folder / "meta.json"
            if not meta.exists():
                meta.write_text(json.dumps(self.meta) + "\n", encoding="utf-8")
            stem = f"{time.time_ns()}-{os.getpid()}"
            save_array(self.folder / f"{stem}.vectors.npy", vectors)
            tmp = self.folder / f".{stem}.digests.npy"
            save_array(tmp, self.digests[rows])
            os.replace(tmp, self.folder / f"{stem}.digests.npy")  # the pair is whole now
            self.kept += len(rows)
            self._rows, self._vectors = [], []
            self._flushed = time.monotonic()

    def note(self) -> str | None:
        """What :mod:`heta_eval.interrupts` says is kept (None before anything is)."""
        if not self.kept:
            return None
        return f"{self.kept:,} of {self.total:,} passages encoded, in {self.folder}"

    def discard(self) -> None:
        """Delete the kept batches (the complete entry holds them now)."""
        shutil.rmtree(self.folder, ignore_errors=True)
