"""``heta-eval export``: results folders in the formats other tools read: MTEB's results
files (a leaderboard's), ranx's runs, qrels and comparison report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.compare import add_different_data_argument, comparable_or_refuse
from heta_eval.cli.numbers import PROBABILITY, RESAMPLES, SEED, add_number

EPILOG = """examples:
  heta-eval export results/scifact --to mteb --mode vector_search --model-name me/my-model \\
      --output mteb-results
  heta-eval export results/scifact --to ranx --output ranx/       # runs, qrels, report.json
  heta-eval export results/main results/pr --to ranx --metric ndcg@10 --output ranx/

--to mteb writes MTEB's results files (mteb 1.11 and later; the layout of MTEB's results
repository: OUTPUT/<org>__<model>/<revision>/<Task>.json and model_meta.json): the task
(SciFact, FiQA2018, CQADupstack<Forum>Retrieval, ...), its split, BEIR's means under MTEB's
keys (ndcg_at_10, map_at_10, recall_at_100, precision_at_10, mrr_at_10) and main_score
(nDCG@10). A mode with failed queries, a sample and data that is not the dataset are refused.

--to ranx writes each mode's run (<name>.json, ranx.Run.from_file reads it), the qrels
(qrels.json) and, for two or more systems, report.json (a ranx Report's to_dict(): means,
paired randomization test p-values and win/tie/loss, heta-eval's). In Python:
heta_eval.compare.ranx_objects.ranx_runs / ranx_qrels / ranx_report give the objects.
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export",
        help="write results folders as MTEB results files or ranx runs and reports",
        description="Export results folders in the formats other leaderboards and tools read.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("results", nargs="+", metavar="RESULTS", help="results folders")
    parser.add_argument("--to", choices=("mteb", "ranx"), required=True, help="the format")
    parser.add_argument("--output", "-o", required=True, help="the folder to write into")
    parser.add_argument(
        "--mode",
        action="append",
        dest="modes",
        metavar="MODE",
        help="only these modes (repeatable)",
    )
    mteb = parser.add_argument_group("MTEB")
    mteb.add_argument("--model-name", help="the model's name (default: heta-eval/<mode>)")
    mteb.add_argument(
        "--revision",
        default="no_revision_available",
        help="the model's revision (default: no_revision_available)",
    )
    mteb.add_argument("--task-name", help="the MTEB task of a dataset of your own")
    ranx = parser.add_argument_group("ranx")
    ranx.add_argument(
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="the report's metrics (default: ndcg@10 and recall@100)",
    )
    add_number(
        ranx,
        "--alpha",
        rule=PROBABILITY,
        default=0.05,
        help="the report's max_p, in (0, 1) (default 0.05)",
    )
    add_number(
        ranx,
        "--resamples",
        rule=RESAMPLES,
        default=10_000,
        help="randomization test sign flips (default 10000)",
    )
    add_number(ranx, "--seed", rule=SEED, default=0, help="random seed (default 0)")
    add_different_data_argument(parser)
    parser.set_defaults(handler=run_export)


def run_export(args: argparse.Namespace) -> int:
    for folder in args.results:
        if not (Path(folder) / "summary.json").is_file() and not _group(folder):
            raise CliError(f"{folder}: not a results folder (no summary.json)")
    written = _mteb(args) if args.to == "mteb" else _ranx(args)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _group(folder: str) -> bool:
    from heta_eval.compare.comparability import group_members

    return bool(group_members(folder))


def _modes(folder: str, wanted: list[str] | None) -> list[str]:
    from heta_eval.compare.loading import load_systems

    try:
        return [str(s.mode) for s in load_systems([folder], modes=wanted)]
    except (OSError, ValueError) as error:
        raise CliError(str(error)) from None


def _mteb(args: argparse.Namespace) -> list[Path]:
    from heta_eval.compare.mteb import MtebFormatError, export_mteb

    written: list[Path] = []
    for folder in args.results:
        modes = _modes(folder, args.modes)
        if args.model_name and (len(modes) > 1 or len(args.results) > 1):
            raise CliError(
                "--model-name names one model: choose one results folder and one "
                f"--mode (the folder holds {', '.join(modes)})"
            )
        for mode in modes:
            try:
                written += export_mteb(
                    folder,
                    args.output,
                    mode=mode,
                    revision=args.revision,
                    model_name=args.model_name or f"heta-eval/{mode}",
                    task=args.task_name,
                )
            except (MtebFormatError, OSError) as error:
                raise CliError(str(error)) from None
    return written


def _ranx(args: argparse.Namespace) -> list[Path]:
    from heta_eval.compare.loading import load_systems
    from heta_eval.compare.ranx_objects import ranx_qrels, ranx_report, ranx_runs
    from heta_eval.io.write import write_whole
    from heta_eval.measures.measure import canonical_metric

    comparable_or_refuse(args.results, args.allow_different_data)
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    written = []

    def write(name: str, data: Any) -> None:
        path = output / name
        write_whole(path, json.dumps(data, indent=1) + "\n")
        written.append(path)

    try:
        for folder in args.results:
            for run in ranx_runs(folder, args.modes).values():
                write(f"{run.name.replace('/', '_')}.json", _plain(run.to_dict()))
        write("qrels.json", _plain(ranx_qrels(args.results[0]).to_dict()))
        systems = load_systems(args.results, modes=args.modes)
        if len(systems) > 1:
            metrics = [canonical_metric(m) for m in args.metrics or ("ndcg@10", "recall@100")]
            report = ranx_report(
                systems, metrics, max_p=args.alpha, n_resamples=args.resamples, seed=args.seed
            )
            write("report.json", _plain(report.to_dict()))
    except (OSError, ValueError, ModuleNotFoundError) as error:  # ranx not installed
        raise CliError(str(error)) from None
    return written


def _plain(value: Any) -> Any:
    """ranx's numba dicts and numpy numbers as JSON's."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value
