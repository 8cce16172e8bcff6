"""Our aggregates equal the ``beir`` package's on random document-level runs."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from support.beir_reference import beir_numbers
from support.parity_strategies import (
    K_VALUES,
    qrels_strategy,
    run_strategy,
)

from heta_eval.evaluation import evaluate_run


@settings(max_examples=400, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy, k_values=K_VALUES)
def test_evaluate_run_equals_beir_on_random_runs(qrels, run, k_values):
    run_before = copy.deepcopy(run)
    ours = evaluate_run(qrels, run, k_values)
    assert run == run_before, "evaluate_run must not mutate the caller's run"
    expected = beir_numbers(qrels, run, k_values)
    ours_flat = {key: agg.beir for key, agg in ours.aggregates.items()}
    if expected is None:
        assert all(value is None for key, value in ours_flat.items() if not key.startswith("MRR"))
        return
    assert ours_flat == expected
