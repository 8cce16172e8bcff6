"""Every number an option takes goes through one rule (heta_eval/cli/numbers.py): a value
outside its range, not finite, not a number of its kind, or asking for more work than can be
done (a grid, a resample count, the hits a run asks per query) is one line on stderr naming
the option, exit status 2, nothing on stdout and nothing written, before any work. Fused
scores that would not be finite are an error, not a file; at the edges that are allowed,
the fused scores are ranx's.

The command line runs as a real process, so a traceback or a memory error fails the test."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from heta_eval.cli import numbers
from heta_eval.compare import compare
from heta_eval.compare.stats import MAX_RESAMPLES
from heta_eval.fusion import MAX_RRF_K, FusionError, fuse
from heta_eval.fusion.optimize import MAX_GRID, grid, grid_size

REPO = Path(__file__).resolve().parents[2]


def heta(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("options")
    for n, name in enumerate(("a", "b")):
        lines = [
            f"q{q} Q0 d{(q + d * (n + 2)) % 13} {d + 1} {20 - d}.5 {name}\n"
            for q in range(8)
            for d in range(6)
        ]
        (root / f"{name}.trec").write_text("".join(lines))
    (root / "qrels.txt").write_text("".join(f"q{q} 0 d{q % 13} 1\n" for q in range(8)))
    return root


FUSE = ["fuse", "a.trec", "b.trec", "-o", "out.trec"]
TUNE = [*FUSE, "--method", "wsum", "--optimize", "ndcg@10", "--qrels", "qrels.txt"]
COMPARE = ["compare", "a.trec", "b.trec", "--qrels", "qrels.txt", "-o", "out.md"]
RUN = ["run", "--dataset", "scifact", "--modes", "keyword_search", "--output", "out"]

# fmt: off
CASES = [
    (FUSE, ["--k", "1e19"], "--k must be a number in [0, 1,000,000]"),
    (FUSE, ["--k", "-1"], "--k must be a number in [0, 1,000,000]"),
    (FUSE, ["--k", "nan"], "got nan"),
    (FUSE, ["--k", "inf"], "got inf"),
    (FUSE, ["--depth", "0"], "--depth must be an integer from 1 to"),
    (FUSE, ["--depth", str(2**63)], "--depth must be an integer from 1 to"),
    (FUSE, ["--method", "wsum", "--weights", "nan,1"], "--weights must be a finite number"),
    (FUSE, ["--method", "wsum", "--weights", "1e999,1"], "--weights must be a finite number"),
    (FUSE, ["--method", "wsum", "--weights", "1,,1"], "--weights must be comma-separated"),
    (TUNE, ["--step", "0"], "--step must be a number in (0, 1]"),
    (TUNE, ["--step", "-0.1"], "--step must be a number in (0, 1]"),
    (TUNE, ["--step", "1e-300"], "at most 10,000 parts"),
    (TUNE, ["--step", "0.3"], "the weight step must divide 1"),
    (TUNE, ["--step", "0.0001"], "a grid of 10,001 settings"),
    (TUNE, ["--folds", "1"], "--folds must be an integer from 2"),
    (TUNE, ["--seed", "-1"], "--seed must be an integer from 0"),
    (COMPARE, ["--alpha", "2"], "--alpha must be a number in (0, 1), got 2"),
    (COMPARE, ["--alpha", "0"], "--alpha must be a number in (0, 1), got 0"),
    (COMPARE, ["--confidence", "nan"], "--confidence must be a number in (0, 1)"),
    (COMPARE, ["--resamples", "99999999999999"], "--resamples must be an integer from 1 to 10,"),
    (COMPARE, ["--resamples", "0"], "--resamples must be an integer"),
    (COMPARE, ["--resamples", "1e4"], "--resamples must be an integer"),
    (COMPARE, ["--top", "-1"], "--top must be an integer from 0"),
    (COMPARE, ["--seed", str(2**64)], "--seed must be an integer from 0"),
    (RUN, ["--top-k", "0"], "--top-k must be an integer from 1 to 1,000,000"),
    (RUN, ["--top-k", "10000000000000"], "--top-k must be an integer from 1 to 1,000,000"),
    (RUN, ["--k", "1,1000000000"], "--k: k = 1000000000 asks the knowledge base for"),
    (RUN, ["--measures", "nDCG@5000000"], "--measures: k = 5000000 asks"),
    (RUN, ["--concurrency", "0"], "--concurrency must be an integer from 1 to 1,000"),
    (RUN, ["--timeout", "inf"], "--timeout must be a number in (0, 86,400]"),
    (RUN, ["--timeout", "-5"], "--timeout must be a number in (0, 86,400]"),
    (RUN, ["--chunk-size", "0"], "--chunk-size must be an integer from 1"),
    (RUN, ["--judge", "--judge-repeats", "1000"], "--judge-repeats must be an integer from 1"),
    (RUN, ["--judge", "--judge-timeout", "0"], "--judge-timeout must be a number in (0,"),
    (RUN, ["--ray", "local", "--ray-shard-size", "0"], "--ray-shard-size must be an integer"),
    (RUN, ["--kb-url", "http://127.0.0.1:9/", "--rate", "0.00000001/s"],
     "--rate: a request rate must be from 1/day"),
    (["sweep", "--datasets", "scifact", "--modes", "keyword_search", "--output", "out"],
     ["--fuse", "wsum", "--fuse-folds", "1"], "--fuse-folds must be an integer from 2"),
    (["datasets", "download", "scifact"], ["--retries", "-1"], "--retries must be an integer"),
]
# fmt: on


@pytest.mark.parametrize(
    ("command", "options", "needle"), CASES, ids=[" ".join([c[0][0], *c[1]]) for c in CASES]
)
def test_an_absurd_number_is_one_line_and_exit_2_before_any_work(
    folder, tmp_path, command, options, needle
):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for name in ("a.trec", "b.trec", "qrels.txt"):
        (cwd / name).write_bytes((folder / name).read_bytes())
    done = heta(*command, *options, cwd=cwd)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr and needle in done.stderr, done.stderr
    assert done.stderr.startswith(f"heta-eval {command[0]}: error: ")
    assert sorted(p.name for p in cwd.iterdir()) == ["a.trec", "b.trec", "qrels.txt"]


def test_fused_scores_that_are_not_finite_are_an_error_and_the_old_file_stays(folder, tmp_path):
    out = tmp_path / "fused.trec"
    out.write_text("earlier\n")
    done = heta(
        "fuse",
        "a.trec",
        "b.trec",
        "--method",
        "wsum",
        "--weights",
        "1e308,1e308",
        "-o",
        out,
        cwd=folder,
    )
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "not a finite number" in done.stderr and "nothing was written" in done.stderr
    assert out.read_text() == "earlier\n"
    # The library says the same; the inputs' own huge scores overflow too (norm none).
    with pytest.raises(FusionError, match="not a finite number"):
        fuse([{"q": {"a": 1e308, "b": 1.0}}, {"q": {"a": 1e308}}], "sum", norm="none")


def test_the_rules_of_the_library_and_of_the_command_line_agree():
    assert numbers.RESAMPLES.high == MAX_RESAMPLES
    assert numbers.RRF_K.high == MAX_RRF_K
    assert grid_size("wsum", 2, 0.1) == len(grid("wsum", 2, 0.1)) == 11
    assert grid_size("wsum", 3, 0.05) == len(grid("wsum", 3, 0.05)) == 231
    with pytest.raises(FusionError, match="at most 10,000"):
        grid("wsum", 5, 0.02)  # 316,251 settings: refused before one is built
    assert MAX_GRID == 10_000
    systems = {"a": {"q1": {"m": 0.1}, "q2": {"m": 0.2}}, "b": {"q1": {"m": 0.3}, "q2": {"m": 0.1}}}
    for alpha in (2, 0, float("nan")):
        with pytest.raises(ValueError, match="alpha must be in"):
            compare(systems, alpha=alpha)
    with pytest.raises(ValueError, match="n_resamples must be from 1 to 10,000,000"):
        compare(systems, n_resamples=99_999_999_999_999)


def test_alpha_stars_only_what_it_should(folder):
    done = heta(
        "compare",
        "a.trec",
        "b.trec",
        "--qrels",
        "qrels.txt",
        "--metric",
        "ndcg@10",
        "--alpha",
        "0.999",
        cwd=folder,
    )
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("| ndcg@10 |"))
    p_holm = float(row.split("|")[10])
    assert ("*" in row.split("|")[5]) == (p_holm < 0.999)


ranx = pytest.importorskip("ranx")


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("rrf", {"k": 0}),
        ("rrf", {"k": MAX_RRF_K}),
        ("rrf", {"k": 0.5}),
        ("wsum", {"weights": [1e300, 1e300]}),
        ("wsum", {"weights": [-3.0, 1e-300]}),
    ],
)
def test_the_allowed_edges_fuse_as_ranx_does(method, params):
    runs = [
        {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 0.5, "y": 0.25}},
        {"q1": {"c": 9.0, "a": 4.0}, "q2": {"y": 7.0, "z": 1.0, "x": 0.0}},
    ]
    ours = fuse(runs, method, "min-max", params)
    full = [
        {
            q: dict(sorted(d.items(), key=lambda kv: (kv[1], kv[0]), reverse=True))
            for q, d in run.items()
        }
        for run in runs
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx.fuse(
            [ranx.Run(r) for r in full], norm="min-max", method=method, params=params
        )
    for qid in ("q1", "q2"):
        assert set(ours[qid]) == set(theirs[qid])
        for doc, value in theirs[qid].items():
            assert ours[qid][doc] == pytest.approx(value, rel=1e-9, abs=1e-300), (qid, doc)


# ------------------------------------------------------------------ sizes the values imply


def test_measures_times_queries_past_the_bound_is_refused_before_the_run_is_read(tmp_path):
    # 600 cutoffs x 5 families x 12,000 judged queries: 36,000,000 values, past 30,000,000.
    (tmp_path / "qrels.txt").write_text("".join(f"q{q} 0 d{q} 1\n" for q in range(12000)))
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 1.0 t\n")
    ks = ",".join(map(str, range(1, 601)))
    done = heta("evaluate", "--run", "run.trec", "--qrels", "qrels.txt", "--k", ks, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.strip() == (
        "heta-eval evaluate: error: --k asks for 3,000 measures of 12,000 queries, 36,000,000 "
        "values; at most 30,000,000 values, each scored and kept for every query: fewer "
        "cutoffs or measures"
    )
    # The same cutoffs over fewer queries are scored.
    (tmp_path / "qrels.txt").write_text("".join(f"q{q} 0 d{q} 1\n" for q in range(10)))
    done = heta(
        "evaluate", "--run", "run.trec", "--qrels", "qrels.txt", "--k", ks, "--json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-500:]


def test_the_runner_refuses_a_run_past_the_sizes(tmp_path):
    from heta_eval.evaluation import BeirRetrievalMetric
    from heta_eval.runner import JsonlBenchmark
    from heta_eval.runner.plan import RunConfigurationError, plan_run

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("alpha")
    (tmp_path / "cases.jsonl").write_text(
        "".join(f'{{"id": "q{i}", "query": "alpha {i}"}}\n' for i in range(3000))
    )
    benchmark = JsonlBenchmark(tmp_path / "cases.jsonl", tmp_path / "docs")
    with pytest.raises(RunConfigurationError, match="1,000,002 hits per query"):
        plan_run(benchmark, None, None, "kb", ["keyword_search"], None, top_k=1_000_001)
    plan_run(benchmark, None, None, "kb", ["keyword_search"], None, top_k=1_000_000)  # the edge
    many = [BeirRetrievalMetric("ndcg", k) for k in range(1, 10_002)]
    with pytest.raises(
        RunConfigurationError, match="30,003,000 scores per mode; at most 30,000,000"
    ):
        plan_run(benchmark, None, None, "kb", ["keyword_search"], many, top_k=10)
