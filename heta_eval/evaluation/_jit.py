"""numba's ``njit``, or a stand-in that leaves functions as they are when numba is missing
(then ``evaluate_run`` keeps using pytrec_eval)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._cpus import usable_cpus

try:
    from numba import njit

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - numba is installed with the project
    HAVE_NUMBA = False

    def njit(*args, **kwargs):  # type: ignore[no-redef]
        def wrap(function):
            return function

        return wrap if not args or not callable(args[0]) else args[0]


def run_in_threads(kernel: Callable[..., Any], argument_lists: Sequence[tuple]) -> list[Any]:
    """``[kernel(*arguments) for arguments in argument_lists]``, on a thread per core when
    there are several: for compiled kernels that release the GIL (``nogil=True``).

    >>> run_in_threads(max, [(1, 2), (4, 3)])
    [2, 4]
    """
    if len(argument_lists) == 1:
        return [kernel(*argument_lists[0])]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=usable_cpus()) as pool:
        return list(pool.map(lambda arguments: kernel(*arguments), argument_lists))


class _HideScipyLinalg:
    """An import hook under which ``scipy.linalg`` cannot be imported."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "scipy.linalg" or name.startswith("scipy.linalg."):
            raise ModuleNotFoundError(f"hidden while numba starts: {name}", name=name)


def start_numba_without_blas() -> None:
    """Start numba's CPU target without importing scipy.linalg: for one-shot command-line
    processes only (``heta-eval evaluate``), never for library users.

    numba's first compiled call loads every typing registry, and the one for numpy
    (``numba.np.arraymath``) imports scipy.linalg to learn whether ``np.dot`` can compile:
    about 0.16 s on the critical path of a one-shot command, for BLAS no kernel here calls.
    With scipy.linalg hidden, numba records that it has no BLAS, in this process only. A
    no-op when numba is missing, already started, or scipy.linalg is already imported.
    """
    if not HAVE_NUMBA or "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    from numba.core.registry import cpu_target

    hook = _HideScipyLinalg()
    sys.meta_path.insert(0, hook)
    try:
        cpu_target.target_context.refresh()
    finally:
        sys.meta_path.remove(hook)


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


@njit(cache=True)
def empty_field(data, delimiter):  # pragma: no cover - compiled
    """True when a one-delimiter text has an empty field: two delimiters in a row, or one
    at the start or end of a line."""
    previous = np.uint8(10)
    for i in range(len(data)):
        c = data[i]
        if c == delimiter and (previous == delimiter or previous == 10):
            return True
        if c == 10 and previous == delimiter:
            return True
        previous = c
    return previous == delimiter
