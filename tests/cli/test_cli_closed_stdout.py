"""A reader that closes the pipe early (``heta-eval ... | head``) ends the command quietly:
no traceback, no "Exception ignored" at exit, exit status 141 (a shell's status for SIGPIPE).
Real processes writing into real pipes whose reader is gone before the first write (with a
reader like ``head`` that leaves later, when the write fails depends on timing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from heta_eval.cli import CLOSED_STDOUT_STATUS

HETA_EVAL = [sys.executable, "-m", "heta_eval"]


def small_files(folder: Path) -> tuple[Path, Path]:
    """A qrels and a run file of 2 queries."""
    qrels, run = folder / "qrels.txt", folder / "run.trec"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    run.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d2 1 3.0 r\n")
    return qrels, run


def run_with_reader_gone(args: list[str]) -> subprocess.CompletedProcess:
    """The command writing into a pipe whose read end is already closed."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*HETA_EVAL, *args], stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=600
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("command", ["datasets list", "--help", "evaluate", "trec_eval"])
def test_every_kind_of_command_ends_quietly_when_its_reader_is_gone(command, tmp_path):
    qrels, run = small_files(tmp_path)
    args = {
        "datasets list": ["datasets", "list"],
        "--help": ["--help"],
        "evaluate": ["evaluate", "--run", str(run), "--qrels", str(qrels)],
        "trec_eval": ["trec_eval", "-q", str(qrels), str(run)],
    }[command]
    done = run_with_reader_gone(args)
    assert done.stderr == ""
    # argparse swallows the write error of its own help text (and so ends with 0).
    assert done.returncode == (0 if command == "--help" else CLOSED_STDOUT_STATUS)
    assert CLOSED_STDOUT_STATUS == 141


def test_an_open_pipe_gets_everything_and_status_0(tmp_path):
    qrels, run = small_files(tmp_path)
    done = subprocess.run(
        [*HETA_EVAL, "trec_eval", "-m", "P.5", str(qrels), str(run)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.split() == ["P_5", "all", "0.2000"]


@pytest.mark.parametrize(
    "args",
    [
        ["trec_eval", "-q", "{qrels}", "{run}"],
        ["evaluate", "--run", "{run}", "--qrels", "{qrels}", "--json", "--per-query"],
    ],
    ids=["trec_eval -q", "evaluate --json --per-query"],
)
def test_a_reader_that_leaves_after_one_line_gets_141(args, scifact_dir, scifact_run_file):
    """`heta-eval ... | head -1` with hundreds of kilobytes to write: the writer is still
    writing when head leaves, as a shell pipeline has it."""
    words = [a.format(qrels=scifact_dir / "qrels" / "test.tsv", run=scifact_run_file) for a in args]
    command = " ".join([*HETA_EVAL, *words]) + " | head -1; exit ${PIPESTATUS[0]}"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == CLOSED_STDOUT_STATUS, done.stderr
    assert done.stderr == "" and len(done.stdout.splitlines()) == 1
