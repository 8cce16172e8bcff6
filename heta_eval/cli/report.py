"""``heta-eval report``: one self-contained HTML report of one or more results folders."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.compare import add_different_data_argument

EPILOG = """examples:
  heta-eval report results/scifact
  heta-eval report results/scifact-bm25 results/scifact-dense -o compare.html

The report is one HTML file with no network access (open it in any browser): the headline
per mode (BEIR and strict aggregates, reference checks, failed queries), provenance, a
sortable and filterable per-query table with a drill-down per query, metric distributions,
and paired tests between every two modes or folders (the numbers of heta-eval compare).
Document titles, snippets and relevance labels come from the dataset named in summary.json,
looked up under --data-dir (else $HETA_EVAL_DATA, else the cache); it is never downloaded.
"""


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write one self-contained HTML report of results folders",
        description="Write one HTML file showing results folders: headline, provenance, "
        "per-query table and drill-down, distributions and paired tests.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("results", nargs="+", metavar="RESULTS", help="results folders")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        help="the HTML file to write (default: report.html in the first folder)",
    )
    parser.add_argument("--data-dir", help="where the dataset lives (default: $HETA_EVAL_DATA)")
    parser.add_argument("--title", help="the report's title (default: the dataset names)")
    add_different_data_argument(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from heta_eval.report import ReportError, write_report
    from heta_eval.runner.results import ResultsFormatError

    try:
        path = write_report(
            args.results,
            args.output,
            data_dir=args.data_dir,
            title=args.title,
            allow_different_data=args.allow_different_data,
        )
    except (ReportError, ResultsFormatError, OSError) as error:
        raise CliError(str(error)) from None
    print(f"report: {path}", file=sys.stderr)
    return 0
