"""``heta-eval evaluate``: score a run file against qrels with BEIR's official numbers."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from typing import Any

from heta_eval._runtime import paused_gc, single_threaded_blas, start_numba_without_blas
from heta_eval.cli import CliError
from heta_eval.cli.numbers import at_most_values
from heta_eval.measures.params import check_cutoff

EPILOG = """examples:
  heta-eval evaluate --run run.trec --qrels qrels/test.tsv
  heta-eval evaluate --run run.trec --dataset scifact --data-dir ../shared/datasets/beir
  heta-eval evaluate --run results.json --dataset scifact --k 10,100 --json
  heta-eval evaluate --run run.trec --dataset ./my_dataset
  heta-eval evaluate --run bm25.trec --run dense.trec --qrels qrels.txt \\
      --measures "nDCG@10 R@1000 Rprec"
  heta-eval evaluate --run run.trec --qrels qrels.txt --measures "ndcg_cut.10 bpref" \\
      --json --per-query

--measures takes ir_measures (nDCG@10, AP, R@100, RR, Rprec, Bpref, infAP, Success@5,
Judged@10), trec_eval (ndcg_cut.10, recall.100,1000, recip_rank, iprec_at_recall.0.10, ...)
or BEIR (NDCG@10, MRR@10, R_cap@10, Hole@10, Accuracy@10) names, separated by spaces or
commas; see docs/retrieval-core.md.

The BEIR column is beir's EvaluateRetrieval.evaluate (queries missing from the run are
dropped from the mean; MRR, R_cap, Hole and Accuracy divide by all judged queries, as
beir's evaluate_custom does).
The strict column is trec_eval -c (every judged query counts, missing ones as 0).
Self-hits (doc id == query id) are removed, as BEIR does, unless --keep-self-hits.
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="score a TREC run (or BEIR results JSON) against qrels",
        description="Score a run file with BEIR's official metrics and trec_eval -c strict ones.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--run",
        required=True,
        action="append",
        help="TREC run (6 columns) or BEIR results JSON, a path, a pipe or - (standard "
        "input); repeat for a column per run",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--qrels", help="TREC qrels (qid 0 docid rel) or BEIR qrels tsv; a path, a pipe or -"
    )
    source.add_argument(
        "--dataset",
        metavar="NAME|PATH",
        help="a registered dataset (its evaluation split) or a folder in the BEIR layout",
    )
    parser.add_argument("--data-dir", help="folder holding <dataset>/ (with --dataset NAME)")
    parser.add_argument("--split", help="qrels split (with --dataset; default: the registry's)")
    parser.add_argument(
        "--k", default="1,3,5,10,100", help="comma-separated cutoffs (default: 1,3,5,10,100)"
    )
    parser.add_argument(
        "--measures",
        help='measure names, space- or comma-separated (replaces --k), e.g. "nDCG@10 R@1000 Rprec"',
    )
    parser.add_argument(
        "--duplicates",
        choices=("error", "last"),
        default="error",
        help="repeated (query, doc) pairs: error (default) or last wins (BEIR)",
    )
    parser.add_argument(
        "--keep-self-hits",
        action="store_true",
        help="do not remove documents whose id equals the query id",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--per-query", action="store_true", help="with --json: add every query's values"
    )
    parser.set_defaults(handler=run_evaluate)


#: BEIR's families scored at each --k: nDCG, MAP, recall, P, MRR (measure.METRICS; its
#: import is kept out of a usage error's path).
_FAMILIES = 5


def _k_values(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise CliError(f"--k must be comma-separated positive integers, got {text!r}") from None
    if not ks or any(k <= 0 for k in ks) or len(set(ks)) != len(ks):
        raise CliError(f"--k must be distinct positive integers, got {text!r}")
    at_most_values("--k", _FAMILIES * len(ks))
    try:
        return tuple(check_cutoff(k) for k in ks)
    except ValueError as error:
        raise CliError(f"--k: {error}") from None


def _load_qrels(args: argparse.Namespace) -> tuple[dict[str, dict[str, int]], str, bool]:
    """qrels, a label for the output, and the ignore_identical_ids policy."""
    from heta_eval.data.beir_loader import DatasetFormatError, load_beir
    from heta_eval.data.folders import is_folder_argument, resolve_dataset
    from heta_eval.data.locate import DatasetNotFoundError
    from heta_eval.data.registry import RegistryError, get_dataset
    from heta_eval.io.grammar import TrecFormatError
    from heta_eval.io.qrels import read_qrels

    if args.qrels:
        if args.data_dir or args.split:
            raise CliError("--data-dir and --split go with --dataset, not --qrels")
        try:
            return read_qrels(_open(args.qrels), duplicates=args.duplicates), args.qrels, True
        except (OSError, TrecFormatError) as error:
            raise CliError(str(error)) from None
    if args.data_dir and is_folder_argument(args.dataset):
        raise CliError(f"--dataset {args.dataset} is a folder: drop --data-dir")
    try:
        if not is_folder_argument(args.dataset) and get_dataset(args.dataset).subsets:
            info = get_dataset(args.dataset)
            raise CliError(
                f"{info.name} is scored per sub-forum: use --dataset "
                f"{info.name}/{info.subsets[0]} (and average the {len(info.subsets)})"
            )
        found = resolve_dataset(args.dataset, args.data_dir, args.split, qrels_only=True)
        warning = found.warning()
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
        qrels = load_beir(found.folder, found.split).qrels
        return qrels, f"{found.info.name} ({found.split})", found.info.ignore_identical_ids
    except (RegistryError, DatasetNotFoundError, DatasetFormatError, OSError) as error:
        raise CliError(str(error)) from None


def _open(name: str) -> Any:
    """An input opened once (a FIFO or ``-`` is read to its end here, never reopened)."""
    from heta_eval.io.source import open_input

    try:
        return open_input(name)
    except OSError as error:
        raise CliError(f"{name}: {error.strerror or error}") from None


def _evaluate(args: argparse.Namespace, path: Any, qrels: dict, ignore_ids: bool) -> Any:
    from heta_eval.io.grammar import TrecFormatError
    from heta_eval.io.validate import InputError
    from heta_eval.measures.measure import UnknownMeasureError
    from heta_eval.retrieval.run_file import evaluate_run_file

    try:
        if args.measures is not None:
            return evaluate_run_file(
                qrels,
                path,
                measures=args.measures,
                duplicates=args.duplicates,
                ignore_identical_ids=ignore_ids,
            )
        return evaluate_run_file(
            qrels,
            path,
            _k_values(args.k),
            duplicates=args.duplicates,
            ignore_identical_ids=ignore_ids,
        )
    except (OSError, TrecFormatError, InputError, UnknownMeasureError) as error:
        raise CliError(str(error)) from None


def _check_measures(args: argparse.Namespace) -> tuple[str, int]:
    """``--k`` or ``--measures``, read: the option and how many measures it asks for (its
    errors are one line)."""
    if args.measures is None:
        return "--k", _FAMILIES * len(_k_values(args.k))
    from heta_eval.measures.measure import UnknownMeasureError, parse_measures

    try:
        count = len(parse_measures(args.measures))
    except UnknownMeasureError as error:
        raise CliError(str(error)) from None
    at_most_values("--measures", count)
    return "--measures", count


def _payload(args: argparse.Namespace, path: str, label: str, result: Any) -> dict:
    payload: dict[str, Any] = {}
    if args.measures is None:
        payload.update(result.beir_dict())
        payload["strict"] = result.strict_dict()
    else:
        payload["measures"] = {
            name: {"beir": value.beir, "strict": value.strict}
            for name, value in result.aggregates.items()
        }
    payload.update(counts=dict(result.counts), run=path, qrels=label)
    if args.per_query:
        payload["per_query"] = result.per_query
    return payload


def _one_shot_start(paths: list[Any], stack: ExitStack) -> None:
    """Start-up of a process that scores a large run file and exits: numba's compiler
    starts without its scipy BLAS probe (none of the kernels calls BLAS), and the cyclic
    garbage collector waits (it would walk numba's import-time objects several times)."""
    from heta_eval.providers.backends import compiled_run_file

    if any(compiled_run_file(path) for path in paths):
        # Before numba's import, the largest part of the garbage. main() may be called
        # in-process (tests, scripts): collection resumes after, frozen (see paused_gc).
        stack.enter_context(paused_gc(freeze=True))
        start_numba_without_blas()


def run_evaluate(args: argparse.Namespace) -> int:
    single_threaded_blas()  # before numpy's import: nothing here calls BLAS
    with ExitStack() as stack:
        return _run_evaluate(args, stack)


def _run_evaluate(args: argparse.Namespace, stack: ExitStack) -> int:
    if args.per_query and not args.json:
        raise CliError("--per-query goes with --json")
    if args.measures is not None and args.k != "1,3,5,10,100":
        raise CliError("give --measures or --k, not both")
    if args.run.count("-") + (args.qrels == "-") > 1:
        raise CliError("standard input (-) can be read once: give it to one --run or --qrels")
    option, measures = _check_measures(args)  # before anything is read
    qrels, label, ignore_identical_ids = _load_qrels(args)
    at_most_values(option, measures, sum(1 for docs in qrels.values() if docs))
    runs = [_open(path) for path in args.run]
    _one_shot_start(runs, stack)
    if args.keep_self_hits:
        ignore_identical_ids = False
    results = [
        (path, _evaluate(args, run, qrels, ignore_identical_ids))
        for path, run in zip(args.run, runs, strict=True)
    ]
    if args.json:
        payloads = [_payload(args, path, label, result) for path, result in results]
        print(json.dumps(payloads[0] if len(payloads) == 1 else {"runs": payloads}, indent=2))
        return 0
    if len(results) == 1:
        path, result = results[0]
        print(f"run:   {path}")
        print(f"qrels: {label}")
        print(_counts_line(result.counts))
        print()
        print(result.table())
        return 0
    print(f"qrels: {label}")
    for i, (path, result) in enumerate(results, 1):
        print(f"run {i}: {path} ({_counts_line(result.counts)})")
    print()
    print(_runs_table(results, "beir", "BEIR"))
    if any(v.differs for _, result in results for v in result.aggregates.values()):
        print()
        print(_runs_table(results, "strict", "strict (trec_eval -c)"))
    return 0


def _counts_line(counts: dict[str, int]) -> str:
    return "queries: " + ", ".join(
        f"{key.replace('_', ' ')} {value:,}" for key, value in counts.items()
    )


def _runs_table(results: list[tuple[str, Any]], attribute: str, title: str) -> str:
    """One row per measure, one column per run."""
    from heta_eval.io.tables import Table

    rows = []
    for name in results[0][1].aggregates:
        cells = []
        for _, result in results:
            value = getattr(result.aggregates[name], attribute)
            cells.append("–" if value is None else f"{value:.5f}")
        rows.append([name, *cells])
    header = [title, *(f"run {i}" for i in range(1, len(results) + 1))]
    return Table(header, rows, align="l" + "r" * len(results)).markdown().rstrip("\n")
