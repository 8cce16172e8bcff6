"""Help, ``--version`` and usage errors answer at once: each is a fresh process that imports
none of the heavy modules (numba, torch, pyarrow, ray, ...) before it exits.

The import check is the deterministic one; the wall time of each process is measured too,
with a bound generous enough for a loaded 2-core machine (an idle one answers in about
0.2 s; numba alone takes 1-4 s to import).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import pytest

from heta_eval.cli import build_parser
from heta_eval.cli.run import ALL_MODES
from heta_eval.reference.knowledge_base import MODES

#: Modules a help or a usage error must not import (each costs 0.3 s to seconds).
HEAVY = (
    "numba",
    "torch",
    "pyarrow",
    "ray",
    "sentence_transformers",
    "pandas",
    "scipy",
    "numpy",
    "pydantic",
    "bm25s",
    "transformers",
    "onnxruntime",
    "openvino",
    "pytrec_eval",
)

# Runs the command line in-process, then prints which heavy modules it loaded, last.
DRIVER = """
import json, sys
from heta_eval.cli import main
sys.argv = ["heta-eval", *json.loads(sys.argv[1])]
try:
    status = main(sys.argv[1:])
except SystemExit as stop:
    status = stop.code
finally:
    loaded = sorted(m for m in {heavy} if m in sys.modules)
    print("\\nLOADED " + json.dumps(loaded), file=sys.stderr)
sys.exit(status)
""".replace("{heavy}", repr(HEAVY))


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple]:
    """Every command and sub-command path (``("datasets", "list")``) of ``parser``."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((*prefix, name))
                found.extend(_commands(sub, (*prefix, name)))
    return found


COMMANDS = _commands(build_parser())

#: Usage errors the commands find after parsing, each with words of its message.
USAGE_ERRORS = [
    (["trec_eval", "-Q"], "unknown option -Q"),
    (["trec_eval"], "expected 2 files"),
    (["trec_eval", "-m", "P.5"], "expected 2 files"),
    (["run"], "give either --dataset"),
    (["run", "--dataset", "scifact", "--modes", ","], "--modes is empty"),
    (["run", "--dataset", "scifact", "--modes", "bogus"], "unknown mode 'bogus'"),
    (["run", "--dataset", "scifact", "--k", "x"], "--k must be"),
    (["run", "--dataset", "scifact", "--top-k", "0"], "--top-k must be an integer from 1"),
    (["run", "--benchmark", "cases.jsonl"], "--benchmark needs --documents"),
    (
        ["run", "--dataset", "scifact", "--kb-url", "http://127.0.0.1:9/q", "--kb-header", "x"],
        "--kb-header takes",
    ),
    (
        ["sweep", "--datasets", "scifact", "--modes", "bogus", "--output", "out"],
        "unknown mode 'bogus'",
    ),
    (["compare", "--resamples", "0", "a", "b"], "--resamples must be an integer from 1"),
    (["compare", "a", "b", "--fail-if-worse", "ndcg@10>x"], "--fail-if-worse: 'ndcg@10>x'"),
    (["evaluate", "--run", "r", "--qrels", "q", "--per-query"], "--per-query goes with --json"),
]


def _answer(argv: list[str], tmp_path) -> tuple[int, str, str, list[str], float]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(argv)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    seconds = time.perf_counter() - started
    head, _, loaded = done.stderr.rpartition("\nLOADED ")
    return done.returncode, done.stdout, head, json.loads(loaded), seconds


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict[tuple[str, ...], tuple]:
    """Each help, version and usage error, answered by its own fresh process."""
    folder = tmp_path_factory.mktemp("cwd")
    cases = [("--version",), ("--help",), ("bogus-command",)]
    cases += [(*path, "--help") for path in COMMANDS]
    cases += [(*path, "--no-such-option") for path in COMMANDS]
    cases += [("trec_eval", "-v")]
    cases += [tuple(argv) for argv, _ in USAGE_ERRORS]
    return {case: _answer(list(case), folder) for case in cases}


def test_every_command_is_found():
    names = {path[0] for path in COMMANDS}
    assert {"run", "evaluate", "trec_eval", "compare", "report", "sweep", "check"} <= names
    assert ("datasets", "list") in COMMANDS


def test_help_loads_no_heavy_module(answers):
    for case in [("--help",), *((*path, "--help") for path in COMMANDS)]:
        status, out, err, loaded, _ = answers[case]
        assert status == 0, (case, err)
        assert "usage:" in out, case
        assert loaded == [], f"heta-eval {' '.join(case)} imported {loaded}"


def test_version_loads_no_heavy_module(answers):
    status, out, _, loaded, _ = answers[("--version",)]
    assert status == 0 and out.startswith("heta-eval ") and loaded == []
    status, _, err, loaded, _ = answers[("trec_eval", "-v")]
    assert status == 0 and "trec_eval version 9.0.8" in err and loaded == []


def test_an_unknown_option_of_every_command_loads_no_heavy_module(answers):
    for case in [("bogus-command",), *((*path, "--no-such-option") for path in COMMANDS)]:
        status, _, err, loaded, _ = answers[case]
        assert status == 2, (case, err)
        assert "error:" in err and "Traceback" not in err, (case, err)
        assert loaded == [], f"heta-eval {' '.join(case)} imported {loaded}"


@pytest.mark.parametrize(
    ("argv", "words"), USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS]
)
def test_a_usage_error_is_one_line_before_any_heavy_import(answers, argv, words):
    status, _, err, loaded, _ = answers[tuple(argv)]
    assert status == 2, err
    assert words in err and "Traceback" not in err, err
    assert err.strip().count("\n") == 0, err  # one line
    assert loaded == [], f"heta-eval {' '.join(argv)} imported {loaded}"


def test_they_answer_at_once(answers):
    # Generous for a loaded machine: idle, each takes about 0.2 s; a numba import alone
    # takes longer than this median bound.
    seconds = {" ".join(case): answer[4] for case, answer in answers.items()}
    assert statistics.median(seconds.values()) < 1.5, seconds


def test_the_cli_knows_the_reference_knowledge_bases_modes():
    # `run` and `sweep` check --modes against ALL_MODES without importing the knowledge base.
    assert ALL_MODES.split(",") == list(MODES)
