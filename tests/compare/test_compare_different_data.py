"""One comparability rule for every command that pairs results folders query by query
(``compare``, ``report``; ``heta_eval.compare.comparable_folders`` for any other gate): folders
of different datasets, corpora or case sets are refused in one line naming both folders and
what differs (exit 2); ``--allow-different-data`` compares anyway and the output says over
which queries it paired and each folder's own mean. A leaderboard, whose columns are
datasets, refuses only one dataset name with different data.

Real results folders written by the real runner (BM25 only) on SciFact's 300 test queries
over its judged documents and 200 others, and on folders cut from it: fewer documents, fewer
queries, and another dataset (its first 100 test queries under another name, so the query ids
overlap, as in the issue)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.scifact_data import small_scifact

from heta_eval.cli import main
from heta_eval.compare import IncomparableFoldersError, check_comparable, comparable_folders


def _cut(source: Path, target: Path, *, queries: int | None = None, drop: int = 0) -> Path:
    """``source`` (a BEIR folder) as ``target``: its first ``queries`` judged queries (all:
    None) and its corpus less its last ``drop`` documents (unjudged ones, in this corpus)."""
    (target / "qrels").mkdir(parents=True)
    shutil.copy(source / "queries.jsonl", target / "queries.jsonl")
    header, *lines = (source / "qrels" / "test.tsv").read_text().splitlines()
    kept = list(dict.fromkeys(line.split("\t")[0] for line in lines))[:queries]
    chosen = [line for line in lines if line.split("\t")[0] in set(kept)]
    (target / "qrels" / "test.tsv").write_text("\n".join([header, *chosen]) + "\n")
    judged = {line.split("\t")[1] for line in lines}
    documents = (source / "corpus.jsonl").read_text().splitlines(keepends=True)
    unjudged = [d for d in documents if json.loads(d)["_id"] not in judged]
    dropped = set(unjudged[len(unjudged) - drop :]) if drop else set()
    (target / "corpus.jsonl").write_text("".join(d for d in documents if d not in dropped))
    return target


@pytest.fixture(scope="module")
def folders(tmp_path_factory, scifact_dir) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("different-data")
    data = small_scifact(scifact_dir, root / "data")
    sources = {
        "base": ["--dataset", "scifact", "--data-dir", str(data)],
        "documents": [
            "--dataset",
            "scifact",
            "--data-dir",
            str(_cut(data / "scifact", root / "fewer-docs" / "scifact", drop=100).parent),
        ],
        "queries": [
            "--dataset",
            "scifact",
            "--data-dir",
            str(_cut(data / "scifact", root / "fewer-q" / "scifact", queries=100).parent),
        ],
        "other": [
            "--dataset",
            str(_cut(data / "scifact", root / "mine" / "scifact-100", queries=100, drop=100)),
        ],
    }
    made = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HETA_EVAL_CACHE_DIR", str(root / "cache"))
        for key, source in sources.items():
            made[key] = root / "results" / key
            argv = ["run", *source, "--modes", "keyword_search", "--output", str(made[key])]
            assert main([*argv, "--quiet"]) == 0
    return made


def own_mean(folder: Path, metric: str = "ndcg@10") -> float:
    summary = json.loads((folder / "summary.json").read_text())
    return summary["modes"]["keyword_search"]["metrics"][metric]["value"]


def error_line(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.strip().splitlines()
    return line


def test_compare_refuses_another_dataset_naming_both_folders_and_what_differs(folders, capsys):
    base, other = folders["base"], folders["other"]
    assert main(["compare", str(base), str(other)]) == 2
    assert error_line(capsys) == (
        f"heta-eval compare: error: {base} and {other} differ in dataset (scifact vs "
        "scifact-100), corpus (483 vs 383 documents) and cases (300 vs 100 cases): their "
        "scores are not comparable (--allow-different-data compares them anyway)"
    )


@pytest.mark.parametrize(
    ("key", "what"),
    [("documents", "corpus (483 vs 383 documents)"), ("queries", "cases (300 vs 100 cases)")],
)
def test_compare_refuses_fewer_documents_or_fewer_queries_of_one_dataset(
    folders, capsys, key, what
):
    base, other = folders["base"], folders[key]
    assert main(["compare", str(base), str(other)]) == 2
    line = error_line(capsys)
    assert f"{base} and {other} both hold scifact but differ in {what}: " in line


def test_allow_different_data_says_what_it_paired_and_each_folders_own_mean(folders, capsys):
    base, other = folders["base"], folders["other"]
    assert main(["compare", str(base), str(other), "--allow-different-data"]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"warning: {base} and {other} differ in dataset (scifact vs scifact-100), corpus (483 "
        "vs 383 documents) and cases (300 vs 100 cases); compared anyway (--allow-different-data)"
    ]
    note = (
        "Note: ndcg@10, other vs base: paired over the 100 queries both scored (200 scored by "
        f"one only, left out); their own means: base {own_mean(base):.4f} over 300 queries, "
        f"other {own_mean(other):.4f} over 100 queries"
    )
    assert note in captured.out.splitlines()
    # The table's baseline mean is over the 100 paired queries, not the folder's own.
    row = next(line for line in captured.out.splitlines() if line.startswith("| ndcg@10 |"))
    assert row.split(" | ")[2] != f"{own_mean(base):.4f}"
    for form in ("json", "latex"):
        argv = ["compare", str(base), str(other), "--allow-different-data", "--format", form]
        assert main(argv) == 0
        out = capsys.readouterr().out
        notes = json.loads(out)["notes"] if form == "json" else [out]
        assert any("paired over the 100 queries both scored" in text for text in notes), form


def test_folders_of_the_same_data_pair_without_a_note(folders, capsys):
    base = folders["base"]
    assert main(["compare", str(base), str(base), "--allow-different-data"]) == 0
    captured = capsys.readouterr()
    assert "Note:" not in captured.out and captured.err == ""


def test_report_refuses_then_says_what_it_paired(folders, capsys, tmp_path):
    base, other = folders["base"], folders["other"]
    output = tmp_path / "both.html"
    assert main(["report", str(base), str(other), "-o", str(output)]) == 2
    assert error_line(capsys).startswith(
        f"heta-eval report: error: {base} and {other} differ in dataset (scifact vs scifact-100)"
    )
    assert not output.exists()
    argv = ["report", str(base), str(other), "-o", str(output), "--allow-different-data"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "paired over the 100 queries both scored" in err
    page = output.read_text(encoding="utf-8")
    assert "paired over the 100 queries both scored (200 scored by one only, left out)" in page
    assert "over 300 queries" in page and "compared anyway (--allow-different-data)" in page


def test_a_leaderboard_refuses_only_one_name_with_different_data(folders, capsys):
    base, other, documents = folders["base"], folders["other"], folders["documents"]
    assert main(["leaderboard", str(base), str(other)]) == 0  # a column per dataset
    out = capsys.readouterr().out
    assert "scifact" in out and "scifact-100" in out
    assert main(["leaderboard", str(base), str(documents)]) == 2
    assert "both hold scifact but differ in corpus (483 vs 383 documents)" in error_line(capsys)


def test_the_rule_is_one_library_function(folders):
    base, other, queries = folders["base"], folders["other"], folders["queries"]
    with pytest.raises(IncomparableFoldersError) as raised:
        comparable_folders([base, other])
    assert "\n" not in str(raised.value) and "differ in dataset (scifact vs scifact-100)" in str(
        raised.value
    )
    assert comparable_folders([base, other], across_datasets=True) == []
    checked = check_comparable([base, queries, other])
    assert [(a, b) for a, b, _ in checked.differing] == [(base, queries), (base, other)]
    assert not checked.same_data(queries, other) and checked.same_data(base, base)
