"""Run files as the system under test (``heta-eval run --kb-run MODE=FILE``): the results
folder scores a run exactly as ``heta-eval evaluate`` does, a fused run goes into a folder and
its report, a case the run lacks is said and scored 0, and bad options are one line."""

from __future__ import annotations

import json

import pytest
from support.paths import shared_path
from support.scifact_run import RUN, _qrels

from heta_eval import evaluate_run
from heta_eval.cli import main
from heta_eval.io.run import read_run
from heta_eval.io.write import write_run


def _run(tmp_path, monkeypatch, *options: str) -> dict:
    monkeypatch.setenv("HETA_EVAL_DATA", str(shared_path("datasets", "beir")))
    out = tmp_path / "out"
    args = ["run", "--dataset", "scifact", "--top-k", "1000", "--output", str(out), "--quiet"]
    assert main([*args, *options]) == 0
    return json.loads((out / "summary.json").read_text())


def test_a_run_file_scores_in_a_results_folder_as_evaluate_scores_it(tmp_path, monkeypatch):
    path = shared_path("datasets", "runs", RUN)
    summary = _run(tmp_path, monkeypatch, "--kb-run", f"reranked={path}")
    metrics = summary["modes"]["reranked"]["metrics"]
    expected = evaluate_run(_qrels(), read_run(path), k_values=(1, 3, 5, 10, 100, 1000))
    for key, beir_key in (
        ("ndcg@10", "NDCG@10"),
        ("recall@100", "Recall@100"),
        ("map@1000", "MAP@1000"),
        ("mrr@10", "MRR@10"),
    ):
        assert metrics[key]["beir_unrounded"] == pytest.approx(
            expected.aggregates[beir_key].beir_unrounded, abs=1e-12
        ), key
    assert metrics["ndcg@10"]["beir"] == 0.57013  # docs/datasets.md's evaluate transcript
    assert summary["system"]["kind"] == "object"
    assert summary["system"]["identity"]["reranked"]["sha256"]
    assert (tmp_path / "out" / "report.html").stat().st_size > 0


def test_a_fused_run_and_its_inputs_go_into_one_report(tmp_path, monkeypatch):
    path = shared_path("datasets", "runs", RUN)
    run = read_run(path)
    # A second run: the first with its order reversed per query, then the two fused.
    reversed_run = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    write_run(reversed_run, tmp_path / "reversed.trec")
    fused = tmp_path / "fused.trec"
    assert main(["fuse", str(path), str(tmp_path / "reversed.trec"), "-o", str(fused)]) == 0
    summary = _run(
        tmp_path, monkeypatch, "--kb-run", f"reranked={path}", "--kb-run", f"rrf={fused}"
    )
    assert set(summary["modes"]) == {"reranked", "rrf"}
    expected = evaluate_run(_qrels(), read_run(fused), k_values=(10,))
    assert summary["modes"]["rrf"]["metrics"]["ndcg@10"]["beir_unrounded"] == pytest.approx(
        expected.aggregates["NDCG@10"].beir_unrounded, abs=1e-12
    )
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "rrf" in html and "reranked" in html


def test_cases_the_run_lacks_are_said_and_score_zero(tmp_path, monkeypatch, capsys):
    run = read_run(shared_path("datasets", "runs", RUN))
    tested = sorted(_qrels())[:200]  # 100 of the 300 test queries left out
    kept = {qid: run[qid] for qid in tested}
    write_run(kept, tmp_path / "part.trec")
    summary = _run(tmp_path, monkeypatch, "--kb-run", f"part={tmp_path / 'part.trec'}")
    assert "part: 100 cases have no line in its run file and score 0" in capsys.readouterr().err
    ndcg = summary["modes"]["part"]["metrics"]["ndcg@10"]
    whole = evaluate_run(_qrels(), kept, k_values=(10,))  # strict: every judged query counts
    assert ndcg["strict_unrounded"] == pytest.approx(
        whole.aggregates["NDCG@10"].strict_unrounded, abs=1e-12
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--kb-run", "nofile"], "--kb-run takes MODE=FILE"),
        (["--kb-run", "a=/nonexistent.trec"], "--kb-run a: /nonexistent.trec is not a file"),
        (["--kb-run", "a b=x"], "--kb-run: "),
        (["--kb-run", "a=RUN", "--kb-url", "http://127.0.0.1:9/q"], "two systems"),
        (["--kb-run", "a=RUN", "--modes", "keyword_search"], "--modes goes without --kb-run"),
        (["--kb-run", "a=RUN", "--kb-run", "a=RUN"], "mode 'a' is given twice"),
    ],
)
def test_bad_kb_run_options_are_one_line(tmp_path, monkeypatch, capsys, options, message):
    path = str(shared_path("datasets", "runs", RUN))
    options = [option.replace("RUN", path) for option in options]
    monkeypatch.setenv("HETA_EVAL_DATA", str(shared_path("datasets", "beir")))
    code = main(["run", "--dataset", "scifact", "--output", str(tmp_path / "o"), *options])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert message in err and len(err.splitlines()) == 1, err
