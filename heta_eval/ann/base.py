"""What every approximate index gives: search many query vectors at once, and say what it is.

An index is built over the vectors as the exact search scores them (inner product; under
cosine the rows are divided by their lengths first, :func:`scored_rows`), so its scores are
the exact search's wherever it finds the same rows, up to float rounding.

>>> vectors = np.array([[3.0, 4.0], [0.0, 2.0]], np.float16)
>>> scored_rows(vectors, np.array([0.2, 0.5], np.float32)).tolist()
[[0.6000000238418579, 0.800000011920929], [0.0, 1.0]]
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any, Protocol

import numpy as np

from heta_eval.ann.spec import AnnSpec

__all__ = ["AnnError", "AnnIndex", "library", "scored_rows"]

_BLOCK_ROWS = 65_536


class AnnError(ValueError):
    """An index that cannot be built or searched as asked (a missing extra, a setting the
    data does not allow); the message is one line naming the index."""


class AnnIndex(Protocol):
    """An index built over a corpus's vectors.

    ``search(queries, k)`` gives ``(rows, scores)``, both ``(len(queries), k)``: corpus rows
    (int64) best first, and their inner products (float32); a query the index finds fewer
    than ``k`` rows for has ``-1`` rows (score ``-inf``) at its end. ``record`` says what was
    built: library, version, index class, the settings in force (defaults included), build
    seconds."""

    spec: AnnSpec
    record: dict[str, Any]

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def close(self) -> None: ...


def scored_rows(embeddings: np.ndarray, row_scale: np.ndarray | None) -> np.ndarray:
    """``embeddings`` as a float32 array (read a block at a time from a memory map), each row
    multiplied by ``row_scale`` where given (inverse lengths: cosine)."""
    out = np.empty(embeddings.shape, dtype=np.float32)
    for start in range(0, len(embeddings), _BLOCK_ROWS):
        block = np.asarray(embeddings[start : start + _BLOCK_ROWS], dtype=np.float32)
        if row_scale is not None:
            block = block * row_scale[start : start + len(block), None]
        out[start : start + len(block)] = block
    return out


def library(module: str, spec: AnnSpec) -> Any:
    """Import ``module`` for ``spec``'s index, or an :class:`AnnError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise AnnError(
            f"{spec.kind} needs {module}, which is not installed: "
            f"pip install 'heta-eval[{spec.extra}]'"
        ) from None


def version(distribution: str) -> str:
    """The installed version of ``distribution`` (``unknown`` where it has no metadata)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def padded(
    rows: list[np.ndarray], scores: list[np.ndarray], k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-query hits of uneven length as ``(m, k)`` arrays, ``-1`` / ``-inf`` past the end."""
    out_rows = np.full((len(rows), k), -1, dtype=np.int64)
    out_scores = np.full((len(rows), k), -np.inf, dtype=np.float32)
    for i, (r, s) in enumerate(zip(rows, scores, strict=True)):
        out_rows[i, : len(r)] = r[:k]
        out_scores[i, : len(s)] = s[:k]
    return out_rows, out_scores
