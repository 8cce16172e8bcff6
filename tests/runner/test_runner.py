"""BenchmarkRunner end to end on small benchmarks: results agree everywhere, failures are
recorded, and runs resume."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from support.kb_fixtures import AnimalBenchmark, KeywordOverlapKB

from heta_eval.cli import main as cli_main
from heta_eval.evaluation import evaluate_responses, evaluate_run
from heta_eval.io.trec import read_run
from heta_eval.runner import (
    BenchmarkFormatError,
    BenchmarkRunner,
    JsonlBenchmark,
    RunConfigurationError,
    load_results,
)


def run(tmp_path: Path, **kwargs):
    kb = kwargs.pop("kb", None) or KeywordOverlapKB()
    runner = BenchmarkRunner(progress=False, **kwargs.pop("runner", {}))
    return runner.run(
        benchmark=kwargs.pop("benchmark", AnimalBenchmark()),
        knowledge_base=kb,
        query_modes=("keyword_search",),
        output_dir=tmp_path / "out",
        **kwargs,
    )


def cli_json(*argv: str, capsys) -> dict:
    assert cli_main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_summary_journal_and_trec_run_agree_with_each_other_and_with_evaluate(tmp_path, capsys):
    results = run(tmp_path)
    folder = tmp_path / "out"
    assert {p.name for p in folder.iterdir()} >= {
        "summary.json",
        "per_query.jsonl",
        "runs",
        "table.md",
        "run.json",
    }
    summary = json.loads((folder / "summary.json").read_text())
    lines = [json.loads(line) for line in (folder / "per_query.jsonl").read_text().splitlines()]
    assert len(lines) == 8 and {line["mode"] for line in lines} == {"keyword_search"}
    run_file = read_run(folder / "runs" / "keyword_search.trec")
    # the TREC run holds exactly the per-query documents, in the system's order
    for line in lines:
        assert list(run_file[line["case_id"]].items()) == [tuple(d) for d in line["documents"]]
    # the summary's numbers equal a fresh evaluation of the written run file
    bench = AnimalBenchmark()
    qrels = {case.id: case.expected.relevance for case in bench.cases()}
    expected = evaluate_run(qrels, run_file, (1, 3, 10))
    metrics = summary["modes"]["keyword_search"]["metrics"]
    for name, key in [
        ("ndcg@10", "NDCG@10"),
        ("map@3", "MAP@3"),
        ("recall@1", "Recall@1"),
        ("precision@3", "P@3"),
        ("mrr@10", "MRR@10"),
    ]:
        assert metrics[name]["beir"] == expected.aggregates[key].beir
        assert metrics[name]["strict"] == expected.aggregates[key].strict
        # and the per-query JSONL values are the per-query values of that evaluation
        for line in lines:
            assert line["scores"][name]["value"] == expected.per_query[line["case_id"]][key]
    # ... and what the CLI prints for the run file
    qrels_file = tmp_path / "qrels.tsv"
    qrels_file.write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(f"{q}\t{d}\t{r}\n" for q, docs in qrels.items() for d, r in docs.items())
    )
    printed = cli_json(
        "evaluate",
        "--run",
        str(folder / "runs" / "keyword_search.trec"),
        "--qrels",
        str(qrels_file),
        "--k",
        "1,3,10",
        "--json",
        capsys=capsys,
    )
    assert printed["ndcg"]["NDCG@10"] == metrics["ndcg@10"]["beir"]
    assert printed["mrr"]["MRR@10"] == metrics["mrr@10"]["beir"]
    # loading the folder back gives the same object
    loaded = load_results(folder)
    assert loaded.summary == results.summary
    assert loaded.table() == results.table()
    frame = loaded.to_dataframe()
    assert len(frame) == 8 * len(bench.evaluators())
    assert set(frame.columns) >= {"case_id", "mode", "evaluator", "value", "passed"}


def test_runner_equals_evaluate_responses_on_the_same_responses(tmp_path):
    results = run(tmp_path)
    bench = AnimalBenchmark()
    kb = KeywordOverlapKB()
    responses = {
        c.id: asyncio.run(kb.query(c.query, mode="keyword_search", top_k=101))
        for c in bench.cases()
    }
    report = evaluate_responses(bench.cases(), responses, bench.evaluators())
    for name, summary in report.metrics.items():
        assert results.metric("keyword_search", name) == summary


def test_a_failing_and_a_hanging_query_are_recorded_and_the_aggregate_is_partial(tmp_path):
    kb = KeywordOverlapKB(fail_on=("why do dogs bark",), hang_on=("when do birds sing",))
    results = run(tmp_path, kb=kb, runner={"query_timeout": 0.5})
    mode = results.summary.modes["keyword_search"]
    assert (mode.cases, mode.answered, mode.failed_queries, mode.partial) == (8, 4, 4, True)
    errors = sorted({r.error for r in results.records if r.error})
    assert errors == [
        "ConnectionError: backend refused 'why do dogs bark'",
        "query timed out after 0.5s",
    ]
    ndcg = mode.metrics["ndcg@10"]
    assert (ndcg.scored, ndcg.missing, ndcg.partial) == (4, 4, True)
    assert ndcg.strict == pytest.approx(ndcg.beir / 2, abs=1e-5)  # missing cases count 0 there
    assert "PARTIAL" in results.table()


def test_a_failed_query_is_retried_by_the_rerun_and_nothing_else_is(tmp_path):
    log = tmp_path / "queries.log"
    run(tmp_path, kb=KeywordOverlapKB(log=log, fail_on=("do cats purr",)))
    assert log.read_text().count("do cats purr") == 2
    log.write_text("")
    results = run(tmp_path, kb=KeywordOverlapKB(log=log))
    assert log.read_text().splitlines() == ["do cats purr", "do cats purr"]
    assert not results.partial


def test_an_evaluator_that_raises_is_recorded_against_its_case(tmp_path):
    class Broken:
        name = "broken"

        async def evaluate(self, *, case, response):
            if case.id == "q1":
                raise ValueError("bad case")
            from heta_eval.evaluation import EvaluationScore

            return EvaluationScore(name=self.name, value=1.0)

    results = run(tmp_path, evaluators=(Broken(),))
    summary = results.metric("keyword_search", "broken")
    assert (summary.value, summary.failed, summary.partial) == (1.0, 1, True)
    record = next(r for r in results.records if r.case_id == "q1")
    assert record.failures[0].error == "ValueError: bad case"


def test_a_results_folder_of_another_run_is_refused(tmp_path):
    run(tmp_path)
    with pytest.raises(RunConfigurationError, match="changed: cases"):
        run(tmp_path, benchmark=AnimalBenchmark(n_cases=3))


def test_an_unknown_mode_is_a_clear_error(tmp_path):
    with pytest.raises(RunConfigurationError, match="has no mode 'vector_search'"):
        BenchmarkRunner(progress=False).run(
            benchmark=AnimalBenchmark(),
            knowledge_base=KeywordOverlapKB(),
            query_modes=("vector_search",),
        )


async def test_run_is_safe_inside_a_running_event_loop(tmp_path):
    results = BenchmarkRunner(progress=False).run(
        benchmark=AnimalBenchmark(),
        knowledge_base=KeywordOverlapKB(),
        query_modes=("keyword_search",),
    )
    again = await BenchmarkRunner(progress=False).arun(
        benchmark=AnimalBenchmark(),
        knowledge_base=KeywordOverlapKB(),
        query_modes=("keyword_search",),
    )
    assert (
        results.summary.modes["keyword_search"].metrics
        == again.summary.modes["keyword_search"].metrics
    )


def test_jsonl_benchmark_with_the_reference_kb(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for doc_id, text in {
        "paris": "Paris is the capital of France.",
        "rome": "Rome is the capital of Italy.",
        "nested/oslo": "Oslo is the capital of Norway.",
    }.items():
        (docs / f"{doc_id}.txt").parent.mkdir(parents=True, exist_ok=True)
        (docs / f"{doc_id}.txt").write_text(text)
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps(
            {
                "id": "1",
                "query": "capital of Italy",
                "expected": {"relevance": {"rome": 1}, "answers": ["Rome"]},
            }
        )
        + "\n"
        + json.dumps(
            {"id": "2", "query": "capital of Norway", "expected": {"relevance": {"nested/oslo": 1}}}
        )
        + "\n"
    )
    bench = JsonlBenchmark(cases, docs)
    from heta_eval.reference import Recipe

    results = BenchmarkRunner(progress=False).run(
        benchmark=bench,
        recipe=Recipe(modes=["keyword_search"]),
        query_modes=("keyword_search",),
        output_dir=tmp_path / "out",
        cache_dir=False,
    )
    assert results.metric("keyword_search", "ndcg@1").beir == 1.0
    assert results.metric("keyword_search", "answer_contains").scored == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"id": "1", "query": "q"}\n{"id": "1", "query": "again"}\n',
            r"cases.jsonl:2: duplicate case id '1' \(first on line 1\)",
        ),
        (
            '{"id": "1", "query": "q", "expected": {"relevance": {"d": 1.5}}}\n',
            r"cases.jsonl:1: field expected.relevance",
        ),
        ('{"id": "1", "query": "q"}\n{oops\n', r"cases.jsonl:2: invalid JSON"),
        ('{"id": "1"}\n', r"cases.jsonl:1: field query: Field required"),
    ],
)
def test_bad_benchmark_files_name_the_file_line_and_field(tmp_path, content, message):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(content)
    with pytest.raises(BenchmarkFormatError, match=message):
        JsonlBenchmark(cases, tmp_path).cases()


def test_cli_run_on_a_benchmark_file_reports_bad_input_without_a_traceback(tmp_path, capsys):
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "1", "query": 5, "expected": {"answers": "x"}}\n')
    assert (
        cli_main(
            [
                "run",
                "--benchmark",
                str(cases),
                "--documents",
                str(tmp_path),
                "--quiet",
                "--modes",
                "keyword_search",
                "--output",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "cases.jsonl:1: field expected.answers" in err and "Traceback" not in err


def test_cli_run_help_shows_an_example(capsys):
    with pytest.raises(SystemExit):
        cli_main(["run", "--help"])
    assert "heta-eval run --dataset scifact" in capsys.readouterr().out


def test_module_entry_point(tmp_path):
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "heta_eval", "--help"], capture_output=True, text=True, check=True
    )
    assert "run" in out.stdout and "evaluate" in out.stdout
