"""The engine computes only what a call asks for, with the numbers of a full pass; and its
ranking of a run already in score order (ties in any id order) is trec_eval's."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from support.parity_strategies import (
    WIDE_K,
    qrels_strategy,
    wide_run_strategy,
)

from heta_eval.providers import engine
from heta_eval.providers.kernels.order import trec_ranking


@settings(max_examples=300, deadline=None)
@given(qrels=qrels_strategy, run=wide_run_strategy, k_values=WIDE_K, data=st.data())
def test_asked_metrics_equal_a_full_pass_and_the_rest_stay_zero(qrels, run, k_values, data):
    columnar = engine.columnar_run_from_dict(run)
    ks = sorted(k_values)
    full_values, full_stats = engine.evaluate_columnar(columnar, qrels, ks)
    pairs = [(metric, k) for metric in engine.METRIC_ORDER for k in ks]
    wanted = data.draw(st.lists(st.sampled_from(pairs), unique=True))
    values, stats = engine.evaluate_columnar(columnar, qrels, ks, wanted)
    assert np.array_equal(stats, full_stats)
    # A metric named is computed up to its largest k asked; every other column holds 0.
    computed = {
        (metric, k)
        for metric, _ in wanted
        for k in ks
        if k <= max(j for m, j in wanted if m == metric)
    }
    for metric, k in pairs:
        column = engine.METRIC_ORDER.index(metric) * len(ks) + ks.index(k)
        expected = full_values[:, column] if (metric, k) in computed else 0.0
        assert np.array_equal(values[:, column], np.broadcast_to(expected, len(values)))


ids_strategy = st.lists(
    st.text(alphabet="ab\u00fc9 ", min_size=0, max_size=4), min_size=1, max_size=60, unique=True
)


@settings(max_examples=400, deadline=None)
@given(ids=ids_strategy, data=st.data())
def test_score_ordered_run_with_ties_ranks_by_score_then_doc_id_descending(ids, data):
    # Few distinct scores, written in descending order: ties everywhere, their ids in any order.
    levels = data.draw(st.lists(st.sampled_from([3.5, 2.0, 1.0, 0.0, -1.0]), min_size=len(ids)))
    scores = np.array(sorted(levels[: len(ids)], reverse=True), dtype=np.float64)
    data_bytes, offsets = engine.string_buffers(ids)
    rows = np.arange(len(ids), dtype=np.int64)
    order = trec_ranking(scores, data_bytes, offsets, rows).tolist()
    expected = sorted(rows.tolist(), key=lambda j: (scores[j], ids[j].encode()), reverse=True)
    assert order == expected
