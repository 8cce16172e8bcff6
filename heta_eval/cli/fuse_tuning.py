"""``heta-eval fuse --optimize``: which judgments tune, which report, and the printed report
(the chosen setting per fold and the held-out score)."""

from __future__ import annotations

import argparse
import copy
from typing import Any

from heta_eval.cli import CliError


def _qrels(args: argparse.Namespace, split: str | None = None) -> dict:
    from heta_eval.cli.evaluate import _load_qrels

    if not args.qrels and not args.dataset:
        raise CliError("--optimize needs the judgments it reports on: --qrels or --dataset")
    if args.qrels and args.dataset:
        raise CliError("give --qrels or --dataset, not both")
    view = copy.copy(args)
    if split is not None:
        view.split = split
    return _load_qrels(view)[0]


def _train_qrels(path: str) -> dict:
    from heta_eval.io.grammar import TrecFormatError
    from heta_eval.io.qrels import read_qrels

    try:
        return read_qrels(path)
    except OSError as error:
        raise CliError(f"{path}: {error.strerror or error}") from None
    except TrecFormatError as error:
        raise CliError(str(error)) from None


def _measure(name: str) -> Any:
    """A measure in any spelling ``evaluate --measures`` or ``compare --metric`` takes."""
    from heta_eval.measures.measure import Measure, UnknownMeasureError

    try:
        return Measure.parse(name)
    except UnknownMeasureError as error:
        raise CliError(f"--optimize: {error}") from None


def _setting(params: dict[str, Any]) -> str:
    if "weights" in params:
        return "weights " + ",".join(f"{w:g}" for w in params["weights"])
    return f"k {params['k']}"


def tune(args: argparse.Namespace, runs: list[dict], labels: list[str]) -> dict:
    """Tune, print what was chosen and the held-out score; the fused run."""
    from heta_eval.fusion.optimize import cross_validate, tune_on_split

    measure = _measure(args.optimize)
    split_tuning = args.tune_split or args.train_qrels
    if args.tune_split and args.train_qrels:
        raise CliError("give --tune-split or --train-qrels, not both")
    if args.folds is not None and split_tuning:
        raise CliError("--folds cross-validates; --tune-split/--train-qrels tune on a split")
    if args.tune_split and not args.dataset:
        raise CliError("--tune-split goes with --dataset")
    test = _qrels(args)
    common = {"step": args.step, "depth": args.depth}
    if split_tuning:
        train = (
            _train_qrels(args.train_qrels) if args.train_qrels else _qrels(args, args.tune_split)
        )
        tuned = tune_on_split(runs, args.method, args.norm, train, test, measure, **common)
        where = f"tuned on {args.tune_split or args.train_qrels} ({len(train)} queries)"
        print(f"{where}: {_setting(tuned.settings[0])}")
        print(f"held-out {args.optimize} on {len(test)} other queries: {tuned.score:.5f}")
        return tuned.run
    folds = 5 if args.folds is None else args.folds
    tuned = cross_validate(
        runs, args.method, args.norm, test, measure, folds=folds, seed=args.seed, **common
    )
    print(f"runs: {', '.join(labels)}; {args.method}, norm {args.norm}")
    print(f"{folds}-fold cross-validation over {len(test)} judged queries (seed {args.seed}):")
    for i, (params, queries, score) in enumerate(
        zip(tuned.settings, tuned.fold_queries, tuned.fold_scores, strict=True), 1
    ):
        print(
            f"  fold {i}: {_setting(params)}  held-out {args.optimize} {score:.5f} "
            f"({len(queries)} queries)"
        )
    print(
        f"held-out {args.optimize} (each query scored by weights tuned without it): "
        f"{tuned.score:.5f}"
    )
    return tuned.run
