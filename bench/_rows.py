"""Shared helpers of the KB and end-to-end benchmarks: timing, result rows, output."""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Wall seconds of one call, and its result."""
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def interleaved(
    ours: Callable[[], Any], peer: Callable[[], Any], repeats: int
) -> tuple[float, Any, float, Any]:
    """Median seconds of ``ours`` and ``peer``, alternated so that load from other jobs on a
    shared machine hits both alike; returns (ours_s, ours_result, peer_s, peer_result)."""
    ours_times, peer_times = [], []
    ours_result = peer_result = None
    for i in range(max(1, repeats)):
        # Alternate which goes first, so neither always runs on a warmer cache.
        order = [(ours, ours_times), (peer, peer_times)]
        for fn, times in order if i % 2 == 0 else order[::-1]:
            seconds, result = timed(fn)
            times.append(seconds)
            if fn is ours:
                ours_result = result
            else:
                peer_result = result
    return statistics.median(ours_times), ours_result, statistics.median(peer_times), peer_result


def row(
    target: str,
    *,
    peer: str | None,
    goal: str,
    ours_s: float | None = None,
    peer_s: float | None = None,
    units: float | None = None,
    ratio: float | None = None,
    met: bool | None = None,
    identical: bool | None = None,
    notes: str = "",
) -> dict[str, Any]:
    """One result row. With ``units`` (items processed), throughputs ``ours_qps``/``peer_qps``
    are added; ``ratio`` defaults to peer time / our time (>1: we are faster)."""
    out: dict[str, Any] = {"target": target}
    if ours_s is not None:
        out["ours_s"] = round(ours_s, 4)
    if peer is not None:
        out["peer"] = peer
    if peer_s is not None:
        out["peer_s"] = round(peer_s, 4)
    if units and ours_s:
        out["ours_qps"] = round(units / ours_s, 1)
        if peer_s:
            out["peer_qps"] = round(units / peer_s, 1)
    if ratio is None and ours_s and peer_s:
        ratio = peer_s / ours_s
    out["ratio"] = None if ratio is None else round(ratio, 3)
    out["goal"] = goal
    if met is None and ratio is not None and goal.startswith(">= "):
        met = ratio >= float(goal[3:])
    out["met"] = met
    out["identical"] = identical
    out["notes"] = notes
    return out


def emit(rows: list[dict[str, Any]], output: str | None) -> None:
    """Print the rows as JSON to stdout, or write them to ``output``."""
    text = json.dumps(rows, indent=2)
    if output:
        Path(output).write_text(text + "\n", encoding="utf-8")
    else:
        sys.stdout.write(text + "\n")


def log(message: str) -> None:
    """Progress goes to stderr: stdout is the JSON rows."""
    print(message, file=sys.stderr, flush=True)
