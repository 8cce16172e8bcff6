"""`heta-eval run --ray` and `heta-eval sweep --ray` on a REAL two-node Ray cluster on
127.0.0.1 (one CPU per node), over a small slice of SciFact:

* the run files equal a local run's, both nodes encoded, the summary records the executor;
* vectors encoded on Ray are a cache hit for a local run (same key);
* a run killed mid-encode resumes from its finished shards;
* a sweep (3 modes × 2 chunk sizes) resumes after being killed and prints its leaderboard.

Every command runs as a subprocess with a timeout; the cluster is always stopped.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ray_cluster import NETNS, REPO, LoopbackNamespace, TwoNodeCluster, cluster_env, scifact_slice

if importlib.util.find_spec("ray") is None:  # `make install` installs the ray extra
    if os.environ.get("CI"):
        pytest.fail("ray is not installed: CI must run the Ray tests", pytrace=False)
    pytest.skip("the Ray tests need the ray extra: pip install 'heta-eval[ray]'",
                allow_module_level=True)  # fmt: skip
if (_why := LoopbackNamespace.available()) is not None:
    if os.environ.get("CI"):
        pytest.fail(f"the Ray tests run in their own network namespace: {_why}", pytrace=False)
    pytest.skip(f"the Ray tests run in their own network namespace: {_why}",
                allow_module_level=True)  # fmt: skip

# Small batches and shards so a tiny corpus still spans several shards on both nodes.
RECIPE = {"dense": {"batch_size": 8}}
SHARD = "8"
MODES = "keyword_search,vector_search"


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


def heta_eval(*args: str, cache: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**cluster_env(), "HETA_EVAL_CACHE_DIR": str(cache)}
    return subprocess.run(NETNS.wrap([sys.executable, "-m", "heta_eval", *args]), env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def run_args(data: dict[str, Path], output: Path, *extra: str) -> list[str]:
    return ["run", "--dataset", "scifact", "--data-dir", str(data["dataset"]), "--modes", MODES,
            "--recipe", str(data["recipe"]), "--output", str(output), "--quiet", *extra]  # fmt: skip


def cluster_nodes(address: str) -> dict[str, str]:
    """Node id -> 'node_head' / 'node_worker', read from the cluster itself."""
    code = (
        "import json, ray\n"
        f"ray.init(address={address!r}, logging_level='ERROR', log_to_driver=False)\n"
        "print(json.dumps({n['NodeID']: next(r for r in n['Resources'] if r.startswith('node_'))"
        " for n in ray.nodes() if n['Alive']}))\n"
    )
    result = subprocess.run(NETNS.wrap([sys.executable, "-c", code]), env=cluster_env(),
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


def test_ray_run_equals_local_run_and_both_nodes_encode(cluster, data, local_run, tmp_path):
    on_ray = heta_eval(*run_args(data, tmp_path / "ray", "--ray", cluster, "--ray-shard-size",
                                 SHARD), cache=tmp_path / "cache-ray")  # fmt: skip
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

    # Vectors encoded on Ray are found by a local run under the same cache key.
    again = heta_eval(*run_args(data, tmp_path / "local-again"), cache=tmp_path / "cache-ray")
    assert again.returncode == 0, again.stderr
    build = summary(tmp_path / "local-again")["build"]
    assert build["embeddings"] == "cache"
    assert build["embeddings_path"] == summary(tmp_path / "ray")["build"]["embeddings_path"]


def test_run_killed_mid_encode_resumes_from_finished_shards(cluster, data, local_run, tmp_path):
    cache = tmp_path / "cache"
    env = {**cluster_env(), "HETA_EVAL_CACHE_DIR": str(cache)}
    args = run_args(data, tmp_path / "out", "--ray", cluster, "--ray-shard-size", SHARD)
    process = subprocess.Popen(NETNS.wrap([sys.executable, "-m", "heta_eval", *args]), env=env, cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)  # fmt: skip
    finished: list[Path] = []
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and process.poll() is None:
            finished = list(cache.glob("shards-*/shard-*.npy"))
            if finished:
                break
            time.sleep(0.05)
        assert finished, "no shard was written before the run ended or timed out"
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the run and everything it started here
        process.wait(timeout=60)
    kept = len(list(cache.glob("shards-*/shard-*.npy")))
    assert not list(cache.glob("dense-*/COMPLETE")), "the encode finished before the kill"

    rerun = heta_eval(*args, cache=cache)
    assert rerun.returncode == 0, rerun.stderr
    encoding = summary(tmp_path / "out")["executor"]["encoding"]
    assert encoding["shards_reused"] == kept >= 1
    assert encoding["shards_encoded"] == encoding["shards"] - kept
    assert not list(cache.glob("shards-*/shard-*.npy"))  # assembled into the cache entry

    for mode in MODES.split(","):
        assert (tmp_path / "out" / "runs" / f"{mode}.trec").read_text() == (
            local_run / "runs" / f"{mode}.trec"
        ).read_text()


def test_sweep_on_the_cluster_resumes_after_a_kill_and_prints_its_leaderboard(
    cluster, data, tmp_path
):
    root = data["root"]
    out = tmp_path / "sweep"
    args = ["sweep", "--datasets", "scifact", "--data-dir", str(data["dataset"]),
            "--modes", "keyword_search,vector_search,hybrid_search",
            "--recipes", f"{root / 'chunks48.json'},{root / 'chunks96.json'}",
            "--output", str(out), "--ray", cluster, "--ray-shard-size", SHARD]  # fmt: skip
    env = {**cluster_env(), "HETA_EVAL_CACHE_DIR": str(tmp_path / "cache")}
    process = subprocess.Popen(NETNS.wrap([sys.executable, "-m", "heta_eval", *args]), env=env, cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)  # fmt: skip
    done_before: dict[str, dict] = {}
    try:
        deadline = time.monotonic() + 300
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
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    cells = json.loads((out / "sweep.json").read_text())["cells"]
    assert len([c for c in cells.values() if c["status"] == "done"]) < 6, "nothing left to resume"

    resumed = heta_eval(*args, cache=tmp_path / "cache", timeout=400)
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
