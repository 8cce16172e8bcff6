"""``heta-eval fuse``: fuse two or more runs into one TREC run, optionally tuning its weights
(or rrf's k) on queries it does not report on."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.numbers import DEPTH, FINITE, FOLDS, RRF_K, SEED, STEP, add_number, numbers

METHODS = (
    "rrf",
    "sum",
    "mnz",
    "anz",
    "max",
    "min",
    "med",
    "wsum",
    "isr",
    "log_isr",
    "bordafuse",
    "condorcet",
)
NORMS = ("min-max", "max", "sum", "zmuv", "rank", "borda", "none")

EPILOG = """examples:
  heta-eval fuse bm25.trec dense.trec --method rrf -o fused.trec
  heta-eval fuse results/scifact --modes keyword_search,vector_search --method wsum \\
      --weights 0.3,0.7 -o fused.trec
  heta-eval fuse bm25.trec dense.trec --method wsum --optimize ndcg@10 \\
      --dataset scifact --folds 5 -o fused.trec
  heta-eval fuse bm25.trec dense.trec --method wsum --optimize ndcg@10 \\
      --dataset scifact --tune-split train -o fused.trec

Methods and normalisations are ranx's (scores equal ranx.fuse's); rank-based methods (rrf,
isr, log_isr, bordafuse, condorcet) ignore --norm. A results folder stands for its
runs/<mode>.trec files (--modes picks them). --optimize METRIC picks --weights (wsum) or
--k (rrf) from ranx's grid on some queries and reports the score on the others: with
--folds N by N-fold cross-validation over the judged queries, with --tune-split or
--train-qrels on one split's judgments, reported on --qrels/--dataset's. The written run
fuses each query with the setting chosen without it. See docs/fusion.md.
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fuse",
        help="fuse two or more runs (rrf, wsum, mnz, ...), optionally tuning weights honestly",
        description="Fuse runs into one TREC run with ranx's fusion methods and normalisations.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("runs", nargs="+", help="TREC runs, BEIR results JSON, results folders")
    parser.add_argument("--modes", help="with a results folder: comma-separated modes to fuse")
    parser.add_argument("-o", "--output", required=True, help="the fused TREC run to write")
    parser.add_argument("--method", choices=METHODS, default="rrf", help="default: rrf")
    parser.add_argument("--norm", choices=NORMS, default="min-max", help="default: min-max")
    add_number(parser, "--k", rule=RRF_K, default=60, help="rrf's k (default: 60)")
    parser.add_argument("--weights", help="wsum: comma-separated, one per run")
    add_number(parser, "--depth", rule=DEPTH, default=1000, help="documents kept per query")
    parser.add_argument("--tag", default="fused", help="the run tag (6th column)")
    tuning = parser.add_argument_group("tuning (--optimize)")
    tuning.add_argument("--optimize", metavar="METRIC", help="tune --weights or --k for METRIC")
    tuning.add_argument("--qrels", help="judgments the score is reported on")
    tuning.add_argument("--dataset", metavar="NAME|PATH", help="or a dataset's (its --split)")
    tuning.add_argument("--data-dir", help="folder holding <dataset>/ (with --dataset NAME)")
    tuning.add_argument("--split", help="the reported split (with --dataset)")
    add_number(tuning, "--folds", rule=FOLDS, help="N-fold cross-validation (default: 5)")
    tuning.add_argument("--tune-split", help="tune on this split of --dataset instead")
    tuning.add_argument("--train-qrels", help="tune on these judgments instead")
    add_number(tuning, "--seed", rule=SEED, default=0, help="the folds' shuffle (default: 0)")
    add_number(
        tuning, "--step", rule=STEP, default=0.1, help="wsum's weight step, dividing 1 (0.1)"
    )
    parser.set_defaults(handler=run_fuse, duplicates="error")


def _inputs(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """(label, source) per run: a file, or a results folder's runs/<mode>.trec."""
    modes = [m for m in (args.modes or "").split(",") if m]
    found: list[tuple[str, Any]] = []
    for name in args.runs:
        path = Path(name)
        if not (path.is_dir() and (path / "runs").is_dir()):
            if path.is_dir():
                raise CliError(f"{name}: a folder without runs/ (not a results folder)")
            found.append((name, name))  # a path, or - (standard input)
            continue
        available = sorted(p.stem for p in (path / "runs").glob("*.trec"))
        for mode in modes or available:
            if mode not in available:
                raise CliError(f"{name}: no mode {mode!r} (runs/ has {', '.join(available)})")
            found.append((f"{name}:{mode}", path / "runs" / f"{mode}.trec"))
    if modes and not any(Path(n).is_dir() for n in args.runs):
        raise CliError("--modes goes with a results folder")
    return found


def _read(inputs: list[tuple[str, Any]]) -> list[dict]:
    from heta_eval.io.grammar import TrecFormatError
    from heta_eval.io.run import read_run

    runs = []
    for label, source in inputs:
        try:
            runs.append(read_run(source))
        except OSError as error:
            raise CliError(f"{label}: {error.strerror or error}") from None
        except (TrecFormatError, ValueError) as error:
            text = str(error)  # the readers' errors name the file and line already
            raise CliError(text if str(source) in text else f"{label}: {text}") from None
    return runs


def _params(args: argparse.Namespace, n_runs: int) -> dict[str, Any]:
    params: dict[str, Any] = {"k": int(args.k) if float(args.k).is_integer() else args.k}
    if args.weights is not None:
        if args.method != "wsum":
            raise CliError("--weights goes with --method wsum")
        params["weights"] = numbers("--weights", args.weights, FINITE)
    elif args.method == "wsum" and not args.optimize:
        raise CliError(f"--method wsum needs --weights (one per run: {n_runs}) or --optimize")
    return params


def run_fuse(args: argparse.Namespace) -> int:
    from heta_eval.fusion import FusionError, fuse
    from heta_eval.io.write import write_run

    inputs = _inputs(args)
    params = _params(args, len(inputs))
    if args.optimize:  # the grid it implies, before any run is read
        from heta_eval.fusion.optimize import grid_size

        try:
            grid_size(args.method, len(inputs), args.step)
        except FusionError as error:
            raise CliError(f"--step {args.step:g}: {error}") from None
    runs = _read(inputs)
    try:
        if args.optimize:
            from heta_eval.cli.fuse_tuning import tune

            fused = tune(args, runs, [label for label, _ in inputs])
        else:
            fused = fuse(runs, args.method, args.norm, params, depth=args.depth)
        write_run(fused, args.output, tag=args.tag)
    except (FusionError, ValueError) as error:
        raise CliError(str(error)) from None
    except OSError as error:
        raise CliError(f"{args.output}: {error.strerror or error}") from None
    rows = sum(map(len, fused.values()))
    print(
        f"fused {len(runs)} runs ({args.method}, norm {args.norm}): {len(fused):,} queries, "
        f"{rows:,} rows -> {args.output}",
        file=sys.stderr,
    )
    return 0
