"""One writer per results folder, and modes that are plain names. Real `heta-eval run`
processes against a real HTTP service on loopback that holds every answer until the test
lets it go, so two runs overlap for as long as the test needs, however loaded the machine:

* a second run into a folder waits for the first, says which process holds it (pid, host,
  command, modes) and what it is doing, then resumes or extends what the first left: the
  folder's files agree and hold both runs' modes, and the service answers each (case, mode)
  once; ``--no-wait`` refuses in one line (exit 5); a holder ended by SIGTERM frees it;
* a run that stops before its first result (a service that does not answer) leaves no claim;
* a mode that is not a plain name is refused in one line before any query, nothing written.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from support.kb_fixtures import AnimalBenchmark, KeywordOverlapKB
from support.loopback import LoopbackService

from heta_eval.runner import BenchmarkRunner, RunConfigurationError
from heta_eval.runner.folder_lock import LOCK_FILE, FolderBusy, folder_lock, holder_line

REPO = Path(__file__).resolve().parents[2]
PATIENCE = 300.0
DOCS = {
    "paris": "Paris is the capital of France.",
    "rome": "Rome is the capital of Italy.",
    "berlin": "Berlin is the capital of Germany.",
}
PLACES = [("paris", "France"), ("rome", "Italy"), ("berlin", "Germany")]
CASES = [
    {"id": f"q{i}", "query": f"capital of {country}", "expected": {"relevance": {doc: 1}}}
    for i, (doc, country) in enumerate(PLACES)
]
SECRET = "s3cr3t-header-value"


class GatedService:
    """A knowledge base over HTTP that counts each (query, mode) asked and holds every answer
    until :meth:`release` (or answers at once once released)."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self.gate = threading.Event()
        self._lock = threading.Lock()
        self.service = LoopbackService(self._reply)
        self.url = self.service.url

    def _reply(self, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        asked = json.loads(body)
        with self._lock:
            self.calls[(asked["query"], asked["mode"])] += 1
        self.gate.wait(PATIENCE)
        country = asked["query"].split()[-1]
        ranked = sorted(DOCS, key=lambda d: country not in DOCS[d])
        results = [{"doc_id": d, "text": DOCS[d], "score": 3.0 - i} for i, d in enumerate(ranked)]
        return 200, json.dumps({"query": asked["query"], "results": results}).encode(), {}

    def release(self) -> None:
        self.gate.set()

    def close(self) -> None:
        self.release()
        self.service.close()


@pytest.fixture
def service():
    gated = GatedService()
    yield gated
    gated.close()


@pytest.fixture
def bench(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / f"{name}.txt").write_text(text, encoding="utf-8")
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    return cases, docs


def start(tmp_path: Path, name: str, url: str, modes: str, *extra: str) -> subprocess.Popen:
    args = [
        "run",
        "--benchmark",
        "cases.jsonl",
        "--documents",
        "docs",
        "--kb-url",
        url,
        "--kb-header",
        f"X-Key: {SECRET}",
        "--modes",
        modes,
        "--output",
        "out",
        "--quiet",
        *extra,
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    err = (tmp_path / f"{name}.err").open("w")
    return subprocess.Popen(
        [sys.executable, "-m", "heta_eval", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=err,
        text=True,
    )


def wait_for(condition, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert process.poll() is None, "the run ended before the moment the test waits for"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def asked(service: GatedService, mode: str) -> int:
    return sum(count for (_, m), count in service.calls.items() if m == mode)


def err(tmp_path: Path, name: str) -> str:
    return (tmp_path / f"{name}.err").read_text()


def first_holds_second_waits(tmp_path, service, first_modes, second_modes, *extra):
    """Start a run, hold it at its first query, start a second into the same folder and
    wait until it says it waits."""
    first = start(tmp_path, "first", service.url, first_modes)
    wait_for(lambda: asked(service, first_modes.split(",")[0]) > 0, first)
    second = start(tmp_path, "second", service.url, second_modes, *extra)
    return first, second


def finish(*processes: subprocess.Popen) -> list[int]:
    return [process.wait(timeout=PATIENCE) for process in processes]


def assert_folder_agrees(out: Path, modes: list[str]) -> None:
    """run.json, summary.json, per_query.jsonl and runs/ all hold every case of ``modes``."""
    assert json.loads((out / "run.json").read_text())["modes"] == modes
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["modes"]) == modes
    assert all(summary["modes"][m]["answered"] == len(CASES) for m in modes)
    records = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    assert Counter(r["mode"] for r in records) == {m: len(CASES) for m in modes}
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(f"{m}.trec" for m in modes)
    for mode in modes:
        lines = (out / "runs" / f"{mode}.trec").read_text().splitlines()
        assert {line.split()[0] for line in lines} == {c["id"] for c in CASES}
    assert not (out / LOCK_FILE).exists(), "the lock file outlives the run"


def test_a_second_run_with_other_modes_waits_then_extends_the_folder(tmp_path, bench, service):
    first, second = first_holds_second_waits(tmp_path, service, "alpha", "beta")
    try:
        wait_for(lambda: "waiting for out" in err(tmp_path, "second"), second)
        assert asked(service, "beta") == 0, "the second run queried while the first held it"
        service.release()
        assert finish(first, second) == [0, 0], err(tmp_path, "first") + err(tmp_path, "second")
    finally:
        first.kill(), second.kill()
    waiting = [line for line in err(tmp_path, "second").splitlines() if "waiting for" in line]
    assert len(waiting) == 1, waiting
    line = waiting[0]
    assert line.startswith(f"waiting for out: another run writes it: pid {first.pid} on ")
    assert "(`python -m heta_eval run --benchmark cases.jsonl" in line
    assert "modes alpha, started 20" in line and "now querying alpha: 0 of 3 cases" in line
    assert SECRET not in err(tmp_path, "second") and "--kb-header <hidden>" in line
    assert_folder_agrees(tmp_path / "out", ["alpha", "beta"])
    assert service.calls == {(c["query"], m): 1 for c in CASES for m in ("alpha", "beta")}


def test_two_identical_runs_query_the_service_once(tmp_path, bench, service):
    first, second = first_holds_second_waits(tmp_path, service, "alpha", "alpha")
    try:
        wait_for(lambda: "waiting for out" in err(tmp_path, "second"), second)
        service.release()
        assert finish(first, second) == [0, 0], err(tmp_path, "first") + err(tmp_path, "second")
    finally:
        first.kill(), second.kill()
    assert service.calls == {(c["query"], "alpha"): 1 for c in CASES}, "queried twice"
    assert_folder_agrees(tmp_path / "out", ["alpha"])


def test_no_wait_refuses_in_one_line_naming_the_holder(tmp_path, bench, service):
    first, second = first_holds_second_waits(tmp_path, service, "alpha", "beta", "--no-wait")
    try:
        assert second.wait(timeout=PATIENCE) == 5
        service.release()
        assert finish(first) == [0]
    finally:
        first.kill(), second.kill()
    lines = err(tmp_path, "second").strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        f"heta-eval run: error: out is in use by another run: pid {first.pid}"
    )
    assert "wait for it (without --no-wait) or choose another output folder" in lines[0]
    assert asked(service, "beta") == 0
    assert_folder_agrees(tmp_path / "out", ["alpha"])


def test_a_holder_ended_by_sigterm_frees_the_folder_for_the_waiting_run(tmp_path, bench, service):
    first, second = first_holds_second_waits(tmp_path, service, "alpha", "alpha")
    try:
        wait_for(lambda: "waiting for out" in err(tmp_path, "second"), second)
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=PATIENCE) == 143, err(tmp_path, "first")
        service.release()
        assert finish(second) == [0], err(tmp_path, "second")
    finally:
        first.kill(), second.kill()
    assert "is free after" in err(tmp_path, "second")
    assert_folder_agrees(tmp_path / "out", ["alpha"])


def test_ctrl_c_while_waiting_stops_the_waiting_run_at_once(tmp_path, bench, service):
    first, second = first_holds_second_waits(tmp_path, service, "alpha", "beta")
    try:
        wait_for(lambda: "waiting for out" in err(tmp_path, "second"), second)
        second.send_signal(signal.SIGINT)
        assert second.wait(timeout=PATIENCE) == 130
        service.release()
        assert finish(first) == [0], err(tmp_path, "first")
    finally:
        first.kill(), second.kill()
    said = err(tmp_path, "second")
    assert "interrupted (Ctrl-C) while waiting for out (another run writes it)" in said
    assert "Traceback" not in said and asked(service, "beta") == 0
    assert_folder_agrees(tmp_path / "out", ["alpha"])


def test_a_run_whose_service_does_not_answer_leaves_the_folder_to_the_corrected_url(
    tmp_path, bench, service
):
    closed = LoopbackService(lambda body, headers: (200, b"{}", {}))
    closed.close()  # nothing listens there now
    wrong = start(tmp_path, "wrong", closed.url, "alpha")
    assert wrong.wait(timeout=PATIENCE) == 2
    assert "is the service up?" in err(tmp_path, "wrong")
    assert not (tmp_path / "out").exists(), "a run that scored nothing left a claim"
    # A folder that already holds results: the failed run adds nothing to it either.
    service.release()
    assert finish(start(tmp_path, "right", service.url, "alpha")) == [0], err(tmp_path, "right")
    before = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir() if p.is_file()}
    again = start(tmp_path, "wrong2", closed.url, "beta")
    assert again.wait(timeout=PATIENCE) == 2
    after = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir() if p.is_file()}
    assert after == before
    assert_folder_agrees(tmp_path / "out", ["alpha"])


def test_a_folder_whose_run_answered_nothing_is_taken_by_the_corrected_url(
    tmp_path, bench, service
):
    broken = LoopbackService(lambda body, headers: (404, b'{"detail": "Not Found"}', {}))
    try:
        wrong = start(tmp_path, "wrong", broken.url, "alpha,beta")
        assert wrong.wait(timeout=PATIENCE) == 4, err(tmp_path, "wrong")
    finally:
        broken.close()
    assert json.loads((tmp_path / "out" / "run.json").read_text())["system"]["url"] == broken.url
    service.release()
    right = start(tmp_path, "right", service.url, "alpha")
    assert right.wait(timeout=PATIENCE) == 0, err(tmp_path, "right")
    assert "holds only failed queries of another run (changed: system (url " in err(
        tmp_path, "right"
    )
    assert_folder_agrees(tmp_path / "out", ["alpha"])  # the failed beta is gone with its run
    assert json.loads((tmp_path / "out" / "run.json").read_text())["system"]["url"] == service.url
    # Once it holds an answer, the folder is this run's: another URL is refused.
    again = start(tmp_path, "again", broken.url, "alpha")
    assert again.wait(timeout=PATIENCE) == 2
    assert "holds results of a different run (changed: system (url" in err(tmp_path, "again")


BAD_MODES = [
    "../../x",
    "a/b",
    "a b",
    ".hidden",
    "-x",
    "x..y",
    "tab\there",
    "crème",
    "a" * 101,
    "back\\slash",
    "new\nline",
]


@pytest.mark.parametrize("mode", BAD_MODES)
def test_a_mode_that_is_not_a_plain_name_is_refused_before_any_query(
    tmp_path, bench, service, mode
):
    service.release()
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    for path in bench:
        path.rename(work / path.name)
    before = sorted(p for p in tmp_path.rglob("*"))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "heta_eval",
            "run",
            "--benchmark",
            "cases.jsonl",
            "--documents",
            "docs",
            "--kb-url",
            service.url,
            "--modes",
            f"ok,{mode}",
            "--output",
            "out",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"heta-eval run: error: --modes: mode {mode!r} is not a plain")
    assert service.calls == {}
    assert sorted(p for p in tmp_path.rglob("*")) == before, "something was written"


@pytest.mark.parametrize("mode", ["../x", "a/b", "a b", "nul\x00", "\ud800", ""])
def test_the_library_refuses_the_same_modes_before_any_query(tmp_path, mode):
    log = tmp_path / "asked.log"
    with pytest.raises(RunConfigurationError, match=r"is not a plain name|query_modes is empty"):
        BenchmarkRunner(progress=False).run(
            benchmark=AnimalBenchmark(),
            knowledge_base=KeywordOverlapKB(log=log),
            query_modes=(mode,) if mode else (),
            output_dir=tmp_path / "out",
        )
    assert not log.exists() and not (tmp_path / "out").exists()
    assert not (tmp_path / "x.trec").exists()


def test_plain_service_modes_are_accepted(tmp_path, bench, service):
    service.release()
    modes = "bm25+rerank,v1.2,Hybrid-2,dense_e5"
    assert finish(start(tmp_path, "run", service.url, modes)) == [0], err(tmp_path, "run")
    assert_folder_agrees(tmp_path / "out", modes.split(","))


def test_the_lock_is_reentrant_in_one_process_and_refused_to_another_without_waiting(tmp_path):
    out = tmp_path / "out"
    with folder_lock(out, modes=["m"]):
        with folder_lock(out):  # the command line, then the runner inside it
            assert (out / LOCK_FILE).exists()
        assert (out / LOCK_FILE).exists(), "the inner block let go of the outer's lock"
        assert f"pid {os.getpid()} on " in holder_line(out)
        script = (
            "from heta_eval.runner.folder_lock import folder_lock, FolderBusy\n"
            f"try:\n    folder_lock({str(out)!r}, wait=False).__enter__()\n"
            "except FolderBusy as e:\n    print(e)\n"
        )
        other = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=PATIENCE,
        )
        assert f"is in use by another run: pid {os.getpid()} on " in other.stdout, other.stderr
    assert not out.exists(), "the folder the lock made, left empty, is removed"
    with pytest.raises(FolderBusy, match="never raised"), folder_lock(out):
        raise FolderBusy("never raised")  # the lock is let go on an error too
    assert not out.exists()
