"""Embedding shards on disk: the plan that cuts a corpus into length-sorted shards, and the
folder in the artifact cache where finished shards wait until the whole corpus is encoded.

A shard is a fixed set of chunk indices (chunks sorted by text length, longest first, so
every batch pads little; see :func:`plan_shards`), saved as ``shard-NNNNN.npy`` once fully
encoded. An interrupted encode leaves its finished shards; the next one encodes only the
missing ones. The folder is keyed by what the vectors depend on (the texts and the encoder's
identity: model, route with its scheme, device kind, shapes, encoding version) and the shard
size.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval.cache.store import cache_key, load_array, save_array

__all__ = ["ShardStore", "plan_shards"]

_SHARD = re.compile(r"^shard-(\d{5,})\.npy$")


def plan_shards(texts: Sequence[str], shard_size: int, batch_size: int = 1) -> list[np.ndarray]:
    """Chunk indices of each shard: longest texts first, ``shard_size`` rounded up to a
    multiple of ``batch_size`` each.

    The order is the one :meth:`~heta_eval.encoding.dense.DenseEncoder.encode` sorts a corpus by
    (a stable ``np.argsort`` of minus the character lengths: equal lengths keep their order),
    so a shard's texts are of like length (on a GPU they fill the same length buckets). The
    vectors do not depend on it: a text's vector is its own (:mod:`heta_eval.encoding.shapes`).

    >>> [s.tolist() for s in plan_shards(["a", "ccc", "bb", "dddd", "e"], 2)]
    [[3, 1], [2, 0], [4]]
    >>> [len(s) for s in plan_shards(["x"] * 10, 3, batch_size=4)]
    [4, 4, 2]
    """
    if shard_size <= 0 or batch_size <= 0:
        raise ValueError(f"shard and batch sizes must be positive, got {shard_size}, {batch_size}")
    size = -(-shard_size // batch_size) * batch_size
    order = np.argsort([-len(text) for text in texts], kind="stable").astype(np.int64)
    return [order[i : i + size] for i in range(0, len(order), size)]


def texts_digest(texts: Sequence[str]) -> str:
    """SHA-256 of the texts, in order."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


class ShardStore:
    """The folder of finished shards of one encode.

    >>> import tempfile
    >>> identity = {"model": "m", "precision": "float32", "device": "cpu"}
    >>> store = ShardStore.for_encode(tempfile.mkdtemp(), ["x", "y"], identity, 1)
    >>> store.save(1, np.ones((1, 2), dtype=np.float32)); store.finished()
    {1}
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def for_encode(
        cls, root: str | Path, texts: Sequence[str], identity: Mapping[str, Any], shard_size: int
    ) -> ShardStore:
        """The store of one encode: ``identity`` is the encoder's
        (:meth:`~heta_eval.encoding.dense.DenseEncoder.identity`), which tells routes of one
        precision apart (OpenVINO's int8 from ONNX Runtime's)."""
        parts = ("dense-shards", dict(identity), shard_size, texts_digest(texts))
        return cls(Path(root) / f"shards-{cache_key(*parts)}")

    def path(self, shard: int) -> Path:
        return self.folder / f"shard-{shard:05d}.npy"

    def finished(self) -> set[int]:
        """Shards saved so far (a file is there only once fully written)."""
        if not self.folder.is_dir():
            return set()
        return {int(m.group(1)) for p in self.folder.iterdir() if (m := _SHARD.match(p.name))}

    def save(self, shard: int, vectors: np.ndarray) -> None:
        """Write a shard atomically: a killed process never leaves half a shard."""
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = self.folder / f".{uuid.uuid4().hex}.npy"
        save_array(temporary, vectors)
        os.replace(temporary, self.path(shard))

    def assemble(self, plan: Sequence[np.ndarray], total: int) -> np.ndarray:
        """The corpus matrix in chunk order, from every shard of ``plan``: written to
        ``matrix.npy`` one shard at a time and returned as a read-only memory map, so the
        driver never holds more than one shard's vectors."""
        missing = [s for s in range(len(plan)) if not self.path(s).exists()]
        if missing:
            raise RuntimeError(
                f"{self.folder}: {len(missing)} of {len(plan)} shards were never written "
                f"(first: {missing[0]}); rerun to encode them"
            )
        target = self.folder / "matrix.npy"
        matrix: np.ndarray | None = None
        for shard, rows in enumerate(plan):
            vectors = load_array(self.path(shard))
            if vectors.shape[0] != len(rows):
                raise ValueError(
                    f"{self.path(shard)}: {vectors.shape[0]} vectors for {len(rows)} chunks"
                )
            if matrix is None:
                matrix = np.lib.format.open_memmap(
                    target, mode="w+", dtype=np.float32, shape=(total, vectors.shape[1])
                )
            matrix[rows] = vectors
        assert matrix is not None
        matrix.flush()
        del matrix
        return np.load(target, mmap_mode="r", allow_pickle=False)

    def remove(self) -> None:
        """Drop the shards and the assembled matrix (a memory map of it stays readable
        where the system allows unlinking a mapped file, as POSIX does)."""
        for path in self.folder.glob("*.npy"):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self.folder.rmdir()
