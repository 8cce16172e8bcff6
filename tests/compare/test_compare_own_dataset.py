"""``heta-eval compare`` and ``heta-eval check`` take ``--dataset PATH`` as ``run`` and
``evaluate`` do (one resolver, :func:`heta_eval.data.folders.resolve_dataset`): any BEIR folder
gives the qrels and query texts; published reference numbers are checked only against the
registered dataset itself, never a folder of your own nor a registered name read from a folder
that differs.

Real processes on real files: SciFact, its reranked run, and folders cut from SciFact."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str | Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("HETA_EVAL_DATA", None)
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def copy_scifact(source: Path, target: Path, documents: int | None = None) -> Path:
    """SciFact's queries and test qrels, with its first ``documents`` documents (all: None)."""
    (target / "qrels").mkdir(parents=True)
    shutil.copy(source / "queries.jsonl", target / "queries.jsonl")
    shutil.copy(source / "qrels" / "test.tsv", target / "qrels" / "test.tsv")
    lines = (source / "corpus.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (target / "corpus.jsonl").write_text("".join(lines[:documents]), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def runs(scifact_run_file, tmp_path_factory) -> tuple[Path, Path]:
    """The reranked SciFact run, and the same cut to its top 5 per query (a second system)."""
    top5 = tmp_path_factory.mktemp("runs") / "top5.trec"
    lines = scifact_run_file.read_text().splitlines(keepends=True)
    top5.write_text("".join(line for line in lines if int(line.split()[3]) <= 5))
    return scifact_run_file, top5


def test_compare_scores_runs_on_a_folder_of_your_own(scifact_dir, runs, tmp_path) -> None:
    mine = copy_scifact(scifact_dir, tmp_path / "my_dataset", documents=40)
    common = ["compare", *runs, "--metric", "recall@100", "--seed", "3"]
    on_folder = cli(*common, "--dataset", mine)
    assert on_folder.returncode == 0, on_folder.stderr
    on_qrels = cli(*common, "--qrels", mine / "qrels" / "test.tsv")
    assert on_qrels.returncode == 0, on_qrels.stderr
    row = [line for line in on_folder.stdout.splitlines() if line.startswith("| recall@100 |")]
    assert row and row == [
        line for line in on_qrels.stdout.splitlines() if line.startswith("| recall@100 |")
    ]
    # The folder's query texts name the largest changes (a qrels file has none).
    assert "A deficiency of vitamin B12 increases blood levels of homocysteine." in on_folder.stdout
    assert "vitamin B12" not in on_qrels.stdout
    assert "not the registered" not in on_folder.stderr


def test_check_on_the_registered_folder_given_as_a_path_checks_its_references(
    scifact_dir, runs
) -> None:
    by_path = cli("check", runs[0], "--dataset", scifact_dir, "--system", "bm25-flat")
    by_name = cli(
        "check",
        runs[0],
        "--dataset",
        "scifact",
        "--data-dir",
        scifact_dir.parent,
        "--system",
        "bm25-flat",
    )
    assert by_name.stdout.count("bm25-flat reference") == 3, by_name.stderr
    assert by_path.stdout == by_name.stdout
    assert by_path.returncode == by_name.returncode


def test_check_makes_no_reference_check_on_a_folder_of_your_own(scifact_dir, runs, tmp_path):
    mine = copy_scifact(scifact_dir, tmp_path / "my_dataset")
    done = cli("check", runs[0], "--dataset", mine)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"scifact-test.reranked: no reference check: scored on {mine}, a dataset of your own"
    ]


def test_check_makes_no_reference_check_when_the_named_dataset_differs(
    scifact_dir, runs, tmp_path
) -> None:
    cut = copy_scifact(scifact_dir, tmp_path / "scifact", documents=40)
    done = cli(
        "check", runs[0], "--dataset", "scifact", "--data-dir", tmp_path, "--system", "bm25-flat"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    warning, skipped = done.stderr.splitlines()
    assert warning.startswith(f"warning: {cut} is not the registered scifact: ")
    assert skipped.startswith(
        f"scifact-test.reranked: no reference check: scored on {cut}, not the registered scifact: "
    )


def test_a_folder_and_data_dir_together_are_refused_in_one_line(scifact_dir, runs) -> None:
    done = cli("compare", *runs, "--dataset", scifact_dir, "--data-dir", scifact_dir.parent)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith(
        f"--dataset {scifact_dir} is a folder: drop --data-dir"
    )
