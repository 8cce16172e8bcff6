"""Results others read: a results folder as MTEB's results files (read back with the same
schema, and as ``check``/``leaderboard`` reference rows beside the shipped ones), MTEB files
of both formats imported, and results folders as real ranx ``Run``/``Qrels``/Report objects
checked against ranx's own evaluation and comparison."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.scifact_data import FORUMS, cqadupstack_forums, small_scifact

from heta_eval.cli import main
from heta_eval.compare.loading import load_systems
from heta_eval.compare.mteb import (
    MtebFormatError,
    mteb_references,
    read_mteb_file,
    task_result,
)

ranx = pytest.importorskip("ranx")


@pytest.fixture(scope="module")
def folders(tmp_path_factory, scifact_dir, scifact_run_file) -> dict[str, Path]:
    """The real SciFact scored with a real run (``--kb-run``: registered data), the same run
    with each query's top two documents swapped, and BM25 on a small SciFact."""
    root = tmp_path_factory.mktemp("exports")
    ranked: dict[str, list[str]] = {}
    for line in scifact_run_file.read_text().splitlines():
        qid, _, doc, *_ = line.split()
        ranked.setdefault(qid, []).append(doc)
    swapped = root / "swapped.trec"
    swapped.write_text(
        "".join(
            f"{qid} Q0 {doc} {r} {5000 - r} x\n"
            for qid, docs in ranked.items()
            for r, doc in enumerate([*docs[1:2], docs[0], *docs[2:]], 1)
        )
    )
    made = {name: root / name for name in ("real", "swapped", "small")}
    data = small_scifact(scifact_dir, root / "data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HETA_EVAL_CACHE_DIR", str(root / "cache"))
        source = ["--dataset", "scifact", "--data-dir", str(scifact_dir.parent), "--quiet"]
        for name, run in (("real", scifact_run_file), ("swapped", swapped)):
            argv = ["run", *source, "--kb-run", f"reranked={run}", "--output", str(made[name])]
            assert main(argv) == 0
        argv = [
            "run",
            "--dataset",
            "scifact",
            "--data-dir",
            str(data),
            "--quiet",
            "--modes",
            "keyword_search",
            "--output",
            str(made["small"]),
        ]
        assert main(argv) == 0
    made["root"] = root
    return made


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


def test_a_results_folder_as_mteb_results_files(folders, tmp_path, capsys):
    out = tmp_path / "mteb"
    argv = [
        "export",
        str(folders["real"]),
        "--to",
        "mteb",
        "--model-name",
        "me/reranker",
        "--revision",
        "abc123",
        "--output",
        str(out),
    ]
    assert main(argv) == 0
    target = out / "me__reranker" / "abc123"
    assert sorted(p.name for p in target.iterdir()) == ["SciFact.json", "model_meta.json"]
    data = json.loads((target / "SciFact.json").read_text())
    # MTEB's TaskResult: these keys and types, one entry per subset with its main score.
    assert set(data) == {
        "dataset_revision",
        "task_name",
        "mteb_version",
        "scores",
        "evaluation_time",
        "kg_co2_emissions",
    }
    assert data["task_name"] == "SciFact" and isinstance(data["dataset_revision"], str)
    [entry] = data["scores"]["test"]
    assert entry["hf_subset"] == "default" and entry["languages"] == ["eng-Latn"]
    # trec_eval's (and the beir package's) figures for this run: ndcg_cut_10 0.5701 ...
    assert entry["main_score"] == entry["ndcg_at_10"] == 0.57013
    metrics = _summary(folders["real"])["modes"]["reranked"]["metrics"]
    for family in ("ndcg", "map", "recall", "precision", "mrr"):
        for k in (1, 3, 5, 10, 100, 1000):
            assert entry[f"{family}_at_{k}"] == metrics[f"{family}@{k}"]["beir"]
    assert json.loads((target / "model_meta.json").read_text()) == {
        "name": "me/reranker",
        "revision": "abc123",
    }
    # Read back with the same schema: the importer gives the numbers that were written.
    task, splits = read_mteb_file(target / "SciFact.json")
    assert task == "SciFact" and splits["test"]["recall_at_100"] == 0.85233
    references = mteb_references([out])
    assert {(r.system, r.dataset, r.aggregate) for r in references} == {
        ("me/reranker", "scifact", "beir")
    }
    assert len(references) == 30
    # As reference rows: check says OK against itself; a leaderboard puts it beside ours.
    argv = ["check", str(folders["real"]), "--mteb", str(out), "--system", "me/reranker"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 30 and all("[OK]" in line for line in lines)
    assert main(["leaderboard", str(folders["real"]), "--mteb", str(out)]) == 0
    board = capsys.readouterr().out
    assert "| me/reranker (ref.) | 0.5701 |" in board and "| reranked | **0.5701** |" in board


def test_mteb_files_of_both_formats_are_imported(tmp_path):
    new = tmp_path / "results" / "org__model-a" / "rev1"
    new.mkdir(parents=True)
    (new / "model_meta.json").write_text(json.dumps({"name": "org/model-a", "revision": "rev1"}))
    content = task_result("NFCorpus", "test", {"ndcg@10": 0.3, "recall@100": 0.25})
    content["scores"]["test"].append(
        {**content["scores"]["test"][0], "hf_subset": "other", "ndcg_at_10": 0.9}
    )
    (new / "NFCorpus.json").write_text(json.dumps(content))
    (new / "Banking77Classification.json").write_text(
        json.dumps(
            {
                "task_name": "Banking77Classification",
                "scores": {
                    "test": [
                        {
                            "hf_subset": "default",
                            "languages": ["eng-Latn"],
                            "main_score": 0.8,
                            "accuracy": 0.8,
                        }
                    ]
                },
            }
        )
    )
    old = tmp_path / "results" / "org__model-b" / "no_revision_available"
    old.mkdir(parents=True)
    (old / "MSMARCO.json").write_text(
        json.dumps(
            {
                "dataset_revision": None,
                "mteb_dataset_name": "MSMARCO",
                "mteb_version": "1.0.2",
                "dev": {"ndcg_at_10": 0.41, "mrr_at_10": 0.35, "evaluation_time": 12.0},
                "test": {"ndcg_at_10": 0.99},
            }
        )
    )
    (old / "FiQA2018.json").write_text(
        json.dumps({"mteb_dataset_name": "FiQA2018", "test": {"en": {"ndcg_at_10": 0.36}}})
    )
    found = {(r.system, r.dataset, r.metric): r.value for r in mteb_references([tmp_path])}
    assert found == {
        ("org/model-a", "nfcorpus", "ndcg@10"): 0.3,  # the default subset
        ("org/model-a", "nfcorpus", "recall@100"): 0.25,
        ("org/model-b", "msmarco", "ndcg@10"): 0.41,  # MSMARCO's split: dev
        ("org/model-b", "msmarco", "mrr@10"): 0.35,
        ("org/model-b", "fiqa", "ndcg@10"): 0.36,
    }
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(MtebFormatError, match=r"broken.json: not an MTEB results file"):
        mteb_references([broken])


def test_a_bad_mteb_path_is_one_line(folders, tmp_path, capsys):
    broken = tmp_path / "x.json"
    broken.write_text("[1, 2]")
    assert main(["check", str(folders["real"]), "--mteb", str(broken)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == f"heta-eval check: error: {broken}: not an MTEB results file (not a JSON object)"
    assert main(["leaderboard", str(folders["real"]), "--mteb", str(tmp_path / "none")]) == 2
    assert "no such file or folder of MTEB results" in capsys.readouterr().err


def test_what_mteb_export_refuses(folders, tmp_path, capsys):
    out = str(tmp_path / "out")
    # Not the registered dataset (a small SciFact): not the MTEB task.
    assert main(["export", str(folders["small"]), "--to", "mteb", "--output", out]) == 2
    assert "not the registered scifact" in capsys.readouterr().err
    # A mode with failed queries: its means are not the task's.
    partial = tmp_path / "partial"
    shutil.copytree(folders["real"], partial)
    summary = _summary(partial)
    summary["modes"]["reranked"]["failed_queries"] = 3
    (partial / "summary.json").write_text(json.dumps(summary))
    assert main(["export", str(partial), "--to", "mteb", "--output", out]) == 2
    assert "reranked has 3 failed queries" in capsys.readouterr().err
    argv = [
        "export",
        str(folders["real"]),
        str(folders["swapped"]),
        "--to",
        "mteb",
        "--model-name",
        "x",
        "--output",
        out,
    ]
    assert main(argv) == 2
    assert "--model-name names one model" in capsys.readouterr().err


def test_cqadupstack_forums_export_as_mteb_does_them(scifact_dir, tmp_path, monkeypatch):
    data = cqadupstack_forums(scifact_dir, tmp_path / "data", queries=10, others=10)
    # A registry whose forums are these: the data is then the registered cqadupstack.
    registry = json.loads(
        (Path(__file__).parents[2] / "heta_eval" / "data" / "registry.json").read_text()
    )
    for forum in FORUMS:
        folder = data / "cqadupstack" / forum
        counts = registry["datasets"]["cqadupstack"]["subsets"][forum]
        counts["corpus"] = len((folder / "corpus.jsonl").read_text().splitlines())
        counts["queries"] = 10
    (tmp_path / "registry.json").write_text(json.dumps(registry))
    monkeypatch.setenv("HETA_EVAL_REGISTRY", str(tmp_path / "registry.json"))
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    results = tmp_path / "results"
    argv = [
        "run",
        "--dataset",
        "cqadupstack",
        "--data-dir",
        str(data),
        "--modes",
        "keyword_search",
        "--quiet",
        "--output",
        str(results),
    ]
    assert main(argv) == 0
    out = tmp_path / "mteb"
    assert main(["export", str(results), "--to", "mteb", "--output", str(out)]) == 0
    target = out / "heta-eval__keyword_search" / "no_revision_available"
    names = sorted(p.stem for p in target.glob("*.json"))
    assert names == sorted(
        [
            "CQADupstackRetrieval",
            "model_meta",
            *(f"CQADupstack{f.capitalize()}Retrieval" for f in FORUMS),
        ]
    )
    forums = [
        read_mteb_file(target / f"CQADupstack{f.capitalize()}Retrieval.json")[1]["test"]
        for f in FORUMS
    ]
    _, merged = read_mteb_file(target / "CQADupstackRetrieval.json")
    assert merged["test"]["ndcg_at_10"] == pytest.approx(sum(f["ndcg_at_10"] for f in forums) / 12)
    [system] = load_systems([results])
    assert merged["test"]["ndcg_at_10"] == pytest.approx(
        system.aggregate("ndcg@10", "beir"), abs=1e-5
    )


def test_results_folders_as_ranx_runs_and_qrels(folders):
    from heta_eval.compare.ranx_objects import ranx_qrels, ranx_runs

    [run] = ranx_runs(folders["real"]).values()
    qrels = ranx_qrels(folders["real"])
    assert isinstance(run, ranx.Run) and isinstance(qrels, ranx.Qrels)
    assert run.name == "real" and run.mean_scores["ndcg@10"] == pytest.approx(0.570131, abs=1e-6)
    assert len(run.scores["ndcg@10"]) == 300
    # ranx's own evaluation of the exported objects: the same numbers.
    for metric in ("ndcg@10", "recall@100", "precision@10"):
        ours = run.mean_scores[metric]
        theirs = ranx.evaluate(qrels, ranx.Run(run.to_dict()), metric, make_comparable=True)
        assert theirs == pytest.approx(ours, abs=1e-9), metric


def test_a_comparison_as_a_ranx_report(folders):
    from heta_eval.compare.ranx_objects import ranx_qrels, ranx_report, ranx_runs

    systems = load_systems([folders["real"], folders["swapped"]])
    report = ranx_report(systems, ["ndcg@10", "recall@100"], n_resamples=2000)
    qrels = ranx_qrels(folders["real"])
    runs = [run for folder in ("real", "swapped") for run in ranx_runs(folders[folder]).values()]
    theirs = ranx.compare(
        qrels, runs, ["ndcg@10", "recall@100"], stat_test="fisher", make_comparable=True, max_p=0.05
    )
    ours, expected = report.to_dict(), theirs.to_dict()
    assert ours["model_names"] == expected["model_names"] == ["real", "swapped"]
    for name in ("real", "swapped"):
        for metric in ("ndcg@10", "recall@100"):
            assert ours[name]["scores"][metric] == pytest.approx(
                expected[name]["scores"][metric], abs=1e-9
            )
        other = "swapped" if name == "real" else "real"
        assert ours[name]["win_tie_loss"][other] == expected[name]["win_tie_loss"][other]
    # The p-values are heta-eval's randomization test: significant where ranx's is.
    p_ours = ours["real"]["comparisons"]["swapped"]["ndcg@10"]
    p_theirs = expected["real"]["comparisons"]["swapped"]["ndcg@10"]
    assert (p_ours <= 0.05) == (p_theirs <= 0.05)
    assert "NDCG@10" in report.to_table() and "\\begin{tabular}" in report.to_latex()


def test_export_to_ranx_files_ranx_reads_back(folders, tmp_path):
    out = tmp_path / "ranx"
    argv = [
        "export",
        str(folders["real"]),
        str(folders["swapped"]),
        "--to",
        "ranx",
        "--output",
        str(out),
        "--resamples",
        "500",
    ]
    assert main(argv) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "qrels.json",
        "real.json",
        "report.json",
        "swapped.json",
    ]
    run = ranx.Run.from_file(str(out / "real.json"))
    qrels = ranx.Qrels.from_file(str(out / "qrels.json"))
    assert ranx.evaluate(qrels, run, "ndcg@10", make_comparable=True) == pytest.approx(
        0.570131, abs=1e-6
    )
    report = json.loads((out / "report.json").read_text())
    assert report["stat_test"] == "fisher" and report["metrics"] == ["ndcg@10", "recall@100"]
