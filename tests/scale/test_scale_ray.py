"""`heta-eval run --ray` and `heta-eval sweep --ray` on a REAL two-node Ray cluster on
127.0.0.1 (one CPU per node), over a small slice of SciFact:

* the run files equal a local run's, both nodes encoded and hold a search shard, the summary
  records the executor;
* vectors encoded on Ray are a cache hit for a local run (same key), and on every route the
  same bytes as a local encode's (OpenVINO's int8 once ran as ONNX Runtime's on the actors);
* the sharded index: the driver holds at most one shard's rows at a time, and searches
  exactly with its matrix gone;
* an encoder actor's process SIGKILLed mid-encode is replaced, the run completes with the
  local run's results and re-encodes no finished shard;
* a run killed mid-encode resumes from its finished shards, and so does one stopped by
  Ctrl-C, which ends before the encode does (exit 130) saying what is kept;
* a sweep (3 modes × 2 chunk sizes) resumes after being killed and prints its leaderboard.
* a model the encoder actors cannot load, and the cluster stopped mid-encode, end the run
  with a one-line error (exit 2) that names the cause and what is kept; the rerun on the
  cluster started again encodes only the shards that had not finished (last: it restarts
  the cluster).

Every command runs as a subprocess with a timeout (generous: the suite passes on a 2-core
machine with six CPU-bound processes beside it), and no test measures how fast anything is;
the cluster is always stopped.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.ray_cluster import (
    NETNS,
    PATIENCE,
    REPO,
    LoopbackNamespace,
    TwoNodeCluster,
    cluster_env,
    encoder_processes,
    scifact_slice,
)

pytestmark = pytest.mark.system  # a real multi-process system: `make test-system`

if importlib.util.find_spec("ray") is None:  # `make install` installs the ray extra
    if os.environ.get("CI"):
        pytest.fail("ray is not installed: CI must run the Ray tests", pytrace=False)
    pytest.skip(
        "the Ray tests need the ray extra: pip install 'heta-eval[ray]'", allow_module_level=True
    )
if (_why := LoopbackNamespace.available()) is not None:
    if os.environ.get("CI"):
        pytest.fail(f"the Ray tests run in their own network namespace: {_why}", pytrace=False)
    pytest.skip(
        f"the Ray tests run in their own network namespace: {_why}", allow_module_level=True
    )

# Small batches, chunks and shards so a tiny corpus still spans several encoding shards on
# both nodes, and more than 64 chunks: two search shards (their boundaries fall on multiples
# of 64 rows, heta_eval.scale.search.ALIGN).
RECIPE = {"dense": {"batch_size": 8, "precision": "float32"}, "chunking": {"size": 64}}
SHARD = "16"
MODES = "keyword_search,vector_search,hybrid_search"


@pytest.fixture(scope="module")
def cluster():
    with TwoNodeCluster() as address:
        yield address


@pytest.fixture(scope="module")
def data(scifact_dir, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ray-data")
    scifact_slice(scifact_dir, root / "scifact", queries=10, extra_docs=30)
    (root / "recipe.json").write_text(json.dumps(RECIPE))
    for size in (48, 96):
        recipe = {**RECIPE, "chunking": {"size": size}}
        (root / f"chunks{size}.json").write_text(json.dumps(recipe))
    return {"root": root, "dataset": root / "scifact", "recipe": root / "recipe.json"}


@pytest.fixture(scope="module")
def local_run(cluster, data, tmp_path_factory) -> Path:
    """The same run without Ray: what every Ray run must reproduce (in the cluster's namespace,
    like every command here)."""
    out = tmp_path_factory.mktemp("local-run")
    result = heta_eval(*run_args(data, out / "results"), cache=out / "cache")
    assert result.returncode == 0, result.stderr
    return out / "results"


def heta_eval(*args: str, cache: Path, timeout: float = PATIENCE) -> subprocess.CompletedProcess:
    env = {**cluster_env(), "HETA_EVAL_CACHE_DIR": str(cache)}
    return subprocess.run(
        NETNS.wrap([sys.executable, "-m", "heta_eval", *args]),
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_args(data: dict[str, Path], output: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--dataset",
        "scifact",
        "--data-dir",
        str(data["dataset"]),
        "--modes",
        MODES,
        "--recipe",
        str(data["recipe"]),
        "--output",
        str(output),
        "--quiet",
        *extra,
    ]


def cluster_nodes(address: str) -> dict[str, str]:
    """Node id -> 'node_head' / 'node_worker', read from the cluster itself."""
    code = (
        "import json, ray\n"
        f"ray.init(address={address!r}, logging_level='ERROR', log_to_driver=False)\n"
        "print(json.dumps({n['NodeID']: next(r for r in n['Resources'] if r.startswith('node_'))"
        " for n in ray.nodes() if n['Alive']}))\n"
    )
    result = subprocess.run(
        NETNS.wrap([sys.executable, "-c", code]),
        env=cluster_env(),
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


def test_ray_run_equals_local_run_and_both_nodes_encode(cluster, data, local_run, tmp_path):
    on_ray = heta_eval(
        *run_args(data, tmp_path / "ray", "--ray", cluster, "--ray-shard-size", SHARD),
        cache=tmp_path / "cache-ray",
    )
    assert on_ray.returncode == 0, on_ray.stderr

    for mode in MODES.split(","):
        expected = (local_run / "runs" / f"{mode}.trec").read_text()
        assert expected  # a real run, not two empty files
        assert (tmp_path / "ray" / "runs" / f"{mode}.trec").read_text() == expected, mode

    executor = summary(tmp_path / "ray")["executor"]
    assert executor["kind"] == "ray" and executor["nodes"] == 2 and executor["workers"] == 2
    assert executor["gpus"] == 0
    encoding = executor["encoding"]
    assert encoding["shards"] >= 4 and encoding["shards_encoded"] == encoding["shards"]
    nodes = cluster_nodes(cluster)
    by_node = encoding["chunks_by_node"]
    assert sorted(nodes[n] for n in by_node) == ["node_head", "node_worker"]
    assert all(count > 0 for count in by_node.values())
    assert summary(local_run)["executor"]["kind"] == "local"
    # The dense index lives in two row shards, one per node, covering every chunk once.
    shards = executor["search_shards"]
    assert sorted(nodes[s["node"]] for s in shards) == ["node_head", "node_worker"]
    (start, cut), (cut_again, end) = (s["rows"] for s in shards)
    assert start == 0 and cut == cut_again and end == sum(encoding["chunks_by_node"].values())

    # Vectors encoded on Ray are found by a local run under the same cache key.
    again = heta_eval(*run_args(data, tmp_path / "local-again"), cache=tmp_path / "cache-ray")
    assert again.returncode == 0, again.stderr
    build = summary(tmp_path / "local-again")["build"]
    assert build["embeddings"] == "cache"
    assert build["embeddings_path"] == summary(tmp_path / "ray")["build"]["embeddings_path"]


@pytest.mark.parametrize("precision", ["openvino-int8", "bfloat16"])
def test_ray_encodes_the_route_it_records_to_the_bytes_of_a_local_encode(
    cluster, data, tmp_path, precision
):
    # openvino-int8: the actors were handed the precision (int8) and ran ONNX Runtime's int8
    # while the results folder and the cache said OpenVINO. bfloat16: Ray's shards batched
    # texts differently from a local encode, and in bfloat16 a vector moved with its batch.
    cache = tmp_path / "cache-ray"
    on_ray = heta_eval(
        *run_args(
            data,
            tmp_path / "ray",
            "--ray",
            cluster,
            "--ray-shard-size",
            SHARD,
            "--precision",
            precision,
        ),
        cache=cache,
    )
    assert on_ray.returncode == 0, on_ray.stderr
    build = summary(tmp_path / "ray")["build"]
    route = precision if "-" in precision else f"torch-{precision}"
    assert build["route"] == route and build["embeddings"] == "built"
    # A local encode into a cache of its own, holding only the quantized models (not to
    # quantize again): the same entry, the same bytes.
    local_cache = tmp_path / "cache-local"
    (local_cache / "kb").mkdir(parents=True)
    for folder in (cache / "kb").iterdir():
        if folder.is_dir() and folder.name.startswith(("onnx-", "openvino-")):
            shutil.copytree(folder, local_cache / "kb" / folder.name)
    local = heta_eval(
        *run_args(data, tmp_path / "local", "--precision", precision), cache=local_cache
    )
    assert local.returncode == 0, local.stderr
    local_build = summary(tmp_path / "local")["build"]
    assert local_build["embeddings"] == "built" and local_build["route"] == route
    entry, local_entry = Path(build["embeddings_path"]), Path(local_build["embeddings_path"])
    assert entry.name == local_entry.name
    ray_vectors = (entry / "embeddings.npy").read_bytes()
    assert len(ray_vectors) > 100 * 384 * 4
    assert ray_vectors == (local_entry / "embeddings.npy").read_bytes()


SHARDED_INDEX = """
import json, os, sys, tracemalloc
import numpy as np, ray
from heta_eval.ann.exact_search import exact_search
from heta_eval.scale.executor import RayShardedIndex


ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
rng = np.random.default_rng(11)
matrix = rng.normal(size=(40_000, 96)).astype(np.float32)
queries = np.concatenate([matrix[:3], rng.normal(size=(3, 96)).astype(np.float32)])
expected, expected_scores = exact_search(matrix, queries, 50)  # the single-machine search
path = os.path.join(sys.argv[2], "matrix.npy")
np.save(path, matrix)
del matrix
mapped = np.load(path, mmap_mode="r")
RayShardedIndex(mapped[:200], 2)  # first use: imports and registrations, not measured
tracemalloc.start()  # numpy's arrays are traced: what this process allocates while sharding
index = RayShardedIndex(mapped, 4)
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
del mapped
os.remove(path)  # the driver's matrix is gone: the search can use only the actors' shards
rows, scores = index.top_k(queries, 50)
print(json.dumps({
    "peak": peak,
    "shard_bytes": [(b - a) * 96 * 4 for a, b in index.ranges],
    "nodes": [p["node"] for p in index.placement],
    "equal": rows.tolist() == expected.tolist(),
    "scores_equal": bool(np.array_equal(scores, expected_scores)),
}))
"""


def test_sharded_index_driver_holds_one_shard_at_a_time_and_searches_without_its_matrix(
    cluster, tmp_path
):
    result = subprocess.run(
        NETNS.wrap([sys.executable, "-c", SHARDED_INDEX, cluster, str(tmp_path)]),
        env=cluster_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    shard = max(report["shard_bytes"])
    assert len(report["shard_bytes"]) == 4 and sum(report["shard_bytes"]) == 40_000 * 96 * 4
    # One shard's copy is seen (the measure works), never two (nor the 15 MB matrix).
    assert shard <= report["peak"] < 1.5 * shard, report
    assert report["equal"] and report["scores_equal"]
    nodes = cluster_nodes(cluster)
    assert {nodes[n] for n in report["nodes"]} == {"node_head", "node_worker"}


def test_encoder_process_killed_mid_encode_is_replaced_and_no_finished_shard_is_reencoded(
    cluster, data, local_run, tmp_path
):
    cache = tmp_path / "cache"
    args = run_args(data, tmp_path / "out", "--ray", cluster, "--ray-shard-size", SHARD)
    env = {**cluster_env(), "HETA_EVAL_CACHE_DIR": str(cache)}
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            NETNS.wrap([sys.executable, "-m", "heta_eval", *args]),
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    finished: dict[Path, tuple[int, int]] = {}
    encoders: dict[int, str] = {}
    victim = None
    try:
        # Once a shard is on disk, SIGKILL the encoder actor on the worker node (the driver's
        # node keeps running): a real Ray worker process, mid-encode.
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline and process.poll() is None and victim is None:
            finished = {
                p: (p.stat().st_ino, p.stat().st_mtime_ns)
                for p in (cache / "kb").glob("shards-*/shard-*.npy")
            }
            if finished:
                encoders = encoder_processes()
                victim = next((pid for pid, n in encoders.items() if n == "node_worker"), None)
            time.sleep(0.05)
        assert finished, "no shard was written before the run ended or timed out"
        assert victim is not None, f"no encoder process on the worker node: {encoders}"
        os.kill(victim, signal.SIGKILL)
        replaced = False
        while time.monotonic() < deadline and process.poll() is None:
            replaced = replaced or bool(set(encoder_processes()) - set(encoders))
            # A shard finished before the kill is never written again.
            for path, identity in finished.items():
                with contextlib.suppress(FileNotFoundError):  # removed once assembled
                    assert (path.stat().st_ino, path.stat().st_mtime_ns) == identity, path
            time.sleep(0.05)
        process.wait(timeout=PATIENCE)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=PATIENCE)

    # Ray restarted the actor in a new process and retried its shard: the run recovered.
    assert process.returncode == 0, log.read_text()[-3000:]
    assert replaced, "no new encoder process appeared after the kill"
    executor = summary(tmp_path / "out")["executor"]
    encoding = executor["encoding"]
    assert encoding["encoder_processes"] >= 2
    assert encoding["shards_encoded"] == encoding["shards"] > len(finished)
    # Every chunk's vector came back exactly once: no finished shard was encoded again.
    chunks = executor["search_shards"][-1]["rows"][1]
    assert encoding["chunks_encoded"] == sum(encoding["chunks_by_node"].values()) == chunks
    for mode in MODES.split(","):
        assert (tmp_path / "out" / "runs" / f"{mode}.trec").read_text() == (
            local_run / "runs" / f"{mode}.trec"
        ).read_text(), mode

    # The rerun finds every vector in the cache: nothing is encoded again.
    rerun = heta_eval(*run_args(data, tmp_path / "again", "--ray", cluster), cache=cache)
    assert rerun.returncode == 0, rerun.stderr
    assert summary(tmp_path / "again")["build"]["embeddings"] == "cache"
    assert "encoding" not in summary(tmp_path / "again")["executor"]


def test_run_killed_mid_encode_resumes_from_finished_shards(cluster, data, local_run, tmp_path):
    cache = tmp_path / "cache"
    env = {**cluster_env(), "HETA_EVAL_CACHE_DIR": str(cache)}
    args = run_args(data, tmp_path / "out", "--ray", cluster, "--ray-shard-size", SHARD)
    process = subprocess.Popen(
        NETNS.wrap([sys.executable, "-m", "heta_eval", *args]),
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    finished: list[Path] = []
    try:
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline and process.poll() is None:
            finished = list((cache / "kb").glob("shards-*/shard-*.npy"))
            if finished:
                break
            time.sleep(0.05)
        assert finished, "no shard was written before the run ended or timed out"
    finally:
        with contextlib.suppress(ProcessLookupError):  # the run and everything it started
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=PATIENCE)
    kept = len(list((cache / "kb").glob("shards-*/shard-*.npy")))
    assert not list((cache / "kb").glob("dense-*/COMPLETE")), "the encode finished before the kill"

    rerun = heta_eval(*args, cache=cache)
    assert rerun.returncode == 0, rerun.stderr
    encoding = summary(tmp_path / "out")["executor"]["encoding"]
    assert encoding["shards_reused"] == kept >= 1
    assert encoding["shards_encoded"] == encoding["shards"] - kept
    assert not list((cache / "kb").glob("shards-*/shard-*.npy"))  # assembled into the cache entry

    for mode in MODES.split(","):
        assert (tmp_path / "out" / "runs" / f"{mode}.trec").read_text() == (
            local_run / "runs" / f"{mode}.trec"
        ).read_text()


def test_sweep_on_the_cluster_resumes_after_a_kill_and_prints_its_leaderboard(
    cluster, data, tmp_path
):
    root = data["root"]
    out = tmp_path / "sweep"
    args = [
        "sweep",
        "--datasets",
        "scifact",
        "--data-dir",
        str(data["dataset"]),
        "--modes",
        "keyword_search,vector_search,hybrid_search",
        "--recipes",
        f"{root / 'chunks48.json'},{root / 'chunks96.json'}",
        "--output",
        str(out),
        "--ray",
        cluster,
        "--ray-shard-size",
        SHARD,
    ]
    env = {**cluster_env(), "HETA_EVAL_CACHE_DIR": str(tmp_path / "cache")}
    process = subprocess.Popen(
        NETNS.wrap([sys.executable, "-m", "heta_eval", *args]),
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    done_before: dict[str, dict] = {}
    try:
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline and process.poll() is None:
            try:
                cells = json.loads((out / "sweep.json").read_text())["cells"]
            except (FileNotFoundError, ValueError):
                cells = {}
            done_before = {k: v for k, v in cells.items() if v["status"] == "done"}
            if done_before:
                break
            time.sleep(0.1)
        assert done_before, "no cell finished before the sweep ended or timed out"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=PATIENCE)
    cells = json.loads((out / "sweep.json").read_text())["cells"]
    assert len([c for c in cells.values() if c["status"] == "done"]) < 6, "nothing left to resume"

    resumed = heta_eval(*args, cache=tmp_path / "cache", timeout=PATIENCE)
    assert resumed.returncode == 0, resumed.stderr
    done_then = len([c for c in cells.values() if c["status"] == "done"])
    assert f"{done_then} of 6 cells done before; {6 - done_then} to run" in resumed.stderr
    final = json.loads((out / "sweep.json").read_text())["cells"]
    assert len(final) == 6 and all(c["status"] == "done" for c in final.values())
    for cell_id, state in done_before.items():
        assert final[cell_id] == state  # not run again
    lines = [line for line in resumed.stdout.splitlines() if line.startswith("| chunks")]
    assert len(lines) == 6
    for cell_id, state in final.items():
        _, recipe, mode = cell_id.split("/")
        row = next(line for line in lines if line.startswith(f"| {recipe}/{mode} |"))
        assert f"{state['metrics']['ndcg@10']:.4f}" in row
        assert (out / cell_id / "runs" / f"{mode}.trec").exists()
    assert (out / "leaderboard.md").read_text().strip() == "\n".join(
        line for line in resumed.stdout.splitlines() if line.startswith("|")
    )


def test_ctrl_c_mid_encode_on_the_cluster_ends_the_run_before_the_encode_and_the_rerun_resumes(
    cluster, data, local_run, tmp_path
):
    cache = tmp_path / "cache"
    env = {**cluster_env(), "HETA_EVAL_CACHE_DIR": str(cache)}
    args = run_args(data, tmp_path / "out", "--ray", cluster, "--ray-shard-size", SHARD)
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            NETNS.wrap([sys.executable, "-m", "heta_eval", *args]),
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline and process.poll() is None:
            if list((cache / "kb").glob("shards-*/shard-*.npy")):
                break
            time.sleep(0.05)
        assert list((cache / "kb").glob("shards-*/shard-*.npy")), "no shard was written in time"
        process.send_signal(signal.SIGINT)
        status = process.wait(timeout=PATIENCE)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=PATIENCE)
    kept = sorted((cache / "kb").glob("shards-*/shard-*.npy"))
    stderr = log.read_text()
    assert status == 130, stderr
    assert not list((cache / "kb").glob("dense-*/COMPLETE")), "the encode finished before Ctrl-C"
    lines = stderr.splitlines()
    assert "heta-eval: interrupted (Ctrl-C) while encoding the corpus on Ray" in lines, stderr
    assert f"finished shard{'' if len(kept) == 1 else 's'}" in stderr
    assert f"kept in {kept[0].parent}; rerunning the same command encodes only the rest" in stderr

    rerun = heta_eval(*args, cache=cache)
    assert rerun.returncode == 0, rerun.stderr
    encoding = summary(tmp_path / "out")["executor"]["encoding"]
    assert encoding["shards_reused"] == len(kept)
    assert encoding["shards_encoded"] == encoding["shards"] - len(kept) > 0  # stopped midway
    for mode in MODES.split(","):
        assert (tmp_path / "out" / "runs" / f"{mode}.trec").read_text() == (
            local_run / "runs" / f"{mode}.trec"
        ).read_text()


def test_a_model_the_encoder_actors_cannot_load_ends_the_run_in_one_line(cluster, data, tmp_path):
    missing = tmp_path / "no-such-model"
    recipe = tmp_path / "recipe.json"
    recipe.write_text(json.dumps({**RECIPE, "dense": {"batch_size": 8, "model": str(missing)}}))
    args = run_args(data, tmp_path / "out", "--ray", cluster)
    args[args.index(str(data["recipe"]))] = str(recipe)
    result = heta_eval(*args, cache=tmp_path / "cache")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-2:] == [
        f"heta-eval run: error: the Ray cluster at {cluster} failed while encoding the corpus: "
        f"an actor could not start: ModelLoadError: cannot load the embedding model "
        f"'{missing}': Path {missing} not found",
        "no shard had finished; rerunning the same command starts the encode again",
    ]


def test_cluster_stopped_mid_encode_ends_the_run_in_one_line_and_the_rerun_resumes(
    cluster, data, local_run, tmp_path
):
    cache = tmp_path / "cache"
    # The run gives up 3 s after the head goes silent (20 s by default; Ray alone: 60 s).
    env = {**cluster_env(), "HETA_EVAL_CACHE_DIR": str(cache), "HETA_EVAL_RAY_LOST_AFTER": "3"}
    args = run_args(data, tmp_path / "out", "--ray", cluster, "--ray-shard-size", SHARD)
    process = subprocess.Popen(
        NETNS.wrap([sys.executable, "-m", "heta_eval", *args]),
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline and process.poll() is None:
            if list((cache / "kb").glob("shards-*/shard-*.npy")):
                break
            time.sleep(0.05)
        assert list((cache / "kb").glob("shards-*/shard-*.npy")), "no shard was written in time"
        TwoNodeCluster.stop()
        _, stderr = process.communicate(timeout=PATIENCE)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=PATIENCE)
    kept = sorted((cache / "kb").glob("shards-*/shard-*.npy"))
    assert not list((cache / "kb").glob("dense-*/COMPLETE")), "the encode finished before the stop"
    assert process.returncode == 2, stderr
    assert "Traceback" not in stderr
    shards = "1 finished shard is" if len(kept) == 1 else f"{len(kept)} finished shards are"
    assert stderr.splitlines()[-2:] == [
        f"heta-eval run: error: the Ray cluster at {cluster} stopped answering while encoding "
        "the corpus",
        f"{shards} kept in {kept[0].parent}; rerunning the same command encodes only the rest",
    ]

    TwoNodeCluster(port=int(cluster.rpartition(":")[2])).__enter__()  # the fixture stops it
    rerun = heta_eval(*args, cache=cache)
    assert rerun.returncode == 0, rerun.stderr
    encoding = summary(tmp_path / "out")["executor"]["encoding"]
    assert encoding["shards_reused"] == len(kept)
    assert encoding["shards_encoded"] == encoding["shards"] - len(kept)
    for mode in MODES.split(","):
        assert (tmp_path / "out" / "runs" / f"{mode}.trec").read_text() == (
            local_run / "runs" / f"{mode}.trec"
        ).read_text()
