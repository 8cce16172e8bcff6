"""A case pinned from trec_eval 9.0.8's binary (the corpora of
``tests/support/trec_eval_levels_corpus.py`` and ``tests/support/trec_eval_prefs_corpus.py``: its files,
``argv``, exit status and standard output) replayed through the drop-in's library path in
this process, and what differs."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from heta_eval.io.trec import TrecFormatError
from heta_eval.providers import backends
from heta_eval.trec_eval import evaluate_options, parse_options, report_lines
from heta_eval.trec_eval.options import TrecEvalUsageError
from support.trec_eval_refusals import case_key, pinned, reason

#: trec_eval 9.0.8's binary, for the live comparisons: ``$TREC_EVAL`` (``.ci/run`` sets it when it
#: builds one), else where a developer builds it by hand (docs/trec_eval.md).
BINARY = os.environ.get("TREC_EVAL", "/tmp/trec_eval-src/trec_eval")
#: Marks a live comparison: skipped, saying why, where no binary is built; failed where
#: ``$TREC_EVAL`` names one that does not run; counted in the suite's summary (tests/conftest.py).
needs_binary = pytest.mark.live_trec_eval

#: How a refusal where the binary printed begins (a test may accept some by design).
REFUSED = "refused what trec_eval prints"


def ours(argv: list[str], folder: Path) -> str:
    """The drop-in's standard output for ``argv`` on ``folder``'s ``qrels`` and ``run``."""
    options = parse_options([*argv, str(folder / "qrels"), str(folder / "run")])
    return "".join(f"{line}\n" for line in report_lines(options, evaluate_options(options)))


def mismatch(case: dict, folder: Path) -> str | None:
    """What differs between the drop-in's output for ``case`` and the binary's (None: the
    same bytes, or both refuse); ``case``'s files are written to ``folder`` first."""
    (folder / "qrels").write_text(case["qrels"], encoding="utf-8")
    (folder / "run").write_text(case["run"], encoding="utf-8")
    if "zscores" in case:
        (folder / "zscores").write_text(case["zscores"], encoding="utf-8")
    argv = [str(folder / w) if w == "zscores" else w for w in case["argv"]]
    try:
        text = ours(argv, folder)
    except (TrecEvalUsageError, TrecFormatError, ValueError) as error:
        return (
            refusal_problem(case, str(error)) if case["c_stdout"] is None else f"{REFUSED}: {error}"
        )
    if case["c_stdout"] is None:
        return f"printed where trec_eval fails (status {case['c_status']})"
    text = text.encode("utf-8").decode("latin-1")  # the binary's bytes are pinned as latin-1
    if text != case["c_stdout"]:
        mine, theirs = text.splitlines(), case["c_stdout"].splitlines()
        diff = [(a, b) for a, b in zip(mine, theirs, strict=False) if a != b][:3]
        return f"output differs ({len(mine)} / {len(theirs)} lines): {diff}"
    return None


def live_seed() -> int:
    """The seed of a live comparison against the binary: ``HETA_EVAL_LIVE_SEED`` to replay a
    failure, else a fresh one (each run draws new cases)."""
    value = os.environ.get("HETA_EVAL_LIVE_SEED")
    return int(value) if value else random.randrange(2**32)


@contextmanager
def reported_seed(seed: int) -> Iterator[None]:
    """A failure inside names the seed that replays it."""
    try:
        yield
    except AssertionError as failure:
        raise AssertionError(f"{failure}\n(replay with HETA_EVAL_LIVE_SEED={seed})") from None


REFUSALS = pinned()


def refusal_problem(case: dict, message: str) -> str | None:
    """What is wrong with refusing ``case`` with ``message`` (None: the reason pinned for it in
    ``tests/support/data/trec_eval_refusals.json``; a live case is only required to be refused)."""
    if "c_reason" in case:
        # A fresh case may hold several faults, and trec_eval may name another one first than
        # we do: a live case checks only that both refuse (the pinned cases pin the reason).
        return None
    expected = REFUSALS.get(case_key(case))
    if expected is None:
        return f"refusal not pinned (run tests/support/trec_eval_refusals.py): {message}"
    # With every run read into arrays a case with two faults may have the other named first.
    pinned_reason = expected["ours_arrays" if backends.COMPILED_MIN_BYTES == 0 else "ours"]
    if reason(message) != pinned_reason:
        return f"refused for another reason: {reason(message)!r}, pinned {pinned_reason!r}"
    return None


# A lookup trec_eval makes outside its zscore table: refused on purpose (it mostly crashes).
UNDEFINED = "undefined"


def options_mismatch(case: dict, folder: Path) -> str | None:
    """What differs from the binary's output (None: the same); a lookup past the end of the
    zscore table, refused on purpose, is marked ``UNDEFINED``."""
    problem = mismatch(case, folder)
    if problem and "past the end of its zscore table" in problem:
        return f"{UNDEFINED} (trec_eval did not crash this time): {problem}"
    return problem


# Where trec_eval 9.0.8 reads past the end of an array, this refuses, output or not.
_BY_DESIGN = "reading past its end"


def prefs_mismatch(case: dict, folder: Path) -> str | None:
    """What differs from the binary's output (None: the same, or a refusal by design)."""
    problem = mismatch(case, folder)
    return None if problem and _BY_DESIGN in problem else problem
