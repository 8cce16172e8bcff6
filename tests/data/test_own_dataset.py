"""Your own data: ``--dataset PATH`` takes any folder in the BEIR layout (named after the
folder) in ``run``, ``evaluate``, ``datasets validate`` and ``sweep``; a registered name read
from a folder that is not that dataset is said loudly and gets no reference check.

Real processes on real files: folders cut from the real SciFact."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from heta_eval.data.folders import resolve_dataset

REPO = Path(__file__).resolve().parents[2]


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("HETA_EVAL_DATA", None)
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def cut_scifact(source: Path, target: Path, documents: int | None = 40) -> Path:
    """SciFact's queries and test qrels with its first ``documents`` documents (all: None)."""
    (target / "qrels").mkdir(parents=True)
    shutil.copy(source / "queries.jsonl", target / "queries.jsonl")
    shutil.copy(source / "qrels" / "test.tsv", target / "qrels" / "test.tsv")
    lines = (source / "corpus.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (target / "corpus.jsonl").write_text("".join(lines[:documents]), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def forty(scifact_dir, tmp_path_factory) -> Path:
    return cut_scifact(scifact_dir, tmp_path_factory.mktemp("data") / "my_dataset")


def test_a_folder_is_a_dataset_named_after_it(forty, tmp_path) -> None:
    done = cli(["run", "--dataset", str(forty), "--modes", "keyword_search", "--quiet"], tmp_path)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "results" / "my_dataset"
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["benchmark"] == "my_dataset"
    assert summary["data"] == {
        "name": "my_dataset",
        "folder": str(forty),
        "split": "test",
        "registered": False,
        "differences": [],
    }
    table = (folder / "table.md").read_text()
    assert f"- dataset: my_dataset, test split ({forty}, a dataset of your own)" in table
    assert "Published reference numbers" not in table  # none beside ours, and it says why
    why = (
        "No reference check: my_dataset is a dataset of your own; published reference "
        "scores exist only for the registered datasets."
    )
    assert why in table and why in done.stdout
    assert "not the registered" not in done.stderr


def test_scifact_read_from_another_folder_is_said_loudly(forty, tmp_path) -> None:
    args = [
        "run",
        "--dataset",
        "scifact",
        "--data-dir",
        str(forty),
        "--modes",
        "keyword_search",
        "--output",
        "out",
        "--quiet",
    ]
    done = cli(args, tmp_path)
    assert done.returncode == 0, done.stderr
    warning = (
        f"warning: {forty} is not the registered scifact: 40 documents, not 5,183; "
        "corpus.jsonl is not the published file (sha256 differs). Its scores are not "
        "scifact's, and no reference check is made against scifact's published numbers"
    )
    assert warning in done.stderr.splitlines()  # printed even with --quiet
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["data"]["registered"] and summary["data"]["differences"] == [
        "40 documents, not 5,183",
        "corpus.jsonl is not the published file (sha256 differs)",
    ]
    table = (tmp_path / "out" / "table.md").read_text()
    assert "No reference check: this is not the registered scifact (40 documents" in table
    assert "Pyserini" not in table

    check = cli(["check", "out", "--system", "bm25-flat"], tmp_path)
    assert check.returncode == 0 and check.stdout == ""
    assert "out: no reference check: scored on" in check.stderr
    assert cli(["check", "out", "--system", "bm25-flat", "--require-ok"], tmp_path).returncode == 1
    board = cli(["leaderboard", "out", "--reference", "bm25-flat"], tmp_path)
    assert board.returncode == 0, board.stderr
    assert "scifact (other data)" in board.stdout.splitlines()[0]


def test_the_registered_scifact_shows_the_published_numbers_beside_ours(scifact_dir, tmp_path):
    args = [
        "run",
        "--dataset",
        "scifact",
        "--data-dir",
        str(scifact_dir.parent),
        "--modes",
        "keyword_search",
        "--output",
        "out",
        "--quiet",
    ]
    done = cli(args, tmp_path)
    assert done.returncode == 0, done.stderr
    table = (tmp_path / "out" / "table.md").read_text()
    assert f"- dataset: scifact, test split ({scifact_dir})\n" in table
    assert (
        "| keyword_search | ndcg@10 | 0.6789 (strict) | 0.6789 Pyserini BM25 flat | +0.0000 | OK |"
        in table
    )
    assert "warning" not in done.stderr


def test_same_counts_other_text_is_caught_by_the_checksum(scifact_dir, tmp_path) -> None:
    copy = cut_scifact(scifact_dir, tmp_path / "scifact", documents=None)
    lines = (copy / "corpus.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    first = json.loads(lines[0])
    lines[0] = json.dumps({**first, "text": first["text"] + " Edited."}) + "\n"
    (copy / "corpus.jsonl").write_text("".join(lines), encoding="utf-8")
    found = resolve_dataset(str(copy))  # a folder named scifact is read as SciFact
    assert found.registered and found.differences == [
        "corpus.jsonl is not the published file (sha256 differs)"
    ]
    done = cli(["datasets", "validate", str(copy)], tmp_path)
    assert done.returncode == 1
    assert "is not the registered scifact: corpus.jsonl is not the published file" in done.stdout


def test_evaluate_and_validate_take_a_folder(forty, scifact_run_file, tmp_path) -> None:
    done = cli(["evaluate", "--run", str(scifact_run_file), "--dataset", str(forty)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "qrels: my_dataset (test)" in done.stdout and done.stderr == ""
    valid = cli(["datasets", "validate", str(forty)], tmp_path)
    assert valid.returncode == 0 and valid.stdout.startswith(f"my_dataset: {forty} (split test)")
    other = cli(["datasets", "validate", "scifact", "--data-dir", str(forty)], tmp_path)
    assert other.returncode == 1 and "40 documents, not 5,183" in other.stdout
    both = cli(["evaluate", "--run", "r", "--dataset", str(forty), "--data-dir", "x"], tmp_path)
    assert both.returncode == 2 and "is a folder: drop --data-dir" in both.stderr
    missing = cli(["run", "--dataset", "./nowhere", "--modes", "keyword_search"], tmp_path)
    assert missing.returncode == 2
    assert "nowhere is not a dataset in the BEIR layout (no such folder)" in missing.stderr


def test_evaluate_warns_when_the_qrels_are_not_the_registered_ones(
    forty, scifact_run_file, tmp_path
):
    changed = cut_scifact(forty, tmp_path / "scifact")
    qrels = (changed / "qrels" / "test.tsv").read_text().splitlines(keepends=True)
    (changed / "qrels" / "test.tsv").write_text("".join(qrels[:-5]))
    args = ["evaluate", "--run", str(scifact_run_file), "--dataset", "scifact"]
    done = cli([*args, "--data-dir", str(tmp_path)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"warning: {changed} is not the registered scifact: 29")
    assert "qrels/test.tsv is not the published file" in done.stderr
    same = cli([*args, "--data-dir", str(forty)], tmp_path)  # its qrels are SciFact's own
    assert same.returncode == 0 and same.stderr == ""


def test_a_sweep_over_a_folder(forty, tmp_path) -> None:
    args = ["sweep", "--datasets", str(forty), "--modes", "keyword_search", "--output", "sw"]
    done = cli(args, tmp_path)
    assert done.returncode == 0, done.stderr
    cell = tmp_path / "sw" / "my_dataset" / "reference" / "keyword_search"
    assert json.loads((cell / "summary.json").read_text())["benchmark"] == "my_dataset"
    assert "my_dataset" in (tmp_path / "sw" / "leaderboard.md").read_text()


def test_the_table_says_which_precision_and_device_encoded(forty, tmp_path) -> None:
    done = cli(["run", "--dataset", str(forty), "--modes", "vector_search", "--quiet"], tmp_path)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "results" / "my_dataset"
    build = json.loads((folder / "summary.json").read_text())["build"]
    assert build["precision"] in ("bfloat16", "int8", "float32") and build["device"] == "cpu"
    # What auto chose on this CPU, and that it was auto's choice.
    line = f"- dense encoder: all-MiniLM-L6-v2, {build['precision']} on cpu (precision auto)"
    table = (folder / "table.md").read_text().splitlines()
    assert line in table
    # The route, and why it ran (the default of this kind of CPU: nothing was timed).
    assert f"- encoding route: {build['route']}: {build['route_reason']}" in table
    assert build["route_reason"].startswith("the default for ")
