"""A run never reports a wrong number without a word: stale folders
are refused, replies that map to no document are mapped or reported, failed queries count
in the headline, dangling judgments and skipped files are warned about, and the command
fails fast and clearly. Real runner, real files, real HTTP on loopback, real processes."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support.kb_fixtures import AnimalBenchmark, KeywordOverlapKB
from support.kb_server import Server

from heta_eval.evaluation import EvaluationScore
from heta_eval.reference import Recipe
from heta_eval.runner import BenchmarkRunner, JsonlBenchmark, RunConfigurationError, load_results
from heta_eval.systems import HttpKnowledgeBase
from heta_eval.systems.http_client import HttpKnowledgeBaseError

DOCS = {
    "paris": "Paris is the capital of France.",
    "rome": "Rome is the capital of Italy.",
    "berlin": "Berlin is the capital of Germany.",
}
CASES = [
    {"id": "q1", "query": "capital of France", "expected": {"relevance": {"paris": 1}}},
    {"id": "q2", "query": "capital of Italy", "expected": {"relevance": {"rome": 1}}},
    {"id": "q3", "query": "capital of Germany", "expected": {"relevance": {"berlin": 1}}},
]


def write_benchmark(folder: Path, cases=CASES, docs=DOCS) -> tuple[Path, Path]:
    (folder / "docs").mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / "docs" / f"{name}.txt").write_text(text, encoding="utf-8")
    cases_path = folder / "cases.jsonl"
    cases_path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return cases_path, folder / "docs"


def heta(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def keyword_run(cases: Path, docs: Path, out: Path | None, **kwargs):
    return BenchmarkRunner(progress=False).run(
        benchmark=JsonlBenchmark(cases, docs),
        recipe=Recipe(modes=["keyword_search"]),
        query_modes=("keyword_search",),
        output_dir=out,
        cache_dir=False,
        **kwargs,
    )


# -- 1. stale results --------------------------------------------------------------------


def test_an_edited_document_refuses_the_old_folder_and_says_the_documents_changed(tmp_path):
    cases, docs = write_benchmark(tmp_path)
    first = keyword_run(cases, docs, tmp_path / "out")
    assert first.metric("keyword_search", "ndcg@10").value == 1.0
    (docs / "paris.txt").write_text("A city on the Seine.", encoding="utf-8")

    with pytest.raises(RunConfigurationError, match=r"changed: documents \(content fingerprint"):
        keyword_run(cases, docs, tmp_path / "out")
    fresh = keyword_run(cases, docs, tmp_path / "fresh")
    assert fresh.metric("keyword_search", "ndcg@10").value < 1.0  # what a stale folder hid
    recorded = json.loads((tmp_path / "out" / "run.json").read_text())
    assert recorded["documents"] == first.summary.documents != fresh.summary.documents


def test_the_same_documents_at_another_path_resume(tmp_path):
    cases, docs = write_benchmark(tmp_path / "a")
    keyword_run(cases, docs, tmp_path / "out")
    cases_b, docs_b = write_benchmark(tmp_path / "b")  # same content, other place
    again = keyword_run(cases_b, docs_b, tmp_path / "out")
    assert again.metric("keyword_search", "ndcg@10").value == 1.0


def test_a_changed_recipe_is_refused(tmp_path):
    cases, docs = write_benchmark(tmp_path)
    keyword_run(cases, docs, tmp_path / "out")
    with pytest.raises(RunConfigurationError, match=r"changed: .*recipe"):
        BenchmarkRunner(progress=False).run(
            benchmark=JsonlBenchmark(cases, docs),
            recipe=Recipe(modes=["keyword_search"], bm25={"k1": 1.2}),
            query_modes=("keyword_search",),
            output_dir=tmp_path / "out",
            cache_dir=False,
        )


def reply_with(results_of) -> Server:
    def behaviour(body: dict):
        reply = {"query": body["query"], "results": results_of(body)}
        return 200, json.dumps(reply).encode(), 0.0

    return Server([behaviour])


def answer_by_word(body: dict, field: str = "doc_id") -> list[dict]:
    doc = next(d for d, text in DOCS.items() if body["query"].split()[-1] in text)
    others = [d for d in DOCS if d != doc]
    return [{field: d, "text": DOCS[d], "score": 3.0 - i} for i, d in enumerate([doc, *others])]


def test_kb_url_is_recorded_and_another_url_is_refused(tmp_path):
    cases, docs = write_benchmark(tmp_path)
    with reply_with(answer_by_word) as server:
        done = heta(
            "run",
            "--benchmark",
            str(cases),
            "--documents",
            str(docs),
            "--kb-url",
            server.url,
            "--modes",
            "hybrid_search",
            "--output",
            "out",
            "--quiet",
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        for name in ("run.json", "summary.json"):
            assert json.loads((tmp_path / "out" / name).read_text())["system"]["url"] == server.url
        with reply_with(answer_by_word) as other:
            again = heta(
                "run",
                "--benchmark",
                str(cases),
                "--documents",
                str(docs),
                "--kb-url",
                other.url,
                "--modes",
                "hybrid_search",
                "--output",
                "out",
                "--quiet",
                cwd=tmp_path,
            )
    assert again.returncode == 2
    assert f"system (url {server.url!r} -> {other.url!r})" in again.stderr


# -- 2. reply shapes ---------------------------------------------------------------------


@pytest.mark.parametrize("field", ["doc_id", "document_id", "id", "reference_id"])
def test_replies_naming_documents_in_common_id_fields_score_over_real_http(tmp_path, field):
    cases, docs = write_benchmark(tmp_path)
    with reply_with(lambda body: answer_by_word(body, field)) as server:
        results = BenchmarkRunner(progress=False).run(
            benchmark=JsonlBenchmark(cases, docs),
            knowledge_base=HttpKnowledgeBase(server.url, modes=("hybrid_search",)),
            query_modes=("hybrid_search",),
        )
    assert results.metric("hybrid_search", "ndcg@10").value == 1.0
    assert results.summary.modes["hybrid_search"].unmapped_results == 0
    assert results.summary.warnings == []


def test_replies_that_map_to_no_document_are_reported_loudly(tmp_path):
    cases, docs = write_benchmark(tmp_path)
    with reply_with(lambda body: answer_by_word(body, "name")) as server:
        done = heta(
            "run",
            "--benchmark",
            str(cases),
            "--documents",
            str(docs),
            "--kb-url",
            server.url,
            "--modes",
            "hybrid_search",
            "--output",
            "out",
            "--quiet",
            cwd=tmp_path,
        )
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["modes"]["hybrid_search"]["unmapped_results"] == 9
    assert "9 of 9 results map to no document" in summary["warnings"][0]
    assert "9 of 9 results map to no document" in done.stdout  # the table printed
    assert "source.document_id" in done.stdout


# -- 3. partial runs ---------------------------------------------------------------------


def test_failed_queries_count_as_zero_in_the_headline_with_the_answered_mean_beside(tmp_path):
    benchmark = AnimalBenchmark(8)
    failing = tuple(case.query for case in benchmark.cases()[:2])  # 2 topics: 4 of 8 cases
    failed_cases = [c.id for c in benchmark.cases() if c.query in failing]
    complete = BenchmarkRunner(progress=False).run(
        benchmark=benchmark, knowledge_base=KeywordOverlapKB(), query_modes=("keyword_search",)
    )
    partial = BenchmarkRunner(progress=False).run(
        benchmark=benchmark,
        knowledge_base=KeywordOverlapKB(fail_on=failing),
        query_modes=("keyword_search",),
    )
    mode = partial.summary.modes["keyword_search"]
    assert mode.failed_queries == len(failed_cases) > 0
    for name in ("ndcg@10", "map@10", "recall@10", "precision@10", "mrr@10"):
        headline = partial.metric("keyword_search", name)
        per_query = complete.per_query_values("keyword_search", name)
        answered = [v for case, v in per_query.items() if case not in failed_cases]
        assert headline.value == headline.strict == round(sum(answered) / 8, 5), name
        assert mode.answered_only[name] == round(sum(answered) / len(answered), 5), name
        assert headline.value <= complete.metric("keyword_search", name).value, name
    # Non-retrieval metrics alike: a failed query counts 0 where the case has gold.
    exact = partial.metric("keyword_search", "answer_exact_match")
    answered_share = (8 - len(failed_cases)) / 8
    assert exact.value == pytest.approx(mode.answered_only["answer_exact_match"] * answered_share)
    table = partial.table()
    ndcg = partial.metric("keyword_search", "ndcg@10")
    assert f"{ndcg.value:.5f}* ({mode.answered_only['ndcg@10']:.5f})" in table
    assert "Failed queries count as 0 in the headline" in table
    assert f"{len(failed_cases)} × ConnectionError: backend refused <query>" in table


def test_nothing_answered_prints_zero_for_every_metric_mrr_included(tmp_path):
    benchmark = AnimalBenchmark(4)
    everything = tuple(case.query for case in benchmark.cases())
    results = BenchmarkRunner(progress=False).run(
        benchmark=benchmark,
        knowledge_base=KeywordOverlapKB(fail_on=everything),
        query_modes=("keyword_search",),
    )
    row = next(line for line in results.table().splitlines() if "| mrr |" in line)
    assert row.count("0.00000* (–)") == 3
    assert next(line for line in results.table().splitlines() if "| ndcg |" in line) == row.replace(
        "mrr", "ndcg"
    )


# -- 4. judgments that point nowhere, skipped files --------------------------------------


def test_judgments_naming_no_document_and_skipped_files_are_warned_and_counted(tmp_path):
    cases = [
        *CASES[:2],
        {"id": "q3", "query": "capital of Germany", "expected": {"relevance": {"berlln": 1}}},
    ]
    cases_path, docs = write_benchmark(tmp_path, cases)
    (docs / "manual.pdf").write_bytes(b"%PDF-1.4")
    (docs / "notes.rst").write_text("Madrid is the capital of Spain.")
    done = heta(
        "run",
        "--benchmark",
        str(cases_path),
        "--documents",
        str(docs),
        "--modes",
        "keyword_search",
        "--output",
        "out",
        "--no-cache",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "case 'q3' judges document 'berlln', which is not among the 3 documents" in done.stderr
    assert "2 files in the documents folder were skipped" in done.stderr
    assert "manual.pdf, notes.rst" in done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["checks"] == {
        "documents": 3,
        "judgments_naming_no_document": 1,
        "skipped_files": 2,
    }
    assert len(summary["warnings"]) == 2


# -- 5. top_k and timings ----------------------------------------------------------------


def test_top_k_below_the_largest_k_is_raised_and_recorded_with_the_rule(tmp_path):
    cases, docs = write_benchmark(tmp_path)
    with reply_with(answer_by_word) as server:
        done = heta(
            "run",
            "--benchmark",
            str(cases),
            "--documents",
            str(docs),
            "--kb-url",
            server.url,
            "--modes",
            "hybrid_search",
            "--top-k",
            "5",
            "--output",
            "out",
            cwd=tmp_path,
        )
        asked = {request["top_k"] for request in server.requests}
    assert done.returncode == 0, done.stderr
    assert asked == {101}
    assert "asking the knowledge base for 101 hits per query, not top_k=5" in done.stderr
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert (run["top_k"], run["top_k_requested"]) == (101, 5)
    timings = json.loads((tmp_path / "out" / "summary.json").read_text())["modes"]["hybrid_search"][
        "timings"
    ]
    assert "evaluation_s" not in timings and "evaluation_summed_s" in timings
    help_text = " ".join(heta("run", "--help", cwd=tmp_path).stdout.split())
    assert "raised to the largest k + 1" in help_text


# -- 6. failures that show ---------------------------------------------------------------


def test_failed_queries_give_exit_3_and_the_top_reasons_over_real_http(tmp_path):
    cases, docs = write_benchmark(tmp_path)

    def behaviour(body: dict):
        if "Italy" in body["query"]:
            return 400, b'{"detail": "mode not supported"}', 0.0
        reply = {"query": body["query"], "results": answer_by_word(body)}
        return 200, json.dumps(reply).encode(), 0.0

    with Server([behaviour]) as server:
        done = heta(
            "run",
            "--benchmark",
            str(cases),
            "--documents",
            str(docs),
            "--kb-url",
            server.url,
            "--modes",
            "hybrid_search",
            "--output",
            "out",
            "--quiet",
            cwd=tmp_path,
        )
    assert done.returncode == 3, done.stderr
    assert "error: 1 queries failed; most common reasons:" in done.stderr
    assert "1 × HttpKnowledgeBaseError: POST" in done.stderr
    assert "HTTP 400" in done.stderr


def test_nothing_answered_gives_exit_4(tmp_path):
    cases, docs = write_benchmark(tmp_path)
    with Server([lambda body: (400, b'{"detail": "no"}', 0.0)]) as server:
        done = heta(
            "run",
            "--benchmark",
            str(cases),
            "--documents",
            str(docs),
            "--kb-url",
            server.url,
            "--modes",
            "hybrid_search",
            "--output",
            "out",
            "--quiet",
            cwd=tmp_path,
        )
    assert done.returncode == 4, done.stderr
    assert "3 × HttpKnowledgeBaseError" in done.stderr


def test_a_kb_that_refuses_connections_is_refused_up_front_with_one_line(tmp_path):
    cases, docs = write_benchmark(tmp_path)
    with Server([lambda body: (200, b"{}", 0.0)]) as server:
        closed = server.url  # nothing listens there once the server is gone
    done = heta(
        "run",
        "--benchmark",
        str(cases),
        "--documents",
        str(docs),
        "--kb-url",
        closed,
        "--modes",
        "hybrid_search",
        "--output",
        "out",
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert "cannot connect to 127.0.0.1:" in lines[-1] and "is the service up?" in lines[-1]
    assert "Traceback" not in done.stderr


async def test_the_circuit_breaker_stops_trying_after_consecutive_connection_failures():
    with Server([lambda body: (200, b"{}", 0.0)]) as server:
        closed = server.url
    kb = HttpKnowledgeBase(closed, modes=("m",), max_attempts=2, backoff=0.01, breaker=3)
    for _ in range(3):
        with pytest.raises(HttpKnowledgeBaseError, match="connection failed"):
            await kb.query("q", mode="m")
    # Something listens at the address again: an attempt would reach it, the breaker makes none.
    host, port = closed.split("/")[2].split(":")
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, int(port)))
        listener.listen()
        listener.setblocking(False)
        with pytest.raises(HttpKnowledgeBaseError, match="circuit breaker open"):
            await kb.query("q", mode="m")
        with pytest.raises(BlockingIOError):
            listener.accept()  # not tried at all
    await kb.aclose()


# -- 7. one-line errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--top-k", "0"], "--top-k must be an integer from 1 to 1,000,000"),
        (["--modes", "foo"], "unknown mode 'foo' in --modes"),
        (["--recipe", "recipe.json"], "recipe.json: invalid recipe: field chunking.size"),
        (["--recipe", "broken.json"], "broken.json: invalid recipe:"),
    ],
)
def test_bad_arguments_give_one_line_errors(tmp_path, args, expected):
    cases, docs = write_benchmark(tmp_path)
    (tmp_path / "recipe.json").write_text('{"chunking": {"size": "big"}}')
    (tmp_path / "broken.json").write_text("{not json")
    done = heta("run", "--benchmark", str(cases), "--documents", str(docs), *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert expected in done.stderr
    assert "http" not in done.stderr and "Traceback" not in done.stderr


class PlainEvaluator:
    """An evaluator whose ``evaluate`` is a plain function, not a coroutine."""

    name = "plain"

    def evaluate(self, *, case, response):
        return EvaluationScore(name=self.name, value=float(len(response.results) > 0))


def test_a_plain_function_evaluate_is_accepted(tmp_path):
    results = BenchmarkRunner(progress=False).run(
        benchmark=AnimalBenchmark(4),
        knowledge_base=KeywordOverlapKB(),
        query_modes=("keyword_search",),
        evaluators=[PlainEvaluator()],
    )
    summary = results.metric("keyword_search", "plain")
    assert (summary.value, summary.scored, summary.failed) == (1.0, 4, 0)


def test_evaluate_responses_accepts_a_plain_function_evaluate_too():
    from heta_eval.evaluation import BenchmarkCase, evaluate_responses

    case = BenchmarkCase(id="q1", query="?")
    report = evaluate_responses(
        [case], {"q1": {"query": "?", "results": [{"text": "x"}]}}, [PlainEvaluator()]
    )
    assert (report.metrics["plain"].value, report.metrics["plain"].failed) == (1.0, 0)


# -- 8. a results folder grows with the modes asked --------------------------------------


class TwoModeKB(KeywordOverlapKB):
    modes = ("keyword_search", "other_search")


def test_another_mode_extends_the_folder_and_keeps_the_first(tmp_path):
    benchmark = AnimalBenchmark(4)
    runner = BenchmarkRunner(progress=False)
    first = runner.run(
        benchmark=benchmark,
        knowledge_base=TwoModeKB(),
        query_modes=("keyword_search",),
        output_dir=tmp_path,
    )
    second = runner.run(
        benchmark=benchmark,
        knowledge_base=TwoModeKB(),
        query_modes=("other_search",),
        output_dir=tmp_path,
    )
    assert list(second.summary.modes) == ["keyword_search", "other_search"]
    assert second.metric("keyword_search", "ndcg@10") == first.metric("keyword_search", "ndcg@10")
    loaded = load_results(tmp_path)
    assert len(loaded.records) == 8
    assert json.loads((tmp_path / "run.json").read_text())["modes"] == [
        "keyword_search",
        "other_search",
    ]


@pytest.mark.system  # 10-20 s of waiting or process starts: make test-system
def test_the_reference_kb_with_other_modes_extends_the_folder_through_the_cli(tmp_path):
    cases, docs = write_benchmark(tmp_path)
    common = (
        "run",
        "--benchmark",
        str(cases),
        "--documents",
        str(docs),
        "--output",
        "out",
        "--quiet",
        "--no-cache",
    )
    first = heta(*common, "--modes", "keyword_search", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = heta(*common, "--modes", "keyword_search,hybrid_search", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert list(summary["modes"]) == ["keyword_search", "hybrid_search"]
    assert summary["recipe"]["modes"] == ["keyword_search", "hybrid_search"]
