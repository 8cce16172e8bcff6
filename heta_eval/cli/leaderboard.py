"""``heta-eval leaderboard``: one metric over datasets × systems, as a table and a PNG plot."""

from __future__ import annotations

import argparse
import sys

from heta_eval.cli import CliError
from heta_eval.cli.check import add_mteb_argument, references_from_args
from heta_eval.cli.compare import (
    add_different_data_argument,
    add_source_arguments,
    load_from_args,
    write_output,
)

EPILOG = """examples:
  heta-eval leaderboard results/scifact results/nfcorpus results/fiqa
  heta-eval leaderboard results/* --metric recall@100 --format latex --plot leaderboard.png
  heta-eval leaderboard results/scifact --reference bm25-flat --reference all-MiniLM-L6-v2
  heta-eval leaderboard results/scifact --mteb mteb-results/   # beside published models

Each result folder contributes one system per mode (named after the mode, or after the
folder with --name-by folder) on its benchmark. TREC run files need --dataset, which also
names their column. Rows are systems, columns datasets plus the average (only for systems
with a score on every dataset, as in the BEIR paper); the best score per column is bold.
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "leaderboard",
        help="one table of a metric across datasets and systems (markdown, LaTeX, CSV, HTML, PNG)",
        description="Tabulate one metric across datasets × systems, BEIR-style with an "
        "average column, and optionally plot it.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--metric", default="ndcg@10", help="metric to tabulate (ndcg@10)")
    parser.add_argument(
        "--aggregate",
        choices=("beir", "strict", "value"),
        default="beir",
        help="which mean: BEIR's (default), strict trec_eval -c, or the evaluator's headline value",
    )
    parser.add_argument(
        "--reference",
        action="append",
        default=[],
        metavar="SYSTEM",
        help="add a reference system's published numbers as a row (repeatable)",
    )
    add_mteb_argument(parser)
    parser.add_argument(
        "--name-by",
        choices=("mode", "folder"),
        default="mode",
        help="name result-folder systems after their mode (default) or folder",
    )
    add_source_arguments(parser, exclusive=False)
    add_different_data_argument(parser, across=True)
    parser.add_argument(
        "--format", choices=("markdown", "latex", "csv", "html"), default="markdown"
    )
    parser.add_argument("--plot", metavar="PNG", help="also write a bar chart to this PNG file")
    parser.add_argument("--output", "-o", help="write the table to this file instead of stdout")
    parser.set_defaults(handler=run_leaderboard)


def run_leaderboard(args: argparse.Namespace) -> int:
    from heta_eval.compare.leaderboard import REFERENCE_SUFFIX, leaderboard
    from heta_eval.compare.loading import OWN_DATA
    from heta_eval.data.references import dataset_key, load_references
    from heta_eval.measures.measure import canonical_metric

    metric = canonical_metric(args.metric)
    systems = load_from_args(args, [metric], across_datasets=True)
    scores: dict[str, dict[str, float | None]] = {}
    for system in systems:
        dataset = args.dataset or system.dataset
        if not dataset:
            raise CliError(f"{system.name}: unknown dataset; give --dataset NAME")
        if args.name_by == "mode" and system.mode:
            name = system.mode
        else:
            name = system.name.split(":")[0] if system.mode else system.name
        value = system.aggregate(metric, args.aggregate)
        if value is None:
            value = system.aggregate(metric, "value")
        row = scores.setdefault(name, {})
        key = dataset_key(dataset)
        if system.unverified and not args.dataset:
            # Not the registered data: a column of its own, beside no published number.
            own = system.unverified.endswith(OWN_DATA)
            key = dataset if own else f"{dataset} (other data)"
            print(f"note: {system.name}: {system.unverified}", file=sys.stderr)
        if key in row:
            raise CliError(f"two results for {name} on {key}; use --mode or --name-by folder")
        row[key] = value
    if not any(v is not None for row in scores.values() for v in row.values()):
        raise CliError(f"no {metric!r} scores in {', '.join(args.results)}")
    references = references_from_args(args)
    known = list(dict.fromkeys(ref.system for ref in references))
    imported = [s for s in dict.fromkeys(r.system for r in references[len(load_references()) :])]
    datasets = {d for row in scores.values() for d in row}
    for reference in dict.fromkeys([*args.reference, *imported]):  # --mteb's models: rows
        if reference not in known:
            raise CliError(f"unknown --reference {reference!r}; known: {', '.join(known)}")
        row = {
            ref.dataset: ref.value
            for ref in references
            if ref.system == reference and ref.metric == metric and ref.dataset in datasets
        }
        if row or reference in args.reference:
            scores[f"{reference}{REFERENCE_SUFFIX}"] = row
    board = leaderboard(scores, metric)
    write_output(board.render(args.format), args.output)
    if args.plot:
        try:
            print(f"wrote {board.plot(args.plot)}", file=sys.stderr)
        except OSError as error:
            raise CliError(f"{args.plot}: {error.strerror or error}") from None
    return 0
