"""`heta-eval run` end to end on real SciFact (keyword_search): the per-query JSONL, the TREC
run, the summary, `heta-eval evaluate` on that run and the beir package all agree."""

from __future__ import annotations

import json

import pytest
from support.beir_reference import beir_numbers

from heta_eval.cli import main as cli_main
from heta_eval.data.beir_loader import load_beir
from heta_eval.io.trec import read_run

K = (1, 3, 5, 10, 100, 1000)
REFERENCE = {"ndcg@10": 0.6789, "recall@100": 0.9253, "recall@1000": 0.9767}
NAMES = {"NDCG": "ndcg", "MAP": "map", "Recall": "recall", "P": "precision", "MRR": "mrr"}


@pytest.fixture(scope="module")
def scifact_results(scifact_dir, tmp_path_factory):
    import os

    out = tmp_path_factory.mktemp("scifact") / "results"
    previous = os.environ.get("HETA_EVAL_DATA")
    os.environ["HETA_EVAL_DATA"] = str(scifact_dir.parent)
    try:
        code = cli_main(
            [
                "run",
                "--dataset",
                "scifact",
                "--modes",
                "keyword_search",
                "--output",
                str(out),
                "--quiet",
                "--no-cache",
            ]
        )
    finally:
        if previous is None:
            os.environ.pop("HETA_EVAL_DATA")
        else:
            os.environ["HETA_EVAL_DATA"] = previous
    assert code == 0
    return out


def test_keyword_search_on_scifact_reproduces_bm25_and_all_outputs_agree(
    scifact_results, scifact_dir, capsys
):
    out = scifact_results
    summary = json.loads((out / "summary.json").read_text())
    metrics = summary["modes"]["keyword_search"]["metrics"]
    # Pyserini's 2CR BM25 flat on SciFact (trec_eval -c), to the last printed digit: the
    # default BEIR recipe is Lucene's analyzer and BM25 over whole documents, 1,000 hits.
    strict = {m: round(metrics[m]["strict_unrounded"], 4) for m in REFERENCE}
    assert strict == REFERENCE
    assert summary["modes"]["keyword_search"]["answered"] == 300

    run = read_run(out / "runs" / "keyword_search.trec")
    lines = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    assert len(lines) == len(run) == 300
    for line in lines:
        assert list(run[line["case_id"]].items()) == [tuple(d) for d in line["documents"]]

    qrels = load_beir(scifact_dir, "test").qrels
    expected = beir_numbers(qrels, run, K)
    for key, value in expected.items():
        metric, k = key.split("@")
        assert metrics[f"{NAMES[metric]}@{k}"]["beir"] == value, key

    capsys.readouterr()
    assert (
        cli_main(
            [
                "evaluate",
                "--run",
                str(out / "runs" / "keyword_search.trec"),
                "--dataset",
                "scifact",
                "--data-dir",
                str(scifact_dir.parent),
                "--json",
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    for group in ("ndcg", "map", "recall", "precision", "mrr"):
        for key, value in printed[group].items():
            metric, k = key.split("@")
            assert metrics[f"{NAMES[metric]}@{k}"]["beir"] == value, key
