"""The LLM judge's spending against a real OpenAI-compatible server on loopback: token totals
equal what the server sent, a rerun makes no call (persistent cache), ``--dry-run`` makes none,
timed-out judgments are listed, repeated judgments report their agreement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.chat_server import ChatServer, completion_body

from heta_eval.cli import main as cli_main
from heta_eval.evaluation import BenchmarkCase, QueryResponse
from heta_eval.llm import LLMClient
from heta_eval.rag.judge.judge import JudgeError, LLMJudge
from heta_eval.rag.judge.usage import load_prices


class JudgeServer(ChatServer):
    """A verdict with ``usage`` sized by the prompt. Prompts holding "SLOW" are answered only
    after ``slow_s`` (the client has given up by then, so those are not counted); ``verdicts``
    cycles the pass/fail verdicts; ``usage=False`` omits the usage field."""

    def __init__(self, *, slow_s: float = 1.5, verdicts=(True,), usage: bool = True) -> None:
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.slow_requests = 0
        self.slow_s, self.verdicts, self.usage = slow_s, verdicts, usage
        super().__init__(self.verdict)

    def verdict(self, index: int, body: dict, headers: dict) -> tuple[int, bytes, float]:
        prompt = body["messages"][0]["content"]
        if "SLOW" in prompt:
            self.slow_requests += 1
            return 200, b'{"choices": []}', self.slow_s
        n = self.calls
        self.calls += 1
        passed = self.verdicts[n % len(self.verdicts)]
        content = json.dumps(
            {"score": 1.0 if passed else 0.0, "passed": passed, "reason": f"call {n}"}
        )
        if not self.usage:
            return 200, completion_body(content), 0.0
        counts = {"prompt_tokens": len(prompt) // 4 + 7, "completion_tokens": 11 + n % 3}
        self.prompt_tokens += counts["prompt_tokens"]
        self.completion_tokens += counts["completion_tokens"]
        usage = {**counts, "total_tokens": sum(counts.values())}
        return 200, completion_body(content, usage), 0.0

    def client(self, timeout: float = 5.0) -> LLMClient:
        return super().client(attempts=2, timeout=timeout)


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chat_servers):
    """Starts a ``JudgeServer`` and points the ``HETA_EVAL_LLM_*`` variables at it."""
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path / "default-cache"))
    monkeypatch.delenv("HETA_EVAL_LLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def make(**kwargs) -> JudgeServer:
        server = chat_servers(JudgeServer(**kwargs))
        monkeypatch.setenv("HETA_EVAL_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("HETA_EVAL_LLM_MODEL", "judge-1")
        return server

    return make


FACTS = {
    "paris": "Paris is the capital of France.",
    "rome": "Rome is the capital of Italy.",
    "tokyo": "Tokyo is the capital of Japan.",
    "oslo": "Oslo is the capital of Norway.",
}


def write_benchmark(folder: Path, slow: set[str] = frozenset()) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "docs.jsonl").write_text(
        "".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in FACTS.items())
    )
    countries = {"paris": "France", "rome": "Italy", "tokyo": "Japan", "oslo": "Norway"}
    cases = []
    for doc, country in countries.items():
        query = f"What is the capital of {country}?" + (" SLOW" if doc in slow else "")
        cases.append(
            {
                "id": doc,
                "query": query,
                "expected": {"answers": [doc.title()], "relevance": {doc: 1}},
            }
        )
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (folder / "prices.json").write_text(json.dumps({"judge-1": {"prompt": 2.5, "completion": 10}}))
    return [c["id"] for c in cases]


def run_cli(folder: Path, out: Path, *extra: str) -> int:
    return cli_main(
        [
            "run",
            "--benchmark",
            str(folder / "cases.jsonl"),
            "--documents",
            str(folder / "docs.jsonl"),
            "--modes",
            "keyword_search",
            "--output",
            str(out),
            "--quiet",
            "--no-cache",
            "--judge",
            "--judge-prices",
            str(folder / "prices.json"),
            "--judge-cache",
            str(folder / "judge.sqlite"),
            *extra,
        ]
    )


def usage_of(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())["usage"]["llm_judge"]


def test_summary_tokens_equal_the_servers_and_reruns_cost_nothing(serve, tmp_path, capsys):
    server = serve()
    write_benchmark(tmp_path)
    out = tmp_path / "out"
    assert run_cli(tmp_path, out) == 0
    usage = usage_of(out)
    assert server.calls == usage["calls"] == 4 and usage["cached_calls"] == 0
    assert usage["prompt_tokens"] == server.prompt_tokens > 0
    assert usage["completion_tokens"] == server.completion_tokens > 0
    expected_cost = (server.prompt_tokens * 2.5 + server.completion_tokens * 10) / 1e6
    assert usage["cost_usd"] == round(expected_cost, 6) and usage["failed"] == 0
    printed = capsys.readouterr().out
    assert f"{server.prompt_tokens} prompt + {server.completion_tokens} completion" in printed
    records = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    first = {r["case_id"]: r["scores"]["llm_judge"] for r in records}
    assert sum(s["metadata"]["prompt_tokens"] for s in first.values()) == server.prompt_tokens

    # Resumed into the same folder: nothing left to do, the totals are kept.
    assert run_cli(tmp_path, out) == 0
    assert server.calls == 4 and usage_of(out) == usage

    # From scratch, same prompts: every judgment comes from the persistent cache.
    assert run_cli(tmp_path, out, "--fresh") == 0
    again = usage_of(out)
    assert server.calls == 4 and again["calls"] == 0 and again["cached_calls"] == 4
    assert again["prompt_tokens"] == 0 and again["cost_usd"] == 0.0
    assert again["cached_prompt_tokens"] == server.prompt_tokens
    records = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    for r in records:
        score = r["scores"]["llm_judge"]
        assert score["metadata"]["cached"] is True
        assert (score["value"], score["passed"]) == (
            first[r["case_id"]]["value"],
            first[r["case_id"]]["passed"],
        )


def test_dry_run_calls_nothing_and_writes_nothing(serve, tmp_path, capsys):
    server = serve()
    write_benchmark(tmp_path)
    out = tmp_path / "dry"
    assert run_cli(tmp_path, out, "--dry-run") == 0
    assert server.calls == 0 and not out.exists()
    printed = capsys.readouterr().out
    assert "would make 4 calls" in printed and "0 more are in the cache" in printed
    assert "about $" in printed  # priced from the price table
    # After a real run, a dry run finds every call in the cache.
    assert run_cli(tmp_path, tmp_path / "real") == 0
    capsys.readouterr()
    assert run_cli(tmp_path, out, "--dry-run") == 0
    printed = capsys.readouterr().out
    assert server.calls == 4 and "would make 0 calls" in printed
    assert "4 more are in the cache" in printed


def test_dry_run_without_judge_is_a_one_line_error(tmp_path, capsys):
    write_benchmark(tmp_path)
    code = cli_main(
        [
            "run",
            "--benchmark",
            str(tmp_path / "cases.jsonl"),
            "--documents",
            str(tmp_path / "docs.jsonl"),
            "--dry-run",
        ]
    )
    assert code == 2 and "add --judge" in capsys.readouterr().err


@pytest.mark.system  # 10-20 s of waiting or process starts: make test-system
def test_judge_timeouts_are_counted_and_listed(serve, tmp_path, capsys):
    # Slow replies come a minute late, far past the timeout; the others (a local server's
    # immediate reply) well within it, even on a loaded machine. Each slow one is tried 3 times.
    server = serve(slow_s=60)
    write_benchmark(tmp_path, slow={"rome", "oslo"})
    out = tmp_path / "out"
    assert run_cli(tmp_path, out, "--judge-timeout", "2") == 3  # partial: two judgments failed
    usage = usage_of(out)
    assert usage["failed"] == 2 and {f["case_id"] for f in usage["failures"]} == {"rome", "oslo"}
    assert all("timed out" in f["error"] for f in usage["failures"])
    assert server.calls == usage["calls"] == 2 and server.slow_requests >= 2
    assert usage["prompt_tokens"] == server.prompt_tokens
    summary = json.loads((out / "summary.json").read_text())
    metric = summary["modes"]["keyword_search"]["metrics"]["llm_judge"]
    assert (metric["scored"], metric["failed"], metric["partial"]) == (2, 2, True)
    records = {
        r["case_id"]: r for r in map(json.loads, (out / "per_query.jsonl").read_text().splitlines())
    }
    assert [f["evaluator"] for f in records["rome"]["failures"]] == ["llm_judge"]
    printed = capsys.readouterr()
    assert "2 judgments FAILED" in printed.out and "case rome (keyword_search)" in printed.out
    assert "partial" in printed.err


CASE = BenchmarkCase(id="q1", query="Capital of France?", expected={"answers": ["Paris"]})
RESPONSE = QueryResponse(query=CASE.query, answer="Paris", mode="m")


async def test_repeats_report_their_agreement_and_each_is_a_call(serve, tmp_path):
    server = serve(verdicts=(True, False, True))
    judge = LLMJudge(server.client(), repeats=3, cache=tmp_path / "c.sqlite")
    score = await judge.evaluate(case=CASE, response=RESPONSE)
    assert server.calls == 3
    assert sorted(score.metadata["verdicts"]) == [False, True, True]
    assert score.passed is True and score.value == pytest.approx(2 / 3)
    assert score.metadata["agreement"] == pytest.approx(2 / 3)
    report = judge.usage_report()
    assert report["repeated_cases"] == 1 and report["unanimous_cases"] == 0
    assert report["mean_agreement"] == pytest.approx(2 / 3, abs=1e-6)
    # The same judge config again: three cached repeats, the same verdicts, no call.
    again = LLMJudge(server.client(), repeats=3, cache=tmp_path / "c.sqlite")
    second = await again.evaluate(case=CASE, response=RESPONSE)
    assert server.calls == 3 and second.metadata["verdicts"] == score.metadata["verdicts"]
    # Another temperature is another call.
    hotter = LLMJudge(server.client(), repeats=1, temperature=0.7, cache=tmp_path / "c.sqlite")
    await hotter.evaluate(case=CASE, response=RESPONSE)
    assert server.calls == 4


async def test_a_reply_without_usage_is_not_counted_as_zero_tokens(serve):
    server = serve(usage=False)
    judge = LLMJudge(
        server.client(), cache=False, prices={"judge-1": {"prompt": 1, "completion": 1}}
    )
    await judge.evaluate(case=CASE, response=RESPONSE)
    report = judge.usage_report()
    assert report["calls"] == 1 and report["calls_without_usage"] == 1
    assert any("lower bound" in note for note in report["notes"])


async def test_a_failed_judgment_is_raised_and_listed(serve):
    server = serve()
    judge = LLMJudge(server.client(timeout=0.2), cache=False)
    slow = BenchmarkCase(id="s", query="SLOW question?", expected={"answers": ["x"]})
    with pytest.raises(JudgeError, match="timed out"):
        await judge.evaluate(case=slow, response=RESPONSE)
    assert judge.usage_report()["failures"][0]["case_id"] == "s"


def test_price_table_errors_name_the_file_and_model(tmp_path):
    bad = tmp_path / "prices.json"
    bad.write_text(json.dumps({"judge-1": {"prompt": "cheap"}}))
    with pytest.raises(ValueError, match=r"prices\.json: model 'judge-1' needs"):
        load_prices(bad)
    bad.write_text("{nope")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_prices(bad)
