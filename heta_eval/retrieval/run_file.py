"""``evaluate_run_file``: a run file scored through the one run reader
(:mod:`heta_eval.io.run`), straight into arrays when the file is large."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from heta_eval.io.run import read_run, read_run_columnar
from heta_eval.io.source import open_input
from heta_eval.measures.measure import BEIR_K_VALUES, METRICS, Measure
from heta_eval.providers.backends import choose_provider, compiled_run_file, large_run
from heta_eval.retrieval.columnar_run import DuplicateRowsError, evaluate_columnar_run
from heta_eval.retrieval.plan import plan_measures
from heta_eval.retrieval.result import RunEvaluation
from heta_eval.retrieval.run import evaluate_run

__all__ = ["evaluate_run_file"]


def evaluate_run_file(
    qrels: Mapping[str, Mapping[str, int]],
    path: Any,
    k_values: Iterable[int] = BEIR_K_VALUES,
    *,
    metrics: Iterable[str] = METRICS,
    measures: Iterable[str | Measure] | str | None = None,
    duplicates: str = "error",
    ignore_identical_ids: bool = True,
    engine: str = "auto",
) -> RunEvaluation:
    """:func:`~heta_eval.retrieval.run.evaluate_run` on a run file (TREC or BEIR results JSON),
    read by the one run reader (:mod:`heta_eval.io.run`). A large TREC file the engine can
    score is read straight into arrays; anything else, or any doubt (a repeated pair, a parse
    problem), goes through :func:`heta_eval.io.run.read_run`, which names the bad line. Same
    numbers either way. Raises :class:`~heta_eval.io.run.TrecFormatError` or ``OSError``.
    """
    path = open_input(path)  # read once: a pipe, a FIFO or "-" is never reopened
    named = plan_measures(k_values, metrics, measures)[2]
    # Below COMPILED_MIN_BYTES, loading numba costs more than the engine saves.
    large = compiled_run_file(path)
    provider = choose_provider(engine, list(named.values()), large=large)
    if provider.columnar:
        columnar = _read_while_kernel_loads(path, ignore_identical_ids)
        if columnar is not None and (
            choose_provider(engine, [], large=large_run(columnar.rows)).columnar
        ):
            try:
                return evaluate_columnar_run(
                    qrels,
                    columnar,
                    k_values,
                    metrics=metrics,
                    measures=measures,
                    reject_duplicates=True,
                )
            except DuplicateRowsError:
                pass  # read_run names the line (or keeps the last value)
    run = read_run(path, duplicates=duplicates)  # type: ignore[arg-type]
    # A small file's dict may still hold ENGINE_MIN_ROWS results; loading numba for it
    # would cost a one-shot command more than pytrec_eval takes: the file's size decides.
    return evaluate_run(
        qrels,
        run,
        k_values,
        metrics=metrics,
        measures=measures,
        ignore_identical_ids=ignore_identical_ids,
        engine=engine if large else provider.name,
    )


def _read_while_kernel_loads(path: Any, ignore_identical_ids: bool) -> Any:
    """:func:`~heta_eval.io.run.read_run_columnar`, the metric kernel loading from numba's
    cache in a thread meanwhile (the parse's threads release the GIL)."""
    from heta_eval.providers.engine import load_kernel  # heavy (numba): a large file only

    loader = threading.Thread(target=_load_quietly, args=(load_kernel,), daemon=True)
    loader.start()
    try:
        return read_run_columnar(path, ignore_identical_ids=ignore_identical_ids)
    finally:
        loader.join()


def _load_quietly(load: Any) -> None:
    # On failure the engine's own call meets the same error and reports it.
    with contextlib.suppress(Exception):
        load()
