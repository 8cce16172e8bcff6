"""heta_eval.fusion beyond ranx's reach: queries a run lacks, depth and output order, the
reference knowledge base's RRF, honest tuning, and ``heta-eval fuse`` on real files."""

from __future__ import annotations

import pytest

from heta_eval.cli import main
from heta_eval.evaluation import evaluate_run
from heta_eval.fusion import FusionError, fuse
from heta_eval.fusion.optimize import cross_validate, grid, tune_on_split
from heta_eval.io.trec import read_run, write_qrels, write_run
from heta_eval.reference.hybrid import reciprocal_rank_fusion


def test_a_query_only_one_run_has_fuses_as_if_the_others_ranked_nothing() -> None:
    runs = [{"q1": {"a": 3.0, "b": 1.0}, "only": {"x": 2.0, "y": 1.0}}, {"q1": {"b": 5.0}}]
    fused = fuse(runs, method="rrf", params={"k": 60})
    assert fused["only"] == {"x": 1 / 61, "y": 1 / 62}
    assert fuse(runs, method="min")["only"] == {"x": 1.0, "y": 0.0}  # min-max, then min
    # A run's only document normalises to 0 under min-max (ranx's 1e-9 floor).
    assert fuse(runs, method="max")["q1"] == {"a": 1.0, "b": 0.0}


def test_a_query_with_no_documents_in_any_run_stays_empty() -> None:
    fused = fuse([{"q": {}, "r": {"a": 1.0}}, {"q": {}}], method="sum")
    assert fused == {"q": {}, "r": {"a": 0.0}}


def test_depth_keeps_the_best_documents_in_trec_eval_order() -> None:
    runs = [{"q": {f"d{i}": float(i % 3) for i in range(10)}}, {"q": {"d0": 1.0}}]
    full = fuse(runs, method="sum", norm="none", depth=None)["q"]
    top = fuse(runs, method="sum", norm="none", depth=4)["q"]
    # Equal scores rank by doc id, highest first, as heta-eval evaluates a run.
    assert list(full)[:4] == list(top) == ["d8", "d5", "d2", "d7"]


def test_bad_settings_are_refused_with_one_line() -> None:
    run = {"q": {"a": 1.0}}
    with pytest.raises(FusionError, match="wsum needs one weight per run"):
        fuse([run, run], method="wsum", params={"weights": [1.0]})
    with pytest.raises(FusionError, match="unknown fusion method 'combsum'"):
        fuse([run, run], method="combsum")
    with pytest.raises(FusionError, match="two or more runs"):
        fuse([run], method="rrf")
    with pytest.raises(ValueError, match="run 2: query 'q', doc 'a': score nan is not finite"):
        fuse([run, {"q": {"a": float("nan")}}], method="rrf")


def test_the_knowledge_base_rrf_is_fuse_rrf() -> None:
    rankings = [["a", "b", "c", "d"], ["c", "e", "a"]]
    runs = [{"q": {d: float(len(r) - i) for i, d in enumerate(r)}} for r in rankings]
    shared = dict(reciprocal_rank_fusion(rankings, k=60))
    assert fuse(runs, method="rrf", params={"k": 60})["q"] == shared


def _split_runs() -> tuple[list[dict], dict, dict]:
    """Run A finds the relevant document for the 'a' queries, run B for the 'b' ones."""
    runs: list[dict] = [{}, {}]
    qrels: dict = {}
    for i in range(4):
        for side, (good, bad) in (("a", (0, 1)), ("b", (1, 0))):
            q = f"{side}{i}"
            qrels[q] = {"rel": 1}
            runs[good][q] = {"rel": 2.0, "x": 1.0}
            runs[bad][q] = {"x": 2.0, "y": 1.5, "rel": 1.0}
    return runs, qrels, {}


def _ndcg(run: dict, qrels: dict) -> dict[str, float]:
    result = evaluate_run(qrels, run, measures=["nDCG@10"])
    return {q: values["nDCG@10"] for q, values in result.per_query.items()}


def test_tuning_on_one_split_reports_the_other_split_only() -> None:
    runs, qrels, _ = _split_runs()
    train = {q: j for q, j in qrels.items() if q.startswith("a")}
    test = {q: j for q, j in qrels.items() if q.startswith("b")}
    tuned = tune_on_split(runs, "wsum", "min-max", train, test, "nDCG@10")
    assert tuned.settings == [{"weights": [0.6, 0.4]}]  # the first that favours run A
    chosen = fuse(runs, method="wsum", params=tuned.settings[0])
    expected = sum(_ndcg(chosen, test).values()) / len(test)
    assert tuned.score == pytest.approx(expected, abs=1e-12)
    # Tuned on the reported queries themselves, the score would be higher: not what is shown.
    best_on_test = max(
        sum(_ndcg(fuse(runs, method="wsum", params=s), test).values()) / len(test)
        for s in grid("wsum", 2)
    )
    assert best_on_test == 1.0 > tuned.score
    with pytest.raises(FusionError, match="judged in both"):
        tune_on_split(runs, "wsum", "min-max", qrels, test, "nDCG@10")


def test_cross_validation_scores_each_query_with_settings_chosen_without_it() -> None:
    runs, qrels, _ = _split_runs()
    tuned = cross_validate(runs, "wsum", "min-max", qrels, "nDCG@10", folds=8, seed=3)
    # Leave one out: the other seven queries hold four of the other side, so each held-out
    # query gets the weights that favour the wrong run.
    by_query = {}
    for params, queries in zip(tuned.settings, tuned.fold_queries, strict=True):
        (q,) = queries
        by_query[q] = _ndcg(fuse(runs, method="wsum", params=params), {q: qrels[q]})[q]
    assert tuned.per_query == pytest.approx(by_query, abs=1e-12)
    assert tuned.score == pytest.approx(sum(by_query.values()) / 8, abs=1e-12)
    in_sample = max(
        sum(_ndcg(fuse(runs, method="wsum", params=s), qrels).values()) / 8 for s in grid("wsum", 2)
    )
    assert tuned.score < in_sample
    # The run it returns fuses each query as it was scored: evaluating it gives the score.
    assert sum(_ndcg(tuned.run, qrels).values()) / 8 == pytest.approx(tuned.score, abs=1e-12)


def test_cli_fuses_files_and_tunes_by_cross_validation(tmp_path, capsys) -> None:
    runs, qrels, _ = _split_runs()
    paths = []
    for i, run in enumerate(runs):
        paths.append(tmp_path / f"run{i}.trec")
        write_run(run, paths[-1])
    write_qrels(qrels, tmp_path / "qrels.txt")
    out = tmp_path / "fused.trec"
    assert main(["fuse", *map(str, paths), "--method", "rrf", "-o", str(out)]) == 0
    assert read_run(out) == fuse(runs, method="rrf")
    args = [
        "fuse",
        *map(str, paths),
        "--method",
        "wsum",
        "--optimize",
        "ndcg@10",
        "--qrels",
        str(tmp_path / "qrels.txt"),
        "--folds",
        "4",
        "-o",
        str(out),
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    tuned = cross_validate(runs, "wsum", "min-max", qrels, "nDCG@10", folds=4)
    assert (
        f"held-out ndcg@10 (each query scored by weights tuned without it): "
        f"{tuned.score:.5f}" in printed
    )
    assert printed.count("  fold ") == 4


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--method", "wsum"], "--method wsum needs --weights"),
        (["--weights", "1,2"], "--weights goes with --method wsum"),
        (["--method", "wsum", "--weights", "1,x"], "--weights must be a finite number, got x"),
        (["--optimize", "nDCG@10"], "--optimize needs the judgments"),
        (["--method", "wsum", "--weights", "1"], "wsum needs one weight per run (2)"),
    ],
)
def test_cli_errors_are_one_line(tmp_path, capsys, extra, message) -> None:
    path = tmp_path / "run.trec"
    path.write_text("q Q0 d 1 1.0 t\n")
    assert main(["fuse", str(path), str(path), "-o", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_cli_names_the_bad_file_and_line(tmp_path, capsys) -> None:
    good, bad = tmp_path / "good.trec", tmp_path / "bad.trec"
    good.write_text("q Q0 d 1 1.0 t\n")
    bad.write_text("q Q0 d 1 1.0 t\nq Q0 e 2 x t\n")
    assert main(["fuse", str(good), str(bad), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{bad}:2: score 'x'" in err and len(err.splitlines()) == 1


def test_cli_tunes_on_train_qrels_and_reports_the_others(tmp_path, capsys) -> None:
    runs, qrels, _ = _split_runs()
    paths = []
    for i, run in enumerate(runs):
        paths.append(str(tmp_path / f"run{i}.trec"))
        write_run(run, paths[-1])
    train = {q: j for q, j in qrels.items() if q.startswith("a")}
    test = {q: j for q, j in qrels.items() if q.startswith("b")}
    write_qrels(train, tmp_path / "train.txt")
    write_qrels(test, tmp_path / "test.txt")
    out = tmp_path / "fused.trec"
    args = [
        "fuse",
        *paths,
        "--method",
        "wsum",
        "--optimize",
        "nDCG@10",
        "-o",
        str(out),
        "--qrels",
        str(tmp_path / "test.txt"),
        "--train-qrels",
        str(tmp_path / "train.txt"),
    ]
    assert main(args) == 0
    tuned = tune_on_split(runs, "wsum", "min-max", train, test, "nDCG@10")
    printed = capsys.readouterr().out
    assert "weights 0.6,0.4" in printed
    assert f"held-out nDCG@10 on 4 other queries: {tuned.score:.5f}" in printed
    args[args.index(str(tmp_path / "train.txt"))] = str(tmp_path / "test.txt")
    assert main(args) == 2
    assert "judged in both" in capsys.readouterr().err
