"""A run killed part-way (a real subprocess, SIGKILL) resumes without re-querying finished
cases and ends with results identical to an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from support.kb_fixtures import AnimalBenchmark, KeywordOverlapKB

from heta_eval.runner import BenchmarkRunner, load_results

TESTS = Path(__file__).resolve().parents[1]
N_CASES = 40

SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from support.kb_fixtures import AnimalBenchmark, KeywordOverlapKB
    from heta_eval.runner import BenchmarkRunner

    BenchmarkRunner(progress=False, concurrency=1).run(
        benchmark=AnimalBenchmark({n}, numbered=True),
        knowledge_base=KeywordOverlapKB(log=Path({log!r}), delay=0.05),
        query_modes=("keyword_search",),
        output_dir={out!r},
    )
    """
)


def comparable(records):
    return [r.model_dump(exclude={"latency_ms", "evaluation_ms"}) for r in records]


def test_sigkill_mid_run_then_rerun_completes_identically_without_requerying(tmp_path):
    out, log = tmp_path / "killed", tmp_path / "first.log"
    script = SCRIPT.format(tests=str(TESTS), n=N_CASES, log=str(log), out=str(out))
    process = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= 12:
            break
        assert process.poll() is None, "the run ended before it could be killed"
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=600)
    assert process.returncode == -signal.SIGKILL

    journal = out / "per_query.jsonl"
    finished = {
        json.loads(line)["query"] for line in journal.read_text().splitlines() if line.endswith("}")
    }
    assert 5 <= len(finished) < N_CASES, "the kill must land part-way"
    assert not (out / "summary.json").exists()

    second_log = tmp_path / "second.log"
    resumed = BenchmarkRunner(progress=False).run(
        benchmark=AnimalBenchmark(N_CASES, numbered=True),
        knowledge_base=KeywordOverlapKB(log=second_log),
        query_modes=("keyword_search",),
        output_dir=out,
    )
    requeried = set(second_log.read_text().splitlines())
    assert not requeried & finished, "finished cases must not be queried again"
    assert requeried | finished == {
        c.query for c in AnimalBenchmark(N_CASES, numbered=True).cases()
    }

    fresh = BenchmarkRunner(progress=False).run(
        benchmark=AnimalBenchmark(N_CASES, numbered=True),
        knowledge_base=KeywordOverlapKB(),
        query_modes=("keyword_search",),
        output_dir=tmp_path / "fresh",
    )
    assert comparable(resumed.records) == comparable(fresh.records)
    assert (
        resumed.summary.modes["keyword_search"].metrics
        == fresh.summary.modes["keyword_search"].metrics
    )
    reloaded = load_results(out)
    assert comparable(reloaded.records) == comparable(fresh.records)
    assert (out / "runs" / "keyword_search.trec").read_text() == (
        tmp_path / "fresh" / "runs" / "keyword_search.trec"
    ).read_text()


def test_a_rerun_of_a_finished_run_queries_nothing(tmp_path):
    log = tmp_path / "q.log"
    first = BenchmarkRunner(progress=False).run(
        benchmark=AnimalBenchmark(),
        knowledge_base=KeywordOverlapKB(log=log),
        query_modes=("keyword_search",),
        output_dir=tmp_path / "out",
    )
    log.write_text("")
    second = BenchmarkRunner(progress=False).run(
        benchmark=AnimalBenchmark(),
        knowledge_base=KeywordOverlapKB(log=log),
        query_modes=("keyword_search",),
        output_dir=tmp_path / "out",
    )
    assert log.read_text() == ""
    assert (
        second.summary.modes["keyword_search"].metrics
        == first.summary.modes["keyword_search"].metrics
    )
    assert comparable(second.records) == comparable(first.records)
    # the timings of the first invocation's work are kept
    assert second.summary.timings == first.summary.timings
    assert (
        second.summary.modes["keyword_search"].timings
        == first.summary.modes["keyword_search"].timings
    )
