"""HttpKnowledgeBase against real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator

import pytest
from support.kb_server import Behaviour, Server

from heta_eval.systems import HttpKnowledgeBase, KnowledgeBase
from heta_eval.systems.http_client import HttpKnowledgeBaseError


def ok(body: dict) -> tuple[int, bytes, float]:
    reply = {
        "query": body["query"],
        "mode": body["mode"],
        "results": [
            {"text": f"hit {i}", "score": 1.0 / (i + 1), "source": {"document_id": f"d{i}"}}
            for i in range(body["top_k"])
        ],
        "answer": "42",
    }
    return 200, json.dumps(reply).encode(), 0.0


def status(code: int, delay: float = 0.0) -> Behaviour:
    return lambda body: (code, b'{"error": "boom"}', delay)


def slow_ok(delay: float) -> Behaviour:
    return lambda body: (*ok(body)[:2], delay)


@pytest.fixture
def server_factory() -> Iterator[Callable[[list[Behaviour]], Server]]:
    servers: list[Server] = []

    def make(behaviours: list[Behaviour]) -> Server:
        server = Server(behaviours).__enter__()
        servers.append(server)
        return server

    yield make
    for s in servers:
        s.__exit__()


async def test_posts_query_and_validates_reply(server_factory) -> None:
    server = server_factory([ok])
    kb = HttpKnowledgeBase(server.url, modes=("hybrid_search",))
    assert isinstance(kb, KnowledgeBase)
    response = await kb.query("what?", mode="hybrid_search", top_k=3)
    assert server.requests == [{"query": "what?", "mode": "hybrid_search", "top_k": 3}]
    assert [r.source["document_id"] for r in response.results] == ["d0", "d1", "d2"]
    assert response.answer == "42"
    await kb.aclose()


async def test_retries_500_then_succeeds(server_factory) -> None:
    server = server_factory([status(500), status(503), ok])
    kb = HttpKnowledgeBase(server.url, max_attempts=3, backoff=0.01, timeout=30)
    response = await kb.query("q", top_k=1)
    assert len(server.requests) == 3 and response.results[0].text == "hit 0"


async def test_always_500_gives_a_clear_error_after_the_last_attempt(server_factory) -> None:
    server = server_factory([status(500)])
    kb = HttpKnowledgeBase(server.url, max_attempts=3, backoff=0.01, timeout=30)
    with pytest.raises(HttpKnowledgeBaseError) as info:
        await kb.query("q")
    message = str(info.value)
    assert server.url in message and "gave up after 3 attempts" in message and "HTTP 500" in message
    assert len(server.requests) == 3


# A reply that comes a minute late: far past the client's 3 s timeout, which a prompt reply
# meets even on a loaded machine.
LATE = 60.0


async def test_timeout_is_retried_then_succeeds(server_factory) -> None:
    server = server_factory([slow_ok(LATE), ok])
    kb = HttpKnowledgeBase(server.url, max_attempts=2, backoff=0.01, timeout=3)
    response = await kb.query("q", top_k=2)
    assert len(response.results) == 2
    assert len(server.requests) == 2  # gave up on the slow reply and asked again


async def test_server_that_always_times_out(server_factory) -> None:
    server = server_factory([slow_ok(LATE)])
    kb = HttpKnowledgeBase(server.url, max_attempts=2, backoff=0.01, timeout=3)
    with pytest.raises(HttpKnowledgeBaseError, match=r"timed out after 3s"):
        await kb.query("q")
    assert len(server.requests) == 2


async def test_malformed_json_names_the_url(server_factory) -> None:
    server = server_factory([lambda body: (200, b"<html>not json", 0.0)])
    kb = HttpKnowledgeBase(server.url, max_attempts=3, backoff=0.01)
    with pytest.raises(HttpKnowledgeBaseError) as info:
        await kb.query("q")
    assert server.url in str(info.value) and "not valid JSON" in str(info.value)
    assert len(server.requests) == 1  # a broken reply is not a transient error


async def test_invalid_payload_names_the_url_and_field(server_factory) -> None:
    bad = {"query": "q", "results": [{"score": "high"}]}
    server = server_factory([lambda body: (200, json.dumps(bad).encode(), 0.0)])
    kb = HttpKnowledgeBase(server.url)
    with pytest.raises(HttpKnowledgeBaseError) as info:
        await kb.query("q")
    assert server.url in str(info.value) and "results.0.score" in str(info.value)


async def test_client_error_is_not_retried(server_factory) -> None:
    server = server_factory([status(404)])
    kb = HttpKnowledgeBase(server.url, max_attempts=3, backoff=0.01)
    with pytest.raises(HttpKnowledgeBaseError, match="HTTP 404"):
        await kb.query("q")
    assert len(server.requests) == 1


async def test_connection_refused_is_retried_then_clear() -> None:
    server = Server([ok])  # bound but never served, then closed: the port refuses
    url = server.url
    server.httpd.server_close()
    kb = HttpKnowledgeBase(url, max_attempts=2, backoff=0.01, timeout=30)
    with pytest.raises(HttpKnowledgeBaseError, match="connection failed") as info:
        await kb.query("q")
    assert url in str(info.value)


async def test_concurrency_is_bounded(server_factory) -> None:
    server = server_factory([slow_ok(0.1)])
    kb = HttpKnowledgeBase(server.url, max_concurrency=3, timeout=30)
    responses = await asyncio.gather(*(kb.query(f"q{i}", top_k=1) for i in range(10)))
    assert len(responses) == 10 and server.max_in_flight <= 3
    assert sorted(r.query for r in responses) == sorted(f"q{i}" for i in range(10))
    await kb.aclose()
