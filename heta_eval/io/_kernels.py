"""Compiled byte helpers shared by the run parser and the metric engine."""

from __future__ import annotations

import numpy as np

from heta_eval._runtime import njit


@njit(cache=True, nogil=True, inline="always")
def at(data, i):  # pragma: no cover - compiled
    """``data[i]`` for an index known to be non-negative. Indexed by a signed integer, numba
    adds a test for negative (from-the-end) indices to every access, which keeps LLVM from
    vectorizing and halves the speed of a byte-scanning loop; the unsigned index drops it."""
    return data[np.uint64(i)]


@njit(cache=True, inline="always")
def compare_bytes(data_a, a0, a1, data_b, b0, b1):  # pragma: no cover - compiled
    """strcmp on UTF-8 bytes (unsigned), shorter prefix first: code-point order."""
    la = a1 - a0
    lb = b1 - b0
    m = la if la < lb else lb
    for i in range(m):
        ca = data_a[a0 + i]
        cb = data_b[b0 + i]
        if ca != cb:
            return -1 if ca < cb else 1
    if la == lb:
        return 0
    return -1 if la < lb else 1
