"""Every measure heta-eval accepts under an ir_measures name equals ir_measures 0.4.3's, per
query and aggregated, on random runs, through both providers (pytrec_eval below the engine's
row threshold, the compiled engine above it).

The documented differences (docs/retrieval-core.md): ir_measures's aggregate is the strict
(``trec_eval -c``) mean, a judged query missing from the run counting its default; for
``NumQ`` and ``NumRel`` that default is 0 where trec_eval ``-c`` counts the query and its
relevant documents, so there ir_measures equals the BEIR aggregate. Negative labels are read
as 0 by heta-eval, so labels here are >= 0.
"""

from __future__ import annotations

import math
import random

import ir_measures
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heta_eval.evaluation import evaluate_run
from heta_eval.measures.measure import parse_measures
from heta_eval.providers import backends

SHARED = parse_measures(
    "nDCG@1 nDCG@3 nDCG@10 nDCG AP AP@2 AP@5 P@1 P@3 R@2 R@5 RR RR@1 RR@3 Rprec Bpref infAP "
    "Success@1 Success@3 Judged@1 Judged@3 Judged@10 NumRet NumRel NumRelRet NumQ SetP SetR "
    "SetF SetAP IPrec@0.2 IPrec@0.55"
)
# What the compiled engine computes: a call of only these can go to it.
ENGINE_SHARED = parse_measures("nDCG@1 nDCG@3 nDCG@10 AP@2 AP@5 P@1 P@3 R@2 R@5")
COUNTED_AS_ZERO_WHEN_MISSING = {"NumQ", "NumRel"}

DOCS = [f"d{i}" for i in range(9)] + ["D1", "é"]
QUERIES = ["q1", "q2", "q3", "q4", "Q1"]
SCORES = st.sampled_from([0.0, 1.0, 1.0, 2.5, -1.0, 1.0000000001, 0.5]) | st.floats(
    -5, 5, allow_nan=False
)


@st.composite
def cases(draw):
    qrels = {}
    for qid in draw(st.lists(st.sampled_from(QUERIES), unique=True, min_size=1)):
        # min_size: ir_measures's Judged counts a query with no judgments (as 0), its other
        # measures do not; heta-eval evaluates no such query (a judgment file cannot hold one).
        labels = st.integers(0, 3)
        qrels[qid] = draw(st.dictionaries(st.sampled_from(DOCS), labels, min_size=1, max_size=6))
    run = {}  # judged queries missing from the run, unjudged run queries
    for qid in draw(st.lists(st.sampled_from([*QUERIES, "q9"]), unique=True, min_size=1)):
        run[qid] = draw(st.dictionaries(st.sampled_from(DOCS), SCORES, min_size=1, max_size=8))
    return qrels, run


def close(a: float, b: float) -> bool:
    # Aggregates only: the two sum in different query orders.
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def compare(qrels, run, measures, engine: str) -> None:
    ours = evaluate_run(qrels, run, measures=measures, ignore_identical_ids=False, engine=engine)
    theirs = {ir_measures.parse_measure(str(m)): str(m) for m in measures}
    judged = {q for q, docs in qrels.items() if docs}
    result = ir_measures.calc(list(theirs), qrels, run) if judged else None
    if result is None:
        return
    for metric in result.per_query:
        name, qid = theirs[metric.measure], metric.query_id
        if qid in run:
            assert ours.per_query[qid][name] == metric.value, (qid, name)
        elif name not in COUNTED_AS_ZERO_WHEN_MISSING:
            assert metric.value == 0.0, (qid, name)
    for measure, value in result.aggregated.items():
        name = theirs[measure]
        aggregate = ours.aggregates[name]
        mine = aggregate.beir_unrounded if name in COUNTED_AS_ZERO_WHEN_MISSING else None
        mine = aggregate.strict_unrounded if mine is None else mine
        assert mine is not None and close(mine, value), (name, mine, value)


@settings(max_examples=150, deadline=None)
@given(cases())
def test_every_shared_measure_equals_ir_measures_through_pytrec_eval(case):
    qrels, run = case
    compare(qrels, run, SHARED, "pytrec")


@settings(max_examples=100, deadline=None)
@given(case=cases())
def test_engine_measures_equal_ir_measures_above_the_row_threshold(monkeypatch_module, case):
    qrels, run = case
    rows = sum(map(len, run.values()))
    monkeypatch_module.setattr(backends, "ENGINE_MIN_ROWS", 1)
    assert backends.choose_backend("auto", ENGINE_SHARED, large=backends.large_run(rows)) == "fast"
    compare(qrels, run, ENGINE_SHARED, "auto")


def test_a_run_above_the_real_threshold_equals_ir_measures():
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(400)]
    qrels = {f"q{i}": {d: rng.randint(0, 2) for d in rng.sample(docs, 12)} for i in range(300)}
    run = {
        f"q{i}": {d: float(rng.randint(0, 50)) for d in rng.sample(docs, 340)}
        for i in range(0, 320)
        if i % 7
    }
    rows = sum(map(len, run.values()))
    assert rows >= backends.ENGINE_MIN_ROWS
    assert backends.choose_backend("auto", ENGINE_SHARED, large=backends.large_run(rows)) == "fast"
    compare(qrels, run, ENGINE_SHARED, "auto")


def test_judged_divides_by_the_documents_ranked_up_to_k():
    qrels, run = {"q": {"a": 0, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}
    result = evaluate_run(qrels, run, measures="Judged@10 Judged@1")
    assert result.per_query["q"] == {"Judged@10": 1.0, "Judged@1": 1.0}


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch
