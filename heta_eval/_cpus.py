"""How many CPUs this process may use: the one answer the thread pools of the compiled
kernels and the tokenizer share."""

from __future__ import annotations

import os

__all__ = ["usable_cpus"]


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the OS tells).

    >>> usable_cpus() >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
