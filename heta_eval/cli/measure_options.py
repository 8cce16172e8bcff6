"""``heta-eval run --k`` / ``--measures``: the retrieval measures a run scores per case.

A benchmark owns its scoring policy; these options replace only its BEIR retrieval measures
(its self-hit policy and its other evaluators stay), with BEIR's families at the cutoffs asked.
"""

from __future__ import annotations

from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.numbers import at_most_values
from heta_eval.measures.params import check_cutoff

Chosen = tuple[tuple[str, int], ...]
"""``(metric, k)`` pairs, as ``BeirRetrievalMetric`` takes them."""


def add_measure_arguments(group: Any) -> None:
    group.add_argument(
        "--k",
        help="k values of the retrieval metrics (nDCG, MAP, Recall, P, MRR), e.g. 1,3,5,10,100",
    )
    group.add_argument(
        "--measures",
        help="the retrieval measures instead (replaces --k), BEIR's families in any spelling, "
        'e.g. "nDCG@10 R_cap@100 Hole@10 Accuracy@5"',
    )


def chosen_measures(k_text: str | None, measures_text: str | None) -> Chosen | None:
    """The ``(metric, k)`` pairs asked for; ``None`` keeps the benchmark's own.

    >>> chosen_measures("1,10", None)[:3]
    (('ndcg', 1), ('ndcg', 10), ('map', 1))
    >>> chosen_measures(None, "nDCG@10 R_cap@100 hole@10")
    (('ndcg', 10), ('r_cap', 100), ('hole', 10))
    """
    if k_text is not None and measures_text is not None:
        raise CliError("give --measures or --k, not both")
    if measures_text is not None:
        chosen = _measures(measures_text)
    elif k_text is None:
        return None
    else:
        from heta_eval.measures.measure import METRICS

        ks = _parse_k(k_text)
        chosen = tuple((metric, k) for metric in METRICS for k in ks)
    at_most_values("--measures" if measures_text is not None else "--k", len(chosen))
    return chosen


def evaluators(benchmark: Any, chosen: Chosen | None) -> list[Any] | None:
    """The benchmark's evaluators with its retrieval measures replaced by ``chosen``."""
    if chosen is None:
        return None
    from heta_eval.evaluation import BeirRetrievalMetric

    own = list(benchmark.evaluators())
    retrieval = [e for e in own if isinstance(e, BeirRetrievalMetric)]
    policy = retrieval[0].ignore_identical_ids if retrieval else True
    others = [e for e in own if not isinstance(e, BeirRetrievalMetric)]
    asked = [BeirRetrievalMetric(m, k, ignore_identical_ids=policy) for m, k in chosen]
    return [*asked, *others]


def _parse_k(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise CliError(f"--k must be comma-separated integers, got {text!r}") from None
    if not values or any(k < 1 for k in values):
        raise CliError(f"--k must list positive integers, got {text!r}")
    try:
        return tuple(check_cutoff(k) for k in values)
    except ValueError as error:
        raise CliError(f"--k: {error}") from None


def _measures(text: str) -> Chosen:
    from heta_eval.measures.measure import UnknownMeasureError, parse_measures

    try:
        measures = parse_measures(text)
    except UnknownMeasureError as error:
        raise CliError(f"--measures: {error}") from None
    outside = [str(m) for m in measures if m.legacy is None]
    if outside:
        raise CliError(
            f"--measures: {outside[0]} is not one of BEIR's families, which a run scores per "
            f"case (nDCG, MAP, Recall, P, MRR, R_cap, Hole, Accuracy at a cutoff); for other "
            f"measures, score the run files: heta-eval evaluate --run FOLDER/runs/MODE.trec "
            f"--dataset NAME --measures ..."
        )
    return tuple(dict.fromkeys(m.legacy for m in measures if m.legacy is not None))
