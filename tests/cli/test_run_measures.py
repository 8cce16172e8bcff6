"""``heta-eval run --measures``: a run scores the BEIR measures asked for, in any spelling,
exactly as ``evaluate_run`` and the ``beir`` package score the same ranking; measures a run
cannot score per case, and ``--k`` beside ``--measures``, are one-line refusals. And
``Measure.parse`` reads heta-eval's own evaluator names and pytrec_eval's keys."""

from __future__ import annotations

import json

import pytest
from beir.retrieval.evaluation import EvaluateRetrieval
from support.paths import shared_path
from support.scifact_run import RUN, _qrels

from heta_eval import Measure, evaluate_run
from heta_eval.cli import main
from heta_eval.io.run import read_run
from heta_eval.measures.measure import UnknownMeasureError


def _summary(tmp_path, monkeypatch, *options: str) -> dict:
    monkeypatch.setenv("HETA_EVAL_DATA", str(shared_path("datasets", "beir")))
    out = tmp_path / "out"
    path = shared_path("datasets", "runs", RUN)
    args = ["run", "--dataset", "scifact", "--kb-run", f"reranked={path}", "--output", str(out)]
    assert main([*args, "--top-k", "1000", "--quiet", *options]) == 0
    return json.loads((out / "summary.json").read_text())["modes"]["reranked"]["metrics"]


def test_run_measures_scores_beirs_custom_measures_as_beir_does(tmp_path, monkeypatch):
    asked = "R_cap@100 hole@10 accuracy_5 mrr@10 ndcg_cut_10"
    metrics = _summary(tmp_path, monkeypatch, "--measures", asked)
    assert sorted(metrics) == ["accuracy@5", "hole@10", "mrr@10", "ndcg@10", "r_cap@100"]
    qrels, run = _qrels(), read_run(shared_path("datasets", "runs", RUN))
    ours = evaluate_run(qrels, run, measures="R_cap@100 Hole@10 Accuracy@5 MRR@10 nDCG@10")
    for key, name in (
        ("r_cap@100", "R_cap@100"),
        ("hole@10", "Hole@10"),
        ("accuracy@5", "Accuracy@5"),
        ("mrr@10", "MRR@10"),
        ("ndcg@10", "nDCG@10"),
    ):
        assert metrics[key]["beir_unrounded"] == pytest.approx(
            ours.aggregates[name].beir_unrounded, abs=1e-12
        ), key
    # The beir package itself, on the same ranking of the judged queries (BEIR's custom
    # measures look every run query up in the qrels; this run has no self-hits to remove).
    run = {qid: run[qid] for qid in qrels}
    for metric, key, beir_key in (
        ("r_cap", "r_cap@100", "R_cap@100"),
        ("hole", "hole@10", "Hole@10"),
        ("top_k_accuracy", "accuracy@5", "Accuracy@5"),
    ):
        k = int(key.split("@")[1])
        beir = EvaluateRetrieval.evaluate_custom(qrels, run, [k], metric=metric)
        assert metrics[key]["beir"] == beir[beir_key], key


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--measures", "Rprec"], "--measures: Rprec is not one of BEIR's families"),
        (["--measures", "RR@10"], "--measures: RR@10 is not one of BEIR's families"),
        (["--measures", "nDCG@10", "--k", "10"], "give --measures or --k, not both"),
        (["--measures", "foo@3"], "--measures: unknown measure 'foo@3'"),
        (["--measures", "nDCG@0"], "--measures: unknown measure 'nDCG@0'"),
    ],
)
def test_run_measures_refuses_in_one_line(tmp_path, capsys, options, message):
    code = main(["run", "--dataset", "scifact", "--output", str(tmp_path / "o"), *options])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("spelling", "same_as"),
    [
        ("ndcg@10", "nDCG@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("map@100", "AP@100"),
        ("map_cut_100", "AP@100"),
        ("precision@5", "P@5"),
        ("P_5", "P@5"),
        ("recall_1000", "R@1000"),
        ("mrr@10", "MRR@10"),
        ("r_cap.10", "R_cap@10"),
        ("hole_10", "Hole@10"),
        ("accuracy@3", "Accuracy@3"),
    ],
)
def test_measure_parse_reads_evaluator_names_and_pytrec_eval_keys(spelling, same_as):
    assert Measure.parse(spelling) == Measure.parse(same_as)


def test_measure_parse_keeps_trec_eval_readings_and_ir_measures_rr():
    with pytest.raises(UnknownMeasureError, match="map takes no parameter"):
        Measure.parse("map.10")  # trec_eval's family: not read as BEIR's MAP@10
    with pytest.raises(UnknownMeasureError, match="unknown measure 'rr@10'"):
        Measure.parse("rr@10")  # ir_measures's RR@10 is not BEIR's MRR@10: no guess
    assert Measure.parse("RR@10") != Measure.parse("MRR@10")
