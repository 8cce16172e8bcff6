"""The regression gate, ``heta-eval compare BASELINE CANDIDATE --fail-if-worse ...``: on real
results folders written by the real runner (BM25 on a small real SciFact) and by run files of
that run with its top documents demoted (``--kb-run``), through real ``heta-eval``
processes for the exit statuses and the lines a CI log shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.scifact_data import small_scifact

from heta_eval.cli import main
from heta_eval.compare import compare
from heta_eval.compare.gate import Condition, gate
from heta_eval.compare.loading import load_result_folder

REPO = Path(__file__).resolve().parents[2]


def _demoted(run_file: Path, target: Path, queries: int) -> Path:
    """``run_file`` with the top document of its first ``queries`` queries moved to rank
    30: a worse system on those queries, the same on the others."""
    ranked: dict[str, list[str]] = {}
    for line in run_file.read_text().splitlines():
        qid, _, doc, *_ = line.split()
        ranked.setdefault(qid, []).append(doc)
    lines = []
    for n, (qid, docs) in enumerate(ranked.items()):
        if n < queries and len(docs) > 30:
            docs = [*docs[1:30], docs[0], *docs[30:]]
        lines += [f"{qid} Q0 {doc} {r} {1000 - r} demoted" for r, doc in enumerate(docs, 1)]
    target.write_text("\n".join(lines) + "\n")
    return target


@pytest.fixture(scope="module")
def folders(tmp_path_factory, scifact_dir) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gate")
    data = small_scifact(scifact_dir, root / "data")
    source = ["--dataset", "scifact", "--data-dir", str(data), "--quiet"]
    made = {"main": root / "main"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HETA_EVAL_CACHE_DIR", str(root / "cache"))
        assert (
            main(["run", *source, "--modes", "keyword_search", "--output", str(made["main"])]) == 0
        )
        bm25 = made["main"] / "runs" / "keyword_search.trec"
        runs = {
            "same": bm25,
            "slight": _demoted(bm25, root / "slight.trec", 4),
            "worse": _demoted(bm25, root / "worse.trec", 300),
        }
        for name, run in runs.items():
            made[name] = root / name
            argv = [
                "run",
                *source,
                "--kb-run",
                f"keyword_search={run}",
                "--output",
                str(made[name]),
            ]
            assert main(argv) == 0
        # Two modes each: the gate pairs each mode with the baseline's own.
        made["two"] = root / "two"
        made["two-worse"] = root / "two-worse"
        for folder, second in ((made["two"], bm25), (made["two-worse"], runs["worse"])):
            argv = [
                "run",
                *source,
                "--kb-run",
                f"keyword_search={bm25}",
                "--kb-run",
                f"alt={second}",
                "--output",
                str(folder),
            ]
            assert main(argv) == 0
    return made


def _gate(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``heta-eval compare ...`` as a CI job runs it: its own process."""
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", "compare", *argv, "--resamples", "2000"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )


def _row(baseline: Path, candidate: Path, metric: str = "ndcg@10"):
    [a], [b] = load_result_folder(baseline), load_result_folder(candidate)
    result = compare({"main": a.per_query, "cand": b.per_query}, metrics=[metric], n_resamples=2000)
    return result.rows[0]


def test_a_worse_candidate_fails_with_one_line_per_failed_condition(folders, tmp_path):
    summary = tmp_path / "step-summary.md"
    summary.write_text("## earlier step\n")
    done = _gate(
        str(folders["main"]),
        str(folders["worse"]),
        "--fail-if-worse",
        "nDCG@10>0.005",
        "--fail-if-worse",
        "R@100>50%",
        "--fail-if-worse",
        "ndcg@10:p<0.05",
        "--gate-json",
        str(tmp_path / "gate.json"),
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.returncode == 1, done.stderr
    row = _row(folders["main"], folders["worse"])
    assert row.diff < -0.05  # the top document demoted in every query
    lines = done.stderr.strip().splitlines()
    # Two conditions failed (recall@100 moved less than half); then the verdict.
    assert lines[-1] == "gate: FAILED (2 of 3 checks)"
    assert len(lines) == 3
    first = lines[0]
    assert first.startswith("FAIL ndcg@10 > 0.005: worse ")
    # The two values, the difference, its CI and the p-value.
    assert f"worse {row.mean_system:.4f} vs main {row.mean_baseline:.4f}" in first
    assert f"Δ {row.diff:+.4f} (95% CI [{row.ci_low:+.4f}, {row.ci_high:+.4f}])" in first
    assert "p (perm, Holm) " in first and lines[1].startswith("FAIL ndcg@10 : p < 0.05: ")
    verdict = json.loads((tmp_path / "gate.json").read_text())
    assert verdict["passed"] is False and verdict["failed"] == 2
    check = verdict["checks"][0]
    assert check["candidate_mean"] == pytest.approx(row.mean_system)
    assert check["diff"] == pytest.approx(row.diff) and check["allowed_drop"] == 0.005
    assert [c["failed"] for c in verdict["checks"]] == [True, False, True]
    # The step summary keeps the earlier step's section and adds a markdown table.
    text = summary.read_text()
    assert text.startswith("## earlier step\n")
    assert "❌ gate: FAILED (2 of 3 checks)" in text
    table = [line for line in text.splitlines() if line.startswith("| ❌ | ndcg@10 > 0.005 |")]
    assert len(table) == 1 and f"{row.diff:+.4f}" in table[0]


def test_the_same_system_passes_and_exits_0(folders, tmp_path):
    done = _gate(
        str(folders["main"]),
        str(folders["same"]),
        "--fail-if-worse",
        "ndcg@10>0",
        "--fail-if-worse",
        "recall@100:p<0.05",
        "--gate-markdown",
        str(tmp_path / "gate.md"),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == ["gate: passed (2 checks)"]
    assert "| ✅ | ndcg@10 > 0 | same | main |" in (tmp_path / "gate.md").read_text()
    assert "| ndcg@10 | same |" in done.stdout  # the comparison table, as compare prints it


def test_an_absolute_margin_on_both_sides_of_the_drop(folders):
    row = _row(folders["main"], folders["slight"])
    drop = -row.diff
    assert 0 < drop < 0.02  # four queries of 300 lost their top document
    base, cand = str(folders["main"]), str(folders["slight"])
    below, above = f"ndcg@10>{drop - 1e-5:.6f}", f"ndcg@10>{drop + 1e-5:.6f}"
    assert _gate(base, cand, "--fail-if-worse", below).returncode == 1
    assert _gate(base, cand, "--fail-if-worse", above).returncode == 0
    # Relative: the same drop as a share of the baseline's mean.
    share = 100 * drop / row.mean_baseline
    assert _gate(base, cand, "--fail-if-worse", f"ndcg@10>{share - 0.01:.4f}%").returncode == 1
    assert _gate(base, cand, "--fail-if-worse", f"ndcg@10>{share + 0.01:.4f}%").returncode == 0


def test_a_margin_and_significance_together_fail_only_when_both_hold(folders):
    row = _row(folders["main"], folders["slight"])
    assert row.p_permutation_holm > 0.05  # four queries: not significant
    base, cand = str(folders["main"]), str(folders["slight"])
    assert _gate(base, cand, "--fail-if-worse", "ndcg@10>0.0001").returncode == 1
    assert _gate(base, cand, "--fail-if-worse", "ndcg@10>0.0001:p<0.05").returncode == 0
    worse = str(folders["worse"])
    assert _gate(base, worse, "--fail-if-worse", "ndcg@10>0.0001:p<0.05").returncode == 1


def test_each_mode_is_gated_against_the_same_mode_of_the_baseline(folders, tmp_path):
    out = tmp_path / "gate.json"
    done = _gate(
        str(folders["two"]),
        str(folders["two-worse"]),
        "--fail-if-worse",
        "ndcg@10>0.005",
        "--gate-json",
        str(out),
    )
    assert done.returncode == 1, done.stderr
    checks = json.loads(out.read_text())["checks"]
    pairs = [(c["candidate"], c["baseline"], c["failed"]) for c in checks]
    assert pairs == [
        ("two-worse:keyword_search", "two:keyword_search", False),
        ("two-worse:alt", "two:alt", True),
    ]
    # Holm over the gate's table: both rows.
    assert json.loads(out.read_text())["settings"]["holm_family"] == 2


def test_folders_of_different_data_are_refused_as_compare_refuses_them(
    folders, scifact_dir, tmp_path
):
    # The same run scored on a SciFact of fewer documents: the corpus fingerprint differs.
    fewer = small_scifact(scifact_dir, tmp_path / "data", others=100)
    other = tmp_path / "other"
    run = folders["main"] / "runs" / "keyword_search.trec"
    argv = [
        "run",
        "--dataset",
        "scifact",
        "--data-dir",
        str(fewer),
        "--quiet",
        "--kb-run",
        f"keyword_search={run}",
        "--output",
        str(other),
    ]
    assert main(argv) == 0
    done = _gate(str(folders["main"]), str(other), "--fail-if-worse", "ndcg@10>0.005")
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line == (
        f"heta-eval compare: error: {folders['main']} and {other} both hold scifact but differ "
        "in corpus (483 vs 383 documents): their scores are not comparable "
        "(--allow-different-data compares them anyway)"
    )


@pytest.mark.parametrize(
    ("condition", "words"),
    [
        ("ndcg@10", "is not a condition: write METRIC>MARGIN"),
        ("ndcg@10>x", "'x' is not a number"),
        ("ndcg@10>-1", "the margin must be a finite number ≥ 0"),
        ("ndcg@10>nan", "is not a finite number"),
        ("ndcg@10>150%", "a relative margin is at most 100%"),
        ("ndcg@10:p<1.5", "p must be compared with a number in (0, 1)"),
        ("hole@10>0.01", "not a measure where higher is better"),
    ],
)
def test_a_bad_condition_is_one_line_and_exit_2(condition, words):
    done = subprocess.run(
        [sys.executable, "-m", "heta_eval", "compare", "a", "b", "--fail-if-worse", condition],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("heta-eval compare: error: --fail-if-worse: ") and words in line


def test_a_gate_metric_the_folders_lack_and_a_baseline_option_are_refused(folders, capsys):
    base, cand = str(folders["main"]), str(folders["worse"])
    assert main(["compare", base, cand, "--fail-if-worse", "evidence_recall@5>0.01"]) == 2
    assert "no 'evidence_recall@5' scores" in capsys.readouterr().err
    assert main(["compare", base, cand, "--fail-if-worse", "ndcg@10>0", "--baseline", cand]) == 2
    assert "--baseline goes without --fail-if-worse" in capsys.readouterr().err


def test_a_run_file_against_a_folder_of_several_modes_needs_one_mode(folders, capsys):
    run = folders["main"] / "runs" / "keyword_search.trec"
    data = folders["main"].parent / "data"
    argv = [
        "compare",
        str(folders["two"]),
        str(run),
        "--dataset",
        "scifact",
        "--data-dir",
        str(data),
        "--fail-if-worse",
        "ndcg@10>0",
        "--resamples",
        "200",
    ]
    assert main(argv) == 2
    assert "is a run file and the baseline" in capsys.readouterr().err
    assert main([*argv, "--mode", "keyword_search"]) == 0  # the same ranking: it passes
    assert capsys.readouterr().err.strip().splitlines()[-1] == "gate: passed (1 check)"


def test_the_json_output_carries_the_gate(folders, capsys):
    argv = [
        "compare",
        str(folders["main"]),
        str(folders["worse"]),
        "--format",
        "json",
        "--fail-if-worse",
        "ndcg@10>0.005",
        "--resamples",
        "2000",
    ]
    assert main(argv) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["gate"]["passed"] is False and data["comparisons"][0]["system"] == "worse"


def test_the_library_gate_on_both_sides_of_the_margin():
    systems = {
        "a": {"q1": {"ndcg@10": 0.5}, "q2": {"ndcg@10": 0.5}},
        "b": {"q1": {"ndcg@10": 0.4}, "q2": {"ndcg@10": 0.5}},
    }
    result = compare(systems, n_resamples=100)
    assert gate(result, [Condition.parse("ndcg@10>0.05")]).passed  # a drop of 0.05: not past
    assert not gate(result, [Condition.parse("ndcg@10>0.049999")]).passed
    assert gate(result, [Condition.parse("ndcg@10>10%")]).passed  # 10% of 0.5 = 0.05
    with pytest.raises(ValueError, match="not among the compared metrics"):
        gate(result, [Condition.parse("recall@100>0")])
