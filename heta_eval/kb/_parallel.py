"""Compiling the keyword-search kernels with numba's parallel loops, when numba is there."""

from __future__ import annotations

from typing import Any


def compile_parallel(kernel: Any) -> Any:
    """``kernel`` compiled with ``parallel=True`` (cached on disk, GIL released), or None
    without numba. The kernel's module keeps ``prange = range`` so the plain-Python function
    runs as written; compiling swaps in ``numba.prange`` there, which makes its outer loop
    parallel."""
    try:
        import numba
    except ImportError:  # numba is optional (it comes with the bench extra's ranx)
        return None
    kernel.__globals__["prange"] = numba.prange
    return numba.njit(parallel=True, cache=True, nogil=True)(kernel)
