"""``heta-eval sweep --fuse``: each dataset × recipe's modes fused, scored, wsum held out."""

from __future__ import annotations

import pytest

from heta_eval.cli import main
from heta_eval.fusion import fuse
from heta_eval.fusion.optimize import cross_validate
from heta_eval.io.trec import read_run, write_run
from heta_eval.measures.measure import Measure
from heta_eval.reference.recipe import Recipe
from heta_eval.retrieval.run import evaluate_run
from heta_eval.scale.sweep import Sweep
from heta_eval.scale.sweep_fusion import fused_scores

MODES = ["keyword_search", "vector_search"]


def _sweep_with_done_cells(tmp_path) -> tuple[Sweep, dict, list[dict], dict]:
    """A sweep whose two cells are done: their runs written as a sweep writes them."""
    sweep = Sweep(["scifact"], {"reference": Recipe()}, MODES, tmp_path / "sweep")
    qrels = {f"q{i}": {f"rel{i}": 1} for i in range(6)}
    runs = [
        {
            q: {f"rel{i}": 2.0, "x": 1.0} if i % 2 else {"x": 2.0, f"rel{i}": 1.0}
            for i, q in enumerate(qrels)
        },
        {q: {"y": 3.0, f"rel{i}": 2.5 - i / 10} for i, q in enumerate(qrels)},
    ]
    manifest = {**sweep.identity(), "cells": {}}
    for cell, run in zip(sweep.cells, runs, strict=True):
        folder = sweep.folder(cell) / "runs"
        folder.mkdir(parents=True)
        write_run(run, folder / f"{cell.mode}.trec")
        manifest["cells"][cell.id] = {"status": "done"}
    return sweep, manifest, runs, qrels


def test_sweep_fusion_scores_each_method_and_holds_wsum_out(tmp_path) -> None:
    sweep, manifest, runs, qrels = _sweep_with_done_cells(tmp_path)
    measure = Measure.parse("nDCG@10")
    scores = fused_scores(sweep, manifest, ["rrf", "wsum"], measure, lambda _: qrels, folds=3)
    rrf = evaluate_run(qrels, fuse(runs, method="rrf"), measures=[measure])
    row = "reference/{}(keyword_search+vector_search)"
    assert scores[row.format("rrf")] == {"scifact": rrf.aggregates["nDCG@10"].strict}
    held_out = cross_validate(runs, "wsum", "min-max", qrels, measure, folds=3).score
    assert scores[row.format("wsum")] == {"scifact": held_out}
    written = sweep.output / "scifact" / "reference" / "fused" / "rrf.trec"
    assert read_run(written) == fuse(runs, method="rrf")


def test_sweep_fusion_skips_a_dataset_with_one_mode_done(tmp_path) -> None:
    sweep, manifest, _, qrels = _sweep_with_done_cells(tmp_path)
    manifest["cells"][sweep.cells[1].id]["status"] = "failed"
    assert fused_scores(sweep, manifest, ["rrf"], Measure.parse("nDCG@10"), lambda _: qrels) == {}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--fuse", "combsum"], "--fuse: unknown method 'combsum'"),
        (["--fuse", "rrf", "--fuse-folds", "1"], "--fuse-folds must be an integer from 2"),
    ],
)
def test_sweep_refuses_bad_fusion_options_before_running(tmp_path, capsys, extra, message):
    args = [
        "sweep",
        "--datasets",
        "scifact",
        "--modes",
        ",".join(MODES),
        "--output",
        str(tmp_path / "out"),
        *extra,
    ]
    assert main(args) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
