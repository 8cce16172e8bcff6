"""Cross-encoder scores kept on disk, keyed by (model identity, query, document text): a rerun,
another depth or another first stage over the same pairs reuses them, and an interrupted
rerank keeps what it scored.

One SQLite file per identity (the model's fingerprint, route, shapes, score version) in the
knowledge-base cache folder, ``rerank-<key>.sqlite``: one row per pair, its key the first 16
bytes of the SHA-256 of query and text, its score the float32 value as a float64 (exact).
Scores are written as they come and committed every few seconds and when the scoring ends or
stops (a commit is never cut by a signal: :func:`heta_eval.interrupts.deferred`), so an
interrupted rerank loses at most the last few seconds of work; SQLite's own locking lets
two processes share the file.

>>> import tempfile
>>> scores = PairScores(Path(tempfile.mkdtemp()), {"model": "m"})
>>> keys = pair_keys([("q", "doc one"), ("q", "doc two")])
>>> scores.put(keys[:1], np.array([0.25], dtype=np.float32)); scores.commit()
>>> scores.get(keys)
{0: 0.25}
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval import interrupts
from heta_eval.cache.store import cache_key

__all__ = ["PairScores", "pair_keys"]

#: Seconds between two commits while scores come in.
COMMIT_EVERY = 2.0


def pair_keys(pairs: Sequence[tuple[str, str]]) -> list[bytes]:
    """Each pair's key: 16 bytes of the SHA-256 of its query and text (lengths first, so no
    two pairs share the bytes hashed)."""
    keys = []
    for query, text in pairs:
        q, t = query.encode("utf-8", "surrogatepass"), text.encode("utf-8", "surrogatepass")
        keys.append(hashlib.sha256(b"%d:%d:" % (len(q), len(t)) + q + t).digest()[:16])
    return keys


class PairScores:
    """The scores of one identity's pairs in ``folder``."""

    def __init__(self, folder: Path, identity: dict[str, Any]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"rerank-{cache_key(identity)}.sqlite"
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        with interrupts.deferred():
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (identity TEXT)")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS scores (key BLOB PRIMARY KEY, score REAL NOT NULL)"
                " WITHOUT ROWID"
            )
            if self._db.execute("SELECT COUNT(*) FROM meta").fetchone()[0] == 0:
                self._db.execute("INSERT INTO meta VALUES (?)", (json.dumps(identity),))
            self._db.commit()
        self._committed = time.monotonic()
        #: Scores written by this process (committed or pending).
        self.written = 0

    def get(self, keys: Sequence[bytes]) -> dict[int, float]:
        """``{position in keys: score}`` of the keys held."""
        found: dict[bytes, float] = {}
        for first in range(0, len(keys), 500):  # SQLite's limit on bound parameters
            chunk = list(keys[first : first + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key, score FROM scores WHERE key IN ({marks})", chunk)
            found.update((bytes(key), float(score)) for key, score in rows)
        return {i: found[key] for i, key in enumerate(keys) if key in found}

    def put(self, keys: Sequence[bytes], scores: np.ndarray) -> None:
        """Keep scores (committed every :data:`COMMIT_EVERY` seconds and by :meth:`commit`)."""
        with interrupts.deferred():
            self._db.executemany(
                "INSERT OR REPLACE INTO scores VALUES (?, ?)",
                zip(keys, np.asarray(scores, dtype=np.float32).tolist(), strict=True),
            )
            self.written += len(keys)
        if time.monotonic() - self._committed >= COMMIT_EVERY:
            self.commit()

    def commit(self) -> None:
        """Make what was put durable (a signal waits for it)."""
        with interrupts.deferred():
            self._db.commit()
        self._committed = time.monotonic()

    def close(self) -> None:
        self.commit()
        self._db.close()
