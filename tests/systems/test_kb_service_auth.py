"""Your own service behind credentials and a rate limit: ``--kb-header``, the bearer token of
``HETA_EVAL_KB_TOKEN`` and ``--rate``, against a real HTTP server on 127.0.0.1 that refuses
requests without the right headers and records when each request arrived.

Secrets never reach the results folder, the console or an error message: the server echoes
what it was sent in its refusals, and the tests look for the secret everywhere."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.loopback import LoopbackService

from heta_eval.remote import RequestRate
from heta_eval.systems import HttpKnowledgeBase
from heta_eval.systems.http_client import HttpKnowledgeBaseError

API_KEY = "key-6f1e2d-not-for-logs"
TOKEN = "tok-93ab-bearer-secret"
DOCS = {"paris": "Paris is the capital of France.", "rome": "Rome is the capital of Italy."}
KEYWORDS = {"paris": {"paris", "france"}, "rome": {"rome", "italy"}}


class AuthServer(LoopbackService):
    """Answers with the document whose keywords the query names, if the request
    carries ``X-Api-Key`` (and ``Authorization: Bearer``) as required; else 401, echoing
    the headers it got. Keeps every request's arrival time."""

    def __init__(self, api_key: str | None = API_KEY, token: str | None = TOKEN) -> None:
        self.arrivals: list[float] = []
        self.seen_headers: list[dict[str, str]] = []

        def reply(raw: bytes, got: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
            self.arrivals.append(time.monotonic())
            body = json.loads(raw)
            self.seen_headers.append(got)
            allowed = (api_key is None or got.get("x-api-key") == api_key) and (
                token is None or got.get("authorization") == f"Bearer {token}"
            )
            if not allowed:
                echo = {
                    "error": "unauthorized",
                    "x-api-key": got.get("x-api-key"),
                    "authorization": got.get("authorization"),
                }
                return 401, json.dumps(echo).encode(), {}
            words = set(body["query"].lower().split())
            hits = [d for d, keys in KEYWORDS.items() if words & keys]
            answer = {
                "query": body["query"],
                "results": [
                    {"text": DOCS[d], "score": 1.0, "source": {"document_id": d}} for d in hits
                ],
            }
            return 200, json.dumps(answer).encode(), {}

        super().__init__(reply)


def assert_rate(arrivals: list[float], per_second: float, window: float) -> None:
    """The server's view of the rate, as a rate-limited service checks it: no ``window``
    seconds held more than ``per_second * window`` requests, plus a burst of 2 (a request
    the machine's load delayed may arrive together with the next), and the requests
    spread over at least 80% of the time the rate asks for."""
    most = max(sum(1 for t in arrivals if start <= t < start + window) for start in arrivals)
    assert most <= per_second * window + 2, (most, arrivals)
    assert arrivals[-1] - arrivals[0] >= 0.8 * (len(arrivals) - 1) / per_second, arrivals


@pytest.fixture
def server():
    started = AuthServer()
    yield started
    started.close()


async def test_headers_and_token_are_sent_and_only_their_names_are_exposed(server) -> None:
    kb = HttpKnowledgeBase(server.url, headers={"X-Api-Key": API_KEY}, token=TOKEN)
    response = await kb.query("capital of France", mode="m", top_k=3)
    assert [r.source["document_id"] for r in response.results] == ["paris"]
    assert kb.header_names == ["Authorization", "X-Api-Key"]
    assert API_KEY not in repr(kb) and TOKEN not in repr(kb)
    await kb.aclose()


async def test_a_refusal_names_the_status_but_never_the_secret(server) -> None:
    kb = HttpKnowledgeBase(server.url, headers={"X-Api-Key": API_KEY}, token="wrong-token-77")
    with pytest.raises(HttpKnowledgeBaseError) as info:
        await kb.query("capital of France")
    message = str(info.value)
    assert "HTTP 401" in message and server.url in message
    assert API_KEY not in message and "wrong-token-77" not in message and "***" in message
    assert len(server.arrivals) == 1  # a refused credential is not retried


async def test_the_token_comes_from_the_environment(server, monkeypatch) -> None:
    monkeypatch.setenv("HETA_EVAL_KB_TOKEN", TOKEN)
    kb = HttpKnowledgeBase.from_env(server.url, headers={"X-Api-Key": API_KEY})
    assert (await kb.query("Rome")).results[0].source["document_id"] == "rome"
    assert server.seen_headers[-1]["authorization"] == f"Bearer {TOKEN}"


async def test_the_rate_spaces_requests_whatever_the_concurrency(server) -> None:
    kb = HttpKnowledgeBase(
        server.url, headers={"X-Api-Key": API_KEY}, token=TOKEN, rate=10, max_concurrency=8
    )
    started = time.monotonic()
    await asyncio.gather(*(kb.query(f"Paris {i}") for i in range(12)))
    assert time.monotonic() - started >= 1.09  # 10/s: 0.1 s apart, 11 gaps
    assert len(server.arrivals) == 12
    assert_rate(server.arrivals, 10, window=0.5)
    await kb.aclose()


def test_rates_are_read_per_second_or_per_minute() -> None:
    assert RequestRate.parse("20/s").per_second == 20
    assert RequestRate.parse("30/min").per_second == 0.5
    for bad in ("fast", "0/s", "-3/s", "5/h"):
        with pytest.raises(ValueError):
            RequestRate.parse(bad)


# ------------------------------------------------------------------ the command line


def cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **env}
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def own_benchmark(folder: Path) -> list[str]:
    (folder / "docs").mkdir()
    for doc_id, text in DOCS.items():
        (folder / "docs" / f"{doc_id}.txt").write_text(text + "\n")
    cases = [
        {"id": f"q{i}", "query": query, "expected": {"relevance": {doc: 1}}}
        for i, (query, doc) in enumerate(
            [("capital of France", "paris"), ("Italy", "rome"), ("Paris", "paris")] * 4
        )
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return [
        "run",
        "--benchmark",
        "cases.jsonl",
        "--documents",
        "docs",
        "--modes",
        "m",
        "--output",
        "out",
        "--quiet",
    ]


def everything_written(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_a_run_with_header_token_and_rate(server, tmp_path) -> None:
    args = [
        *own_benchmark(tmp_path),
        "--kb-url",
        server.url,
        "--kb-header",
        "X-Api-Key: ${RAG_API_KEY}",
        "--rate",
        "20/s",
    ]
    started = time.monotonic()
    done = cli(args, tmp_path, RAG_API_KEY=API_KEY, HETA_EVAL_KB_TOKEN=TOKEN)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started > 11 / 20  # 12 queries at 20/s
    assert len(server.arrivals) == 12
    assert_rate(server.arrivals, 20, window=0.25)
    assert all(h["x-api-key"] == API_KEY for h in server.seen_headers)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["system"]["headers"] == ["Authorization", "X-Api-Key"]
    assert summary["modes"]["m"]["metrics"]["ndcg@10"]["value"] == 1.0
    for text in (everything_written(tmp_path / "out"), done.stdout, done.stderr):
        assert API_KEY not in text and TOKEN not in text


def test_a_new_secret_value_resumes_the_folder_and_a_refusal_stays_secret(server, tmp_path):
    args = [
        *own_benchmark(tmp_path),
        "--kb-url",
        server.url,
        "--kb-header",
        "X-Api-Key: ${RAG_API_KEY}",
    ]
    first = cli(args, tmp_path, RAG_API_KEY=API_KEY, HETA_EVAL_KB_TOKEN=TOKEN)
    assert first.returncode == 0, first.stderr
    # The token rotated: same service, same headers by name: the folder is the same run.
    again = cli(args, tmp_path, RAG_API_KEY=API_KEY, HETA_EVAL_KB_TOKEN="rotated-token-1")
    assert again.returncode == 0, again.stderr
    # A wrong key: every query is refused, with the status and without the key.
    refused = cli(
        [*args, "--fresh"], tmp_path, RAG_API_KEY="wrong-key-55", HETA_EVAL_KB_TOKEN=TOKEN
    )
    assert refused.returncode == 4, refused.stderr
    assert "HTTP 401" in refused.stderr
    written = everything_written(tmp_path / "out")
    assert "HTTP 401" in written
    for text in (written, refused.stdout, refused.stderr):
        assert "wrong-key-55" not in text and TOKEN not in text


def test_header_mistakes_are_one_line_and_never_echo_a_value(server, tmp_path) -> None:
    base = [*own_benchmark(tmp_path), "--kb-url", server.url]
    unset = cli([*base, "--kb-header", "X-Api-Key: ${NOT_SET_ANYWHERE}"], tmp_path)
    assert unset.returncode == 2
    assert unset.stderr.strip() == (
        "heta-eval run: error: --kb-header X-Api-Key: environment variable NOT_SET_ANYWHERE "
        "is not set"
    )
    bare = cli([*base, "--kb-header", "Bearer abc-secret-123"], tmp_path)
    assert bare.returncode == 2 and "abc-secret-123" not in bare.stderr
    assert "'Name: value'" in bare.stderr
    no_url = cli([*base[:-2], "--kb-header", "X-A: 1"], tmp_path)
    assert no_url.returncode == 2 and "--kb-header goes with --kb-url" in no_url.stderr
    rate = cli([*base, "--rate", "lots"], tmp_path)
    assert rate.returncode == 2 and "--rate: a rate is N/s or N/min" in rate.stderr
