"""The one retrieval core: every measure equals pytrec_eval through the library, the CLI and
both backends; odd input gets one behaviour everywhere; measure names parse and render."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import pytrec_eval_ext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heta_eval.cli import main
from heta_eval.evaluation import evaluate_run
from heta_eval.io.trec import write_qrels, write_run
from heta_eval.io.validate import InputError
from heta_eval.measures.measure import (
    TREC_FAMILIES,
    Measure,
    UnknownMeasureError,
    parse_measures,
)
from heta_eval.providers import backends
from heta_eval.providers.engine import columnar_run_from_dict
from heta_eval.retrieval.columnar_run import evaluate_columnar_run

# Every numeric trec_eval 9.0.8 family (bare cutoff families expand to trec_eval's default
# cutoffs), some parameters, and the three rules computed beside pytrec_eval.
ALL_TREC = " ".join(TREC_FAMILIES)
PARAMS = "P.3 recall.2 ndcg_cut.1,4 map_cut.2 success.2 relative_P.3 iprec_at_recall.0.25"
EXTRA = "Judged@1 Judged@3 RR@1 RR@3 MRR@1 MRR@3"
MEASURES = parse_measures(
    f"{ALL_TREC} {PARAMS} set_F.0.5 set_F.2 utility.2,-1,0,0 utility.1,-1,0,0 Rprec_mult.0.5 "
    "ndcg.1=0,2=3 ndcg.2=1.5 G.1=2 ndcg_rel.2=4 Rndcg.1=3 iprec_at_recall.0.101 11pt_avg.0.5"
)
BEIR_GRID = parse_measures("NDCG@1 NDCG@3 MAP@3 Recall@2 P@1 P@3 MRR@1 MRR@3")

DOCS = [f"d{i}" for i in range(8)]
QUERIES = ["q1", "q2", "q3", "q4"]
# Ties, float32-close values (distinct in float64, equal in float32), negatives, zeros.
SCORES = st.sampled_from([0.0, 1.0, 1.0, 2.5, -1.0, 1.0000000001, 1.0000000002, 3.0, 0.5])
LABELS = st.integers(min_value=-5, max_value=3)


@st.composite
def cases(draw):
    qrels = {}
    for qid in draw(st.lists(st.sampled_from(QUERIES), unique=True, min_size=1)):
        qrels[qid] = draw(st.dictionaries(st.sampled_from(DOCS), LABELS, max_size=6))
    run = {}
    # Missing queries (judged, not in the run), unjudged run queries, empty rankings.
    for qid in draw(st.lists(st.sampled_from([*QUERIES, "q9"]), unique=True, min_size=1)):
        run[qid] = draw(st.dictionaries(st.sampled_from(DOCS), SCORES, max_size=7))
    return qrels, run


def pytrec_reference(qrels, run, measures):
    """pytrec_eval's C extension (trec_eval's code) on the documented input, one evaluator
    per measure (negative labels read as 0)."""
    clean = {q: {d: max(v, 0) for d, v in docs.items()} for q, docs in qrels.items()}
    judged = {q: docs for q, docs in clean.items() if docs}
    trec = [m for m in measures if m.rule == "trec_eval"]
    ranked = {q: docs for q, docs in run.items() if q in judged and docs}
    out = {q: {} for q in ranked}
    for m in trec if ranked else ():
        evaluator = pytrec_eval_ext.RelevanceEvaluator(judged, {m.trec_name}, 1, False)
        for q, values in evaluator.evaluate(ranked).items():
            out[q][str(m)] = values[m.trec_key]
    # An empty ranking scores as trec_eval -c scores a missing query (meas_avg.c).
    for qid in (q for q, docs in run.items() if q in judged and not docs):
        relevant = sum(1 for label in judged[qid].values() if label > 0)
        special = {
            "NumQ": 1.0,
            "NumRel": relevant,
            "gm_map": math.log(1e-5),
            "gm_bpref": math.log(1e-5),
        }
        out[qid] = {str(m): special.get(str(m), 0.0) for m in trec}
    return out


def same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@settings(max_examples=120, deadline=None)
@given(cases())
def test_every_trec_eval_measure_equals_pytrec_eval(case):
    qrels, run = case
    ours = evaluate_run(qrels, run, measures=MEASURES, ignore_identical_ids=False)
    reference = pytrec_reference(qrels, run, MEASURES)
    assert set(reference) == {q for q in ours.per_query if qrels.get(q)}
    for qid, values in reference.items():
        for name, value in values.items():
            assert same(ours.per_query[qid][name], value), (qid, name)


def ir_measures_ranking(docs):
    # ir_measures's order for Judged and RR@k: raw score descending, ties by doc id ascending.
    return sorted(docs, key=lambda d: (-docs[d], d))


def judged_at(qrels, run, qid, k):
    top = ir_measures_ranking(run[qid])[:k]
    return sum(1 for doc in top if doc in qrels[qid]) / len(top) if top else 0.0


def rr_at(qrels, run, qid, k):
    for rank, doc in enumerate(ir_measures_ranking(run[qid])[:k], 1):
        if qrels[qid].get(doc, 0) > 0:
            return 1 / rank
    return 0.0


@settings(max_examples=80, deadline=None)
@given(cases())
def test_judged_and_cut_rr_follow_their_definitions(case):
    qrels, run = case
    ours = evaluate_run(qrels, run, measures="Judged@1 Judged@3 RR@2", ignore_identical_ids=False)
    for qid in ours.per_query:
        assert ours.per_query[qid]["Judged@1"] == judged_at(qrels, run, qid, 1)
        assert ours.per_query[qid]["Judged@3"] == judged_at(qrels, run, qid, 3)
        assert ours.per_query[qid]["RR@2"] == rr_at(qrels, run, qid, 2)


@settings(max_examples=150, deadline=None)
@given(cases(), st.booleans())
def test_both_backends_give_identical_results(case, self_hits):
    qrels, run = case
    if self_hits:
        run = {q: {**docs, q: 9.0} for q, docs in run.items()}
    fast = evaluate_run(qrels, run, measures=BEIR_GRID, engine="fast")
    slow = evaluate_run(qrels, run, measures=BEIR_GRID, engine="pytrec")
    assert fast.per_query == slow.per_query
    assert fast.aggregates == slow.aggregates
    assert fast.counts == slow.counts


@settings(max_examples=40, deadline=None)
@given(cases())
def test_a_case_scores_the_same_below_and_above_the_engine_threshold(case):
    qrels, run = case
    below = evaluate_run(qrels, run)
    original = backends.ENGINE_MIN_ROWS
    backends.ENGINE_MIN_ROWS = 0
    try:
        above = evaluate_run(qrels, run)
    finally:
        backends.ENGINE_MIN_ROWS = original
    assert above.aggregates == below.aggregates and above.per_query == below.per_query


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=cases())
def test_cli_json_equals_the_library(tmp_path, capsys, case):
    qrels, run = case
    if not any(qrels.values()) or not any(run.values()):
        return  # a file needs at least one line
    qrels = {q: d for q, d in qrels.items() if d}
    run = {q: d for q, d in run.items() if d}
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run(run, tmp_path / "run.trec", sort=False)  # BEIR's MRR keeps the run's order
    names = "nDCG@3 AP Rprec bpref Judged@3 recall.2 num_rel gm_map MRR@3"
    code = main(
        [
            "evaluate",
            "--run",
            str(tmp_path / "run.trec"),
            "--qrels",
            str(tmp_path / "qrels.txt"),
            "--measures",
            names,
            "--json",
            "--per-query",
            "--keep-self-hits",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    library = evaluate_run(qrels, run, measures=names, ignore_identical_ids=False)
    assert out["per_query"] == library.per_query
    assert out["measures"] == {
        name: {"beir": value.beir, "strict": value.strict}
        for name, value in library.aggregates.items()
    }


# ------------------------------------------------------------------ one behaviour for odd input


@pytest.mark.parametrize("engine", ["pytrec", "fast"])
def test_odd_input_gets_one_behaviour_on_both_backends(engine):
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 2.0}}
    base = evaluate_run(qrels, run, engine=engine).aggregates
    # Integral floats and numpy integers are the integer; numpy float scores are floats.
    assert evaluate_run({"q": {"a": 1.0, "b": np.int64(0)}}, run, engine=engine).aggregates == base
    assert (
        evaluate_run(qrels, {"q": {"a": np.float32(1), "b": 2}}, engine=engine).aggregates == base
    )
    for bad_qrels, message in [
        ({"q": {"a": 0.5}}, "not an integer"),
        ({"q": {"a": 2**63}}, "above 1,000,000"),
        ({"q": {"a": 2**32}}, "q.*a.*above 1,000,000"),
        ({"q": {"a": -(2**64)}}, "int64"),
        ({"q": {"a\x00x": 1}}, "NUL"),
        ({"q": {"a": "1"}}, "not an integer"),
    ]:
        with pytest.raises(InputError, match=message):
            evaluate_run(bad_qrels, run, engine=engine)
    for bad_run, message in [
        ({"q": {"a": float("nan")}}, "not finite"),
        ({"q": {"a": float("inf")}}, "not finite"),
        ({"q": {"a\x00": 1.0}}, "NUL"),
        ({"q": {"a": "1.0"}}, "not a number"),
        ({"q": {"a": 10**400}}, "float64"),
    ]:
        with pytest.raises(InputError, match=message):
            evaluate_run(qrels, bad_run, engine=engine)


def test_columnar_runs_are_validated_like_dicts():
    run = columnar_run_from_dict({"q": {"a\x00": 1.0}})
    with pytest.raises(InputError, match="NUL"):
        evaluate_columnar_run({"q": {"a": 1}}, run)
    nan = columnar_run_from_dict({"q": {"a": 1.0}})
    nan.scores[0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        evaluate_columnar_run({"q": {"a": 1}}, nan)


@pytest.mark.parametrize("label", [-1, -2, -5, -(2**40)])
@pytest.mark.parametrize("engine", ["pytrec", "fast"])
def test_negative_labels_never_crash_and_read_as_judged_non_relevant(label, engine):
    qrels = {"q": {"a": 1, "junk": label}}
    run = {"q": {"junk": 3.0, "a": 2.0, "x": 1.0}}
    ours = evaluate_run(qrels, run, engine=engine)
    as_zero = evaluate_run({"q": {"a": 1, "junk": 0}}, run, engine=engine)
    assert ours.aggregates == as_zero.aggregates
    if engine == "pytrec":  # judged status kept: bpref and Judged@k see the document
        judged = evaluate_run(qrels, run, measures="bpref Judged@2")
        assert judged.per_query["q"] == {"Bpref": 0.0, "Judged@2": 1.0}


# ------------------------------------------------------------------ measure names


@pytest.mark.parametrize(
    ("spellings", "trec", "beir"),
    [
        (["nDCG@10", "NDCG@10", "ndcg_cut.10"], "ndcg_cut.10", "NDCG@10"),
        (["AP@100", "MAP@100", "map_cut.100"], "map_cut.100", "MAP@100"),
        (["R@100", "Recall@100", "recall.100"], "recall.100", "Recall@100"),
        (["P@5", "P.5"], "P.5", "P@5"),
        (["RR", "recip_rank"], "recip_rank", None),
        (["Rprec"], "Rprec", None),
        (["Bpref", "bpref"], "bpref", None),
        (["infAP"], "infAP", None),
        (["Success@5", "success.5"], "success.5", None),
        (
            ["IPrec@0.1", "iprec_at_recall.0.10", "iprec_at_recall.0.1"],
            "iprec_at_recall.0.10",
            None,
        ),
        (["AP", "map"], "map", None),
        (["nDCG", "ndcg"], "ndcg", None),
    ],
)
def test_every_spelling_parses_to_one_measure(spellings, trec, beir):
    measures = {Measure.parse(name) for name in spellings}
    assert len(measures) == 1
    (measure,) = measures
    assert measure.trec_name == trec and measure.beir_name == beir
    assert Measure.parse(str(measure)) == measure


def test_beir_mrr_is_not_ir_measures_rr_nor_trec_eval_recip_rank():
    mrr, rr, rr_all = Measure.parse("MRR@10"), Measure.parse("RR@10"), Measure.parse("RR")
    assert mrr != rr and mrr.rule == "beir_mrr" and rr.rule == "rr_cut"
    assert mrr.trec_name is None and str(mrr) == "MRR@10"
    # Ties: BEIR keeps the run's order, ir_measures's RR@k breaks them by doc id ascending,
    # trec_eval's recip_rank (ir_measures's RR) by doc id descending.
    qrels, run = {"q": {"b": 1}}, {"q": {"b": 1.0, "a": 1.0, "c": 1.0}}
    result = evaluate_run(qrels, run, measures=[mrr, rr, rr_all])
    assert result.per_query["q"] == {"MRR@10": 1.0, "RR@10": 0.5, "RR": 0.5}
    qrels = {"q": {"a": 1}}
    result = evaluate_run(qrels, run, measures=[mrr, rr, rr_all])
    assert result.per_query["q"] == {"MRR@10": 0.5, "RR@10": 1.0, "RR": 1 / 3}


def test_gain_variants_of_ndcg_remap_labels():
    qrels, run = {"q": {"a": 1, "b": 2}}, {"q": {"a": 2.0, "b": 1.0}}
    gained = evaluate_run(qrels, run, measures="ndcg.1=3,2=1").per_query["q"]["ndcg.1=3,2=1"]
    plain = evaluate_run({"q": {"a": 3, "b": 1}}, run, measures="nDCG").per_query["q"]["nDCG"]
    assert gained == plain == 1.0


@pytest.mark.parametrize(
    "name",
    ["nDCG@0", "foo", "P@x", "Rprec@5", "P", "P.0", "runid", "P.5x", "utility.1,2", "ndcg.x=1"],
)
def test_unknown_names_fail_listing_the_known_ones(name):
    with pytest.raises(UnknownMeasureError, match="Known measures: ir_measures: nDCG"):
        Measure.parse(name)


def test_sums_and_geometric_means_are_summarised_as_trec_eval_does():
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}, "q3": {"d": 2}}
    run = {"q1": {"a": 1.0}, "q2": {"x": 1.0}}
    result = evaluate_run(qrels, run, measures="num_rel num_q gm_map AP")
    assert result.aggregates["NumRel"].beir == 3  # summed over the evaluated queries
    assert result.aggregates["NumRel"].strict == 4  # -c: the missing q3's relevant too
    assert result.aggregates["NumQ"].strict == 3
    logs = [math.log(0.5), math.log(1e-5)]
    assert result.aggregates["gm_map"].beir == round(math.exp(sum(logs) / 2), 5)
    assert result.aggregates["AP"].strict == round(0.5 / 3, 5)


def test_per_query_values_as_a_dataframe():
    result = evaluate_run(
        {"q1": {"a": 1}, "q2": {"b": 1}},
        {"q1": {"a": 1.0}, "q2": {"a": 1.0}},
        measures="nDCG@10 Rprec",
    )
    frame = result.per_query_frame()
    assert list(frame.columns) == ["nDCG@10", "Rprec"]
    assert frame.loc["q1"].tolist() == [1.0, 1.0] and frame.loc["q2"].tolist() == [0.0, 0.0]


def test_cli_prints_one_table_with_a_column_per_run(tmp_path, capsys):
    write_qrels({"q": {"a": 1, "b": 1}}, tmp_path / "qrels.txt")
    write_run({"q": {"a": 2.0, "x": 1.0}}, tmp_path / "one.trec")
    write_run({"q": {"x": 2.0, "b": 1.0}}, tmp_path / "two.trec")
    code = main(
        [
            "evaluate",
            "--run",
            str(tmp_path / "one.trec"),
            "--run",
            str(tmp_path / "two.trec"),
            "--qrels",
            str(tmp_path / "qrels.txt"),
            "--measures",
            "P@1 R@2 Rprec",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "| BEIR | run 1 | run 2 |" in out
    assert "| P@1 | 1.00000 | 0.00000 |" in out
    assert "| R@2 | 0.50000 | 0.50000 |" in out


def test_cli_unknown_measure_is_a_one_line_error(tmp_path, capsys):
    write_qrels({"q": {"a": 1}}, tmp_path / "qrels.txt")
    write_run({"q": {"a": 1.0}}, tmp_path / "run.trec")
    code = main(
        [
            "evaluate",
            "--run",
            str(tmp_path / "run.trec"),
            "--qrels",
            str(tmp_path / "qrels.txt"),
            "--measures",
            "nDCG@10 bogus",
        ]
    )
    err = capsys.readouterr().err
    assert code != 0 and "unknown measure 'bogus'" in err and "Traceback" not in err


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=cases())
def test_cli_on_the_compiled_engine_equals_pytrec_eval(tmp_path, capsys, monkeypatch, case):
    qrels, run = case
    qrels = {q: d for q, d in qrels.items() if d}
    run = {q: d for q, d in run.items() if d}
    if not qrels or not run:
        return  # a file needs at least one line
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run(run, tmp_path / "run.trec", sort=False)
    monkeypatch.setattr(backends, "ENGINE_MIN_ROWS", 0)  # every file takes the engine path
    argv = [
        "evaluate",
        "--run",
        str(tmp_path / "run.trec"),
        "--qrels",
        str(tmp_path / "qrels.txt"),
        "--measures",
        "nDCG@3 AP@3 R@2 P@1 MRR@3",
        "--json",
        "--per-query",
    ]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    library = evaluate_run(qrels, run, measures="nDCG@3 AP@3 R@2 P@1 MRR@3", engine="pytrec")
    assert out["per_query"] == library.per_query
    assert out["counts"] == library.counts


@pytest.mark.parametrize(
    "spelling", ["nDCG@10", "NDCG@10", "ndcg_cut.10", "ndcg@10", "ndcg_cut_10"]
)
def test_each_context_has_one_rendering(spelling):
    from heta_eval.measures.measure import canonical_metric

    assert canonical_metric(spelling) == "ndcg@10"
    if spelling not in ("ndcg@10", "ndcg_cut_10"):  # the evaluators' and the seed's spellings
        m = Measure.parse(spelling)
        assert (str(m), m.beir_name, m.evaluator_name) == ("nDCG@10", "NDCG@10", "ndcg@10")
        assert (m.trec_name, m.trec_key) == ("ndcg_cut.10", "ndcg_cut_10")


@pytest.mark.parametrize("name", ["relstring", "relstring.5", "runid"])
def test_text_families_are_refused_with_the_reason(name):
    with pytest.raises(UnknownMeasureError, match="text, not a number"):
        Measure.parse(name)


def test_ir_measures_rr_at_k_is_never_compared_as_beir_mrr():
    from heta_eval.measures.measure import canonical_metric, parse_measure

    assert canonical_metric("RR@10") == "rr@10"
    assert canonical_metric("MRR@10") == canonical_metric("mrr@10") == "mrr@10"
    assert canonical_metric("P@5") == canonical_metric("precision@5") == "precision@5"
    with pytest.raises(ValueError):
        parse_measure("RR@10")
