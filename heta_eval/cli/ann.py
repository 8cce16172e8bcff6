"""``heta-eval ann``: what approximate search costs. The same queries through exact search
and each index asked (FAISS flat, HNSW, IVF; Qdrant's local mode; LanceDB), over given or
encoded vectors: nDCG@10, Recall@100, the recall of the exact top 10 and 100, queries per
second and build seconds, in one table (docs/ann.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.ann_options import read_specs
from heta_eval.cli.kb_options import given_vectors

DEFAULT_INDEXES = "faiss-flat,faiss-hnsw,faiss-ivf,qdrant,lancedb"

EXAMPLE = """\
examples:
  heta-eval ann --dataset scifact
  heta-eval ann --dataset ./my_dataset --corpus-embeddings C.npy --query-embeddings Q.npy \\
      --index faiss-flat,faiss-hnsw:M=32,efSearch=128,faiss-ivf:nlist=256,nprobe=16
"""


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ann",
        help="what approximate search costs: exact search beside FAISS, Qdrant, LanceDB",
        description="Search the same queries exactly and through each approximate index, over "
        "the dataset's vectors (given, or encoded by the recipe's model), and print nDCG@10, "
        "Recall@100, the recall of the exact top 10 and 100, queries per second and build "
        "seconds, exact search first (docs/ann.md).",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--dataset",
        required=True,
        metavar="NAME|PATH",
        help="a registered dataset or a folder in the BEIR layout",
    )
    parser.add_argument("--data-dir", help="where registered datasets live")
    parser.add_argument("--split", help="dataset split (default: its evaluation split)")
    parser.add_argument(
        "--index",
        action="append",
        metavar="KIND[:NAME=N,...],...",
        help=f"the indexes, comma-separated, each with its settings (repeatable; default: "
        f"{DEFAULT_INDEXES}); kinds: faiss-flat, faiss-hnsw (M, efConstruction, efSearch), "
        "faiss-ivf (nlist, nprobe), qdrant, lancedb, lancedb-ivfpq (partitions, sub_vectors, "
        "nprobes, refine), lancedb-hnsw (partitions, m, ef_construction, ef, nprobes)",
    )
    from heta_eval.cli.kb_options import add_vector_arguments

    add_vector_arguments(parser)
    parser.add_argument(
        "--output",
        type=Path,
        metavar="FILE.json",
        help="where the JSON goes (default: results/<dataset>-ann.json)",
    )
    parser.add_argument("--no-cache", action="store_true", help="encode again, cache nothing")
    parser.add_argument("--quiet", action="store_true", help="no progress")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.ann is not None:
        raise CliError("--ann goes with heta-eval run; here the indexes are --index's")
    specs = read_specs("--index", args.index or [DEFAULT_INDEXES])
    given = given_vectors(args, ["vector_search"])
    from heta_eval.data.folders import dataset_label

    name = dataset_label(args.dataset)
    output = args.output or Path("results") / f"{name.replace('/', '-')}-ann.json"
    kb, benchmark, cases = _knowledge_base(args, given)
    from heta_eval.ann.base import AnnError
    from heta_eval.ann.compare import compare_indexes

    qrels = {case.id: dict(case.expected.relevance or {}) for case in cases}
    ids = [case.id for case in cases]
    vectors = kb.query_vectors_of([case.query for case in cases], ids)
    table = kb.chunk_table
    document_ids = table.document_ids_at(range(len(table)))

    def say(label: str) -> None:
        if not args.quiet:
            print(f"building and searching {label}", file=sys.stderr, flush=True)

    try:
        found = compare_indexes(
            kb.embeddings,
            kb.row_scale,
            vectors,
            ids,
            document_ids,
            qrels,
            specs,
            ignore_identical_ids=getattr(benchmark, "ignore_identical_ids", True),
            on_index=say,
        )
    except AnnError as error:
        raise CliError(str(error)) from None
    print(f"\n## {benchmark.name}: exact search and approximate indexes\n")
    print(found.table().markdown())
    print("\n".join(f"- {line}" for line in found.notes()) + "\n")
    from heta_eval.io.write import write_whole

    record = {
        "dataset": benchmark.name,
        "score_function": kb.recipe.dense.score_function,
        "vectors": kb.build_info.get("embeddings"),
        **found.as_json(),
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    write_whole(output, json.dumps(record, indent=2) + "\n")
    print(f"written: {output}", file=sys.stderr)
    return 0


def _knowledge_base(args: argparse.Namespace, given: dict[str, Any]) -> tuple[Any, Any, list]:
    """The reference knowledge base's vectors of the dataset (vector_search only), its
    benchmark and cases; an input problem is one line."""
    from pydantic import ValidationError

    from heta_eval.adapters import load_benchmark
    from heta_eval.ann.base import AnnError
    from heta_eval.data.beir_loader import DatasetFormatError
    from heta_eval.data.locate import DatasetNotFoundError
    from heta_eval.data.registry import RegistryError
    from heta_eval.encoding.dense import ModelLoadError
    from heta_eval.reference import Recipe
    from heta_eval.reference.given_vectors import VectorsError
    from heta_eval.runner.benchmark import corpus_of, query_rows_of

    try:
        benchmark = load_benchmark(args.dataset, data_dir=args.data_dir, split=args.split)
        cases = list(benchmark.cases())
        own = getattr(benchmark, "recipe", None)
        recipe = own(["vector_search"]) if callable(own) else Recipe(modes=["vector_search"])
        dense = {
            **({"score_function": args.score_function} if args.score_function else {}),
            **given,
        }
        chunking = {"size": None, "overlap": 0} if given else {}
        recipe = Recipe.model_validate(
            {
                **recipe.model_dump(),
                "dense": {**recipe.dense.model_dump(), **dense},
                "chunking": {**recipe.chunking.model_dump(), **chunking},
            }
        )
        store = corpus_of(benchmark, cache=not args.no_cache, progress=not args.quiet)
        rows = query_rows_of(benchmark, cases) if "query_vectors" in given else None
        kb = recipe.build(
            benchmark.name,
            store,
            cache_dir=False if args.no_cache else None,
            progress=not args.quiet,
            query_rows=rows,
        )
    except (
        RegistryError,
        KeyError,
        DatasetNotFoundError,
        DatasetFormatError,
        ModelLoadError,
        VectorsError,
        AnnError,
    ) as error:
        raise CliError(str(error).strip("'\"")) from None
    except ValidationError as error:
        raise CliError(f"invalid recipe: {error.errors(include_url=False)[0]['msg']}") from None
    table = kb.chunk_table
    if len(table.documents) != len(table):
        raise CliError(
            "heta-eval ann compares one vector per document; the dataset's recipe "
            "cuts documents into passages"
        )
    return kb, benchmark, cases
