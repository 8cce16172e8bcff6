"""Ctrl-C and SIGTERM on real `heta-eval run` processes, and two processes sharing a cache.

* SIGINT mid-encode ends the run within 2 s with status 130 and a message that says what is
  kept and how to resume; the rerun encodes only the passages that had not finished (counted
  in its summary) and its vectors equal an uninterrupted encode's.
* SIGTERM ends it the same way with status 143.
* A second process wanting the embeddings the first is encoding waits, and says for what,
  who holds them (pid, command) and how far the holder got.

The encode is made slow on purpose (``HETA_EVAL_ENCODE_BATCH_PAUSE``, tiny batches) so that
the signal lands midway however loaded the machine is.
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

REPO = Path(__file__).resolve().parents[1]
PASSAGES = 40


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
    env = {**os.environ, "HETA_EVAL_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO),
           "HETA_EVAL_ENCODE_BATCH_PAUSE": str(pause)}  # fmt: skip
    args = ["run", "--dataset", "scifact", "--data-dir", str(dataset), "--modes", "vector_search",
            "--recipe", str(dataset.parent / "recipe.json"), "--output", str(output),
            "--timeout", "900"]  # fmt: skip
    log = (output.parent / f"{output.name}.err").open("w")
    return subprocess.Popen([sys.executable, "-m", "heta_eval", *args], env=env, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=log, text=True)  # fmt: skip


def wait_for(condition, process: subprocess.Popen, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, "the run ended before the moment the test waits for"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def kept_batches(cache: Path) -> int:
    return len(list((cache / "kb").glob("partial-dense-*/*.digests.npy")))


def stop(process: subprocess.Popen, signum: int) -> tuple[int, float]:
    sent = time.monotonic()
    process.send_signal(signum)
    status = process.wait(timeout=60)
    return status, time.monotonic() - sent


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_encode_ends_the_run_in_2s_and_the_rerun_resumes(dataset, tmp_path, signum):
    cache = tmp_path / "cache"
    process = start(dataset, tmp_path / "out", cache, pause=0.2)
    try:
        wait_for(lambda: kept_batches(cache) >= 1, process)
        status, seconds = stop(process, signum)
    finally:
        process.kill()
    stderr = (tmp_path / "out.err").read_text()
    assert status == 128 + signum, stderr
    assert seconds < 2.0, f"{seconds:.2f} s from the signal to the exit"
    name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    assert f"heta-eval: interrupted ({name}) while encoding {PASSAGES} passages" in stderr
    kept = re.search(rf"kept: (\d+) of {PASSAGES} passages encoded, in ", stderr)
    assert kept, stderr
    assert "to resume: run the same command again" in stderr
    done = int(kept.group(1))
    assert 0 < done < PASSAGES

    rerun = start(dataset, tmp_path / "out", cache, pause=0)
    assert rerun.wait(timeout=600) == 0, (tmp_path / "out.err").read_text()
    build = json.loads((tmp_path / "out" / "summary.json").read_text())["build"]
    # Only the passages that had not finished were encoded.
    assert build["embeddings"] == f"built (reused {done} of {PASSAGES})"
    assert not list((cache / "kb").glob("partial-dense-*")), "kept batches outlive the entry"
    resumed = np.load(Path(build["embeddings_path"]) / "embeddings.npy")

    whole = start(dataset, tmp_path / "whole", tmp_path / "cache2", pause=0)
    assert whole.wait(timeout=600) == 0, (tmp_path / "whole.err").read_text()
    build = json.loads((tmp_path / "whole" / "summary.json").read_text())["build"]
    assert build["embeddings"] == "built"
    # Other batch neighbours pad differently; the vectors agree to float32 rounding.
    np.testing.assert_allclose(
        resumed, np.load(Path(build["embeddings_path"]) / "embeddings.npy"), atol=1e-5
    )


def test_a_process_waiting_for_the_cache_says_who_holds_it_and_how_far_it_got(dataset, tmp_path):
    cache = tmp_path / "cache"
    first = start(dataset, tmp_path / "first", cache, pause=0.3)
    second = None
    try:
        wait_for(lambda: list((cache / "kb").glob("dense-*.lock.progress")), first)
        second = start(dataset, tmp_path / "second", cache, pause=0)
        assert first.wait(timeout=600) == 0, (tmp_path / "first.err").read_text()
        assert second.wait(timeout=600) == 0, (tmp_path / "second.err").read_text()
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
with interrupts.handled(program="prog"):
    with interrupts.phase("doing something slow"):
        interrupts.keep("demo", lambda: "12 things, in /tmp/x")
        with interrupts.deferred():  # as native code that does not return for a while
            print("ready", flush=True)  # inside: a signal before this line is not deferred
            time.sleep(30)
print("not ended", flush=True)
"""


@pytest.mark.parametrize("signals", [1, 2])
def test_the_watchdog_and_a_second_signal_end_a_process_stuck_in_native_code(signals):
    process = subprocess.Popen([sys.executable, "-c", STUCK], cwd=REPO, text=True,
                               env={**os.environ, "PYTHONPATH": str(REPO)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert process.stdout.readline() == "ready\n"
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        if signals == 2:
            time.sleep(0.05)
            process.send_signal(signal.SIGINT)  # the second: at once
        out, err = process.communicate(timeout=60)
        seconds = time.monotonic() - sent
    finally:
        process.kill()
    assert process.returncode == 130
    assert out == ""
    assert err.splitlines() == [
        "prog: interrupted (Ctrl-C) while doing something slow",
        "prog: kept: 12 things, in /tmp/x",
        "prog: to resume: run the same command again; it continues from what is kept",
    ]
    if signals == 1:
        assert interrupts.GRACE - 0.1 < seconds < 2.0  # the watchdog
    else:
        assert seconds < interrupts.GRACE - 0.2  # the second signal, not the watchdog


NATIVE = """
import hashlib
from heta_eval import interrupts
with interrupts.handled(program="prog"):
    with interrupts.phase("in native code"):
        print("ready", flush=True)
        # One long C call that never looks at signals (as a forward pass does); it lets other
        # threads run, as torch, ONNX Runtime and numpy do. Tens of seconds.
        hashlib.pbkdf2_hmac("sha256", b"x", b"y", 30_000_000)
print("not ended", flush=True)
"""


def test_a_signal_is_heard_while_the_main_thread_is_in_native_code():
    process = subprocess.Popen([sys.executable, "-c", NATIVE], cwd=REPO, text=True,
                               env={**os.environ, "PYTHONPATH": str(REPO)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert process.stdout.readline() == "ready\n"
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
        seconds = time.monotonic() - sent
    finally:
        process.kill()
    assert process.returncode == 143
    assert err.splitlines()[0] == "prog: interrupted (SIGTERM) while in native code"
    assert seconds < 2.0
