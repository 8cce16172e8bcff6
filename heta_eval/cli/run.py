"""``heta-eval run``: evaluate a knowledge base on a dataset or on your own benchmark file, and
what it prints beside each results table: the LLM judge's spending, a dry run's estimate, the
mean over sub-benchmarks (CQADupStack), and its exit status."""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.ann_options import ann_from_args, ann_modes
from heta_eval.cli.judge_options import add_judge_arguments, with_judge
from heta_eval.cli.kb_options import (
    add_kb_arguments,
    add_vector_arguments,
    given_vectors,
    knowledge_base_from_args,
)
from heta_eval.cli.measure_options import Chosen, add_measure_arguments, chosen_measures, evaluators
from heta_eval.cli.numbers import CHUNK, CHUNK_OVERLAP, CONCURRENCY, HITS, SECONDS, add_number
from heta_eval.cli.ray_options import add_ray_arguments, executor_from_args
from heta_eval.cli.rerank_options import add_rerank_arguments, rerank_spec, second_stage
from heta_eval.cli.run_data import add_sample_arguments, add_slice_argument, sample_spec
from heta_eval.config import AUTO_PRECISION
from heta_eval.io.ids import mode_name_problem
from heta_eval.io.tables import Table, markdown_text
from heta_eval.models.validation import one_line

EXAMPLE = """\
examples:
  heta-eval run --dataset scifact --modes keyword_search
  heta-eval run --dataset scifact --modes keyword_search,vector_search,hybrid_search \\
      --output results/scifact --k 1,10,100
  heta-eval run --dataset scifact --modes keyword_search --measures "nDCG@10 R_cap@100 Hole@10"
  heta-eval run --dataset ./my_dataset --modes keyword_search    # a folder in the BEIR layout
  heta-eval run --benchmark cases.jsonl --documents docs/ --modes hybrid_search
  heta-eval run --dataset scifact --kb-url http://localhost:8000/query --modes hybrid_search \\
      --kb-header 'X-Api-Key: ${RAG_API_KEY}' --rate 20/s
  heta-eval run --benchmark cases.jsonl --documents docs/ --modes keyword_search \\
      --judge --judge-prices prices.json --dry-run      # what the judge would cost
  heta-eval run --dataset scifact --modes vector_search --ray auto
  heta-eval run --dataset msmarco --modes vector_search --corpus-embeddings corpus.npy \\
      --query-embeddings queries.npy      # vectors made elsewhere, searched and scored here

A rerun with the same arguments continues where an interrupted run stopped; a rerun with
other modes adds them to the folder. A folder of another run (other documents, cases,
recipe, service URL, evaluators) is refused with what changed.

One run writes a results folder at a time: a second run into it waits for the first (saying
which process holds it and what it is doing), then resumes or extends what it left;
--no-wait stops at once instead.

exit status: 0 every query answered and scored; 3 partial (some queries or evaluators
failed: the headline counts failed queries as 0); 4 nothing answered in some mode;
5 --no-wait and another run holds the results folder; 2 a usage or input error.
See docs/runs.md.
"""

ALL_MODES = "keyword_search,vector_search,hybrid_search"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run a benchmark against a knowledge base and score it",
        description="Build (or reuse) a knowledge base from a benchmark's documents, query "
        "every case in every mode, score with the benchmark's evaluators and write a results "
        "folder (summary.json, per_query.jsonl, runs/<mode>.trec, table.md).",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_argument_group("what to evaluate on")
    source.add_argument(
        "--dataset",
        metavar="NAME|PATH",
        help="a registered dataset (see `heta-eval datasets list`) or a folder in the BEIR "
        "layout (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), named after the folder",
    )
    source.add_argument("--benchmark", type=Path, help="a JSONL file of BenchmarkCase records")
    source.add_argument(
        "--documents", type=Path, help="with --benchmark: a folder of .txt/.md or a JSONL file"
    )
    source.add_argument(
        "--data-dir", help="where registered datasets live (default: $HETA_EVAL_DATA)"
    )
    source.add_argument("--split", help="dataset split (default: the dataset's evaluation split)")
    add_sample_arguments(source)
    system = parser.add_argument_group("the system under test")
    system.add_argument("--recipe", type=Path, help="a recipe JSON file (default: the reference)")
    add_kb_arguments(system)
    system.add_argument("--kb-name", default="kb", help="knowledge base name (default: kb)")
    system.add_argument(
        "--modes", default=ALL_MODES, help=f"comma-separated (default: {ALL_MODES})"
    )
    add_number(system, "--chunk-size", rule=CHUNK, help="override the recipe's chunk size")
    add_number(
        system, "--chunk-overlap", rule=CHUNK_OVERLAP, help="override the recipe's chunk overlap"
    )
    system.add_argument("--no-cache", action="store_true", help="rebuild indexes, cache nothing")
    system.add_argument(
        "--device", help="where the dense encoder runs: auto (default: CUDA if visible), cpu, cuda"
    )
    system.add_argument(
        "--precision",
        choices=[
            "auto",
            "float32",
            "bfloat16",
            "float16",
            "int8",
            "onnxruntime-int8",
            "openvino-int8",
        ],
        help=f"dense encoder precision or int8 route (default: the recipe's); {AUTO_PRECISION}",
    )
    add_vector_arguments(parser)
    add_rerank_arguments(parser)
    run = parser.add_argument_group("the run")
    add_measure_arguments(run)
    add_number(
        run,
        "--top-k",
        rule=HITS,
        default=100,
        help="hits per query (default: 100); raised to the largest k + 1 so every metric@k "
        "sees k documents after a self-hit is removed (the summary records both)",
    )
    run.add_argument("--output", type=Path, help="results folder (default: results/<name>)")
    add_number(
        run, "--concurrency", rule=CONCURRENCY, default=8, help="queries in flight (default: 8)"
    )
    add_number(run, "--timeout", rule=SECONDS, default=120.0, help="seconds per query")
    run.add_argument("--fresh", action="store_true", help="discard earlier results in --output")
    run.add_argument(
        "--no-wait",
        action="store_true",
        help="when another run is writing the results folder, stop at once (exit status 5) "
        "instead of waiting for it",
    )
    add_slice_argument(run)
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    add_ray_arguments(run)
    add_judge_arguments(parser)
    parser.set_defaults(handler=handle)


def _check_arguments(args: argparse.Namespace) -> list[str]:
    """The modes asked for, after the checks that need no heavy import: a usage error
    answers at once, before pydantic, numpy or the knowledge base load."""
    if bool(args.dataset) == bool(args.benchmark):
        raise CliError("give either --dataset NAME or --benchmark CASES.jsonl --documents PATH")
    if args.benchmark:
        if not args.documents:
            raise CliError("--benchmark needs --documents (a folder or a JSONL of documents)")
        for path in (args.benchmark, args.documents):
            if not path.exists():
                raise CliError(f"{path} does not exist")
    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    if not modes:
        raise CliError("--modes is empty")
    for mode in modes:  # a mode names files: checked before anything runs or is written
        if problem := mode_name_problem(mode):
            raise CliError(f"--modes: {problem}")
    return modes


def _check_options(args: argparse.Namespace, modes: list[str]) -> Chosen | None:
    """The retrieval measures asked for, after the checks of the modes and numbers."""
    if not args.kb_url and not args.kb_run and not args.recipe:
        unknown = [mode for mode in modes if mode not in ALL_MODES.split(",")]
        if unknown:
            raise CliError(
                f"unknown mode {unknown[0]!r} in --modes; the reference knowledge base has "
                f"{ALL_MODES.replace(',', ', ')}"
            )
    chosen = chosen_measures(args.k, args.measures)
    deepest = max((k for _, k in chosen or ()), default=0)
    if not HITS.holds(deepest + 1):  # a run asks the largest k + 1 hits per query
        option = "--measures" if args.measures else "--k"
        raise CliError(
            f"{option}: k = {deepest} asks the knowledge base for {deepest + 1:,} hits per "
            f"query; a run asks at most {int(HITS.high):,} (score a deeper run file with "
            "heta-eval evaluate)"
        )
    return chosen


def _benchmarks(args: argparse.Namespace) -> list[Any]:
    if args.benchmark:
        from heta_eval.runner import JsonlBenchmark

        return [JsonlBenchmark(args.benchmark, args.documents)]
    from heta_eval.adapters import load_benchmark
    from heta_eval.data.folders import is_folder_argument
    from heta_eval.data.registry import RegistryError

    if args.data_dir and is_folder_argument(args.dataset):
        raise CliError(f"--dataset {args.dataset} is a folder: drop --data-dir")
    try:
        benchmark = load_benchmark(
            args.dataset, data_dir=args.data_dir, split=args.split, sample=sample_spec(args)
        )
    except (RegistryError, KeyError, ValueError) as error:
        raise CliError(str(error).strip("'\"")) from None
    subs = benchmark.sub_benchmarks() if hasattr(benchmark, "sub_benchmarks") else []
    return subs or [benchmark]


def _recipe(args: argparse.Namespace, modes: list[str], benchmark: Any) -> Any:
    from pydantic import ValidationError

    from heta_eval.reference import Recipe

    overrides = (
        args.chunk_size,
        args.chunk_overlap,
        args.device,
        args.precision,
        args.corpus_embeddings,
        args.query_embeddings,
        args.score_function,
        args.ann_spec,
    )
    if not args.recipe and all(value is None for value in overrides):
        return None  # the runner takes the benchmark's own (BEIR: whole documents)
    given = given_vectors(args, modes)
    try:
        if args.recipe:
            recipe = Recipe.from_file(args.recipe)
        elif callable(getattr(benchmark, "recipe", None)):
            recipe = benchmark.recipe(modes)  # options below change the benchmark's own
        else:
            recipe = Recipe(modes=modes)
        if args.chunk_size is not None or args.chunk_overlap is not None:
            chunking = recipe.chunking.model_copy(
                update={
                    key: value
                    for key, value in (("size", args.chunk_size), ("overlap", args.chunk_overlap))
                    if value is not None
                }
            )
            recipe = Recipe.model_validate(
                {**recipe.model_dump(), "chunking": chunking.model_dump()}
            )
        dense = {
            key: value
            for key, value in (
                ("device", args.device),
                ("precision", args.precision),
                ("score_function", args.score_function),
                ("ann", args.ann_spec),
            )
            if value is not None
        }
        if given:  # one vector per document: documents stay whole
            dense.update(given)
            if args.chunk_size is None:
                recipe = Recipe.model_validate(
                    {
                        **recipe.model_dump(),
                        "chunking": {**recipe.chunking.model_dump(), "size": None, "overlap": 0},
                    }
                )
        if dense:
            recipe = Recipe.model_validate(
                {**recipe.model_dump(), "dense": {**recipe.dense.model_dump(), **dense}}
            )
    except FileNotFoundError:
        raise CliError(f"recipe file {args.recipe} does not exist") from None
    except ValidationError as error:
        where = args.recipe or "recipe"
        raise CliError(f"{where}: invalid recipe: {one_line(error)}") from None
    except ValueError as error:  # not JSON at all
        raise CliError(f"{args.recipe}: invalid recipe: {error}") from None
    if recipe.dense.device != "auto":
        from heta_eval.encoding.precision import resolve_device, resolve_precision

        try:  # a GPU that is not there is a one-line error now, not a traceback mid-build
            resolve_precision(recipe.dense.precision, resolve_device(recipe.dense.device))
        except ValueError as error:
            raise CliError(str(error)) from None
    missing = [mode for mode in modes if mode not in recipe.modes]
    if missing:
        raise CliError(f"the recipe does not build mode {missing[0]!r}; it has {recipe.modes}")
    return recipe


def handle(args: argparse.Namespace) -> int:
    modes = _check_arguments(args)
    if args.kb_run:  # the run files are the modes
        if args.modes != ALL_MODES:
            raise CliError("--modes goes without --kb-run: the modes are --kb-run's MODE names")
        modes = [text.partition("=")[0].strip() for text in args.kb_run]
    knowledge_base = knowledge_base_from_args(args, tuple(modes))
    if knowledge_base is not None and args.corpus_embeddings is not None:
        raise CliError(
            "--corpus-embeddings are searched by the reference knowledge base, not "
            "by --kb-url or --kb-run"
        )
    chosen = _check_options(args, modes)
    args.ann_spec = ann_from_args(args, modes, knowledge_base)
    args.rerank_spec = rerank_spec(args)
    from heta_eval.ann.base import AnnError
    from heta_eval.data.beir_loader import DatasetFormatError
    from heta_eval.data.folders import dataset_label
    from heta_eval.data.locate import DatasetNotFoundError
    from heta_eval.data.sample import SampleError
    from heta_eval.encoding.dense import ModelLoadError
    from heta_eval.reference.given_vectors import VectorsError
    from heta_eval.runner import (
        BenchmarkFormatError,
        BenchmarkRunner,
        ResultsFormatError,
        RunConfigurationError,
    )
    from heta_eval.runner.folder_lock import FolderBusy
    from heta_eval.scale.errors import RayRunError
    from heta_eval.slices import SliceError
    from heta_eval.systems.protocol import member

    name = dataset_label(args.dataset) if args.dataset else args.benchmark.stem
    if (spec := sample_spec(args)) is not None:
        from heta_eval.data.sample import sample_name

        name = sample_name(name, spec)
    output = args.output or Path("results") / name.replace("/", "-")
    runner = BenchmarkRunner(
        top_k=args.top_k,
        concurrency=args.concurrency,
        query_timeout=args.timeout,
        progress=not args.quiet,
        executor=executor_from_args(args),
    )
    all_results = []
    try:
        benchmarks = _benchmarks(args)
        for benchmark in benchmarks:
            folder = output / benchmark.name.split("/")[-1] if len(benchmarks) > 1 else output
            results = _run_one(args, runner, benchmark, folder, modes, knowledge_base, chosen)
            if results is not None:
                all_results.append(results)
    except FolderBusy as error:  # --no-wait: not an input error, a folder in use
        print(f"heta-eval run: error: {error}", file=sys.stderr)
        return EXIT_BUSY
    except (
        DatasetNotFoundError,
        DatasetFormatError,
        BenchmarkFormatError,
        RunConfigurationError,
        ModelLoadError,
        VectorsError,
        AnnError,
        ResultsFormatError,  # a results folder whose files cannot be read: file and line
        RayRunError,  # Ray gave up mid-run: what failed, what is kept, how to resume
        SliceError,  # --slice-by names a field that cannot group the cases
        SampleError,  # --sample asks more queries than the dataset has, or too few documents
    ) as error:
        raise CliError(str(error)) from None
    if len(all_results) > 1:
        print(macro_table(name, all_results))
    for mode, count in member(knowledge_base, "unanswered").items():
        if count:  # scored 0, as trec_eval -c counts them: said, never silent
            print(
                f"warning: {mode}: {count} cases have no line in its run file and score 0",
                file=sys.stderr,
            )
    return exit_status(all_results)


def _run_one(
    args: argparse.Namespace,
    runner: Any,
    benchmark: Any,
    folder: Path,
    modes: list[str],
    knowledge_base: Any,
    chosen: Chosen | None,
) -> Any:
    """One benchmark into its folder, holding the folder's lock from ``--fresh`` to the
    report; the results (``None`` for a dry run)."""
    from heta_eval.runner.folder_lock import empty_folder, folder_lock, status

    recipe = None if knowledge_base is not None else _recipe(args, modes, benchmark)
    scoring = with_judge(args, evaluators(benchmark, chosen), benchmark)
    modes = ann_modes(recipe, modes)
    recipe, knowledge_base, modes = second_stage(
        args, args.rerank_spec, benchmark, recipe, knowledge_base, modes, scoring
    )
    held = (
        nullcontext() if args.dry_run else folder_lock(folder, modes=modes, wait=not args.no_wait)
    )
    with held:
        if args.fresh and not args.dry_run:
            empty_folder(folder)
        target = "(dry run: nothing written)" if args.dry_run else folder
        print(f"== {benchmark.name}: modes {', '.join(modes)} -> {target}", file=sys.stderr)
        results = runner.run(
            benchmark=benchmark,
            recipe=recipe,
            knowledge_base_name=args.kb_name,
            query_modes=tuple(modes),
            evaluators=scoring,
            knowledge_base=knowledge_base,
            output_dir=None if args.dry_run else folder,
            cache_dir=False if args.no_cache else None,
            slice_by=args.slice_by,
        )
        if args.dry_run:
            print("\n".join(dry_run_lines(results.summary.usage)))
            return None
        print(f"\n## {benchmark.name}\n\n{results.table()}\n")
        if results.summary.usage:
            print("\n".join(usage_lines(results.summary.usage)) + "\n")
        print(f"results: {folder}", file=sys.stderr)
        from heta_eval.report.hook import report_after_run

        status("writing report.html")
        report_after_run(folder, benchmark=benchmark, results=results)
    return results


# -- what run prints beside each results table, and its exit status ---------------------


def usage_lines(usage: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for name, u in usage.items():
        cost = f", ${u['cost_usd']:.4f}" if u.get("cost_usd") is not None else ""
        lines.append(
            f"{name} ({u['model']}): {u['calls']} calls, {u['cached_calls']} from the cache; "
            f"{u['prompt_tokens']} prompt + {u['completion_tokens']} completion tokens{cost}"
        )
        if u.get("mean_agreement") is not None:
            lines.append(
                f"{name} agreement over {u['repeats']} repeats: mean {u['mean_agreement']:.3f}, "
                f"unanimous {u['unanimous_cases']}/{u['repeated_cases']} cases"
            )
        lines.extend(f"{name} note: {note}" for note in u.get("notes", []))
        if u["failed"]:
            lines.append(f"{name}: {u['failed']} judgments FAILED:")
            lines.extend(
                f"  case {f['case_id']} ({f['mode']}): {f['error']}" for f in u["failures"]
            )
    return lines


def dry_run_lines(usage: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for name, u in usage.items():
        cost = (
            f", about ${u['estimated_cost_usd']:.4f}"
            if u.get("estimated_cost_usd") is not None
            else ""
        )
        lines.append(
            f"dry run, {name} ({u['model']}): would make {u['estimated_calls']} calls "
            f"(about {u['estimated_prompt_tokens']} prompt + "
            f"{u['estimated_completion_tokens']} completion tokens{cost}); "
            f"{u['cached_calls']} more are in the cache. Nothing was sent to the judge."
        )
    return lines


def macro_table(name: str, all_results: list[Any]) -> str:
    """The unweighted mean over sub-benchmarks (how CQADupStack is reported)."""
    first = all_results[0].summary
    modes = list(first.modes)
    rows = []
    for evaluator in first.evaluators:
        cells = []
        for mode in modes:
            values = [r.summary.modes[mode].metrics[evaluator].value for r in all_results]
            numeric = [v for v in values if isinstance(v, float)]
            cells.append(
                f"{sum(numeric) / len(numeric):.5f}" if len(numeric) == len(values) else "–"
            )
        rows.append([evaluator, *cells])
    table = Table(["evaluator", *modes], rows, align="l" + "r" * len(modes))
    title = markdown_text(f"## {name}: unweighted mean of {len(all_results)} sub-benchmarks")
    return f"{title}\n\n{table.markdown().rstrip()}"


#: Exit statuses of `heta-eval run` (2 is a usage or input error, as for every command).
EXIT_PARTIAL = 3
EXIT_NOTHING_ANSWERED = 4
#: ``--no-wait`` and another run holds the results folder: nothing was done; try again later.
EXIT_BUSY = 5


def exit_status(all_results: list[Any]) -> int:
    modes = [m for results in all_results for m in results.summary.modes.values()]
    reasons: dict[str, int] = {}
    for mode in modes:
        for reason, count in mode.failure_reasons.items():
            reasons[reason] = reasons.get(reason, 0) + count
    if reasons:
        failed = sum(reasons.values())
        print(f"error: {failed} queries failed; most common reasons:", file=sys.stderr)
        for reason, count in sorted(reasons.items(), key=lambda item: -item[1])[:5]:
            print(f"  {count:>6} × {reason}", file=sys.stderr)
        print("  (every error is in per_query.jsonl)", file=sys.stderr)
    if any(mode.answered == 0 and mode.cases for mode in modes):
        print(
            "error: no query was answered in some mode; its numbers mean nothing", file=sys.stderr
        )
        return EXIT_NOTHING_ANSWERED
    if any(results.partial for results in all_results):
        print(
            "warning: some queries or evaluators failed; the aggregates are partial (*): "
            "failed queries count as 0, the answered-only mean is in parentheses",
            file=sys.stderr,
        )
        return EXIT_PARTIAL
    return 0
