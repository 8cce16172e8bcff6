"""On-disk cache of built indexes and embeddings, keyed by recipe settings and corpus.

Entries are directories ``<root>/<kind>-<key>/`` written to a temporary directory and renamed
into place (atomic), under a file lock so concurrent builds of the same entry do the work
once. Arrays are stored as ``.npy`` without pickle.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval import config
from heta_eval.cache.lock import CacheLock
from heta_eval.models.corpus import corpus_fingerprint

__all__ = [
    "ArtifactCache",
    "cache_key",
    "corpus_fingerprint",
    "default_cache_dir",
    "load_array",
    "save_array",
]

_DONE = "COMPLETE"
# What a process waiting for another's build is told it waits for.
_WHAT = {
    "bm25": "the BM25 index",
    "dense": "the passage embeddings",
    "onnx-int8": "the int8 model",
}


def default_cache_dir() -> Path:
    """``$HETA_EVAL_CACHE_DIR`` or ``~/.cache/heta-eval/kb``.

    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"HETA_EVAL_CACHE_DIR": "/tmp/c"}):
    ...     default_cache_dir().as_posix()
    '/tmp/c/kb'
    """
    return config.cache_dir("kb")


def cache_key(*parts: Any) -> str:
    """A short stable hash of JSON-serializable parts.

    >>> cache_key({"a": 1}, "x") == cache_key({"a": 1}, "x")
    True
    """
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def save_array(path: Path, array: np.ndarray) -> None:
    """Save a numeric array as ``.npy`` without pickle."""
    np.save(path, np.ascontiguousarray(array), allow_pickle=False)


def load_array(path: Path) -> np.ndarray:
    """Load an ``.npy`` array, refusing pickled objects."""
    return np.load(path, allow_pickle=False)


class ArtifactCache:
    """Directories of cached artifacts under ``root``.

    >>> import tempfile
    >>> cache = ArtifactCache(tempfile.mkdtemp())
    >>> path, reused = cache.get_or_build("demo", "k1", lambda d: (d / "x.txt").write_text("1"))
    >>> reused, cache.get_or_build("demo", "k1", lambda d: None)[1]
    (False, True)
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def get_or_build(
        self, kind: str, key: str, build: Callable[[Path], Any], *, what: str | None = None
    ) -> tuple[Path, bool]:
        """The entry's directory and whether it was reused; ``build(tmpdir)`` fills a new one.

        A process that finds another building the same entry waits for it, and says so:
        what it waits for (``what``, else a name for ``kind``), who builds it, how far it got.
        """
        final = self.root / f"{kind}-{key}"
        if (final / _DONE).exists():
            return final, True
        self.root.mkdir(parents=True, exist_ok=True)
        what = what or _WHAT.get(kind, f"the cache entry {kind}-{key}")
        with CacheLock(self.root / f"{kind}-{key}.lock", what):
            # Another process may have finished it while we waited for the lock.
            if (final / _DONE).exists():
                return final, True
            tmp = self.root / f".tmp-{kind}-{key}-{uuid.uuid4().hex}"
            tmp.mkdir()
            try:
                build(tmp)
                (tmp / _DONE).write_text("ok\n")
                if final.exists():  # a half-written entry from a crashed run
                    shutil.rmtree(final)
                os.replace(tmp, final)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return final, False
