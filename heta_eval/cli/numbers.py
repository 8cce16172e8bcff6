"""Every number an option takes, checked by one rule as the command line is read, before
any work: the value is a number of the option's kind (an integer where a count is meant),
finite, inside the option's range, and no larger than the work it implies can be done (a
resample count, a grid, the hits a run asks per query). A value outside is one line naming
the option, what it takes and what it got, and exit status 2; never a traceback, never a
run that starts and then fills the memory.

Each option's rule is a :class:`Number`, given where the option is declared
(:func:`add_number`); a comma-separated list of them (``--weights``) is read by
:func:`numbers`.

>>> RESAMPLES.read("--resamples", "99999999999999")
Traceback (most recent call last):
...
heta_eval.cli.CliError: --resamples must be an integer from 1 to 10,000,000 (more resamples \
resolve p-values no finer than 1e-7 does, at the cost of time and memory), got 99999999999999
>>> PROBABILITY.read("--alpha", "2")
Traceback (most recent call last):
...
heta_eval.cli.CliError: --alpha must be a number in (0, 1), got 2
>>> numbers("--weights", "0.3, 0.7", FINITE)
[0.3, 0.7]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from heta_eval.cli import CliError
from heta_eval.sizes import MAX_HITS, MAX_RESAMPLES, MAX_RRF_K, MAX_VALUES

__all__ = [
    "CHUNK",
    "CHUNK_OVERLAP",
    "CONCURRENCY",
    "COUNT",
    "CUTOFF",
    "DEPTH",
    "FINITE",
    "FOLDS",
    "HITS",
    "PROBABILITY",
    "REPEATS",
    "RERANK_DEPTH",
    "RESAMPLES",
    "RETRIES",
    "RRF_K",
    "SAMPLE",
    "SECONDS",
    "SEED",
    "SHARD",
    "STEP",
    "Number",
    "add_number",
    "at_most_values",
    "numbers",
]


@dataclass(frozen=True)
class Number:
    """What an option's number may be: ``kind`` (``int`` or ``float``), from ``low`` to
    ``high`` (an end excluded where ``*_open``), and why the high end is where it is (said
    with a refusal: the work a larger value would ask)."""

    kind: type
    low: float
    high: float
    low_open: bool = False
    high_open: bool = False
    why: str = ""

    def describe(self) -> str:
        if self.kind is int:
            if math.isinf(self.high):
                return f"an integer from {int(self.low):,} up"
            return f"an integer from {int(self.low):,} to {int(self.high):,}"
        if math.isinf(self.low) and math.isinf(self.high):
            return "a finite number"
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"a number in {left}{_shown(self.low)}, {_shown(self.high)}{right}"

    def holds(self, value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def read(self, option: str, text: str) -> Any:
        """The value of ``text``, or a :class:`~heta_eval.cli.CliError` saying what
        ``option`` takes."""
        try:
            value = int(text) if self.kind is int else float(text)
        except ValueError:
            value = None
        if value is None or not self.holds(value):
            why = f" ({self.why})" if self.why else ""
            raise CliError(f"{option} must be {self.describe()}{why}, got {text.strip()}")
        return value


def at_most_values(option: str, measures: int, queries: int = 1) -> None:
    """A :class:`~heta_eval.cli.CliError` when ``measures`` × ``queries`` values, each
    scored and kept, pass :data:`~heta_eval.sizes.MAX_VALUES` (checked on the option alone
    before anything is read, then with the queries read).

    >>> at_most_values("--k", 200_000, 300)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    heta_eval.cli.CliError: --k asks for 200,000 measures of 300 queries, 60,000,000 values; ...
    """
    if measures * queries > MAX_VALUES:
        of = f" of {queries:,} queries, {measures * queries:,} values" if queries > 1 else ""
        raise CliError(
            f"{option} asks for {measures:,} measures{of}; at most {MAX_VALUES:,} values, each "
            "scored and kept for every query: fewer cutoffs or measures"
        )


def _shown(bound: float) -> str:
    return f"{int(bound):,}" if bound == int(bound) and abs(bound) < 1e15 else f"{bound:g}"


class _Checked(argparse.Action):
    """Reads an option's text with its :class:`Number` as the command line is parsed."""

    def __init__(
        self, option_strings: Sequence[str], dest: str, *, rule: Number, **kwargs: Any
    ) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.rule = rule
        default = kwargs.get("default")
        if default is not None and not rule.holds(default):
            raise ValueError(f"{option_strings[0]}: default {default!r} outside its rule")

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, self.rule.read(option or self.dest, values))


def add_number(group: Any, *flags: str, rule: Number, **kwargs: Any) -> None:
    """``group.add_argument(*flags, ...)`` for a number read by ``rule``."""
    kwargs.setdefault("metavar", "N" if rule.kind is int else "X")
    group.add_argument(*flags, action=_Checked, rule=rule, **kwargs)


def numbers(option: str, text: str, rule: Number) -> list[Any]:
    """A comma-separated list of numbers, each read by ``rule``."""
    parts = [part.strip() for part in text.split(",")]
    if not text.strip() or "" in parts:
        raise CliError(f"{option} must be comma-separated numbers, got {text!r}")
    return [rule.read(option, part) for part in parts]


_INT64 = 2**63 - 1

#: Any finite number (a weight).
FINITE = Number(float, -math.inf, math.inf, low_open=True, high_open=True)
#: A probability strictly between 0 and 1 (a confidence level, a significance level).
PROBABILITY = Number(float, 0, 1, low_open=True, high_open=True)
#: A random seed (numpy's generators take 64 bits).
SEED = Number(int, 0, 2**64 - 1)
#: Resamples of a paired test or a bootstrap.
RESAMPLES = Number(
    int,
    1,
    MAX_RESAMPLES,
    why="more resamples resolve p-values no finer than 1e-7 does, at the cost of time and memory",
)
#: A count of things to list or retry (0 allowed).
COUNT = Number(int, 0, 1_000_000)
#: A rank cutoff, as every measure's (2**63 - 1: an int64).
CUTOFF = Number(int, 1, _INT64)
#: Documents a fused run keeps per query.
DEPTH = CUTOFF
#: The hits a run asks per query.
HITS = Number(
    int,
    1,
    MAX_HITS,
    why="the hits a run asks of the knowledge base per query, kept for every query",
)
#: First-stage results a cross-encoder rescores per query.
RERANK_DEPTH = Number(
    int,
    1,
    MAX_HITS,
    why="each is a (query, document) pair the cross-encoder scores, for every query",
)
#: Cross-validation folds.
FOLDS = Number(int, 2, 1_000_000)
#: rrf's k.
RRF_K = Number(
    float,
    0,
    MAX_RRF_K,
    why="beyond it 1 / (k + rank) no longer tells ranks "
    "apart in the float32 scores trec_eval ranks by",
)
#: wsum's weight step when tuning (the grid it makes is checked by the fusion's own rule).
STEP = Number(float, 0, 1, low_open=True)
#: Seconds to wait for something (a query, a judge call): up to a day.
SECONDS = Number(float, 0, 86_400, low_open=True, why="seconds, at most a day")
#: A chunk's size, and its overlap, in the recipe's unit.
CHUNK = Number(int, 1, 1_000_000_000)
CHUNK_OVERLAP = Number(int, 0, 1_000_000_000)
#: Judgments per case.
REPEATS = Number(int, 1, 100, why="each repeat is a paid call per case")
#: Chunks per embedding shard on Ray.
SHARD = Number(int, 1, 100_000_000)
#: Attempts after the first (a download).
RETRIES = Number(int, 0, 100)
#: Queries, or documents, of a sample of a dataset.
SAMPLE = Number(int, 1, 1_000_000_000)
#: Queries in flight at once.
CONCURRENCY = Number(int, 1, 1_000, why="each holds a connection and a file descriptor")
