"""``heta-eval sweep``: every dataset × recipe × mode cell, resumable, with a leaderboard."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.numbers import FOLDS, HITS, add_number
from heta_eval.cli.ray_options import add_ray_arguments, executor_from_args

EXAMPLE = """\
examples:
  heta-eval sweep --datasets scifact,nfcorpus --modes keyword_search,vector_search \\
      --output results/sweep
  heta-eval sweep --datasets scifact,./my_dataset --modes keyword_search --output results/own
  heta-eval sweep --datasets scifact --modes keyword_search,vector_search,hybrid_search \\
      --recipes small.json,large.json --output results/chunking --ray auto

Each cell writes an ordinary results folder under OUTPUT/<dataset>/<recipe>/<mode>/;
OUTPUT/sweep.json records the cells done, so rerunning the same command resumes.
"""


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="run every dataset × recipe × mode and print a leaderboard (resumable)",
        description="Run a grid of datasets, recipes and modes, in sequence or as Ray tasks, "
        "each cell into its own results folder, then print one metric across all cells.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--datasets",
        required=True,
        help="comma-separated registered dataset names or folders in the BEIR layout",
    )
    parser.add_argument("--modes", required=True, help="comma-separated query modes")
    parser.add_argument(
        "--recipes",
        default="reference",
        help="comma-separated recipe JSON files, or 'reference' (default); each names its "
        "cells by the file's stem",
    )
    parser.add_argument("--output", type=Path, required=True, help="the sweep's folder")
    parser.add_argument("--data-dir", help="where datasets live (default: $HETA_EVAL_DATA)")
    add_number(parser, "--top-k", rule=HITS, default=100, help="hits per query (default: 100)")
    parser.add_argument("--metric", default="ndcg@10", help="leaderboard metric (ndcg@10)")
    parser.add_argument(
        "--fuse",
        help="comma-separated fusion methods (rrf, mnz, wsum, ...): fuse each dataset x "
        "recipe's modes and add their scores (wsum's held out by --fuse-folds cross-validation)",
    )
    add_number(parser, "--fuse-folds", rule=FOLDS, default=5, help="wsum's folds (default: 5)")
    add_ray_arguments(parser)
    parser.set_defaults(handler=handle)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _recipes(text: str) -> dict[str, Any]:
    from pydantic import ValidationError

    from heta_eval.reference import Recipe

    recipes: dict[str, Any] = {}
    for item in _split(text):
        name = "reference" if item == "reference" else Path(item).stem
        if name in recipes:
            raise CliError(f"two recipes named {name!r}; give the files distinct names")
        try:
            recipes[name] = Recipe() if item == "reference" else Recipe.from_file(item)
        except FileNotFoundError:
            raise CliError(f"recipe file {item} does not exist") from None
        except ValidationError as error:
            raise CliError(f"{item}: invalid recipe: {error}") from None
    return recipes


def _datasets(values: list[str]) -> list[str]:
    """Registered names as given; folders as absolute paths (a cell may run elsewhere)."""
    from heta_eval.data.folders import dataset_label, folder_info, is_folder_argument
    from heta_eval.data.locate import DatasetNotFoundError
    from heta_eval.data.registry import RegistryError, get_dataset

    datasets = []
    for value in values:
        try:
            if is_folder_argument(value):
                folder = Path(value).expanduser().resolve()
                folder_info(folder)  # a folder in the BEIR layout, or a one-line error
                datasets.append(str(folder))
            else:
                datasets.append(get_dataset(value).name)
        except (RegistryError, DatasetNotFoundError) as error:
            raise CliError(str(error)) from None
    labels = [dataset_label(d) for d in datasets]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise CliError(f"two datasets named {twice[0]!r}: rename one of the folders")
    return datasets


def handle(args: argparse.Namespace) -> int:
    # A usage error answers before the knowledge base (bm25s, torch) loads; ALL_MODES is
    # the reference knowledge base's MODES (tests/cli/test_cli_help_speed.py pins them equal).
    from heta_eval.cli.run import ALL_MODES

    modes = _split(args.modes)
    unknown = [m for m in modes if m not in ALL_MODES.split(",")]
    if unknown:
        raise CliError(f"unknown mode {unknown[0]!r}; modes: {ALL_MODES.replace(',', ', ')}")
    from heta_eval.encoding.dense import ModelLoadError
    from heta_eval.scale.errors import RayRunError
    from heta_eval.scale.sweep import Sweep, SweepError

    datasets = _datasets(_split(args.datasets))
    _check_fusion(args)
    try:
        sweep = Sweep(
            datasets,
            _recipes(args.recipes),
            modes,
            args.output,
            data_dir=args.data_dir,
            top_k=args.top_k,
        )
        sweep.load_manifest()  # a folder of another sweep is refused before any work
        manifest = sweep.run(
            executor=executor_from_args(args), log=lambda line: print(line, file=sys.stderr)
        )
    except (SweepError, ModelLoadError, RayRunError) as error:
        raise CliError(str(error)) from None
    board = sweep.leaderboard(manifest, args.metric)
    if args.fuse:
        board += "\n\n" + _fusion_board(args, sweep, manifest, _split(args.fuse))
    from heta_eval.io.write import write_whole

    write_whole(args.output / "leaderboard.md", board)
    print(board)
    from heta_eval.report.hook import report_after_sweep

    report_after_sweep(args.output, manifest)
    failed = [cid for cid, state in manifest["cells"].items() if state.get("status") != "done"]
    if failed:
        print(
            f"warning: {len(failed)} cells failed (rerun to retry): {', '.join(failed)}",
            file=sys.stderr,
        )
        return 1
    print(f"sweep: {args.output} ({len(sweep.cells)} cells)", file=sys.stderr)
    return 0


def _check_fusion(args: argparse.Namespace) -> None:
    """--fuse's methods and --metric as a measure, before any cell runs."""
    if not args.fuse:
        return
    from heta_eval.cli.fuse import METHODS

    unknown = [m for m in _split(args.fuse) if m not in METHODS]
    if unknown:
        raise CliError(f"--fuse: unknown method {unknown[0]!r}; choose from {', '.join(METHODS)}")
    from heta_eval.cli.fuse_tuning import _measure

    _measure(args.metric)


def _fusion_board(args: argparse.Namespace, sweep: Any, manifest: Any, methods: list) -> str:
    from heta_eval.cli.fuse_tuning import _measure
    from heta_eval.compare.leaderboard import leaderboard
    from heta_eval.data.beir_loader import load_beir
    from heta_eval.data.folders import resolve_dataset
    from heta_eval.fusion import FusionError
    from heta_eval.scale.sweep_fusion import fused_scores

    def qrels_for(dataset: str) -> Any:
        found = resolve_dataset(dataset, args.data_dir, None, qrels_only=True)
        return load_beir(found.folder, found.split).qrels

    try:
        scores = fused_scores(
            sweep, manifest, methods, _measure(args.metric), qrels_for, folds=args.fuse_folds
        )
    except FusionError as error:
        raise CliError(f"--fuse: {error}") from None
    title = "fused modes (strict means; wsum's weights tuned by cross-validation, held out)"
    return f"{title}\n\n{leaderboard(scores, args.metric).to_markdown()}"
