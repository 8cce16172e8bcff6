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
from heta_eval.compare.loading import SystemScores, load_trec_system

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


def test_leaderboard_rounds_the_full_precision_mean_once(tmp_path, capsys):
    # The mean 0.7179538 is kept in summary.json as beir 0.71795 (BEIR's 5 decimals) and
    # beir_unrounded: the table rounds the mean itself (0.7180), not 0.71795 (0.7179).
    import json

    per_query = {
        "q1": {"ndcg@10": 1.0, "recall@100": 1.0},
        "q2": {"ndcg@10": 0.5, "recall@100": 1.0},
        "q3": {"ndcg@10": 0.6538614, "recall@100": 1.0},
    }
    mean = sum(v["ndcg@10"] for v in per_query.values()) / 3
    assert f"{mean:.7f}" == "0.7179538" and f"{round(mean, 5):.4f}" == "0.7179"
    rounded = {"beir": round(mean, 5), "strict": round(mean, 5)}
    aggregates = {"ndcg@10": rounded, "recall@100": {"beir": 1.0, "strict": 1.0}}
    system = SystemScores("x", per_query, aggregates)
    folder = write_result_folder(tmp_path / "scifact", "scifact", {"hybrid_search": system}, {})
    summary = json.loads((folder / "summary.json").read_text())
    for name, values in summary["modes"]["hybrid_search"]["metrics"].items():
        exact = mean if name == "ndcg@10" else 1.0
        values.update(beir_unrounded=exact, strict_unrounded=exact)
    (folder / "summary.json").write_text(json.dumps(summary))
    for aggregate in ("beir", "strict", "value"):
        assert main(["leaderboard", str(folder), "--aggregate", aggregate]) == 0
        out = capsys.readouterr().out
        assert "| hybrid_search | **0.7180** | **0.7180** |" in out, (aggregate, out)
    assert main(["leaderboard", str(folder), "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("hybrid_search,0.7179538")
