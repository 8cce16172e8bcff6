"""Our aggregates equal the ``beir`` package's on random document-level runs."""

from __future__ import annotations

import copy

from beir_reference import beir_numbers
from hypothesis import given, settings
from hypothesis import strategies as st

from heta_eval.evaluation import evaluate_run

QIDS = ["q1", "q2", "q3", "文-q4", "10"]
# Doc ids overlap query ids (self-hits), sort differently as strings, and are non-ASCII.
DOCS = ["d1", "d2", "D3", "é4", "文5", "q1", "q2", "10", "9", "100", "z"]
# Scores with exact ties, float32-close values (1+1e-9 ties 1.0 in float32, 1+1e-7 does not).
SCORES = st.one_of(
    st.sampled_from([1.0, 2.0, 0.5, 1.0 + 1e-9, 1.0 + 1e-7, 3.0, -1.0, 0.0]),
    st.floats(min_value=-10, max_value=10, allow_nan=False, allow_infinity=False),
    st.integers(min_value=-3, max_value=3),
)
qrels_strategy = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOCS), st.integers(min_value=0, max_value=3), max_size=6),
    max_size=5,
)
run_strategy = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOCS), SCORES, max_size=11),
    max_size=5,
)
K_VALUES = st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=4, unique=True)


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
