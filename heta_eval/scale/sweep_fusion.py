"""Fusion settings swept over a sweep's cells (``heta-eval sweep --fuse``).

For each dataset × recipe whose sweep ran two or more modes, the modes' runs
(``<mode>/runs/<mode>.trec``) are fused by each method and scored against the dataset's
judgments: the strict mean (every judged query counts, one missing scores 0). ``wsum`` has
no weights to take, so its weights are tuned by k-fold cross-validation over the queries and
its score is the held-out one (:func:`heta_eval.fusion.optimize.cross_validate`); the other
methods run with ranx's defaults (min-max, ``rrf``'s k 60), tuned on nothing. Each fused run
is written to ``<dataset>/<recipe>/fused/<method>.trec``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from heta_eval.fusion import fuse
from heta_eval.fusion.optimize import cross_validate
from heta_eval.io.trec import read_run, write_run
from heta_eval.measures.measure import Measure
from heta_eval.retrieval.run import evaluate_run

__all__ = ["fused_scores"]

Qrels = Mapping[str, Mapping[str, int]]


def _strict_mean(qrels: Qrels, run: dict, measure: Measure) -> float:
    result = evaluate_run(qrels, {q: d for q, d in run.items() if d}, measures=[measure])
    (aggregate,) = result.aggregates.values()
    return aggregate.strict


def fused_scores(
    sweep: Any,
    manifest: Mapping[str, Any],
    methods: Sequence[str],
    measure: Measure,
    qrels_for: Callable[[str], Qrels],
    *,
    folds: int = 5,
    seed: int = 0,
) -> dict[str, dict[str, float | None]]:
    """``{"recipe/method(mode+mode)": {dataset name: score}}`` for the leaderboard."""
    scores: dict[str, dict[str, float | None]] = {}
    for dataset in sweep.datasets:
        for recipe in sweep.recipes:
            cells = [
                cell
                for cell in sweep.cells
                if cell.dataset == dataset
                and cell.recipe == recipe
                and manifest["cells"].get(cell.id, {}).get("status") == "done"
            ]
            if len(cells) < 2:
                continue
            runs = [read_run(sweep.folder(c) / "runs" / f"{c.mode}.trec") for c in cells]
            qrels = qrels_for(dataset)
            out = sweep.output / cells[0].name / recipe / "fused"
            out.mkdir(parents=True, exist_ok=True)
            for method in methods:
                if method == "wsum":
                    tuned = cross_validate(
                        runs, "wsum", "min-max", qrels, measure, folds=folds, seed=seed
                    )
                    run, value = tuned.run, tuned.score
                else:
                    run = fuse(runs, method=method)
                    value = _strict_mean(qrels, run, measure)
                write_run(run, out / f"{method}.trec", tag=method)
                row = f"{recipe}/{method}({'+'.join(c.mode for c in cells)})"
                scores.setdefault(row, {})[cells[0].name] = value
    return scores
