"""Sweeps: every dataset × recipe × mode cell, each an ordinary results folder, with a
manifest that makes the sweep resumable and a leaderboard across cells at the end.

Cells run in sequence here, or as Ray tasks on a cluster (``executor``); on a cluster the
corpus of each dataset × recipe is first encoded by the executor's encoder pool into the
artifact cache, so the cells only read it. Cell folders, the data and the cache must then be
on a file system every node sees at the same path (one machine, or a shared mount).

Layout of ``output``::

    sweep.json                       the manifest: what the sweep is and each cell's state
    <dataset>/<recipe>/<mode>/       one results folder per cell (summary.json, runs/, ...)
    leaderboard.md                   one metric across cells (rows recipe/mode, columns datasets)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from heta_eval import config, interrupts
from heta_eval.adapters import load_benchmark
from heta_eval.cache.store import default_cache_dir
from heta_eval.compare.leaderboard import leaderboard
from heta_eval.data.folders import dataset_label
from heta_eval.io.write import write_whole
from heta_eval.reference.recipe import Recipe
from heta_eval.runner import BenchmarkRunner
from heta_eval.runner.benchmark import corpus_of
from heta_eval.scale.errors import explain

__all__ = ["Cell", "Sweep", "SweepError", "run_cell"]

MANIFEST = "sweep.json"


class SweepError(ValueError):
    """The sweep cannot start as asked; the message says why."""


class Cell:
    """One dataset × recipe × mode."""

    def __init__(self, dataset: str, recipe: str, mode: str) -> None:
        self.dataset, self.recipe, self.mode = dataset, recipe, mode

    @property
    def name(self) -> str:
        """The dataset's name (a dataset given as a folder is named after the folder)."""
        return dataset_label(self.dataset)

    @property
    def id(self) -> str:
        return f"{self.name}/{self.recipe}/{self.mode}"


def run_cell(
    dataset: str,
    recipe_json: str,
    mode: str,
    folder: str,
    *,
    data_dir: str | None,
    cache_dir: str | None,
    top_k: int,
) -> dict[str, Any]:
    """Run one cell into ``folder`` (resuming what an earlier attempt finished) and return
    its state for the manifest. Plain arguments: it runs as a Ray task as well."""
    started = time.perf_counter()
    benchmark = load_benchmark(dataset, data_dir=data_dir)
    if getattr(benchmark, "sub_benchmarks", None) and benchmark.sub_benchmarks():
        raise SweepError(f"{dataset} has sub-benchmarks; run it with heta-eval run")
    recipe = Recipe.model_validate_json(recipe_json)
    results = BenchmarkRunner(top_k=top_k, progress=False).run(
        benchmark=benchmark,
        recipe=recipe,
        query_modes=(mode,),
        output_dir=folder,
        cache_dir=cache_dir if cache_dir is not None else None,
    )
    summary = results.summary.modes[mode]
    metrics = {
        name: m.value for name, m in summary.metrics.items() if isinstance(m.value, int | float)
    }
    return {
        "status": "done",
        "partial": summary.partial,
        "metrics": metrics,
        "seconds": round(time.perf_counter() - started, 3),
        "node": _node_id(),
    }


def _node_id() -> str | None:
    try:
        import ray
    except ImportError:
        return None
    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else None


class Sweep:
    """A sweep over ``datasets`` × ``recipes`` (``{name: Recipe}``) × ``modes`` into
    ``output``; :meth:`run` skips the cells the manifest records as done.

    >>> import tempfile
    >>> sweep = Sweep(["scifact"], {"reference": Recipe()}, ["keyword_search"], tempfile.mkdtemp())
    >>> [cell.id for cell in sweep.cells]
    ['scifact/reference/keyword_search']
    """

    def __init__(
        self,
        datasets: Sequence[str],
        recipes: dict[str, Recipe],
        modes: Sequence[str],
        output: str | Path,
        *,
        data_dir: str | None = None,
        cache_dir: str | Path | None = None,
        top_k: int = 100,
    ) -> None:
        if not datasets or not recipes or not modes:
            raise SweepError("a sweep needs at least one dataset, recipe and mode")
        for name, recipe in recipes.items():
            missing = [m for m in modes if m not in recipe.modes]
            if missing:
                raise SweepError(f"recipe {name!r} does not build mode {missing[0]!r}")
        self.datasets = list(dict.fromkeys(datasets))
        self.recipes = dict(recipes)
        self.modes = list(dict.fromkeys(modes))
        self.output = Path(output)
        # Resolved here: a Ray task sees its node's environment, not this process's.
        self.data_dir = data_dir or (str(config.data_dir()) if config.data_dir() else None)
        self.cache_dir = str(cache_dir or default_cache_dir())
        self.top_k = top_k
        self.cells = [
            Cell(d, r, m) for d in self.datasets for r in self.recipes for m in self.modes
        ]

    # -- the manifest ----------------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        return {
            "datasets": self.datasets,
            "recipes": {n: r.model_dump(mode="json") for n, r in self.recipes.items()},
            "modes": self.modes,
            "top_k": self.top_k,
        }

    def load_manifest(self) -> dict[str, Any]:
        """The manifest on disk (checked to be this sweep's), or a new one."""
        path = self.output / MANIFEST
        if not path.exists():
            return {**self.identity(), "cells": {}}
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise SweepError(f"{path}: not a sweep manifest: {error}") from None
        changed = [k for k, v in self.identity().items() if manifest.get(k) != v]
        if changed:
            raise SweepError(
                f"{self.output} holds another sweep (changed: {', '.join(changed)}); "
                "choose another --output or delete it to start over"
            )
        return manifest

    def save_manifest(self, manifest: dict[str, Any]) -> None:
        self.output.mkdir(parents=True, exist_ok=True)
        write_whole(self.output / MANIFEST, json.dumps(manifest, indent=2) + "\n")

    def folder(self, cell: Cell) -> Path:
        return self.output / cell.name / cell.recipe / cell.mode

    # -- running ---------------------------------------------------------------------------
    def run(
        self, *, executor: Any = None, log: Callable[[str], None] = lambda _: None
    ) -> dict[str, Any]:
        """Run every cell not yet done; the manifest is saved after each cell."""
        manifest = self.load_manifest()
        cells = manifest["cells"]
        pending = [c for c in self.cells if cells.get(c.id, {}).get("status") != "done"]
        log(
            f"{len(self.cells) - len(pending)} of {len(self.cells)} cells done before; "
            f"{len(pending)} to run"
        )
        self.save_manifest(manifest)

        def finished(cell: Cell, state: dict[str, Any]) -> None:
            cells[cell.id] = {"folder": str(self.folder(cell).relative_to(self.output)), **state}
            self.save_manifest(manifest)
            log(
                f"{cell.id}: {state['status']}"
                + (f" ({state['error']})" if state.get("error") else "")
            )

        def done() -> str | None:  # what Ctrl-C keeps
            count = sum(1 for state in cells.values() if state.get("status") == "done")
            path = self.output / MANIFEST
            return f"{count} of {len(self.cells)} cells done, in {path}" if count else None

        interrupts.keep("sweep", done)
        if executor is None:
            for cell in pending:
                with interrupts.phase(f"running the sweep's cell {cell.id}"):
                    state = self._attempt(cell)
                finished(cell, state)
        else:
            self._run_on_ray(pending, executor, finished, log)
        interrupts.keep("sweep", None)
        return manifest

    def _arguments(self, cell: Cell) -> tuple[tuple[Any, ...], dict[str, Any]]:
        recipe = self.recipes[cell.recipe].model_copy(update={"modes": [cell.mode]})
        args = (cell.dataset, recipe.model_dump_json(), cell.mode, str(self.folder(cell)))
        kwargs = {"data_dir": self.data_dir, "cache_dir": self.cache_dir, "top_k": self.top_k}
        return args, kwargs

    def _attempt(self, cell: Cell) -> dict[str, Any]:
        args, kwargs = self._arguments(cell)
        try:
            return run_cell(*args, **kwargs)
        except Exception as error:  # recorded against the cell; a rerun retries it
            return {"status": "failed", "error": f"{type(error).__name__}: {error}"}

    def _run_on_ray(
        self,
        pending: list[Cell],
        executor: Any,
        finished: Callable[[Cell, dict[str, Any]], None],
        log: Callable[[str], None],
    ) -> None:
        import ray

        # Encode each dataset × recipe once on the executor's encoder pool; the cells of
        # every mode then find the vectors in the cache.
        for dataset in dict.fromkeys(c.dataset for c in pending):
            documents = None
            for name in dict.fromkeys(c.recipe for c in pending if c.dataset == dataset):
                recipe = self.recipes[name]
                if not any(
                    c.mode in ("vector_search", "hybrid_search")
                    for c in pending
                    if c.dataset == dataset and c.recipe == name
                ):
                    continue
                if documents is None:  # the corpus store: the runner's own, not Documents
                    benchmark = load_benchmark(dataset, data_dir=self.data_dir)
                    documents = corpus_of(benchmark)
                log(f"encoding {dataset} for recipe {name} on the cluster")
                dense_only = recipe.model_copy(update={"modes": ["vector_search"]})
                dense_only.build(
                    dataset,
                    documents,
                    cache_dir=self.cache_dir,
                    progress=False,
                    executor=_EncodeOnly(executor),
                )

        def kept() -> str:
            return (
                f"the cells done are kept in {self.output / MANIFEST}; rerunning the "
                "same command runs the others"
            )

        with executor.phase("running the sweep's cells", kept):
            task = ray.remote(num_cpus=1, max_retries=1)(run_cell)
            running = {}
            for cell in pending:
                args, kwargs = self._arguments(cell)
                running[task.remote(*args, **kwargs)] = cell
            while running:
                [ref], _ = ray.wait(list(running), num_returns=1)
                cell = running.pop(ref)
                try:
                    state = ray.get(ref)
                except Exception as error:  # the task's exception, or a lost worker
                    state = {"status": "failed", "error": explain(error)}
                finished(cell, state)

    # -- the leaderboard -------------------------------------------------------------------
    def leaderboard(self, manifest: dict[str, Any], metric: str = "ndcg@10") -> str:
        """Markdown: rows ``recipe/mode``, columns datasets (and their average)."""
        scores: dict[str, dict[str, float | None]] = {}
        for cell in self.cells:
            state = manifest["cells"].get(cell.id, {})
            value = state.get("metrics", {}).get(metric) if state.get("status") == "done" else None
            scores.setdefault(f"{cell.recipe}/{cell.mode}", {})[cell.name] = value
        return leaderboard(scores, metric).to_markdown()


class _EncodeOnly:
    """An executor's encoder pool without its search shards: sweep cells search locally."""

    def __init__(self, executor: Any) -> None:
        self.encode_corpus = executor.encode_corpus

    @staticmethod
    def attach(kb: Any) -> Any:
        return kb
