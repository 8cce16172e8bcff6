"""Every output file is written whole: into a temporary file beside it, renamed onto it once
complete. A real ``heta-eval fuse`` is stopped by a real signal while it writes its run: the
earlier file is left as it was (byte for byte), no temporary file is left behind, and the
message says what was kept. The writer itself: an error halfway, a symbolic link, a device,
the file's mode."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from heta_eval import interrupts
from heta_eval.io.write import open_whole, whole_file, write_whole

REPO = Path(__file__).resolve().parents[2]
QUERIES, DEPTH = 3000, 100
#: Seconds the test waits for a process: generous, the machine may be loaded.
PATIENCE = 600.0


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    """Two runs of 3,000 queries: their fused run takes a moment to write."""
    root = tmp_path_factory.mktemp("runs")
    rng = np.random.default_rng(7)
    paths = []
    for name in ("bm25", "dense"):
        lines = []
        for q in range(QUERIES):
            docs = rng.choice(2000, DEPTH, replace=False)
            lines += [f"q{q} Q0 d{d} {r} {DEPTH - r}.5 {name}\n" for r, d in enumerate(docs, 1)]
        path = root / f"{name}.trec"
        path.write_text("".join(lines))
        paths.append(path)
    return paths


def fuse(runs: list[Path], out: Path, method: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [
        sys.executable,
        "-m",
        "heta_eval",
        "fuse",
        *map(str, runs),
        "--method",
        method,
        "-o",
        str(out),
    ]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def temporaries(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def stop_mid_write(process: subprocess.Popen, folder: Path, signum: int) -> tuple[int, str]:
    """Freeze ``process`` once its temporary file holds part of the run, then signal it."""
    deadline = time.monotonic() + PATIENCE
    while True:
        assert process.poll() is None, "the command ended before it wrote"
        assert time.monotonic() < deadline, "timed out"
        found = temporaries(folder)
        if found and found[0].stat().st_size > 0:
            process.send_signal(signal.SIGSTOP)
            if temporaries(folder):  # still writing: frozen halfway
                break
            process.send_signal(signal.SIGCONT)  # it had just finished: wait for the next one
            pytest.fail("the write ended before the signal; make the runs larger")
        time.sleep(0.002)
    assert temporaries(folder)[0].read_bytes().startswith(b"q0 Q0 ")  # part of a run
    process.send_signal(signum)
    process.send_signal(signal.SIGCONT)
    _, err = process.communicate(timeout=PATIENCE)
    return process.returncode, err


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_write_keeps_the_earlier_run_whole_and_says_so(runs, tmp_path, signum):
    out = tmp_path / "fused.trec"
    first = fuse(runs, out, "rrf")
    assert first.wait(timeout=PATIENCE) == 0, first.stderr.read()
    before = digest(out)
    assert out.read_text().count("\n") > QUERIES * DEPTH  # the whole fused run

    status, err = stop_mid_write(fuse(runs, out, "mnz"), tmp_path, signum)
    assert status == 128 + signum, err
    assert digest(out) == before, "the earlier run was changed"
    assert temporaries(tmp_path) == [], "a temporary file was left behind"
    name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    assert err.splitlines() == [
        f"heta-eval: interrupted ({name}) while writing {out}",
        f"heta-eval: kept: {out} as it was before (the new one was not finished)",
    ]
    # What is there reads as the whole earlier run.
    lines = out.read_text().splitlines()
    assert lines[-1].startswith(f"q{QUERIES - 1} ") and lines[0].startswith("q0 ")


def test_a_signal_mid_write_of_a_new_file_leaves_no_file(runs, tmp_path):
    out = tmp_path / "new.trec"
    status, err = stop_mid_write(fuse(runs, out, "rrf"), tmp_path, signal.SIGTERM)
    assert status == 143, err
    assert not out.exists() and temporaries(tmp_path) == []
    assert err.splitlines() == [
        f"heta-eval: interrupted (SIGTERM) while writing {out}",
        "heta-eval: nothing had finished yet",
    ]


# ------------------------------------------------------------------ the writer


def test_an_error_halfway_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    with pytest.raises(RuntimeError), open_whole(out) as handle:
        handle.write("new, half")
        raise RuntimeError("disk full")
    assert out.read_text() == "old\n" and sorted(tmp_path.iterdir()) == [out]
    write_whole(out, "new\n")
    assert out.read_text() == "new\n" and sorted(tmp_path.iterdir()) == [out]


def test_an_interrupt_in_the_block_leaves_the_old_file_and_a_note(tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    with interrupts.handled(hard=False):
        with pytest.raises(KeyboardInterrupt), whole_file(out) as temporary:
            temporary.write_text("half")
            raise interrupts.Interrupted(signal.SIGTERM)
        text = interrupts.message(interrupts.Interrupted(signal.SIGTERM))
    assert out.read_text() == "old\n" and sorted(tmp_path.iterdir()) == [out]
    assert text.splitlines()[1] == f"kept: {out} as it was before (the new one was not finished)"
    assert "to resume" not in text  # a rerun writes it again: nothing continues


def test_a_link_is_written_through_and_the_mode_is_kept(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_whole(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_device_is_written_in_place():
    write_whole("/dev/null", "anything")  # no temporary beside it in /dev, no rename onto it
    assert Path("/dev/null").exists() and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_standard_output_as_the_file_is_written_in_place(runs, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "heta_eval", "fuse", *map(str, runs), "-o", "/dev/stdout"],
        env=env,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("q0 Q0 ") and done.stdout.count("\n") > QUERIES * DEPTH
