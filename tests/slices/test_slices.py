"""Slices (``--slice-by FIELD``): per-slice means in ``summary.json``, the table and the
report; paired tests per slice in ``heta-eval compare``; CQADupStack's forums as a folder of
sub-benchmarks averaged as BEIR averages them. Real runs (BM25 on real SciFact text), real
results folders, real ``heta-eval`` calls."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.scifact_data import FORUMS, cqadupstack_forums, small_scifact

from heta_eval.cli import main
from heta_eval.compare import compare
from heta_eval.compare.loading import load_result_folder, load_systems
from heta_eval.slices import (
    MISSING,
    SliceError,
    field_value,
    length_bucket,
    macro,
    slice_means,
)


def _per_query(folder: Path, metric: str = "ndcg@10", mode: str = "keyword_search") -> dict:
    values = {}
    for line in (folder / "per_query.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["mode"] == mode:
            values[row["case_id"]] = row["scores"][metric]["value"]
    return values


@pytest.fixture(scope="module")
def scifact_folder(tmp_path_factory, scifact_dir) -> Path:
    """A small real SciFact whose queries carry metadata (a category and a nested field)."""
    root = tmp_path_factory.mktemp("slices")
    folder = small_scifact(scifact_dir, root / "data") / "scifact"
    lines = []
    for line in (folder / "queries.jsonl").read_text().splitlines():
        row = json.loads(line)
        number = int(row["_id"])
        row["metadata"] = {
            "category": "even" if number % 2 == 0 else "odd",
            "source": {"decade": number // 100 * 100},
        }
        lines.append(json.dumps(row))
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory, scifact_folder) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("slice-runs")
    source = ["--dataset", str(scifact_folder), "--quiet"]
    made = {"bm25": root / "bm25", "other": root / "other"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HETA_EVAL_CACHE_DIR", str(root / "cache"))
        argv = [
            "run",
            *source,
            "--modes",
            "keyword_search",
            "--output",
            str(made["bm25"]),
            "--slice-by",
            "query_length",
            "--slice-by",
            "category",
        ]
        assert main(argv) == 0
        # Another system: the same run with each query's first two documents swapped.
        ranked: dict[str, list[str]] = {}
        for line in (made["bm25"] / "runs" / "keyword_search.trec").read_text().splitlines():
            qid, _, doc, *_ = line.split()
            ranked.setdefault(qid, []).append(doc)
        swapped = root / "swapped.trec"
        swapped.write_text(
            "".join(
                f"{qid} Q0 {doc} {r} {100 - r} x\n"
                for qid, docs in ranked.items()
                for r, doc in enumerate([*docs[1:2], docs[0], *docs[2:]], 1)
            )
        )
        argv = [
            "run",
            *source,
            "--kb-run",
            f"keyword_search={swapped}",
            "--output",
            str(made["other"]),
            "--slice-by",
            "category",
        ]
        assert main(argv) == 0
    return made


def test_the_slice_rules():
    assert [length_bucket(q) for q in ("a", "a b c", "a b c d", "x " * 15, "x " * 16)] == [
        "1-3 words",
        "1-3 words",
        "4-7 words",
        "8-15 words",
        "16+ words",
    ]
    assert field_value("q", "t", "category", {}, {"category": "howto"}) == "howto"
    assert field_value("q", "t", "category", {"category": 7}, {"category": "x"}) == "7"
    assert field_value("q", "t", "flag", {"flag": True}) == "true"
    assert field_value("q", "t", "missing", {"flag": True}) == MISSING
    assert field_value("q", "t", "forum", {}, None, subset="tex") == "tex"
    with pytest.raises(SliceError, match="case 'q': its tags is a list"):
        field_value("q", "t", "tags", {"tags": ["a", "b"]})
    # BEIR's CQADupStack number: the forums' means averaged, whatever their sizes.
    means = slice_means(
        {"a1": 1.0, "a2": 1.0, "a3": 1.0, "b1": 0.0}, {"a1": "a", "a2": "a", "a3": "a", "b1": "b"}
    )
    assert [(m.value, m.cases, m.mean) for m in means] == [("a", 3, 1.0), ("b", 1, 0.0)]
    assert macro(means) == 0.5  # the mean over the 4 queries would be 0.75


def test_run_keeps_each_slices_mean_in_the_summary_and_the_table(runs, scifact_folder):
    folder = runs["bm25"]
    summary = json.loads((folder / "summary.json").read_text())
    values = _per_query(folder)
    queries = {
        json.loads(line)["_id"]: json.loads(line)
        for line in (scifact_folder / "queries.jsonl").read_text().splitlines()
    }
    for field, of in (
        ("query_length", lambda q: length_bucket(q["text"])),
        ("category", lambda q: q["metadata"]["category"]),
    ):
        recorded = summary["slices"][field]
        assert recorded["cases"] == {qid: of(queries[qid]) for qid in values}
        entry = recorded["modes"]["keyword_search"]["ndcg@10"]
        means = []
        for value in recorded["values"]:
            members = [qid for qid in values if recorded["cases"][qid] == value]
            expected = sum(values[q] for q in members) / len(members)
            assert entry["slices"][value] == {
                "cases": len(members),
                "scored": len(members),
                "failed": 0,
                "mean": pytest.approx(expected),
            }
            means.append(expected)
        assert entry["macro"] == pytest.approx(sum(means) / len(means))
    assert summary["slices"]["category"]["values"] == ["even", "odd"]
    table = (folder / "table.md").read_text()
    assert "By category (mean per slice; * where queries failed):" in table
    even = summary["slices"]["category"]["modes"]["keyword_search"]["ndcg@10"]["slices"]["even"]
    assert f"| even | {even['cases']} | {even['mean']:.5f} |" in table


def test_a_rerun_without_slice_by_keeps_the_fields_and_a_nested_field_works(
    runs, scifact_folder, tmp_path, capsys
):
    folder = tmp_path / "copy"
    shutil.copytree(runs["bm25"], folder)
    argv = [
        "run",
        "--dataset",
        str(scifact_folder),
        "--modes",
        "keyword_search",
        "--quiet",
        "--output",
        str(folder),
        "--slice-by",
        "source.decade",
    ]
    assert main(argv) == 0
    assert list(json.loads((folder / "summary.json").read_text())["slices"]) == [
        "source.decade",
        "query_length",
        "category",
    ]
    argv = argv[:-2]
    assert main(argv) == 0  # nothing asked again, nothing dropped
    capsys.readouterr()
    slices = json.loads((folder / "summary.json").read_text())["slices"]
    assert set(slices) == {"source.decade", "query_length", "category"}
    assert slices["source.decade"]["values"][0] == "0"


def test_a_field_that_cannot_group_is_one_line_before_any_query(scifact_folder, tmp_path, capsys):
    folder = tmp_path / "data"
    shutil.copytree(scifact_folder, folder)
    text = (folder / "queries.jsonl").read_text().replace('"category": "even"', '"category": []')
    (folder / "queries.jsonl").write_text(text)
    argv = [
        "run",
        "--dataset",
        str(folder),
        "--modes",
        "keyword_search",
        "--quiet",
        "--output",
        str(tmp_path / "out"),
        "--slice-by",
        "category",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        err[-1].startswith("heta-eval run: error: case '") and "its category is a list" in err[-1]
    )
    assert not (tmp_path / "out" / "per_query.jsonl").exists()


def test_a_benchmark_of_your_own_slices_by_its_cases_categories(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    texts = {
        "paris": "Paris is the capital of France.",
        "rome": "Rome is the capital of Italy.",
        "tides": "The moon's pull causes tides.",
        "rain": "Clouds bring rain.",
    }
    for name, text in texts.items():
        (docs / f"{name}.txt").write_text(text)
    cases = [
        ("q1", "capital of France", "paris", {"category": "geography"}),
        ("q2", "capital of Italy", "rome", {"category": "geography"}),
        ("q3", "what causes tides", "tides", {"category": "science"}),
        ("q4", "where does rain come from", "rain", {}),
    ]
    (tmp_path / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "query": q, "expected": {"relevance": {d: 1}}, "metadata": m})
            + "\n"
            for i, q, d, m in cases
        )
    )
    argv = [
        "run",
        "--benchmark",
        str(tmp_path / "cases.jsonl"),
        "--documents",
        str(docs),
        "--modes",
        "keyword_search",
        "--output",
        str(tmp_path / "out"),
        "--quiet",
        "--slice-by",
        "category",
        "--no-cache",
    ]
    assert main(argv) == 0
    capsys.readouterr()
    recorded = json.loads((tmp_path / "out" / "summary.json").read_text())["slices"]["category"]
    assert recorded["cases"] == {
        "q1": "geography",
        "q2": "geography",
        "q3": "science",
        "q4": MISSING,
    }
    slices = recorded["modes"]["keyword_search"]["ndcg@10"]["slices"]
    assert {value: entry["cases"] for value, entry in slices.items()} == {
        "geography": 2,
        "science": 1,
        MISSING: 1,
    }
    assert list(slices) == ["geography", "science", MISSING]


def test_compare_tests_each_slice_as_compare_does_on_its_queries(runs, capsys):
    argv = [
        "compare",
        str(runs["bm25"]),
        str(runs["other"]),
        "--slice-by",
        "category",
        "--metric",
        "ndcg@10",
        "--format",
        "json",
        "--resamples",
        "1000",
    ]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)["slices"]
    [base], [other] = load_result_folder(runs["bm25"]), load_result_folder(runs["other"])
    cases = json.loads((runs["bm25"] / "summary.json").read_text())["slices"]["category"]["cases"]
    means = {}
    for value in ("even", "odd"):
        keep = {q for q, v in cases.items() if v == value}
        expected = compare(
            {
                "bm25": {q: v for q, v in base.per_query.items() if q in keep},
                "other": {q: v for q, v in other.per_query.items() if q in keep},
            },
            metrics=["ndcg@10"],
            n_resamples=1000,
        ).rows[0]
        row = data["slices"][value]["comparisons"][0]
        assert row["n"] == len(keep) and row["diff"] == pytest.approx(expected.diff)
        assert row["p_permutation"] == pytest.approx(expected.p_permutation)
        assert row["ci_low"] == pytest.approx(expected.ci_low)
        means[value] = (expected.mean_baseline, expected.mean_system)
    [macro_row] = data["macro"]
    assert macro_row["baseline_mean"] == pytest.approx((means["even"][0] + means["odd"][0]) / 2)
    assert macro_row["system_mean"] == pytest.approx((means["even"][1] + means["odd"][1]) / 2)
    # The markdown: a table per slice, then the mean of the slices.
    assert main([*argv[:-4], "--resamples", "1000"]) == 0
    out = capsys.readouterr().out
    assert "## By category" in out and "**category = even (" in out
    assert "| ndcg@10 | other | bm25 | 2 |" in out


def test_compare_by_a_field_a_folder_did_not_record_says_how_to_get_it(runs, capsys):
    # "other" recorded category only; query_length needs no record: the query texts say it.
    argv = [
        "compare",
        str(runs["bm25"]),
        str(runs["other"]),
        "--slice-by",
        "query_length",
        "--resamples",
        "200",
    ]
    assert main(argv) == 0
    assert "**query_length = 8-15 words (" in capsys.readouterr().out
    argv = ["compare", str(runs["bm25"]), str(runs["other"]), "--slice-by", "source.decade"]
    assert main(argv) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"heta-eval compare: error: --slice-by source.decade: {runs['bm25']} records no "
        "'source.decade' slices; rerun it with --slice-by source.decade (it resumes: nothing "
        "is queried again)"
    )


def test_the_report_draws_the_slices(runs, tmp_path, scifact_folder):
    output = tmp_path / "report.html"
    argv = ["report", str(runs["bm25"]), "-o", str(output)]
    assert main(argv) == 0
    page = output.read_text()
    assert '<section id="slices">' in page and "ndcg@10 by category" in page
    summary = json.loads((runs["bm25"] / "summary.json").read_text())
    odd = summary["slices"]["category"]["modes"]["keyword_search"]["ndcg@10"]["slices"]["odd"]
    assert f"odd, keyword_search: {odd['mean']:.4f} over {odd['cases']} queries" in page


@pytest.fixture(scope="module")
def forums(tmp_path_factory, scifact_dir) -> dict[str, Path]:
    """A CQADupStack of 12 forums, each 20 real SciFact test queries with their judged
    documents and 40 others, run by the real runner into a folder per forum."""
    root = tmp_path_factory.mktemp("cqadupstack")
    data = cqadupstack_forums(scifact_dir, root / "data")
    made = {"bm25": root / "results" / "bm25", "same": root / "results" / "same"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HETA_EVAL_CACHE_DIR", str(root / "cache"))
        source = ["--dataset", "cqadupstack", "--data-dir", str(data), "--quiet"]
        assert (
            main(["run", *source, "--modes", "keyword_search", "--output", str(made["bm25"])]) == 0
        )
        combined = root / "all.trec"
        combined.write_text(
            "".join(
                (made["bm25"] / forum / "runs" / "keyword_search.trec").read_text()
                for forum in FORUMS
            )
        )
        assert (
            main(
                [
                    "run",
                    *source,
                    "--kb-run",
                    f"keyword_search={combined}",
                    "--output",
                    str(made["same"]),
                ]
            )
            == 0
        )
    return made


def test_a_folder_of_forums_is_one_system_averaged_as_beir_averages_them(forums, capsys):
    [system] = load_systems([forums["bm25"]])
    assert system.dataset == "cqadupstack" and len(system.per_query) == 240
    means = []
    for forum in FORUMS:
        summary = json.loads((forums["bm25"] / forum / "summary.json").read_text())
        means.append(summary["modes"]["keyword_search"]["metrics"]["ndcg@10"]["beir_unrounded"])
        assert {q for q, f in system.slices["subset"].items() if f == forum} == {
            f"{forum}/{qid}" for qid in _per_query(forums["bm25"] / forum)
        }
    assert system.aggregate("ndcg@10", "beir") == pytest.approx(sum(means) / 12, abs=1e-12)
    # A leaderboard shows that mean under cqadupstack.
    assert main(["leaderboard", str(forums["bm25"]), "--metric", "ndcg@10"]) == 0
    out = capsys.readouterr().out
    assert "cqadupstack" in out and f"{sum(means) / 12:.4f}" in out


def test_compare_and_the_gate_by_forum(forums, capsys):
    argv = [
        "compare",
        str(forums["bm25"]),
        str(forums["same"]),
        "--slice-by",
        "forum",
        "--metric",
        "ndcg@10",
        "--format",
        "json",
        "--resamples",
        "500",
        "--fail-if-worse",
        "ndcg@10>0",
    ]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data["slices"]["slices"]) == sorted(FORUMS)
    assert all(s["comparisons"][0]["n"] == 20 for s in data["slices"]["slices"].values())
    [system] = load_systems([forums["bm25"]])
    assert data["slices"]["macro"][0]["baseline_mean"] == pytest.approx(
        system.aggregate("ndcg@10", "beir"), abs=1e-12
    )
    assert data["gate"]["passed"] is True


def test_folders_of_other_forums_are_refused(forums, tmp_path, capsys):
    fewer = tmp_path / "fewer"
    shutil.copytree(forums["same"], fewer)
    shutil.rmtree(fewer / "tex")
    assert main(["compare", str(forums["bm25"]), str(fewer)]) == 2
    line = capsys.readouterr().err.strip()
    assert "differ in sub-benchmarks (12 vs 11; tex in one only)" in line
    # A forum scored on other documents: refused by that forum's folders.
    other = tmp_path / "other"
    shutil.copytree(forums["same"], other)
    summary = json.loads((other / "gis" / "summary.json").read_text())
    summary["documents"] = "1:0000000000000000"
    (other / "gis" / "summary.json").write_text(json.dumps(summary))
    assert main(["compare", str(forums["bm25"]), str(other)]) == 2
    assert "gis both hold cqadupstack/gis but differ in corpus" in capsys.readouterr().err
