"""The options of ``heta-eval run`` that add a second stage: ``--rerank MODEL`` (a
``sentence-transformers`` ``CrossEncoder`` name or folder), ``--rerank-depth``,
``--rerank-precision``, ``--rerank-label`` and ``--rerank-level`` (docs/rerank.md).

Each mode ``M`` asked for is then also run as ``M+rerank``: the reference's modes through the
recipe's second stage, a service's (``--kb-url``) or run files' (``--kb-run``) through a
:class:`~heta_eval.rerank.stage.RerankingKnowledgeBase` over them.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_rerank_arguments(parser)
>>> args = parser.parse_args(["--rerank-depth", "10"])
>>> rerank_spec(args)
Traceback (most recent call last):
...
heta_eval.cli.CliError: --rerank-depth goes with --rerank MODEL
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.numbers import RERANK_DEPTH, add_number

__all__ = ["add_rerank_arguments", "depth_warning", "rerank_spec", "second_stage"]

_OPTIONS = ("rerank_depth", "rerank_precision", "rerank_label", "rerank_level")


def add_rerank_arguments(parser: Any) -> None:
    """Add the second stage's options to ``parser`` (their own group)."""
    group = parser.add_argument_group("a second stage (docs/rerank.md)")
    group.add_argument(
        "--rerank",
        metavar="MODEL",
        help="rerank each mode M's results with a cross-encoder (a sentence-transformers "
        "CrossEncoder name or folder), as BEIR's Rerank does: adds the mode M+rerank",
    )
    add_number(
        group,
        "--rerank-depth",
        rule=RERANK_DEPTH,
        help="first-stage results rescored per query (default: 100, as BEIR)",
    )
    group.add_argument(
        "--rerank-precision",
        choices=["auto", "float32", "bfloat16", "float16", "int8", "onnxruntime-int8"],
        help="the cross-encoder's precision (default: auto, the encoder's route here; int8: "
        "ONNX Runtime, CPU only)",
    )
    group.add_argument(
        "--rerank-label",
        metavar="NAME",
        help="the output scored by, for a cross-encoder with several (a name or index)",
    )
    group.add_argument(
        "--rerank-level",
        choices=["document", "chunk"],
        help="pair the query with each document's title and text (default, BEIR's) or with "
        "the text of each hit the first stage returned",
    )


def rerank_spec(args: argparse.Namespace) -> Any:
    """The :class:`~heta_eval.rerank.stage.RerankSpec` asked for (``None``: no second stage);
    a model that is not a cross-encoder is one line naming what was found."""
    if not args.rerank:
        for name in _OPTIONS:
            if getattr(args, name) is not None:
                raise CliError(f"--{name.replace('_', '-')} goes with --rerank MODEL")
        return None
    from pydantic import ValidationError

    from heta_eval.rerank.cross_encoder import CrossEncoderError, check_cross_encoder
    from heta_eval.rerank.stage import RerankSpec

    given = {name.removeprefix("rerank_"): getattr(args, name) for name in _OPTIONS}
    try:
        spec = RerankSpec(model=args.rerank, **{k: v for k, v in given.items() if v is not None})
        check_cross_encoder(spec.model, spec.label)
    except CrossEncoderError as error:
        raise CliError(f"--rerank {error}") from None
    except ValidationError as error:
        raise CliError(f"--rerank: {error.errors()[0]['msg']}") from None
    return spec


def depth_warning(depth: int, scoring: list[Any]) -> str | None:
    """The warning for a depth below the largest k: the measures it caps.

    >>> from heta_eval.evaluation import BeirRetrievalMetric
    >>> measures = [BeirRetrievalMetric("ndcg", 10), BeirRetrievalMetric("recall", 100)]
    >>> print(depth_warning(10, measures))
    warning: --rerank-depth 10 is below k = 100: a reranked mode holds at most 10 documents a \
query, which caps recall@100
    """
    capped = [metric for metric in scoring if getattr(metric, "k", 0) > depth]
    if not capped:
        return None
    deepest = max(metric.k for metric in capped)
    names = ", ".join(metric.name for metric in capped)
    return (
        f"warning: --rerank-depth {depth} is below k = {deepest}: a reranked mode holds "
        f"at most {depth} documents a query, which caps {names}"
    )


def second_stage(
    args: argparse.Namespace,
    spec: Any,
    benchmark: Any,
    recipe: Any,
    knowledge_base: Any,
    modes: list[str],
    scoring: list[Any] | None,
) -> tuple[Any, Any, list[str]]:
    """The recipe or knowledge base with ``spec``'s second stage, and the modes with their
    reranked modes; the model is loaded now, so a name that does not load is one line."""
    if spec is None:
        return recipe, knowledge_base, modes
    from heta_eval.reference import Recipe
    from heta_eval.rerank.cross_encoder import CrossEncoderError
    from heta_eval.rerank.stage import RerankingKnowledgeBase, rerank_mode

    warning = depth_warning(spec.depth, scoring if scoring is not None else benchmark.evaluators())
    if warning:
        print(warning, file=sys.stderr)
    try:
        reranker = spec.reranker(False if args.no_cache else None)
        reranker.model  # noqa: B018 - loads it (once per process) or says why not
    except (CrossEncoderError, ValueError) as error:
        raise CliError(f"--rerank {error}") from None
    asked = [*modes, *(rerank_mode(mode) for mode in modes)]
    if knowledge_base is not None:
        from heta_eval.runner.benchmark import corpus_of

        documents = (
            corpus_of(benchmark, cache=not args.no_cache) if spec.level == "document" else None
        )
        wrapped = RerankingKnowledgeBase(
            knowledge_base,
            reranker,
            depth=spec.depth,
            level=spec.level,
            documents=documents,
            progress=not args.quiet,
            identity=spec.identity(),
        )
        return None, wrapped, asked
    if recipe is None:
        default = getattr(benchmark, "recipe", None)
        recipe = default(modes) if callable(default) else Recipe(modes=modes)
    return recipe.model_copy(update={"rerank": spec}), None, asked
