"""Runs and qrels from pipes, FIFOs and standard input are read once, to their end: no data
lost at any buffer boundary, no reopening, and a large one still takes the compiled parser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from heta_eval.io.qrels import read_qrels
from heta_eval.io.run import read_run, read_run_columnar
from heta_eval.io.source import input_size, open_input
from heta_eval.providers.backends import COMPILED_MIN_BYTES, compiled_run_file

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")

BOUNDARY = 1 << 16  # the old readers' sniffing buffer


def run_text_ending_on(boundary: int, queries: int = 40) -> str:
    """A run of ``queries`` queries, larger than ``boundary``, with a line ending exactly at
    byte ``boundary``."""
    lines = [
        f"q{q} Q0 d{d} {d + 1} {1.0 / (d + 1):.6f} tag\n"
        for q in range(queries)
        for d in range(100)
    ]
    size = 0
    for i, line in enumerate(lines):
        if size + len(line) > boundary:
            pad = boundary - size  # widen the previous line's tag to end at the boundary
            lines[i - 1] = lines[i - 1][:-1] + "x" * pad + "\n"
            break
        size += len(line)
    data = "".join(lines).encode()
    assert len(data) > boundary and data[:boundary].endswith(b"\n")
    return data.decode()


def fifo_with(tmp_path: Path, name: str, data: bytes) -> tuple[Path, threading.Thread]:
    path = tmp_path / name
    os.mkfifo(path)

    def write() -> None:
        with path.open("wb") as handle:
            handle.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return path, writer


def test_a_fifo_run_loses_nothing_at_the_old_sniffing_boundary(tmp_path):
    text = run_text_ending_on(BOUNDARY)
    path, writer = fifo_with(tmp_path, "run", text.encode())
    assert input_size(path) is None  # sizing a FIFO does not read it
    run = read_run(path)
    writer.join(5)
    assert len(run) == 40 and sum(map(len, run.values())) == 4000
    regular = tmp_path / "run.trec"
    regular.write_text(text, encoding="utf-8")
    assert run == read_run(regular)


def test_fifo_qrels_and_json_runs(tmp_path):
    qrels, writer = fifo_with(tmp_path, "qrels", b"query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    assert read_qrels(qrels) == {"q1": {"d1": 1}}
    writer.join(5)
    run, writer = fifo_with(tmp_path, "run.json", json.dumps({"q1": {"d1": 2}}).encode())
    assert read_run(run) == {"q1": {"d1": 2.0}}
    writer.join(5)


def test_a_large_piped_run_takes_the_compiled_parser_from_memory(tmp_path):
    pytest.importorskip("numba")
    tag = "a-run-tag-long-enough-for-8-MiB"
    lines = [
        f"q{q} Q0 d{d} {d + 1} {100 - d * 0.5} {tag}\n" for q in range(1100) for d in range(200)
    ]
    data = "".join(lines).encode()
    assert len(data) >= COMPILED_MIN_BYTES
    path, writer = fifo_with(tmp_path, "run", data)
    source = open_input(path)
    writer.join(5)
    assert not source.regular_file and compiled_run_file(source)
    columnar = read_run_columnar(source)
    assert columnar is not None and columnar.rows == 220_000 and len(columnar.query_ids) == 1100
    assert read_run(source)["q7"]["d3"] == 98.5  # the same buffer, read again from memory


def _cli(args: list[str], stdin: bytes) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=600,
    )


def test_evaluate_reads_runs_from_stdin_and_fifos(tmp_path):
    text = run_text_ending_on(BOUNDARY)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{q % 7} 1\n" for q in range(40)), encoding="utf-8")
    regular = tmp_path / "run.trec"
    regular.write_text(text, encoding="utf-8")
    expected = _cli(["evaluate", "--run", str(regular), "--qrels", str(qrels), "--json"], b"")
    assert expected.returncode == 0, expected.stderr
    piped = _cli(["evaluate", "--run", "-", "--qrels", str(qrels), "--json"], text.encode())
    assert piped.returncode == 0, piped.stderr
    first, second = json.loads(expected.stdout), json.loads(piped.stdout)
    assert first["counts"] == second["counts"] and first["ndcg"] == second["ndcg"]
    fifo, writer = fifo_with(tmp_path, "fifo", text.encode())
    through_fifo = _cli(["evaluate", "--run", str(fifo), "--qrels", str(qrels), "--json"], b"")
    writer.join(5)
    assert through_fifo.returncode == 0, through_fifo.stderr
    assert json.loads(through_fifo.stdout)["ndcg"] == first["ndcg"]
    qrels_piped = _cli(
        ["evaluate", "--run", str(regular), "--qrels", "-", "--json"], qrels.read_bytes()
    )
    assert json.loads(qrels_piped.stdout)["ndcg"] == first["ndcg"]
    twice = _cli(["evaluate", "--run", "-", "--qrels", "-"], b"")
    assert twice.returncode == 2 and "standard input" in twice.stderr.decode()


def test_trec_eval_reads_qrels_and_run_from_stdin(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n", encoding="utf-8")
    run = b"q1 Q0 d2 1 0.9 demo\nq1 Q0 d1 2 0.5 demo\n"
    done = _cli(["trec_eval", "-m", "map", "-m", "runid", str(qrels), "-"], run)
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout == b"runid                 \tall\tdemo\nmap                   \tall\t0.5000\n"
    )
    done = _cli(["trec_eval", "-m", "map", "-", str(tmp_path / "nope")], qrels.read_bytes())
    assert done.returncode == 2 and b"nope" in done.stderr
