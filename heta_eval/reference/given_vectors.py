"""Vectors computed elsewhere (a GPU box, an embedding service), searched and scored here.

A ``.npy`` file holds one row per document, in the order of ``corpus.jsonl``'s lines (or per
query, in the order of ``queries.jsonl``'s lines), float16 or float32, and is read
memory-mapped: an 8.8M x 768 float16 matrix never has to fit in memory. What a run records of
it (:class:`VectorsFile`: file name, size, SHA-256, shape, type) is part of the recipe, so a
results folder made with one file refuses a rerun with another.

Before a vector is searched, the file is checked once, where it enters: the row count
against the corpus (or queries), the dimension against the other side, every value finite,
and, where cosine is asked, every vector's length (a zero vector has no cosine; vectors that
are not of unit length are scored by their cosine all the same, and the run says so).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "c.npy"
>>> np.save(path, np.array([[3.0, 4.0], [0.0, 1.0]], dtype=np.float16))
>>> described = VectorsFile.describe(path)
>>> described.rows, described.dimension, described.dtype
(2, 2, 'float16')
>>> checked = check_vectors(described.open(), described, expected_rows=2, cosine=True)
>>> checked.row_scale.tolist()
[0.20000000298023224, 1.0]
>>> print(checked.warnings[0])
c.npy: 1 of 2 vectors are not of unit length (lengths 1 to 5); scored by their cosine, as asked
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

__all__ = ["CheckedVectors", "VectorsError", "VectorsFile", "check_vectors"]

#: Rows read at a time when a file is checked or hashed.
_BLOCK_ROWS = 65_536
#: How far from 1 a vector's length may be and still count as of unit length (float16 rounds
#: a unit vector's length by up to about 1e-3).
UNIT_TOLERANCE = 1e-2


class VectorsError(ValueError):
    """Vectors that cannot be searched as given; the message names the file and what is
    wrong, in one line."""


class VectorsFile(BaseModel):
    """A ``.npy`` file of vectors as a run records it: where it is, its size and content
    hash (a rerun with other vectors is another run), its shape and type."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    bytes: int
    sha256: str
    rows: int
    dimension: int
    dtype: Literal["float16", "float32"]

    @property
    def name(self) -> str:
        return Path(self.path).name

    @classmethod
    def describe(cls, path: str | os.PathLike[str], *, progress: bool = False) -> VectorsFile:
        """Read ``path``'s header and hash its content (``progress``: a bar with rate and ETA
        on stderr; 8.8M x 768 float16 vectors are 13.5 GB); a file that is not a 2-D float16
        or float32 ``.npy`` in row order is a :class:`VectorsError`."""
        from tqdm.auto import tqdm

        source = Path(path)
        matrix = _mapped(source)
        digest = hashlib.sha256()
        size = source.stat().st_size
        with (
            open(source, "rb") as handle,
            tqdm(
                total=size,
                desc=f"hashing {source.name}",
                unit="B",
                unit_scale=True,
                disable=not progress or size < 1 << 30,
                dynamic_ncols=True,
            ) as bar,
        ):
            for block in iter(lambda: handle.read(1 << 24), b""):
                digest.update(block)
                bar.update(len(block))
        return cls(
            path=str(source.resolve()),
            bytes=source.stat().st_size,
            sha256=digest.hexdigest(),
            rows=int(matrix.shape[0]),
            dimension=int(matrix.shape[1]),
            dtype="float16" if matrix.dtype.itemsize == 2 else "float32",
        )

    def open(self) -> np.ndarray:
        """The vectors, memory-mapped, after checking the file is still the one described
        (its size and shape; its content was hashed when described)."""
        source = Path(self.path)
        if not source.is_file():
            raise VectorsError(f"{self.path}: the vectors file is gone")
        matrix = _mapped(source)
        if source.stat().st_size != self.bytes or matrix.shape != (self.rows, self.dimension):
            raise VectorsError(f"{self.path}: changed since the run recorded it; run again")
        return matrix


def _mapped(source: Path) -> np.ndarray:
    """``source`` as a read-only memory map, or a :class:`VectorsError` saying why not."""
    if not source.is_file():
        raise VectorsError(f"{source}: no such file")
    try:
        matrix = np.load(source, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise VectorsError(f"{source}: not a .npy array file ({first})") from None
    if matrix.ndim != 2:
        raise VectorsError(
            f"{source}: expected a 2-D array (one row per vector), got shape {matrix.shape}"
        )
    if matrix.dtype.kind != "f" or matrix.dtype.itemsize not in (2, 4):
        raise VectorsError(f"{source}: expected float16 or float32 vectors, got {matrix.dtype}")
    if not matrix.flags.c_contiguous:
        raise VectorsError(
            f"{source}: the array is in column (Fortran) order; save it with "
            "numpy.ascontiguousarray"
        )
    if matrix.shape[1] == 0:
        raise VectorsError(f"{source}: the vectors have no dimensions")
    return matrix


@dataclass
class CheckedVectors:
    """What a check found: ``row_scale`` (inverse lengths, where cosine is asked of
    vectors not all of unit length; else ``None``) and the warnings to say."""

    row_scale: np.ndarray | None = None
    warnings: list[str] = field(default_factory=list)


def check_vectors(
    matrix: np.ndarray,
    described: VectorsFile,
    *,
    expected_rows: int,
    what: str = "documents",
    source: str = "corpus.jsonl",
    dimension: int | None = None,
    cosine: bool = True,
) -> CheckedVectors:
    """Check ``matrix`` (``described``'s vectors) before it is searched: one row per line of
    ``source`` (``expected_rows`` ``what``), ``dimension`` when the other side fixes it,
    every value finite, and under ``cosine`` a non-zero length. A problem is a
    :class:`VectorsError` naming the file and the first row at fault."""
    name = described.name
    if len(matrix) != expected_rows:
        raise VectorsError(
            f"{name}: {len(matrix):,} vectors, but {source} has {expected_rows:,} {what} "
            f"(one vector per line of {source}, in its order)"
        )
    if dimension is not None and matrix.shape[1] != dimension:
        raise VectorsError(
            f"{name}: {matrix.shape[1]}-dimensional vectors, but the other side "
            f"has {dimension} dimensions"
        )
    lengths = np.empty(len(matrix), dtype=np.float32)
    for start in range(0, len(matrix), _BLOCK_ROWS):
        block = np.asarray(matrix[start : start + _BLOCK_ROWS], dtype=np.float32)
        finite = np.isfinite(block).all(axis=1)
        if not finite.all():
            row = start + int(np.flatnonzero(~finite)[0])
            bad = int((~finite).sum())
            raise VectorsError(
                f"{name}: row {row} (line {row + 1} of {source}) holds NaN or "
                f"infinity ({bad} such rows in this block)"
            )
        lengths[start : start + len(block)] = np.linalg.norm(block, axis=1)
    if not cosine:
        return CheckedVectors()
    zero = np.flatnonzero(lengths == 0)
    if len(zero):
        raise VectorsError(
            f"{name}: row {int(zero[0])} (line {int(zero[0]) + 1} of {source}) is "
            f"a zero vector, which has no cosine ({len(zero)} such rows); use "
            "--score-function dot"
        )
    off = np.abs(lengths - 1) > UNIT_TOLERANCE
    warnings = []
    if off.any():
        low, high = float(lengths.min()), float(lengths.max())
        warnings.append(
            f"{name}: {int(off.sum()):,} of {len(lengths):,} vectors are not of unit "
            f"length (lengths {low:.3g} to {high:.3g}); scored by their cosine, "
            "as asked"
        )
    return CheckedVectors((1 / lengths).astype(np.float32), warnings)
