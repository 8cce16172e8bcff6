"""The command line guides a new user: data beside the checkout is found without settings
(and a miss lists where it looked), `datasets` sub-commands describe themselves with an
example, an offline download says what to do, and the leaderboard plot keeps its legend off
the bars and draws reference bars apart from measured ones."""

from __future__ import annotations

import os
import subprocess
import sys
from http.server import HTTPServer

import pytest
from support.paths import SHARED

from heta_eval.compare.leaderboard import leaderboard
from heta_eval.data import locate


def heta(*args: str, cwd, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def without_data_settings() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "HETA_EVAL_DATA"}


def test_bare_evaluate_finds_scifact_beside_the_checkout(tmp_path, scifact_run_file):
    assert locate.SHARED_DATA == SHARED / "datasets"
    done = heta(
        "evaluate",
        "--run",
        str(scifact_run_file),
        "--dataset",
        "scifact",
        "--k",
        "10",
        cwd=tmp_path,
        env=without_data_settings(),
    )
    assert done.returncode == 0, done.stderr
    assert "| NDCG@10 | 0.57013 | 0.57013 |" in done.stdout


def test_a_missing_dataset_lists_every_place_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("HETA_EVAL_DATA", str(tmp_path / "env-root"))
    monkeypatch.setattr(locate, "SHARED_DATA", tmp_path / "shared" / "datasets")
    with pytest.raises(locate.DatasetNotFoundError) as error:
        locate.find_dataset("nfcorpus")
    message = str(error.value)
    for folder in (tmp_path / "env-root", tmp_path / "shared" / "datasets" / "beir"):
        assert str(folder / "nfcorpus") in message
    assert str(locate.default_cache_dir() / "nfcorpus") in message


@pytest.mark.parametrize("action", ["list", "download", "validate"])
def test_datasets_sub_commands_describe_themselves_with_an_example(tmp_path, action):
    done = heta("datasets", action, "--help", cwd=tmp_path)
    assert done.returncode == 0
    assert "example" in done.stdout
    assert f"heta-eval datasets {action}" in done.stdout.split("\nexample")[-1]


def test_an_offline_download_says_where_to_put_an_archive_fetched_elsewhere(tmp_path):
    server = HTTPServer(("127.0.0.1", 0), None)  # a port nothing will answer on once closed
    port = server.server_port
    server.server_close()
    done = heta(
        "datasets",
        "download",
        "nfcorpus",
        "--data-dir",
        str(tmp_path / "data"),
        "--url",
        f"http://127.0.0.1:{port}/nfcorpus.zip",
        "--md5",
        "0" * 32,
        "--retries",
        "0",
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "could not be downloaded here (no network?)" in done.stderr
    archive = tmp_path / "data" / "_downloads" / "nfcorpus" / "nfcorpus.zip"
    assert f"copy it to {archive}, then rerun this download" in done.stderr
    assert "(needs network)" not in done.stderr


def test_the_plot_legend_sits_beside_the_bars_and_references_are_hatched():
    board = leaderboard(
        {
            "keyword_search": {"scifact": 0.676, "nfcorpus": 0.325},
            "vector_search": {"scifact": 0.646, "nfcorpus": 0.316},
            "bm25-flat (ref.)": {"scifact": 0.679, "nfcorpus": 0.322},
        },
        "ndcg@10",
    )
    figure = board.figure()
    figure.canvas.draw()
    axes = figure.axes[0]
    renderer = figure.canvas.get_renderer()
    legend = axes.get_legend().get_window_extent(renderer)
    assert legend.x0 >= axes.get_window_extent(renderer).x1  # outside the plotting area
    assert legend.x1 <= figure.bbox.x1  # and not cut off
    by_label = {c.get_label(): c for c in axes.containers}
    reference = by_label["bm25-flat (ref.)"].patches[0]
    measured = by_label["keyword_search"].patches[0]
    assert reference.get_hatch() and not measured.get_hatch()
    assert reference.get_facecolor()[3] == 0 and measured.get_facecolor()[3] == 1
