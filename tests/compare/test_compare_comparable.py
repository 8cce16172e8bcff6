"""Results folders that share a dataset name but not its data are never put side by side
silently: ``compare``, ``leaderboard`` and ``report`` refuse them in one line naming the
folders and what differs (corpus or cases), unless ``--allow-different-data`` says so, and
then warn. Real folders written by the real runner (BM25 over a small corpus)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from heta_eval.cli import main
from heta_eval.compare.loading import IncomparableFoldersError, comparable_folders
from heta_eval.evaluation import BenchmarkCase, Document, beir_default_metrics

TOPICS = [
    "cats purr softly",
    "dogs bark loudly",
    "fish swim fast",
    "birds sing early",
    "cows eat grass",
    "bees make honey",
]


class Tiny:
    """One dataset name, ``tiny``; the corpus and the judgments vary by construction."""

    name = "tiny"

    def __init__(self, documents: int = 4, judged: str = "d0") -> None:
        self.count, self.judged = documents, judged

    def documents(self):
        return [Document(id=f"d{i}", text=TOPICS[i]) for i in range(self.count)]

    def cases(self):
        return [
            BenchmarkCase(id="q0", query="cats purr", expected={"relevance": {self.judged: 1}}),
            BenchmarkCase(id="q1", query="dogs bark", expected={"relevance": {"d1": 1}}),
            BenchmarkCase(id="q2", query="fish swim", expected={"relevance": {"d2": 1}}),
        ]

    def evaluators(self):
        return beir_default_metrics(k_values=(1, 10))


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """``tiny`` four times: the base, the same again, a larger corpus, other judgments."""
    from heta_eval.reference import Recipe
    from heta_eval.runner import BenchmarkRunner

    root = tmp_path_factory.mktemp("comparable")
    made = {}
    for key, benchmark in {
        "base": Tiny(),
        "same": Tiny(),
        "corpus": Tiny(documents=6),
        "cases": Tiny(judged="d3"),
    }.items():
        made[key] = root / key / "tiny"
        BenchmarkRunner(top_k=10, progress=False).run(
            benchmark=benchmark,
            recipe=Recipe(modes=["keyword_search"]),
            query_modes=("keyword_search",),
            output_dir=made[key],
            cache_dir=root / "cache",
        )
    return made


def last_error(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines, "nothing on stderr"
    return lines[-1]


def test_compare_refuses_another_corpus_naming_folders_and_document_counts(folders, capsys):
    base, other = folders["base"], folders["corpus"]
    assert main(["compare", str(base), str(other)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.strip().splitlines()
    assert line == (
        f"heta-eval compare: error: {base} and {other} both hold tiny but differ in corpus "
        "(4 vs 6 documents): their scores are not comparable "
        "(--allow-different-data compares them anyway)"
    )


def test_compare_refuses_other_judgments_of_as_many_cases(folders, capsys):
    base, other = folders["base"], folders["cases"]
    assert main(["compare", str(base), str(other)]) == 2
    line = last_error(capsys)
    assert f"{base} and {other} both hold tiny but differ in cases (3 cases each" in line
    assert "corpus" not in line and "--allow-different-data" in line


def test_every_differing_folder_is_named_in_the_one_line(folders, capsys):
    assert main(["compare", *map(str, folders.values())]) == 2
    line = last_error(capsys)
    assert f"{folders['corpus']} both hold tiny but differ in corpus (4 vs 6 documents)" in line
    assert f"{folders['cases']} both hold tiny but differ in cases" in line
    assert str(folders["same"]) not in line  # the same data is comparable


def test_leaderboard_and_report_refuse_them_too(folders, capsys, tmp_path):
    base, other = folders["base"], folders["corpus"]
    assert main(["leaderboard", str(base), str(other)]) == 2
    assert "differ in corpus (4 vs 6 documents)" in last_error(capsys)
    output = tmp_path / "both.html"
    assert main(["report", str(base), str(other), "-o", str(output)]) == 2
    line = last_error(capsys)
    assert f"{base} and {other} both hold tiny but differ in corpus (4 vs 6 documents)" in line
    assert not output.exists()


def test_allow_different_data_compares_them_with_a_warning(folders, capsys, tmp_path):
    base, other = folders["base"], folders["corpus"]
    assert main(["compare", str(base), str(other), "--allow-different-data"]) == 0
    captured = capsys.readouterr()
    assert "| ndcg@10 |" in captured.out
    assert captured.err.splitlines() == [
        f"warning: {base} and {other} both hold tiny but differ in corpus (4 vs 6 documents); "
        "compared anyway (--allow-different-data)"
    ]
    output = tmp_path / "both.html"
    assert main(["report", str(base), str(other), "-o", str(output), "--allow-different-data"]) == 0
    assert "compared anyway (--allow-different-data)" in capsys.readouterr().err
    page = output.read_text(encoding="utf-8")
    assert 'class="bad data-warning">warning: ' in page and "(4 vs 6 documents)" in page


def test_folders_of_the_same_data_compare_without_a_word(folders, capsys):
    assert main(["compare", str(folders["base"]), str(folders["same"])]) == 0
    assert capsys.readouterr().err == ""
    assert comparable_folders([folders["base"], folders["same"]]) == []


def test_check_compares_no_folders_with_each_other(folders, capsys):
    assert main(["check", str(folders["base"]), str(folders["corpus"])]) == 0
    assert "differ" not in capsys.readouterr().err


def test_a_folder_without_fingerprints_is_compared_with_a_warning_that_it_cannot_be_checked(
    folders, tmp_path, capsys
):
    # As written before the fingerprints were recorded: no run.json, no "documents".
    old = tmp_path / "old" / "tiny"
    shutil.copytree(folders["corpus"], old)
    (old / "run.json").unlink()
    summary = json.loads((old / "summary.json").read_text())
    del summary["documents"]
    (old / "summary.json").write_text(json.dumps(summary))
    assert main(["compare", str(folders["base"]), str(old)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"warning: {folders['base']} and {old} both hold tiny, but {old} records no corpus or "
        "cases fingerprint (written by an earlier heta-eval): whether they hold the same data "
        "cannot be checked"
    ]


def test_the_library_check_raises_one_line(folders):
    with pytest.raises(IncomparableFoldersError) as raised:
        comparable_folders([folders["base"], folders["cases"]])
    assert "\n" not in str(raised.value) and "differ in cases" in str(raised.value)
    warnings = comparable_folders([folders["base"], folders["cases"]], allow_different_data=True)
    assert len(warnings) == 1 and warnings[0].endswith("compared anyway (--allow-different-data)")
