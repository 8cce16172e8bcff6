"""Leaderboard tables and the PNG plot."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import numpy as np
from matplotlib.image import imread
from test_compare_compare import write_result_folder

from heta_eval.cli import main
from heta_eval.compare import leaderboard
from heta_eval.compare.loading import load_trec_system

SCORES = {
    "bm25": {"scifact": 0.665, "nfcorpus": 0.325, "fiqa": 0.236},
    "minilm": {"scifact": 0.64508, "nfcorpus": 0.31594, "fiqa": 0.36867},
    "partial": {"scifact": 0.7},
}


def test_doctests():
    assert doctest.testmod(importlib.import_module("heta_eval.compare.leaderboard")).failed == 0


def test_tables():
    board = leaderboard(SCORES, "ndcg@10")
    assert board.datasets == ["fiqa", "nfcorpus", "scifact"]
    assert board.average("bm25") == (0.665 + 0.325 + 0.236) / 3
    assert board.average("partial") is None  # BEIR averages complete rows only
    markdown = board.to_markdown()
    assert "| ndcg@10 | fiqa | nfcorpus | scifact | Avg. |" in markdown
    assert "| partial | – | – | **0.7000** | – |" in markdown
    assert "**0.3687**" in markdown  # best fiqa
    latex = board.to_latex()
    assert r"\textbf{0.7000}" in latex and "partial & -- & -- &" in latex
    csv_lines = board.to_csv().splitlines()
    assert csv_lines[0] == "system,fiqa,nfcorpus,scifact,average"
    assert csv_lines[3] == "partial,,,0.7,"


def test_png_renders(tmp_path):
    path = leaderboard(SCORES, "ndcg@10").plot(tmp_path / "sub" / "board.png")
    image = imread(path)
    height, width = image.shape[:2]
    assert width >= 600 and height >= 400
    # Not blank: many distinct colours, and the bars' colours are present.
    flat = image[..., :3].reshape(-1, 3)
    assert len(np.unique(np.round(flat, 2), axis=0)) > 20
    assert flat.std() > 0.05


def test_cli_leaderboard(scifact_dir, scifact_run_file, tmp_path, capsys):
    from heta_eval.data import load_beir
    from heta_eval.io.trec import read_run

    data = load_beir(scifact_dir)
    system = load_trec_system(
        read_run(scifact_run_file, duplicates="last"),
        data.qrels,
        ["ndcg@10", "recall@100"],
        name="run",
    )
    one = write_result_folder(
        tmp_path / "scifact", "scifact", {"keyword_search": system, "vector_search": system}, {}
    )
    two = write_result_folder(
        tmp_path / "nfcorpus", "beir/nfcorpus", {"keyword_search": system}, {}
    )
    png = tmp_path / "board.png"
    assert (
        main(["leaderboard", str(one), str(two), "--reference", "bm25-flat", "--plot", str(png)])
        == 0
    )
    out = capsys.readouterr().out
    assert "| ndcg@10 | nfcorpus | scifact | Avg. |" in out
    assert "| keyword_search | **0.5701** | 0.5701 | **0.5701** |" in out
    assert "| vector_search | – | 0.5701 | – |" in out
    assert "| bm25-flat (ref.) | 0.3218 | **0.6789** | 0.5003 |" in out
    assert imread(png).shape[1] >= 600
    assert (
        main(
            [
                "leaderboard",
                str(one),
                "--metric",
                "recall@100",
                "--format",
                "csv",
                "--aggregate",
                "strict",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines()[1].startswith("keyword_search,0.8523")
    assert (
        main(
            [
                "leaderboard",
                str(scifact_run_file),
                "--dataset",
                "scifact",
                "--data-dir",
                str(Path(scifact_dir).parent),
                "--format",
                "latex",
            ]
        )
        == 0
    )
    assert "scifact" in capsys.readouterr().out
    assert main(["leaderboard", str(one), "--reference", "nope"]) == 2
