"""``heta-eval evaluate``: score a run file against qrels with BEIR's official numbers."""

from __future__ import annotations

import argparse
import json
import os

from heta_eval.cli import CliError

EPILOG = """examples:
  heta-eval evaluate --run run.trec --qrels qrels/test.tsv
  heta-eval evaluate --run run.trec --dataset scifact --data-dir ../shared/datasets/beir
  heta-eval evaluate --run results.json --dataset scifact --k 10,100 --json

The BEIR column is beir's EvaluateRetrieval.evaluate (queries missing from the run are
dropped from the mean; MRR divides by all judged queries, as beir's evaluate_custom does).
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
    parser.add_argument("--run", required=True, help="TREC run (6 columns) or BEIR results JSON")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--qrels", help="TREC qrels (qid 0 docid rel) or BEIR qrels tsv")
    source.add_argument("--dataset", help="registry dataset name (uses its evaluation split)")
    parser.add_argument("--data-dir", help="folder holding <dataset>/ (with --dataset)")
    parser.add_argument("--split", help="qrels split (with --dataset; default: the registry's)")
    parser.add_argument(
        "--k", default="1,3,5,10,100", help="comma-separated cutoffs (default: 1,3,5,10,100)"
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
    parser.set_defaults(handler=run_evaluate)


def _k_values(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise CliError(f"--k must be comma-separated positive integers, got {text!r}") from None
    if not ks or any(k <= 0 for k in ks) or len(set(ks)) != len(ks):
        raise CliError(f"--k must be distinct positive integers, got {text!r}")
    return ks


def _load_qrels(args: argparse.Namespace) -> tuple[dict[str, dict[str, int]], str, bool]:
    """qrels, a label for the output, and the ignore_identical_ids policy."""
    from heta_eval.data.beir_loader import DatasetFormatError, load_beir
    from heta_eval.data.locate import DatasetNotFoundError, find_dataset
    from heta_eval.data.registry import RegistryError, get_dataset
    from heta_eval.trec import TrecFormatError, read_qrels

    if args.qrels:
        if args.data_dir or args.split:
            raise CliError("--data-dir and --split go with --dataset, not --qrels")
        try:
            return read_qrels(args.qrels, duplicates=args.duplicates), args.qrels, True
        except (OSError, TrecFormatError) as error:
            raise CliError(str(error)) from None
    try:
        info = get_dataset(args.dataset)
        if info.subsets:
            raise CliError(
                f"{info.name} is scored per sub-forum: use --dataset "
                f"{info.name}/{info.subsets[0]} (and average the {len(info.subsets)})"
            )
        split = args.split or info.split
        folder = find_dataset(info.name, args.data_dir)
        return load_beir(folder, split).qrels, f"{info.name} ({split})", info.ignore_identical_ids
    except (RegistryError, DatasetNotFoundError, DatasetFormatError, OSError) as error:
        raise CliError(str(error)) from None


#: Smaller run files go to pytrec_eval: loading numba and the compiled kernel costs more than
#: it saves below about AUTO_ENGINE_ROWS results (~40 bytes a TREC line).
COMPILED_MIN_BYTES = 8 * 2**20


def _evaluate_fast(
    args: argparse.Namespace,
    qrels: dict[str, dict[str, int]],
    ks: tuple[int, ...],
    ignore_identical_ids: bool,
) -> object | None:
    """The columnar path: TREC text straight to arrays, scored by the compiled engine.

    None when it does not apply (a small file, JSON, a parse problem, repeated pairs, no
    numba): the validating reader then reads the file and names the line of any error.
    """
    try:
        if os.path.getsize(args.run) < COMPILED_MIN_BYTES:
            return None
    except OSError:
        return None  # the validating reader reports it
    from heta_eval.evaluation.engine import HAVE_NUMBA
    from heta_eval.evaluation.retrieval import DuplicateRowsError, evaluate_columnar_run
    from heta_eval.trec import read_run_columnar

    if not HAVE_NUMBA:
        return None
    try:
        columnar = read_run_columnar(args.run, ignore_identical_ids=ignore_identical_ids)
    except OSError:
        return None  # the validating reader reports it
    if columnar is None:
        return None
    try:
        return evaluate_columnar_run(qrels, columnar, ks, reject_duplicates=True)
    except DuplicateRowsError:
        return None


def run_evaluate(args: argparse.Namespace) -> int:
    from heta_eval.evaluation.retrieval import evaluate_run
    from heta_eval.trec import TrecFormatError, read_run

    ks = _k_values(args.k)
    qrels, label, ignore_identical_ids = _load_qrels(args)
    if args.keep_self_hits:
        ignore_identical_ids = False
    result = _evaluate_fast(args, qrels, ks, ignore_identical_ids)
    if result is None:
        try:
            run = read_run(args.run, duplicates=args.duplicates)
        except (OSError, TrecFormatError) as error:
            raise CliError(str(error)) from None
        result = evaluate_run(qrels, run, k_values=ks, ignore_identical_ids=ignore_identical_ids)
    counts = dict(result.counts)
    if args.json:
        payload = {
            **result.beir_dict(),
            "strict": result.strict_dict(),
            "counts": counts,
            "run": args.run,
            "qrels": label,
        }
        print(json.dumps(payload, indent=2))
        return 0
    print(f"run:   {args.run}")
    print(f"qrels: {label}")
    print(
        "queries: "
        + ", ".join(f"{key.replace('_', ' ')} {value:,}" for key, value in counts.items())
    )
    print()
    print(result.table())
    return 0
