"""compare() and ``heta-eval compare`` on real SciFact runs and on result folders."""

from __future__ import annotations

import doctest
import importlib
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

import heta_eval.compare as compare_package
from heta_eval.cli import main
from heta_eval.compare import compare
from heta_eval.compare.compare import Comparison
from heta_eval.compare.loading import load_result_folder, load_systems, load_trec_system
from heta_eval.data import load_beir
from heta_eval.io.trec import read_run

METRICS = ("ndcg@10", "recall@100")


def test_doctests():
    # heta_eval.compare.compare is also the function's name: fetch the modules by name.
    for name in ("heta_eval.compare", "heta_eval.compare.compare", "heta_eval.compare.loading"):
        assert doctest.testmod(importlib.import_module(name)).failed == 0


@pytest.fixture(scope="module")
def scifact(scifact_dir, scifact_run_file, tmp_path_factory):
    """Two real systems: the reranked run, and a copy with each query's top 20 shuffled."""
    data = load_beir(scifact_dir)
    run = read_run(scifact_run_file, duplicates="last")
    rng = np.random.default_rng(0)
    perturbed = {}
    for qid, docs in run.items():
        ranked = sorted(docs.items(), key=lambda item: -item[1])
        head = [doc for doc, _ in ranked[:20]]
        rng.shuffle(head)
        order = head + [doc for doc, _ in ranked[20:]]
        perturbed[qid] = {doc: float(len(order) - i) for i, doc in enumerate(order)}
    folder = tmp_path_factory.mktemp("runs")
    path = folder / "shuffled.trec"
    with path.open("w") as handle:
        for qid, docs in perturbed.items():
            for rank, (doc, score) in enumerate(docs.items(), start=1):
                handle.write(f"{qid} Q0 {doc} {rank} {score} shuffled\n")
    a = load_trec_system(run, data.qrels, METRICS, name="reranked", queries=data.queries)
    b = load_trec_system(perturbed, data.qrels, METRICS, name="shuffled", queries=data.queries)
    return {"data": data, "a": a, "b": b, "shuffled_path": path}


def test_real_scifact_comparison_matches_scipy(scifact):
    a, b, data = scifact["a"], scifact["b"], scifact["data"]
    assert len(a.per_query) == len(data.qrels) == 300  # strict: every judged query
    result = compare({"reranked": a.per_query, "shuffled": b.per_query}, queries=data.queries)
    row = result.row("shuffled", "NDCG@10")
    qids = sorted(a.per_query)
    x = np.array([a.per_query[q]["ndcg@10"] for q in qids])
    y = np.array([b.per_query[q]["ndcg@10"] for q in qids])
    assert row.n == 300 and row.unpaired == 0
    assert row.mean_baseline == pytest.approx(a.aggregate("ndcg@10", "strict"), abs=5e-6)
    assert row.mean_system == pytest.approx(x.mean() + (y - x).mean())
    assert row.p_ttest == sps.ttest_rel(y, x).pvalue
    assert row.diff < 0 and row.ci_low < row.diff < row.ci_high
    assert row.wins + row.ties + row.losses == 300
    assert row.wins == int(np.sum(y - x > 1e-9)) and row.losses == int(np.sum(y - x < -1e-9))
    assert row.wins > 0 and row.losses > 0
    # Holm over the 2 comparisons (ndcg@10, recall@100).
    other = result.row("shuffled", "recall@100")
    ps = sorted([row.p_ttest, other.p_ttest])
    assert min(row.p_ttest_holm, other.p_ttest_holm) == pytest.approx(min(1, 2 * ps[0]))
    # Per-query deltas: largest first, with the query text.
    gains = row.top_gains
    assert gains[0].delta == pytest.approx(float(np.max(y - x)))
    assert all(g1.delta >= g2.delta for g1, g2 in itertools.pairwise(gains))
    assert gains[0].query == data.queries[gains[0].qid]
    assert row.top_losses[0].delta == pytest.approx(float(np.min(y - x)))
    # Shuffling only the top 20 leaves recall@100 unchanged.
    assert (other.wins, other.losses) == (0, 0) and other.p_ttest == 1.0


def test_same_seed_same_numbers(scifact):
    systems = {"a": scifact["a"].per_query, "b": scifact["b"].per_query}
    first = compare(systems, seed=7).to_json()
    assert first == compare(systems, seed=7).to_json()
    assert first != compare(systems, seed=8).to_json()


def test_renderings(scifact):
    systems = {"a": scifact["a"].per_query, "b": scifact["b"].per_query}
    result = compare(systems, metrics=["ndcg@10"], queries=scifact["data"].queries)
    markdown = result.to_markdown(deltas=3)
    assert markdown.startswith("| metric | system | baseline |")
    assert "| ndcg@10 | b |" in markdown and "largest changes" in markdown
    latex = result.to_latex()
    assert r"\begin{tabular}" in latex and r"\bottomrule" in latex and "ndcg@10 & b" in latex
    data = json.loads(result.to_json())
    assert data["baseline"] == "a" and data["comparisons"][0]["metric"] == "ndcg@10"
    assert data["settings"]["seed"] == 0 and data["settings"]["n_resamples"] == 10_000
    assert isinstance(data["comparisons"][0]["top_gains"][0]["query"], str)


def test_compare_validation_and_missing_queries():
    systems = {
        "a": {"q1": {"NDCG@10": 0.1}, "q2": {"NDCG@10": 0.2}, "q3": {"NDCG@10": 0.3}},
        "b": {"q1": {"ndcg@10": 0.2}, "q2": {"ndcg@10": 0.2}},
    }
    row = compare(systems).rows[0]
    assert (row.n, row.unpaired) == (2, 1)
    row = compare(systems, missing="zero").rows[0]
    assert (row.n, row.losses) == (3, 1)
    assert compare(systems, baseline="b").rows[0].system == "a"
    with pytest.raises(ValueError, match="baseline"):
        compare(systems, baseline="c")
    with pytest.raises(ValueError, match="at least two"):
        compare({"a": systems["a"]})
    with pytest.raises(ValueError, match="no values"):
        compare(systems, metrics=["map@10"])


def test_three_systems_holm_family():
    rng = np.random.default_rng(1)
    base = {f"q{i}": {"ndcg@10": float(v)} for i, v in enumerate(rng.uniform(size=50))}
    systems = {"base": base}
    for name, shift in (("x", 0.05), ("y", 0.0)):
        systems[name] = {
            q: {"ndcg@10": v["ndcg@10"] + shift + rng.normal(0, 0.05)} for q, v in base.items()
        }
    result: Comparison = compare(systems)
    assert [r.system for r in result.rows] == ["x", "y"]
    p = [r.p_permutation for r in result.rows]
    assert [r.p_permutation_holm for r in result.rows] == compare_package.holm(p)


def write_result_folder(folder: Path, benchmark: str, systems: dict, queries: dict) -> Path:
    """A results folder in the runner's layout (summary.json, per_query.jsonl)."""
    folder.mkdir(parents=True)
    modes = {}
    with (folder / "per_query.jsonl").open("w") as handle:
        for mode, scores in systems.items():
            metrics = {}
            for metric in ("ndcg@10", "recall@100"):
                values = [s[metric] for s in scores.per_query.values()]
                metrics[metric] = {
                    "name": metric,
                    "kind": "retrieval",
                    "value": scores.aggregate(metric, "beir"),
                    "beir": scores.aggregate(metric, "beir"),
                    "strict": scores.aggregate(metric, "strict"),
                    "mean": float(np.mean(values)),
                }
            n = len(scores.per_query)
            modes[mode] = {
                "mode": mode,
                "metrics": metrics,
                "cases": n,
                "answered": n,
                "failed_queries": 0,
                "evaluator_failures": 0,
                "partial": False,
            }
            for qid, values in scores.per_query.items():
                row = {
                    "case_id": qid,
                    "mode": mode,
                    "query": queries.get(qid, ""),
                    "documents": [],
                    "scores": {
                        name: {
                            "name": name,
                            "value": value,
                            "passed": None,
                            "skipped": False,
                            "metadata": {},
                        }
                        for name, value in values.items()
                    },
                }
                row["scores"]["answer_f1"] = {
                    "name": "answer_f1",
                    "value": None,
                    "skipped": True,
                    "metadata": {},
                }
                handle.write(json.dumps(row) + "\n")
    summary = {
        "benchmark": benchmark,
        "knowledge_base": "kb",
        "evaluators": [],
        "top_k": 100,
        "modes": modes,
    }
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def test_result_folder_loading(scifact, tmp_path):
    folder = write_result_folder(
        tmp_path / "scifact",
        "scifact",
        {"keyword_search": scifact["a"], "vector_search": scifact["b"]},
        scifact["data"].queries,
    )
    systems = load_result_folder(folder)
    assert [s.name for s in systems] == ["scifact:keyword_search", "scifact:vector_search"]
    assert systems[0].per_query == scifact["a"].per_query  # skipped scores left out
    assert systems[0].dataset == "scifact"
    assert systems[1].queries["1"] == scifact["data"].queries["1"]
    only = load_result_folder(folder, ["vector_search"])
    assert [s.name for s in only] == ["scifact"]
    with pytest.raises(ValueError, match="no mode"):
        load_result_folder(folder, ["hybrid_search"])


def test_cli_on_result_folders(scifact, tmp_path, capsys):
    runs = {"keyword_search": scifact["a"], "vector_search": scifact["b"]}
    queries = scifact["data"].queries
    write_result_folder(tmp_path / "one", "scifact", runs, queries)
    a = write_result_folder(
        tmp_path / "kw" / "scifact", "scifact", {"keyword_search": scifact["a"]}, queries
    )
    b = write_result_folder(
        tmp_path / "vec" / "scifact", "scifact", {"vector_search": scifact["b"]}, queries
    )
    # One folder with two modes.
    assert main(["compare", str(tmp_path / "one"), "--metric", "NDCG@10", "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "| ndcg@10 | one:vector_search |" in out and "Baseline: one:keyword_search" in out
    # Two folders with the same name: unique names; baseline chosen by mode.
    assert (
        main(
            [
                "compare",
                str(a),
                str(b),
                "--baseline",
                "vector_search",
                "--format",
                "json",
                "--resamples",
                "2000",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["baseline"] == "scifact#2" and data["metrics"] == ["ndcg@10", "recall@100"]
    assert data["settings"]["n_resamples"] == 2000
    assert main(["compare", str(a), str(b), "--format", "latex"]) == 0
    assert r"\toprule" in capsys.readouterr().out
    # Errors are user errors (exit 2), not tracebacks.
    assert main(["compare", str(a)]) == 2
    assert "at least two" in capsys.readouterr().err
    assert main(["compare", str(a), str(b), "--metric", "map@10"]) == 2
    assert main(["compare", str(a), str(b), "--baseline", "nope"]) == 2


def test_cli_on_trec_runs(scifact, scifact_run_file, scifact_dir, tmp_path, capsys):
    shuffled = str(scifact["shuffled_path"])
    data_dir = str(Path(scifact_dir).parent)
    assert (
        main(
            [
                "compare",
                str(scifact_run_file),
                shuffled,
                "--dataset",
                "scifact",
                "--data-dir",
                data_dir,
                "--metric",
                "ndcg@10",
                "--seed",
                "3",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    expected = compare(
        {"a": scifact["a"].per_query, "b": scifact["b"].per_query}, metrics=["ndcg@10"], seed=3
    ).rows[0]
    assert f"{expected.p_permutation:.4f}" in out and f"{expected.diff:+.4f}" in out
    # A query text from the dataset appears among the largest changes.
    assert scifact["data"].queries[expected.top_losses[0].qid][:40] in out
    qrels = str(Path(scifact_dir) / "qrels" / "test.tsv")
    output = tmp_path / "cmp.md"
    assert (
        main(
            ["compare", str(scifact_run_file), shuffled, "--qrels", qrels, "--output", str(output)]
        )
        == 0
    )
    assert "| recall@100 | shuffled |" in output.read_text()
    assert main(["compare", str(scifact_run_file), shuffled]) == 2
    assert "--qrels" in capsys.readouterr().err


def test_load_systems_rejects_unknown_paths(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_systems([tmp_path / "missing"])
