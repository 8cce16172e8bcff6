"""Ray giving up, said in one line (heta_eval.scale.errors), on Ray's real exception classes;
and the same bad embedding model refused in one line by a local run.

The failures on a real cluster (a model the encoder actors cannot load, the cluster stopped
mid-encode) are in tests/scale/test_scale_ray.py."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time

import pytest
from support.ray_cluster import REPO, cluster_env

from heta_eval.scale import errors
from heta_eval.scale.errors import (
    PROBE_TIMEOUT,
    SLOW_FACTOR,
    ClusterWatch,
    RayRunError,
    explain,
    is_ray_error,
    listening,
    lost_after,
    probe,
    ray_failures,
)

exceptions = pytest.importorskip("ray.exceptions")

CONSTRUCTOR_TRACEBACK = """\
ray::MapWorker(MapBatches(ShardEncoder)).__init__() (pid=4242, ip=127.0.0.1)
  File "/repo/heta_eval/scale/encode.py", line 38, in __init__
    _ = self.encoder.runner
  File "/repo/heta_eval/encoding/dense.py", line 128, in _load
    raise ModelLoadError(f"cannot load the embedding model {model!r}: {first}") from error
heta_eval.encoding.dense.ModelLoadError: cannot load the embedding model '/no/model': Path /no/model not found"""


def task_error(cause: BaseException, traceback: str) -> BaseException:
    return exceptions.RayTaskError(
        "ShardEncoder.__init__",
        traceback,
        cause,
        proctitle="ray::MapWorker",
        pid=4242,
        ip="127.0.0.1",
    )


def test_an_actor_whose_constructor_raised_is_explained_by_that_exception():
    cause = RuntimeError("cannot load the embedding model '/no/model': Path /no/model not found")
    died = exceptions.ActorDiedError(task_error(cause, CONSTRUCTOR_TRACEBACK))
    assert died.actor_init_failed and len(str(died).splitlines()) > 3  # Ray's long message
    assert explain(died) == (
        "an actor could not start: ModelLoadError: cannot load the embedding model "
        "'/no/model': Path /no/model not found"
    )


def test_a_failed_task_is_explained_by_its_own_exception_not_rays_wrapper():
    cause = FileNotFoundError("Path /no/model not found")
    wrapped = task_error(cause, "Traceback\n  ...\nFileNotFoundError: Path /no/model not found")
    error = wrapped.as_instanceof_cause()  # what ray.get raises: RayTaskError(FileNotFoundError)
    assert is_ray_error(error) and isinstance(error, FileNotFoundError)
    assert explain(error) == "FileNotFoundError: Path /no/model not found"


def test_a_dead_actor_is_explained_by_the_first_line_of_rays_message():
    assert explain(exceptions.ActorDiedError()) == (
        "ActorDiedError: The actor died unexpectedly before finishing this task."
    )


def test_a_ray_error_becomes_one_line_naming_the_cluster_then_what_is_kept():
    with (
        pytest.raises(RayRunError) as caught,
        ray_failures("10.0.0.5:6379", "encoding the corpus", lambda: "3 shards are kept"),
    ):
        raise exceptions.ActorDiedError()
    assert str(caught.value).splitlines() == [
        "the Ray cluster at 10.0.0.5:6379 failed while encoding the corpus: ActorDiedError: "
        "The actor died unexpectedly before finishing this task.",
        "3 shards are kept",
    ]
    assert isinstance(caught.value.__cause__, exceptions.ActorDiedError)  # kept for debugging


def test_errors_that_are_not_rays_pass_through_unchanged():
    original = OSError("disk full")
    with pytest.raises(OSError) as caught, ray_failures("auto", "encoding the corpus"):
        raise original
    assert caught.value is original
    assert not is_ray_error(original)


def test_local_run_refuses_a_model_that_cannot_load_in_one_line(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "q1", "query": "cats", "expected": {"relevance": {"d1": 1}}}\n')
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "Cats purr."}\n')
    recipe = tmp_path / "recipe.json"
    missing = tmp_path / "no-such-model"
    recipe.write_text(json.dumps({"dense": {"model": str(missing)}}))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "heta_eval",
            "run",
            "--benchmark",
            str(cases),
            "--documents",
            str(docs),
            "--modes",
            "vector_search",
            "--recipe",
            str(recipe),
            "--quiet",
            "--output",
            str(tmp_path / "out"),
        ],
        env={**cluster_env(), "HETA_EVAL_CACHE_DIR": str(tmp_path / "cache")},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"heta-eval run: error: cannot load the embedding model '{missing}': "
        f"Path {missing} not found"
    )


def test_lost_after_reads_the_environment_and_refuses_nonsense(monkeypatch):
    monkeypatch.delenv("HETA_EVAL_RAY_LOST_AFTER", raising=False)
    assert lost_after() == 20.0
    monkeypatch.setenv("HETA_EVAL_RAY_LOST_AFTER", "2.5")
    assert lost_after() == 2.5
    for bad in ("0", "-1", "soon", "nan"):
        monkeypatch.setenv("HETA_EVAL_RAY_LOST_AFTER", bad)
        with pytest.raises(ValueError, match="HETA_EVAL_RAY_LOST_AFTER must be a positive"):
            lost_after()


WATCHER = """
import socket, sys, time
from heta_eval.scale.errors import ClusterWatch
head = socket.create_server(("127.0.0.1", 0))
port = head.getsockname()[1]
ClusterWatch(f"127.0.0.1:{port}", message=lambda: "gone\\nkept", program="prog",
             grace=0.5, every=0.1).start()
time.sleep(1.0)  # the head answers: nothing happens
print("alive", flush=True)
head.close()  # the head goes silent
time.sleep(30)
print("not ended", flush=True)
"""


def test_cluster_watch_ends_the_process_in_one_line_once_the_head_is_silent():
    result = subprocess.run(
        [sys.executable, "-c", WATCHER], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 2
    assert result.stdout == "alive\n"
    assert result.stderr == "prog: error: gone\nkept\n"


def _full_backlog_head() -> tuple[socket.socket, list[socket.socket], int]:
    """A head that is alive but does not take connections now: it listens, never accepts,
    and its accept queue is full, as a head starved of CPU looks from outside."""
    head = socket.socket()
    head.bind(("127.0.0.1", 0))
    head.listen(0)
    port = head.getsockname()[1]
    queued = []
    for _ in range(8):  # fill the queue: later connects get no answer
        client = socket.socket()
        client.setblocking(False)
        client.connect_ex(("127.0.0.1", port))
        queued.append(client)
    time.sleep(0.2)
    return head, queued, port


def test_probe_tells_a_slow_head_from_a_gone_one():
    head, queued, port = _full_backlog_head()
    try:
        assert probe("127.0.0.1", port, timeout=0.5) == "slow"
        assert listening("127.0.0.1", port)
    finally:
        for client in queued:
            client.close()
        head.close()
    assert not listening("127.0.0.1", port)
    assert probe("127.0.0.1", port, timeout=0.5) == "refused"


@pytest.mark.system  # 10-20 s of waiting or process starts: make test-system
def test_a_slow_head_is_given_longer_and_an_answer_starts_the_count_again(monkeypatch):
    # What the watch saw, when: the test waits on the watch's own observations, not on sleeps.
    seen: list[tuple[float, str]] = []

    def recorded(host: str, port: int, timeout: float = PROBE_TIMEOUT) -> str:
        state = probe(host, port, timeout)
        seen.append((time.monotonic(), state))
        return state

    def wait_until(condition, why: str) -> None:
        deadline = time.monotonic() + 600
        while not condition():
            assert not ended, f"declared lost while {why}"
            assert time.monotonic() < deadline, f"timed out while {why}"
            time.sleep(0.05)

    def silent_for(seconds: float, since: float = 0.0) -> bool:
        silent = [t for t, state in seen if state != "answers" and t >= since]
        return bool(silent) and silent[-1] - silent[0] >= seconds

    monkeypatch.setattr(errors, "probe", recorded)
    grace = 2.0
    head, queued, port = _full_backlog_head()
    ended: list[str] = []
    watch = ClusterWatch(
        f"127.0.0.1:{port}", message=lambda: "gone", grace=grace, every=0.05, probe_timeout=0.5
    )
    watch._end = lambda: ended.append("ended")  # type: ignore[method-assign]
    try:
        watch.start()
        wait_until(lambda: silent_for(grace), "slow for longer than grace")
        assert {state for _, state in seen} == {"slow"}  # it listens: never refused
        assert not ended, "a slow head was declared lost after grace"
        for client in queued:  # the head catches up: its answers reset the count
            client.close()
        head.setblocking(False)
        accepted = []
        start = seen[0][0]

        def answered_past_the_slow_bound() -> bool:
            with contextlib.suppress(BlockingIOError):
                accepted.append(head.accept()[0])
            answers = [t for t, state in seen if state == "answers"]
            return bool(answers) and answers[-1] - start >= grace * SLOW_FACTOR

        wait_until(answered_past_the_slow_bound, "answering again")
        assert not ended, "a head answering again was declared lost"
    finally:
        head.close()
    deadline = time.monotonic() + 600
    while not ended and time.monotonic() < deadline:  # closed: refused, lost after grace
        time.sleep(0.05)
    assert ended
    assert silent_for(grace, since=max(t for t, state in seen if state == "answers"))


NICENESS = """
import os
from heta_eval.scale.cluster import connect
ray = connect("local")

@ray.remote(num_cpus=1)
def niceness():
    return os.nice(0)

print(ray.get(niceness.remote()))
"""


@pytest.mark.system  # starts a Ray cluster
def test_a_local_cluster_runs_its_workers_at_the_priority_of_other_processes():
    # Ray's default (nice 15) starves the encoders beside CPU-bound neighbours.
    env = {k: v for k, v in cluster_env().items() if k != "RAY_worker_niceness"}
    result = subprocess.run(
        [sys.executable, "-c", NICENESS],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(os.nice(0))


OWN_TOKEN = """
import os
from heta_eval.scale.cluster import connect
ray = connect("local")

@ray.remote(num_cpus=1)
def auth_mode():
    return os.environ.get("RAY_AUTH_MODE")

print(ray.get(auth_mode.remote()))
"""


@pytest.mark.system  # starts a Ray cluster
def test_a_local_cluster_keeps_token_authentication_and_writes_nothing_in_the_home(tmp_path):
    # Ray saves a new local cluster's token to ~/.ray/auth_token, which then turns token
    # authentication on for the user's own `ray start` clusters (their second node refused).
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in cluster_env().items() if not k.startswith("RAY_AUTH")}
    env["HOME"] = str(home)
    result = subprocess.run(
        [sys.executable, "-c", OWN_TOKEN],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "token"  # authentication still on
    assert not (home / ".ray").exists(), sorted(p.name for p in home.rglob("*"))
    assert list(home.iterdir()) == []
