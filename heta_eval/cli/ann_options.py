"""``--ann KIND[:name=value,...]`` (``heta-eval run``) and ``--index SPEC,...`` (``heta-eval
ann``): an approximate index and its settings, each value read by the one rule for numbers
(:mod:`heta_eval.cli.numbers`) before anything runs."""

from __future__ import annotations

import argparse
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.numbers import Number

__all__ = ["ann_from_args", "ann_modes", "read_spec", "read_specs"]


def read_spec(option: str, text: str) -> Any:
    """``text`` as an :class:`~heta_eval.ann.AnnSpec`, or a one-line
    :class:`~heta_eval.cli.CliError` naming ``option``, the index and the setting."""
    from heta_eval.ann.spec import KINDS, AnnSpec, split_ann

    try:
        kind, values = split_ann(text)
    except ValueError as error:
        raise CliError(f"{option}: {error}") from None
    rules = {s.name: s for s in KINDS[kind][1]}
    settings = {
        name: Number(int, rules[name].low, rules[name].high).read(f"{option} {kind}: {name}", value)
        for name, value in values.items()
    }
    return AnnSpec(kind=kind, settings=settings)  # type: ignore[arg-type]


def read_specs(option: str, texts: list[str]) -> list[Any]:
    """Every spec of ``texts`` (each a comma-separated list: ``faiss-flat,faiss-hnsw:M=16``)."""
    from heta_eval.ann.spec import split_specs

    specs = [read_spec(option, one) for text in texts for one in split_specs(text)]
    if not specs:
        raise CliError(f"{option} is empty")
    labels = [spec.label for spec in specs]
    twice = next((label for label in labels if labels.count(label) > 1), None)
    if twice is not None:
        raise CliError(f"{option}: {twice} is given twice")
    return specs


def ann_from_args(args: argparse.Namespace, modes: list[str], knowledge_base: Any) -> Any:
    """``--ann`` of ``heta-eval run`` as a spec (``None`` without it), checked against the
    system and the modes."""
    if args.ann is None:
        return None
    if knowledge_base is not None:
        raise CliError(
            "--ann indexes the reference knowledge base's vectors, not --kb-url's or --kb-run's"
        )
    from heta_eval.ann.spec import DENSE_MODES

    if not set(DENSE_MODES) & set(modes):
        raise CliError(
            f"--ann is searched by vector_search and hybrid_search; --modes has "
            f"neither ({', '.join(modes)})"
        )
    return read_spec("--ann", args.ann)


def ann_modes(recipe: Any, modes: list[str]) -> list[str]:
    """The modes a run asks, named after the recipe's approximate index when it has one
    (``vector_search`` through FAISS HNSW is ``vector_search+faiss-hnsw``)."""
    if recipe is None or recipe.dense.ann is None:
        return modes
    from heta_eval.ann.spec import ann_mode

    return [ann_mode(mode, recipe.dense.ann) for mode in modes]
