"""The speed knobs in one place: how many CPUs to use, numba's ``njit`` (or a stand-in when
numba is missing), thread pools for compiled kernels that release the GIL, and start-up
shortcuts for one-shot command-line processes. Domain modules import these and hold no
tuning of their own.

>>> usable_cpus() >= 1
True
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

try:
    from numba import njit

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - numba is installed with the project
    HAVE_NUMBA = False

    def njit(*args, **kwargs):  # type: ignore[no-redef]
        def wrap(function):
            return function

        return wrap if not args or not callable(args[0]) else args[0]


__all__ = [
    "HAVE_NUMBA",
    "compile_parallel",
    "njit",
    "run_in_threads",
    "start_numba_without_blas",
    "usable_cpus",
]


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the OS tells): the one answer
    the thread pools of the compiled kernels and the tokenizer share."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


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
