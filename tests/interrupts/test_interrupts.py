"""Ctrl-C and SIGTERM on real `heta-eval run` processes, and two processes sharing a cache.

* SIGINT mid-encode ends the run at once, before its next batch, with status 130 and a
  message that says what is kept and how to resume; the rerun encodes only the passages that
  had not finished (counted in its summary) and its vectors equal an uninterrupted encode's.
* SIGTERM ends it the same way with status 143.
* A second process wanting the embeddings the first is encoding waits, and says for what,
  who holds them (pid, command) and how far the holder got.

No test measures how fast: the machine may be loaded. The encode is made slow on purpose
(``HETA_EVAL_ENCODE_BATCH_PAUSE``: a long pause after each batch) so that a run that waited
for the encode instead of ending would be seen keeping another batch; a process stuck where
only the watchdog or a second signal can end it is stuck for far longer than the test waits.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from heta_eval import interrupts

REPO = Path(__file__).resolve().parents[2]
PASSAGES = 40
#: Seconds the test waits for a process: generous, the machine may be loaded.
PATIENCE = 600.0
#: Seconds the encoder pauses after each batch in a run that is to be interrupted: far longer
#: than a signal takes to be acted on, so a run that ends before keeping its next batch ended
#: because of the signal.
SLOW_BATCH = 60.0


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A tiny BEIR folder: short passages (cheap to encode), three judged queries."""
    root = tmp_path / "tiny"
    (root / "qrels").mkdir(parents=True)
    topics = ["cats purr", "dogs bark", "birds sing", "fish swim", "bees buzz"]
    docs = [
        {"_id": f"d{i}", "title": "", "text": f"note {i}: {topics[i % 5]} at hour {i}"}
        for i in range(PASSAGES)
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [{"_id": f"q{i}", "text": topics[i]} for i in range(3)]
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    qrels = "".join(f"q{i}\td{i}\t1\n" for i in range(3))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    recipe = {"dense": {"batch_size": 2, "precision": "float32", "device": "cpu"}}
    (tmp_path / "recipe.json").write_text(json.dumps(recipe))
    return root


def start(dataset: Path, output: Path, cache: Path, *, pause: float) -> subprocess.Popen:
    env = {
        **os.environ,
        "HETA_EVAL_CACHE_DIR": str(cache),
        "PYTHONPATH": str(REPO),
        "HETA_EVAL_ENCODE_BATCH_PAUSE": str(pause),
    }
    args = [
        "run",
        "--dataset",
        "scifact",
        "--data-dir",
        str(dataset),
        "--modes",
        "vector_search",
        "--recipe",
        str(dataset.parent / "recipe.json"),
        "--output",
        str(output),
        "--timeout",
        "900",
    ]
    log = (output.parent / f"{output.name}.err").open("w")
    return subprocess.Popen(
        [sys.executable, "-m", "heta_eval", *args],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=log,
        text=True,
    )


def wait_for(condition, process: subprocess.Popen, timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, "the run ended before the moment the test waits for"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def kept_batches(cache: Path) -> set[Path]:
    return set((cache / "kb").glob("partial-dense-*/*.digests.npy"))


@pytest.mark.system
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_encode_ends_the_run_before_its_next_batch_and_the_rerun_resumes(
    dataset, tmp_path, signum
):
    cache = tmp_path / "cache"
    process = start(dataset, tmp_path / "out", cache, pause=SLOW_BATCH)
    try:
        wait_for(lambda: kept_batches(cache), process)
        before = kept_batches(cache)
        process.send_signal(signum)
        status = process.wait(timeout=PATIENCE)
    finally:
        process.kill()
    stderr = (tmp_path / "out.err").read_text()
    assert status == 128 + signum, stderr
    # Ended during the pause after a batch, not after the next batch (nor the whole encode).
    assert kept_batches(cache) == before, "the run kept encoding after the signal"
    name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    assert f"heta-eval: interrupted ({name}) while encoding {PASSAGES} passages" in stderr
    kept = re.search(rf"kept: (\d+) of {PASSAGES} passages encoded, in ", stderr)
    assert kept, stderr
    assert "to resume: run the same command again" in stderr
    done = int(kept.group(1))
    assert 0 < done < PASSAGES

    rerun = start(dataset, tmp_path / "out", cache, pause=0)
    assert rerun.wait(timeout=PATIENCE) == 0, (tmp_path / "out.err").read_text()
    build = json.loads((tmp_path / "out" / "summary.json").read_text())["build"]
    # Only the passages that had not finished were encoded.
    assert build["embeddings"] == f"built (reused {done} of {PASSAGES})"
    assert not list((cache / "kb").glob("partial-dense-*")), "kept batches outlive the entry"
    resumed = np.load(Path(build["embeddings_path"]) / "embeddings.npy")

    whole = start(dataset, tmp_path / "whole", tmp_path / "cache2", pause=0)
    assert whole.wait(timeout=PATIENCE) == 0, (tmp_path / "whole.err").read_text()
    build = json.loads((tmp_path / "whole" / "summary.json").read_text())["build"]
    assert build["embeddings"] == "built"
    # Other batch neighbours pad differently; the vectors agree to float32 rounding.
    np.testing.assert_allclose(
        resumed, np.load(Path(build["embeddings_path"]) / "embeddings.npy"), atol=1e-5
    )


@pytest.mark.system
def test_a_process_waiting_for_the_cache_says_who_holds_it_and_how_far_it_got(dataset, tmp_path):
    cache = tmp_path / "cache"
    first = start(dataset, tmp_path / "first", cache, pause=0.3)
    second = None
    try:
        wait_for(lambda: list((cache / "kb").glob("dense-*.lock.progress")), first)
        # The holder is held still (its lock stays held) until the second process has said
        # that it waits: however slowly the second starts, the first cannot finish first.
        first.send_signal(signal.SIGSTOP)
        second = start(dataset, tmp_path / "second", cache, pause=0)
        wait_for(lambda: "waiting for" in (tmp_path / "second.err").read_text(), second)
        first.send_signal(signal.SIGCONT)
        assert first.wait(timeout=PATIENCE) == 0, (tmp_path / "first.err").read_text()
        assert second.wait(timeout=PATIENCE) == 0, (tmp_path / "second.err").read_text()
    finally:
        for process in (first, second):
            if process is not None:
                process.kill()
    stderr = (tmp_path / "second.err").read_text()
    waiting = [line for line in stderr.splitlines() if line.startswith("waiting for")]
    assert waiting, stderr
    assert waiting[0].startswith(
        f"waiting for the passage embeddings (another process is building it): pid {first.pid} ("
    )
    assert "(`python -m heta_eval run --dataset scifact --data-dir " in waiting[0]
    assert re.search(rf"encoding: \d+ of {PASSAGES} passages encoded", waiting[0])
    second_build = json.loads((tmp_path / "second" / "summary.json").read_text())["build"]
    assert second_build["embeddings"] == "cache"  # waited for, never encoded twice
    assert not list((cache / "kb").glob("*.holder.json")), "the holder's files outlive the lock"


def test_the_message_names_the_phase_of_the_signal_and_what_each_phase_keeps():
    with interrupts.handled(hard=False), interrupts.phase("building the BM25 index"):
        interrupts.keep("test-a", lambda: "3 answered queries, in out/per_query.jsonl")
        interrupts.keep("test-b", lambda: None)  # nothing yet: not mentioned
        text = interrupts.message(interrupts.Interrupted(signal.SIGTERM))
    assert text.splitlines() == [
        "interrupted (SIGTERM) while building the BM25 index",
        "kept: 3 answered queries, in out/per_query.jsonl",
        "to resume: run the same command again; it continues from what is kept",
    ]
    assert interrupts.Interrupted(signal.SIGTERM).status == 143
    assert interrupts.Interrupted().status == 130
    assert isinstance(interrupts.Interrupted(), KeyboardInterrupt)  # caught where that is


STUCK = """
import sys, time
from heta_eval import interrupts
interrupts.GRACE = {grace}
with interrupts.handled(program="prog"):
    with interrupts.phase("doing something slow"):
        interrupts.keep("demo", lambda: "12 things, in /tmp/x")
        with interrupts.deferred():  # as native code that does not return for a while
            print("ready", flush=True)  # inside: a signal before this line is not deferred
            time.sleep(3600)
print("not ended", flush=True)
"""


@pytest.mark.parametrize("signals", [1, 2])
def test_the_watchdog_and_a_second_signal_end_a_process_stuck_in_native_code(signals):
    # With two signals the watchdog is put out of reach (an hour): only the second signal
    # can end the process within the test's patience.
    script = STUCK.format(grace=interrupts.GRACE if signals == 1 else 3600)
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=REPO,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout.readline() == "ready\n"
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        if signals == 2:
            # Signals sent together may arrive as one: send again until one is a second.
            deadline = time.monotonic() + PATIENCE
            while process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
                process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=PATIENCE)
        seconds = time.monotonic() - sent
    finally:
        process.kill()
    assert process.returncode == 130
    assert out == ""  # ended inside the block (an hour long), not after it
    assert err.splitlines() == [
        "prog: interrupted (Ctrl-C) while doing something slow",
        "prog: kept: 12 things, in /tmp/x",
        "prog: to resume: run the same command again; it continues from what is kept",
    ]
    if signals == 1:
        assert seconds >= interrupts.GRACE - 0.1  # the watchdog gave the block its grace


NATIVE = """
import hashlib
from heta_eval import interrupts
with interrupts.handled(program="prog"):
    with interrupts.phase("in native code"):
        print("ready", flush=True)
        # One long C call that never looks at signals (as a forward pass does); it lets other
        # threads run, as torch, ONNX Runtime and numpy do. Hours: far past the test's patience.
        hashlib.pbkdf2_hmac("sha256", b"x", b"y", 2_000_000_000)
print("not ended", flush=True)
"""


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_signal_is_heard_while_the_main_thread_is_in_native_code():
    process = subprocess.Popen(
        [sys.executable, "-c", NATIVE],
        cwd=REPO,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout.readline() == "ready\n"
        # In the C call once the process has burnt CPU since "ready" (printing takes none).
        ready = cpu_seconds(process.pid)
        wait_for(lambda: cpu_seconds(process.pid) > ready + 0.3, process)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=PATIENCE)
    finally:
        process.kill()
    assert process.returncode == 143
    assert err.splitlines()[0] == "prog: interrupted (SIGTERM) while in native code"
