"""``heta-eval compare``: paired significance tests between systems, query by query."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.compare_gate import add_gate_arguments, gate_baselines, json_text, report_gate
from heta_eval.cli.compare_slices import add_slice_argument, render_slices, slice_comparison
from heta_eval.cli.numbers import COUNT, PROBABILITY, RESAMPLES, SEED, add_number

EPILOG = """examples:
  heta-eval compare results/scifact-bm25 results/scifact-dense
  heta-eval compare results/scifact --mode keyword_search --mode vector_search --metric ndcg@10
  heta-eval compare bm25.trec dense.trec --dataset scifact --data-dir ../shared/datasets/beir \\
      --metric ndcg@10 --metric recall@100 --format latex

  heta-eval compare results/main results/pr --fail-if-worse "nDCG@10>0.005" \\
      --fail-if-worse "recall@100:p<0.05" --gate-json gate.json   # a CI gate

A system is a (result folder, mode) pair, or a TREC run scored against --qrels/--dataset
(every judged query counts; one missing from a run scores 0, as trec_eval -c). The first
system is the baseline unless --baseline names another. Per metric: means, the paired
difference (system - baseline), a percentile bootstrap CI, a two-sided paired t-test and a
paired randomization test (sign flips, --seed), Holm-adjusted p-values over all comparisons,
win/tie/loss counts, and the queries that changed most.

--fail-if-worse makes it a regression gate: the first RESULTS is the baseline (a folder of
several modes: each mode against the same mode of the others), each condition is checked
against every candidate, one line per failed condition is printed on stderr, and the exit
status is 1 when any fails (0 when all hold, 2 for a usage or input error, folders of
different data included). Conditions: METRIC>MARGIN (an absolute drop), METRIC>PERCENT%
(relative to the baseline's mean), METRIC:p<ALPHA (a significant drop: Holm-adjusted
randomization test), or both (METRIC>MARGIN:p<ALPHA). With $GITHUB_STEP_SUMMARY set, the
gate's markdown table is added to the job's summary. See docs/compare.md.
"""

DEFAULT_METRICS = ("ndcg@10", "recall@100")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare systems with paired significance tests",
        description="Compare two or more systems query by query: paired t-test, randomization "
        "test, bootstrap CI, Holm correction, win/tie/loss and per-query deltas.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--baseline", help="system (name, folder, or mode) to compare against")
    parser.add_argument(
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="metric to compare, repeatable (default: ndcg@10 and recall@100 "
        "where available, else every common metric)",
    )
    add_source_arguments(parser)
    add_different_data_argument(parser)
    parser.add_argument(
        "--format", choices=("markdown", "latex", "html", "json"), default="markdown"
    )
    add_number(parser, "--seed", rule=SEED, default=0, help="random seed (default 0)")
    add_number(
        parser,
        "--resamples",
        rule=RESAMPLES,
        default=10_000,
        help="permutation and bootstrap resamples (default 10000)",
    )
    add_number(
        parser,
        "--confidence",
        rule=PROBABILITY,
        default=0.95,
        help="confidence level of the CI, in (0, 1) (default 0.95)",
    )
    add_number(
        parser,
        "--alpha",
        rule=PROBABILITY,
        default=0.05,
        help="significance level for the * marker, in (0, 1) (default 0.05)",
    )
    add_number(
        parser,
        "--top",
        rule=COUNT,
        default=5,
        help="queries with the largest gains and losses to list (default 5)",
    )
    parser.add_argument(
        "--missing",
        choices=("intersect", "zero"),
        default="intersect",
        help="queries scored by only one system: leave out (default) or count 0",
    )
    parser.add_argument("--output", "-o", help="write to this file instead of stdout")
    add_slice_argument(parser)
    add_gate_arguments(parser)
    parser.set_defaults(handler=run_compare)


def add_source_arguments(parser: argparse.ArgumentParser, *, exclusive: bool = True) -> None:
    """Arguments shared by compare, check and leaderboard: the results, modes and where
    qrels come from."""
    parser.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS",
        help="result folders (summary.json) or TREC run files",
    )
    parser.add_argument(
        "--mode",
        action="append",
        dest="modes",
        metavar="MODE",
        help="only these modes of the result folders (repeatable)",
    )
    source: Any = parser.add_mutually_exclusive_group() if exclusive else parser
    source.add_argument("--qrels", help="qrels for TREC run files (TREC or BEIR tsv)")
    source.add_argument(
        "--dataset",
        metavar="NAME|PATH",
        help="qrels and queries for TREC run files: a registered dataset, or a BEIR folder",
    )
    parser.add_argument("--data-dir", help="folder holding <dataset>/ (with --dataset NAME)")
    parser.add_argument("--split", help="qrels split (with --dataset; default: the registry's)")


def add_different_data_argument(parser: argparse.ArgumentParser, *, across: bool = False) -> None:
    """``--allow-different-data``, for the commands that put results folders side by side
    (``across``: a table whose columns are datasets, where only one name's data must agree)."""
    what = (
        "results folders of one dataset name whose corpus or cases differ"
        if across
        else "results folders of different datasets, corpora or cases"
    )
    parser.add_argument(
        "--allow-different-data",
        action="store_true",
        help=f"put side by side {what} (refused otherwise); a warning says what differs"
        + ("" if across else ", and the output over which queries it paired"),
    )


def comparable_or_refuse(
    folders: Sequence[Any], allow_different_data: bool, *, across_datasets: bool = False
) -> None:
    """Refuse (CliError) results folders of different data, or print the warnings of
    :func:`heta_eval.compare.comparability.comparable_folders`."""
    from heta_eval.compare.comparability import (
        IncomparableFoldersError,
        comparable_folders,
        group_members,
    )
    from heta_eval.compare.loading import is_result_folder

    chosen = [folder for folder in folders if is_result_folder(folder) or group_members(folder)]
    try:
        warnings = comparable_folders(
            chosen, allow_different_data=allow_different_data, across_datasets=across_datasets
        )
    except IncomparableFoldersError as error:
        raise CliError(str(error)) from None
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)


def load_from_args(
    args: argparse.Namespace,
    metrics: Sequence[str],
    *,
    side_by_side: bool = True,
    across_datasets: bool = False,
) -> list[Any]:
    """The systems named on the command line, as ``SystemScores``; errors become CliError.
    ``side_by_side``: the results folders are compared with each other (compare,
    leaderboard), so they must hold the same data (``--allow-different-data``);
    ``across_datasets``: only within one dataset name (a leaderboard's column)."""
    from heta_eval.compare.loading import is_result_folder, load_systems, unverified_reason
    from heta_eval.data.folders import dataset_label

    if side_by_side:
        comparable_or_refuse(
            args.results, args.allow_different_data, across_datasets=across_datasets
        )

    needs_qrels = [p for p in args.results if not is_result_folder(p) and Path(p).is_file()]
    qrels = queries = unverified = None
    dataset = getattr(args, "dataset", None)
    dataset = dataset_label(dataset) if dataset else None
    ignore_identical_ids = True
    if needs_qrels:
        qrels, queries, ignore_identical_ids, found = _qrels_and_queries(args)
        if found is not None:
            dataset, unverified = found.info.name, unverified_reason(found.record())
    try:
        return load_systems(
            args.results,
            modes=args.modes,
            qrels=qrels,
            queries=queries,
            metrics=metrics,
            dataset=dataset,
            unverified=unverified,
            ignore_identical_ids=ignore_identical_ids,
        )
    except (OSError, ValueError) as error:
        raise CliError(str(error)) from None


def _qrels_and_queries(
    args: argparse.Namespace,
) -> tuple[dict[str, dict[str, int]], dict[str, str] | None, bool, Any]:
    """qrels, query texts (with --dataset), the self-hit policy for TREC run files, and the
    dataset found for --dataset (a ``ResolvedDataset``; None with --qrels)."""
    if args.qrels:
        from heta_eval.io.trec import TrecFormatError, read_qrels

        try:
            return read_qrels(args.qrels, duplicates="last"), None, True, None
        except (OSError, TrecFormatError) as error:
            raise CliError(str(error)) from None
    if not args.dataset:
        raise CliError("TREC run files need --qrels FILE or --dataset NAME|PATH")
    from heta_eval.data.beir_loader import DatasetFormatError, load_beir
    from heta_eval.data.folders import is_folder_argument, resolve_dataset
    from heta_eval.data.locate import DatasetNotFoundError
    from heta_eval.data.registry import RegistryError

    if args.data_dir and is_folder_argument(args.dataset):
        raise CliError(f"--dataset {args.dataset} is a folder: drop --data-dir")
    try:
        found = resolve_dataset(args.dataset, args.data_dir, args.split)
        data = load_beir(found.folder, found.split)
    except (RegistryError, DatasetNotFoundError, DatasetFormatError, OSError) as error:
        raise CliError(str(error)) from None
    if warning := found.warning():
        print(f"warning: {warning}", file=sys.stderr)
    return data.qrels, data.queries, found.info.ignore_identical_ids, found


def _resolve_baseline(name: str | None, systems: Sequence[Any]) -> str | None:
    if name is None:
        return None
    for key in ("name", "source", "mode"):
        matches = [
            s.name
            for s in systems
            if getattr(s, key) is not None
            and (
                getattr(s, key) == name
                or (key == "source" and Path(getattr(s, key)).resolve() == Path(name).resolve())
            )
        ]
        if len(matches) == 1:
            return matches[0]
    names = ", ".join(s.name for s in systems)
    raise CliError(f"--baseline {name!r} matches none (or several) of the systems: {names}")


def choose_metrics(requested: Sequence[str] | None, systems: Sequence[Any]) -> list[str]:
    """The requested metrics, or the defaults every system has, or all common metrics."""
    from heta_eval.measures.measure import canonical_metric

    def has(system: Any, metric: str) -> bool:
        return any(metric in values for values in system.per_query.values())

    if requested:
        chosen = [canonical_metric(m) for m in requested]
        for metric in chosen:
            lacking = [s.name for s in systems if not has(s, metric)]
            if lacking:
                raise CliError(f"no {metric!r} scores for {', '.join(lacking)}")
        return chosen
    defaults = [m for m in DEFAULT_METRICS if all(has(s, m) for s in systems)]
    if defaults:
        return defaults
    common: dict[str, None] = {}
    for values in systems[0].per_query.values():
        for metric in values:
            common.setdefault(metric, None)
    chosen = [m for m in common if all(has(s, m) for s in systems[1:])]
    if not chosen:
        raise CliError("the systems have no metric in common")
    return chosen


def pairing_notes(result: Any, systems: Sequence[Any]) -> list[str]:
    """For each comparison of two results folders of different data: over which queries it
    paired and each folder's own mean (:func:`heta_eval.compare.comparability.pairing_note`)."""
    from heta_eval.compare.comparability import check_comparable, pairing_note

    def own(system: Any, metric: str) -> tuple[str, float | None, int]:
        scored = sum(metric in values for values in system.per_query.values())
        return system.name, system.aggregate(metric), scored

    by_name = {system.name: system for system in systems}
    checked = check_comparable([s.source for s in systems if s.source is not None])
    notes = []
    for row in result.rows:
        base, other = by_name[row.baseline], by_name[row.system]
        if None in (base.source, other.source) or checked.same_data(base.source, other.source):
            continue
        notes.append(
            pairing_note(
                row.metric,
                own(base, row.metric),
                own(other, row.metric),
                paired=row.n,
                unpaired=row.unpaired,
                missing=result.settings["missing"],
            )
        )
    return notes


def run_compare(args: argparse.Namespace) -> int:
    from heta_eval.compare import compare, compare_against
    from heta_eval.measures.measure import canonical_metric

    conditions = args.conditions
    if conditions and args.baseline:
        raise CliError(
            "--baseline goes without --fail-if-worse: the gate's baseline is the first RESULTS"
        )
    requested = list(dict.fromkeys(canonical_metric(m) for m in args.metrics or []))
    if conditions:  # the gate's metrics are compared, after those asked for
        requested = list(dict.fromkeys([*requested, *(c.metric for c in conditions)]))
    trec_metrics = requested or [canonical_metric(m) for m in DEFAULT_METRICS]
    try:
        systems = load_from_args(args, trec_metrics)
    except KeyError as error:
        raise CliError(f"unknown metric: {error}") from None
    if len(systems) < 2:
        raise CliError(
            f"need at least two systems, got {len(systems)} "
            f"({', '.join(s.name for s in systems)}); give more folders, runs, or modes"
        )
    metrics = choose_metrics(requested or None, systems)
    queries: dict[str, str] = {}
    for system in systems:
        for qid, text in system.queries.items():
            queries.setdefault(qid, text)
    per_query = {s.name: s.per_query for s in systems}
    settings = dict(
        queries=queries,
        n_resamples=args.resamples,
        seed=args.seed,
        confidence=args.confidence,
        alpha=args.alpha,
        top_k=max(args.top, 1),
        missing=args.missing,
    )
    baselines = gate_baselines(args.results, systems) if conditions else None
    try:
        if baselines:
            result = compare_against(per_query, baselines, metrics, **settings)
        else:
            baseline = _resolve_baseline(args.baseline, systems)
            result = compare(per_query, baseline=baseline, metrics=metrics, **settings)
        sliced = None
        if args.slice_by:
            sliced = slice_comparison(
                args.slice_by,
                systems,
                metrics,
                settings,
                baseline=result.baseline,
                baselines=baselines,
            )
    except ValueError as error:
        raise CliError(str(error)) from None
    if args.allow_different_data:
        result.notes += pairing_notes(result, systems)
    verdict = None
    if conditions:
        from heta_eval.compare.gate import gate

        verdict = gate(result, conditions)
    if args.format == "json":
        data = result.to_dict()
        if sliced is not None:
            data["slices"] = sliced.to_dict()
        if verdict is not None:
            data["gate"] = verdict.to_dict()
        text = json_text(data)
    else:
        text = {
            "latex": result.to_latex,
            "html": result.to_html,
            "markdown": lambda: result.to_markdown(deltas=args.top),
        }[args.format]()
        if sliced is not None:
            text += "\n" + render_slices(sliced, args.format)
    write_output(text, args.output)
    if verdict is None:
        return 0
    return report_gate(verdict, args.gate_json, args.gate_markdown)


def write_output(text: str, output: str | None) -> None:
    """``text`` to ``output``, whole (:func:`~heta_eval.io.write.write_whole`), or to stdout."""
    if not output:
        sys.stdout.write(text)
        return
    from heta_eval.io.write import write_whole

    try:
        write_whole(output, text)
    except OSError as error:
        raise CliError(f"{output}: {error.strerror or error}") from None
    print(f"wrote {output}", file=sys.stderr)
