"""The speed knobs in one place: how many CPUs to use, numba's ``njit`` (or a stand-in when
numba is missing), thread pools for compiled kernels that release the GIL, pauses of the
garbage collector, and start-up shortcuts for one-shot command-line processes. Domain modules
import these and hold no tuning of their own.

>>> usable_cpus() >= 1
True
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib.util import find_spec
from types import ModuleType
from typing import Any, TypeVar

from heta_eval import config

M = TypeVar("M")

__all__ = [
    "HAVE_NUMBA",
    "compile_parallel",
    "construct_valid",
    "import_numba",
    "njit",
    "paused_gc",
    "release_pages",
    "return_free_memory",
    "run_in_threads",
    "run_sync",
    "single_threaded_blas",
    "start_numba_without_blas",
    "usable_cpus",
]


#: Whether numba is installed; found without importing it (its import is slow).
HAVE_NUMBA = find_spec("numba") is not None


def import_numba() -> ModuleType:
    """``numba``, with its disk cache of compiled kernels under the cache root
    (:func:`heta_eval.config.numba_cache_dir`) rather than beside the package's source: a new
    process loads the kernels instead of compiling them, also from a read-only install
    (numba would otherwise fall back to a cache of its own, or to none). Every import of numba
    in the package goes through here."""
    folder = str(config.numba_cache_dir())
    # Read by numba when it is imported; a numba imported earlier is told directly (a folder
    # the user chose with NUMBA_CACHE_DIR is kept either way).
    os.environ.setdefault("NUMBA_CACHE_DIR", folder)
    import numba  # heavy: only when a kernel is needed

    if not numba.config.CACHE_DIR:
        numba.config.CACHE_DIR = folder
    _lock_numba_cache()
    return numba


def _lock_numba_cache() -> None:
    """Make numba's disk cache safe for processes that compile at the same time. numba numbers
    a kernel's compiled versions in an index file: two processes that each read the index
    before the other wrote it give their versions the same data file, so one version is lost
    and the index can name the other's machine code (another signature: a wrong result or a
    crash in every later process, until the cache is deleted). Each save now holds an
    exclusive ``flock`` on ``<index>.lock`` across reading the index, writing it and writing
    the data, and each load a shared one: parallel runs, Ray workers on one machine and test
    workers share one cache safely. Once per process, for every numba cache it uses; where
    there is no ``flock`` (Windows) or the lock file cannot be made, numba runs as it would."""
    try:
        import fcntl
    except ImportError:
        return
    from numba.core import caching

    cache_file = getattr(caching, "IndexDataCacheFile", None)
    if cache_file is None or getattr(cache_file, "_heta_eval_locked", False):
        return  # a numba laid out otherwise runs as it is; or guarded already

    def holding(method: Callable[..., M], mode: int) -> Callable[..., M]:
        @functools.wraps(method)
        def locked(self: Any, *args: Any) -> M:
            index = getattr(self, "_index_path", None)
            if not isinstance(index, str):  # a numba laid out otherwise: as it is
                return method(self, *args)
            try:
                descriptor = os.open(f"{index}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            except OSError:  # a folder numba cannot write to either
                return method(self, *args)
            try:
                with contextlib.suppress(OSError):  # a file system without locks: unguarded
                    fcntl.flock(descriptor, mode)
                return method(self, *args)
            finally:
                os.close(descriptor)  # closing releases the lock

        return locked

    cache_file.save = holding(cache_file.save, fcntl.LOCK_EX)
    cache_file.load = holding(cache_file.load, fcntl.LOCK_SH)
    cache_file._heta_eval_locked = True


def njit(*args: Any, **kwargs: Any) -> Any:
    """``numba.njit``, imported when the first module with a compiled kernel loads (numba is
    heavy: a process that needs no kernel never pays for it); without numba, a stand-in that
    leaves the function as plain Python.

    >>> @njit(nogil=True)
    ... def twice(x):
    ...     return 2 * x
    >>> twice(21)
    42
    """
    if HAVE_NUMBA:
        return import_numba().njit(*args, **kwargs)

    def wrap(function: Any) -> Any:
        return function

    return wrap if not args or not callable(args[0]) else args[0]


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
    from concurrent.futures import ThreadPoolExecutor  # imports logging: only when threads run

    with ThreadPoolExecutor(max_workers=usable_cpus()) as pool:
        return list(pool.map(lambda arguments: kernel(*arguments), argument_lists))


@contextmanager
def paused_gc(*, freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector while acyclic bookkeeping runs.

    With millions of results or parsed run lines alive, every full collection walks all of
    them although nothing allocated here forms a cycle.
    ``freeze=True`` (a one-shot command) then moves what exists to the permanent generation
    before collection resumes, so the objects of the run (numba's, mostly) are not walked
    twice more, on resuming and at exit. Collection resumes only if it was on before.

    >>> import gc
    >>> with paused_gc():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if freeze:
                gc.freeze()
            gc.enable()


def construct_valid(model: type[M], values: dict[str, Any], fields_set: frozenset[str]) -> M:
    """``model.model_construct(set(fields_set), **values)`` for a pydantic model without extra
    fields or private attributes, where ``values`` holds every field, already valid.

    pydantic's ``model_construct`` walks the model's fields in Python, slower than this and
    than validating, and MS MARCO's retrieval scores are 175k models (7k cases x 25 metrics).
    ``tests/models/test_models.py`` checks both build equal models.

    >>> from pydantic import BaseModel
    >>> class Point(BaseModel):
    ...     x: int
    ...     y: int = 0
    >>> point = construct_valid(Point, {"x": 1, "y": 0}, frozenset({"x"}))
    >>> point == Point.model_construct({"x"}, x=1), point.model_fields_set
    (True, {'x'})
    """
    instance = _new_object(model)
    _set(instance, "__dict__", values)
    _set(instance, "__pydantic_fields_set__", set(fields_set))
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance


_new_object = object.__new__
_set = object.__setattr__


def run_sync(coroutine: Any) -> Any:
    """Run a coroutine to completion, also from inside a running event loop (in a thread).

    The result is kept outside the task: Python 3.11's ``asyncio.run`` reprs the finished
    task when it restores the SIGINT handler (``signal.getsignal`` formats an error message
    with it), and the repr of a large report as the task's result costs seconds.

    >>> async def answer():
    ...     return 42
    >>> run_sync(answer())
    42
    """
    import asyncio  # not free to import: only when evaluators run
    import threading

    outcome: dict[str, Any] = {}

    async def keep() -> None:
        outcome["value"] = await coroutine

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(keep())
        return outcome["value"]

    def target() -> None:
        try:
            asyncio.run(keep())
        except BaseException as error:  # re-raised in the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=target, name="heta-eval-sync")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


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
    time on the critical path of a one-shot command, for BLAS no kernel here calls.
    With scipy.linalg hidden, numba records that it has no BLAS, in this process only. A
    no-op when numba is missing, already started, or scipy.linalg is already imported.
    """
    if not HAVE_NUMBA or "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    import_numba()
    from numba.core.registry import cpu_target  # heavy: this starts numba

    hook = _HideScipyLinalg()
    sys.meta_path.insert(0, hook)
    try:
        cpu_target.target_context.refresh()
    finally:
        sys.meta_path.remove(hook)


def single_threaded_blas() -> None:
    """Ask numpy's OpenBLAS for no worker threads: for one-shot command-line processes that
    never call BLAS (``heta-eval evaluate``, ``heta-eval trec_eval``), never for library users.

    OpenBLAS starts its worker threads when numpy is imported, and they spin for a while
    before they sleep, CPU time the command's own thread competes for. Read by OpenBLAS at
    numpy's import, so a no-op when numpy is already imported; a thread count the user set is
    kept.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def compile_parallel(kernel: Any) -> Any:
    """``kernel`` compiled with ``parallel=True`` (cached on disk, GIL released), or None
    without numba. The kernel's module keeps ``prange = range`` so the plain-Python function
    runs as written; compiling swaps in ``numba.prange`` there, which makes its outer loop
    parallel."""
    if not HAVE_NUMBA:
        return None
    numba = import_numba()
    kernel.__globals__["prange"] = numba.prange
    return numba.njit(parallel=True, cache=True, nogil=True)(kernel)


def release_pages(array: Any, start: int | None = None, stop: int | None = None) -> None:
    """Give back the resident pages of rows ``[start, stop)`` (default: all) of a
    memory-mapped array once they have been read: they stay in the system's file cache, so
    reading them again is cheap, but no longer count as this process's memory, which would
    otherwise grow to the whole file (an index or a corpus of vectors searched batch by batch).
    Arrays that are not memory-mapped are left alone.

    >>> import numpy as np
    >>> release_pages(np.zeros(3))  # in memory: nothing to give back
    """
    import mmap

    mapped = getattr(array, "_mmap", None)
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if mapped is None or advice is None or not array.flags.c_contiguous or array.size == 0:
        return
    row_bytes = array.strides[0] if array.ndim else array.itemsize
    start = 0 if start is None else start
    stop = len(array) if stop is None else stop
    begin = int(array.offset) + start * row_bytes
    first = begin - begin % mmap.PAGESIZE
    end = int(array.offset) + stop * row_bytes
    if end <= first:
        return
    with contextlib.suppress(OSError, ValueError):  # advice only: never worth failing for
        mapped.madvise(advice, first, end - first)


def return_free_memory() -> None:
    """Give back to the system the memory a finished step has freed: Python's allocator and
    glibc's ``malloc`` keep freed memory for reuse, so after a large build (BM25's analysis
    of a million passages) the process would stay at the build's size for the rest of the
    run. A no-op where the C library has no ``malloc_trim``.

    >>> return_free_memory()
    """
    import ctypes

    gc.collect()
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to ask
        return
    trim(0)
