"""``heta-eval check``: compare scores with published reference numbers (OK / OKish / FAIL)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.compare import add_source_arguments, load_from_args

MTEB_HELP = (
    "MTEB results files, or folders of them (MTEB's results repository layout), whose "
    "models are reference systems too, named as MTEB names them (repeatable)"
)


def add_mteb_argument(parser: argparse.ArgumentParser) -> None:
    """``--mteb PATH``: MTEB results files read as reference rows."""
    parser.add_argument("--mteb", action="append", default=[], metavar="PATH", help=MTEB_HELP)


def references_from_args(args: argparse.Namespace) -> list[Any]:
    """The shipped references and those of ``--mteb``'s files."""
    from heta_eval.compare.mteb import MtebFormatError, mteb_references
    from heta_eval.data.references import load_references

    try:
        imported = mteb_references(args.mteb)
    except MtebFormatError as error:
        raise CliError(str(error)) from None
    if args.mteb and not imported:
        raise CliError(f"{', '.join(args.mteb)}: no BEIR retrieval task in these MTEB results")
    return [*load_references(), *imported]


EPILOG = """examples:
  heta-eval check results/scifact --system bm25-flat
  heta-eval check run.trec --dataset scifact --data-dir ../shared/datasets/beir --system bm25-flat
  heta-eval check run.trec --dataset ./my_dataset
  heta-eval check results/scifact --mode vector_search --system all-MiniLM-L6-v2
  heta-eval check results/scifact --mode vector_search --mteb mteb-results/ \
      --system sentence-transformers/all-MiniLM-L6-v2

Statuses: OK when |Δ| <= 1e-4; OKish when |Δ| <= 0.01 or the score is higher than the
reference; FAIL otherwise. Pyserini references are trec_eval -c numbers and are checked
against our strict aggregate; MTEB and BEIR-paper references against the BEIR aggregate.
Reference systems: bm25-flat, bm25-multifield (Pyserini 2CR), all-MiniLM-L6-v2 (MTEB),
bm25-beir-paper (BEIR paper Table 2). Without --system every reference is listed.
Exit status 1 when --system is given and a check FAILs; with --require-ok, unless every
check is OK.
"""

REFERENCE_METRICS = ("ndcg@10", "recall@100", "recall@1000")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check",
        help="check scores against reference numbers (Pyserini, MTEB, BEIR paper)",
        description="Compare a run's scores with published reference numbers and print OK, "
        "OKish or FAIL per dataset and metric, with the reference's source.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--system", help="reference system (default: all references)")
    add_mteb_argument(parser)
    parser.add_argument(
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="only these metrics (repeatable)",
    )
    add_source_arguments(parser, exclusive=False)
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    parser.add_argument(
        "--require-ok",
        action="store_true",
        help="exit status 1 unless every check is OK (|Δ| <= 1e-4): OKish fails too",
    )
    parser.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    from heta_eval.data.folders import is_folder_argument
    from heta_eval.data.references import check
    from heta_eval.measures.measure import canonical_metric

    references = references_from_args(args)
    known = list(dict.fromkeys(ref.system for ref in references))
    if args.system is not None and args.system not in known:
        raise CliError(f"unknown --system {args.system!r}; known: {', '.join(known)}")
    systems = load_from_args(args, REFERENCE_METRICS, side_by_side=False)
    wanted = {canonical_metric(m) for m in args.metrics} if args.metrics else None
    # A registered --dataset NAME vouches for a results folder's data; a TREC run's dataset
    # (and whether it is the registered one) was found from --dataset itself.
    claimed = args.dataset if args.dataset and not is_folder_argument(args.dataset) else None
    results: list[tuple[str, Any]] = []
    for system in systems:
        vouched = claimed if system.from_results_folder else None
        if system.unverified and not vouched:
            print(f"{system.name}: no reference check: {system.unverified}", file=sys.stderr)
            continue
        dataset = vouched or system.dataset
        if not dataset:
            raise CliError(f"{system.name}: unknown dataset; give --dataset NAME")
        observed = {
            dataset: {
                metric: values
                for metric, values in system.aggregates.items()
                if wanted is None or metric in wanted
            }
        }
        found = check(observed, args.system, references=references)
        if not found:
            print(
                f"{system.name}: no reference for {dataset} "
                f"({', '.join(observed[dataset]) or 'no metrics'})",
                file=sys.stderr,
            )
        results += [(system.name, item) for item in found]
    _print(results, args.format)
    failed = any(item.status == "FAIL" for _, item in results)
    if args.require_ok and (not results or any(item.status != "OK" for _, item in results)):
        return 1
    return 1 if failed and args.system is not None else 0


def _print(results: list[tuple[str, Any]], form: str) -> None:
    if form == "json":
        rows = [{"system": name, **vars(item)} for name, item in results]
        print(json.dumps(rows, indent=2))
    elif form == "markdown":
        from heta_eval.io.tables import Table

        header = ["system", "dataset", "metric", "score", "reference", "Δ", "status", "source"]
        rows = [
            [
                name,
                r.dataset,
                r.metric,
                f"{r.observed:.4f} ({r.aggregate})",
                f"{r.expected:.4f} ({r.system})",
                f"{r.delta:+.4f}",
                r.status,
                r.source,
            ]
            for name, r in results
        ]
        print(Table(header, rows).markdown(), end="")
    else:
        from heta_eval.io.tables import markdown_text

        for name, r in results:
            print(markdown_text(f"{name}: {r.line()}"))
