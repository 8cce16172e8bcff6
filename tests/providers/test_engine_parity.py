"""The compiled columnar engine equals the ``beir`` package (and our pytrec_eval path) exactly.

Same random strategies as the core parity tests (ties, float32-close scores, zero labels,
empty result lists, missing queries, self-hits, non-ASCII ids, random k), plus larger k,
chunk-level batches, the array TREC reader with its fallbacks, and the real SciFact run.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest
from beir.datasets.data_loader import GenericDataLoader
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.beir_reference import beir_numbers
from support.parity_strategies import (
    K_VALUES,
    MANY_DOCS,
    QIDS,
    WIDE_K,
    chunked_response,
    file_run_strategy,
    qrels_strategy,
    run_strategy,
    wide_run_strategy,
)

from heta_eval.evaluation import BenchmarkCase, beir_default_metrics, evaluate_run
from heta_eval.io.trec import TrecFormatError, read_qrels, read_run, read_run_columnar, write_run
from heta_eval.rag.aggregate import score_retrieval_batch
from heta_eval.retrieval.columnar_run import evaluate_columnar_run
from heta_eval.retrieval.run_file import evaluate_run_file


def _flat(evaluation) -> dict[str, float | None]:
    return {key: agg.beir for key, agg in evaluation.aggregates.items()}


@settings(max_examples=400, deadline=None)
@given(qrels=qrels_strategy, run=st.one_of(run_strategy, wide_run_strategy), k_values=WIDE_K)
def test_engine_equals_beir_and_pytrec(qrels, run, k_values):
    run_before = copy.deepcopy(run)
    fast = evaluate_run(qrels, run, k_values, engine="fast")
    assert run == run_before, "the engine must not mutate the caller's run"
    slow = evaluate_run(qrels, run, k_values, engine="pytrec")
    # Per-query values, unrounded aggregates and counts: equal to the last bit.
    assert fast.per_query == slow.per_query
    assert fast.aggregates == slow.aggregates
    assert fast.counts == slow.counts
    expected = beir_numbers(qrels, run, k_values)
    if expected is None:
        assert all(v is None for k, v in _flat(fast).items() if not k.startswith("MRR"))
        return
    assert _flat(fast) == expected


@settings(max_examples=200, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy, k_values=K_VALUES, seed=st.integers(0, 10**6))
def test_chunk_batch_engine_equals_per_response_path(qrels, run, k_values, seed):
    rng = random.Random(seed)
    cases = [
        BenchmarkCase(id=qid, query=qid, expected={"relevance": qrels.get(qid, {})}) for qid in QIDS
    ]
    responses = {qid: chunked_response(qid, docs, rng) for qid, docs in run.items()}
    if responses and rng.random() < 0.3:  # some responses without scores: rank-derived
        qid = rng.choice(sorted(responses))
        for result in responses[qid].results:
            result.score = None
    metrics = beir_default_metrics(k_values)
    fast = score_retrieval_batch(metrics, cases, responses, engine="fast")
    slow = score_retrieval_batch(metrics, cases, responses, engine="pytrec")
    assert fast == slow


def _write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(qrels=qrels_strategy, run=file_run_strategy, k_values=K_VALUES, data=st.data())
def test_columnar_reader_path_equals_dict_path(tmp_path, qrels, run, k_values, data):
    run = {qid: docs for qid, docs in run.items() if docs}
    if not run:
        return
    path = tmp_path / "run.trec"
    write_run(run, path, sort=data.draw(st.booleans()))
    columnar = read_run_columnar(path)
    assert columnar is not None
    fast = evaluate_columnar_run(qrels, columnar, k_values)
    slow = evaluate_run(qrels, read_run(path), k_values, engine="pytrec")
    assert fast.per_query == slow.per_query
    assert fast.aggregates == slow.aggregates
    assert fast.counts == slow.counts


def test_columnar_reader_falls_back_on_anything_unusual(tmp_path):
    qrels = {"q1": {"d1": 1}}
    cases = {
        "json": ['{"q1": {"d1": 1.0}}'],
        "bad columns": ["q1 Q0 d1 1 1.0 t", "q1 Q0 d2 2 0.5"],
        "not a number": ["q1 Q0 d1 1 abc t"],
        "not finite": ["q1 Q0 d1 1 nan t"],
        "split query": ["q1 Q0 d1 1 1.0 t", "q2 Q0 d1 1 1.0 t", "q1 Q0 d2 2 0.5 t"],
        "empty": [],
    }
    for name, lines in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.trec"
        _write_lines(path, lines)
        assert read_run_columnar(path) is None, name
    # A repeated (query, doc) pair is found by the engine: evaluate_run_file then uses
    # read_run, which names the line, or applies BEIR's last-wins rule.
    path = tmp_path / "dup.trec"
    _write_lines(path, ["q1 Q0 d1 1 1.0 t", "q1 Q0 d2 2 0.5 t", "q1 Q0 d1 3 0.2 t"])
    assert read_run_columnar(path) is not None
    with pytest.raises(TrecFormatError, match=r"dup\.trec:3: duplicate"):
        evaluate_run_file(qrels, path, (1, 10), engine="fast")
    last = evaluate_run_file(qrels, path, (1, 10), duplicates="last", engine="fast")
    assert last.per_query == evaluate_run(qrels, {"q1": {"d1": 0.2, "d2": 0.5}}, (1, 10)).per_query
    path = tmp_path / "ok.trec"
    _write_lines(path, ["q1 Q0 d2 1 1.0 t", "q1 Q0 d1 2 0.5 t", "q1 Q0 q1 3 9.0 t"])
    result = evaluate_run_file(qrels, path, (1, 10), engine="fast")
    assert result.beir_dict()["mrr"] == {"MRR@1": 0.0, "MRR@10": 0.5}
    assert result.counts["self_hits_removed"] == 1


def test_real_scifact_columnar_equals_beir(scifact_dir: Path, scifact_run_file: Path):
    if not scifact_run_file.exists():
        pytest.skip("shared SciFact run not available")
    _, _, beir_qrels = GenericDataLoader(data_folder=str(scifact_dir)).load(split="test")
    qrels = read_qrels(scifact_dir / "qrels" / "test.tsv")
    assert qrels == beir_qrels
    k_values = (1, 3, 5, 10, 100)
    columnar = read_run_columnar(scifact_run_file)
    assert columnar is not None
    fast = evaluate_columnar_run(qrels, columnar, k_values, reject_duplicates=True)
    run = read_run(scifact_run_file)
    assert _flat(fast) == beir_numbers(beir_qrels, run, k_values)
    slow = evaluate_run(qrels, run, k_values, engine="pytrec")
    assert fast.per_query == slow.per_query
    assert fast.aggregates == slow.aggregates


@settings(max_examples=300, deadline=None)
@given(ids=st.lists(st.one_of(st.sampled_from(MANY_DOCS), st.text(max_size=6))))
def test_string_buffers_of_a_list_lay_out_bytes_as_arrow_does(ids):
    # Lists are laid out by one join (no pandas import); NULs inside ids go through Arrow.
    import numpy as np
    import pyarrow as pa

    from heta_eval.io.columnar import string_buffers

    data, offsets = string_buffers(ids)
    arrow = pa.array(ids, type=pa.large_string())
    assert offsets.dtype == np.int64 and len(offsets) == len(ids) + 1
    got = [bytes(data[offsets[i] : offsets[i + 1]]).decode() for i in range(len(ids))]
    assert got == arrow.to_pylist() == ids


@settings(max_examples=200, deadline=None)
@given(qrels=qrels_strategy, run=wide_run_strategy, k_values=WIDE_K, cores=st.integers(2, 5))
def test_engine_split_over_threads_equals_one_thread(qrels, run, k_values, cores):
    # Large runs are scored as query slices on several threads: the same bits as one pass.
    import numpy as np

    from heta_eval.providers import engine

    columnar = engine.columnar_run_from_dict(run)
    one = engine.evaluate_columnar(columnar, qrels, k_values)
    saved = engine.PARALLEL_MIN_ROWS, engine._cores
    engine.PARALLEL_MIN_ROWS, engine._cores = 0, lambda: cores
    try:
        split = engine.evaluate_columnar(columnar, qrels, k_values)
    finally:
        engine.PARALLEL_MIN_ROWS, engine._cores = saved
    assert one[0].tobytes() == split[0].tobytes() and np.array_equal(one[1], split[1])


def test_large_runs_split_into_query_slices_of_similar_size():
    import numpy as np

    from heta_eval.providers.engine import PARALLEL_MIN_ROWS, _query_parts

    rows = PARALLEL_MIN_ROWS  # 8 queries of rows / 4 results each
    offsets = np.arange(0, 2 * rows + 1, rows // 4)
    assert _query_parts(offsets, 2) == [(0, 2), (2, 4), (4, 6), (6, 8)]
    assert _query_parts(offsets, 1) == [(0, 8)]
    assert _query_parts(offsets // 4, 2) == [(0, 8)]  # too small to pay for threads
