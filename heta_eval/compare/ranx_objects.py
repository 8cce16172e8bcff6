"""Results folders as ranx objects: each mode's run as a ``ranx.Run`` carrying heta-eval's
per-query values (``run.scores``, ``run.mean_scores``, as ``ranx.evaluate`` would leave
them), the dataset's judgments as a ``ranx.Qrels``, and a comparison as a ``ranx`` Report
(``to_table()``, ``to_latex()``, ``to_dict()``) whose means, p-values and win/tie/loss are
heta-eval's (:func:`heta_eval.compare.compare`: the paired randomization test, ranx's
``fisher``, without correction, as ``ranx.compare`` reports them).

ranx comes with the ``compare`` extra (``pip install 'heta-eval[compare]'``). The values are
heta-eval's, not ranx's own: ranx scores some measures by other rules (its ``map@k``), so a
Run's ``scores`` keep heta-eval's names (``ndcg@10``, ``recall@100``) for heta-eval's
numbers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from heta_eval.compare.compare import compare_many
from heta_eval.compare.loading import SystemScores, load_result_folder, read_result_folder
from heta_eval.data.beir_loader import load_qrels
from heta_eval.io.trec import read_run

__all__ = ["ranx_qrels", "ranx_report", "ranx_runs"]

PathLike = str | os.PathLike[str]


def _ranx() -> Any:
    try:
        import ranx
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "ranx is not installed: pip install 'heta-eval[compare]' (heta-eval needs it only "
            "to hand you ranx objects)",
            name="ranx",
        ) from None
    return ranx


def ranx_runs(folder: PathLike, modes: Sequence[str] | None = None) -> dict[str, Any]:
    """``{mode: ranx.Run}`` of a results folder: the mode's ``runs/<mode>.trec`` (the
    documents and scores the system returned), named as ``heta-eval compare`` names the
    system, with its per-query values in ``run.scores[metric]`` and their means in
    ``run.mean_scores`` (heta-eval's, over the queries it scored)."""
    ranx = _ranx()
    path = Path(folder)
    out = {}
    for system in load_result_folder(path, modes):
        run = read_run(path / "runs" / f"{system.mode}.trec", duplicates="last")
        found = ranx.Run({qid: dict(docs) for qid, docs in run.items() if docs}, name=system.name)
        for qid, values in system.per_query.items():
            for metric, value in values.items():
                found.scores[metric][qid] = value
        for metric, per_query in found.scores.items():
            found.mean_scores[metric] = sum(per_query.values()) / len(per_query)
        out[str(system.mode)] = found
    return out


def ranx_qrels(folder: PathLike) -> Any:
    """The judgments a results folder was scored with, as a ``ranx.Qrels``: the split's
    qrels file of the dataset folder its ``summary.json`` records (``data``)."""
    ranx = _ranx()
    summary, _ = read_result_folder(folder)
    data = summary.get("data") or {}
    if not data.get("folder"):
        raise ValueError(f"{folder}: summary.json records no dataset folder (data.folder)")
    qrels = load_qrels(Path(data["folder"]) / "qrels" / f"{data.get('split', 'test')}.tsv")
    return ranx.Qrels({qid: docs for qid, docs in qrels.items() if docs}, name=data.get("name"))


def ranx_report(
    systems: Sequence[SystemScores] | Mapping[str, Mapping[str, Mapping[str, float]]],
    metrics: Sequence[str],
    *,
    max_p: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Any:
    """A ranx Report of every pair of systems (``SystemScores``, or ``{name: {query id:
    {metric: value}}}``) on ``metrics``: each system's mean over its queries, each pair's paired
    randomization test p-value (``significant`` when ``p <= max_p``, as ranx reads it) and
    win/tie/loss, all from :func:`~heta_eval.compare.compare_many`."""
    _ranx()  # installed, or one line saying how to get it
    from ranx.data_structures.frozenset_dict import FrozensetDict
    from ranx.data_structures.report import Report

    per_query = (
        {s.name: s.per_query for s in systems}
        if not isinstance(systems, Mapping)
        else {name: dict(values) for name, values in systems.items()}
    )
    names = list(per_query)
    pairs = list(combinations(names, 2))
    families = [({a: per_query[a], b: per_query[b]}, a, list(metrics)) for a, b in pairs]
    found = compare_many(families, n_resamples=n_resamples, seed=seed, alpha=max_p)
    results = {name: _means(per_query[name], metrics) for name in names}
    comparisons = FrozensetDict()
    win_tie_loss: dict[tuple[str, str], dict[str, dict[str, int]]] = {}
    for (a, b), comparison in zip(pairs, found, strict=True):
        tests: dict[str, dict[str, Any]] = {}
        for row in comparison.rows:
            p = row.p_permutation
            tests[row.metric] = {"p_value": p, "significant": bool(p <= max_p)}
            # ranx's W/T/L of (control, treatment): the control's wins.
            win_tie_loss.setdefault((a, b), {})[row.metric] = {
                "W": row.losses,
                "T": row.ties,
                "L": row.wins,
            }
            win_tie_loss.setdefault((b, a), {})[row.metric] = {
                "W": row.wins,
                "T": row.ties,
                "L": row.losses,
            }
        comparisons[{a, b}] = tests
    return Report(
        model_names=names,
        results=results,
        comparisons=comparisons,
        metrics=list(metrics),
        max_p=max_p,
        win_tie_loss=win_tie_loss,
        stat_test="fisher",
    )


def _means(per_query: Mapping[str, Mapping[str, float]], metrics: Sequence[str]) -> dict:
    out = {}
    for metric in metrics:
        values = [v[metric] for v in per_query.values() if metric in v]
        out[metric] = sum(values) / len(values) if values else float("nan")
    return out
