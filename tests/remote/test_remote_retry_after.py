"""``Retry-After`` against a real HTTP server on 127.0.0.1: a busy service (429, 503) that says
when to come back is asked again no sooner than it said, in seconds or as an HTTP date, and
never later than the policy's bound."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from email.utils import formatdate
from itertools import pairwise

import httpx
import pytest
from support.loopback import LoopbackService

from heta_eval.remote import RemoteCallError, RetryPolicy, post_json

#: Generous: a test that hangs fails instead (a bound that did not work would wait an hour).
DEADLINE = 120.0


class BusyServer(LoopbackService):
    """Answers the first ``busy`` POSTs with ``status`` and ``Retry-After: header()``, then
    200 with ``{"ok": true}``; keeps each request's arrival time."""

    def __init__(self, status: int, header, busy: int = 1) -> None:
        self.arrivals: list[float] = []

        def reply(raw: bytes, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
            self.arrivals.append(time.monotonic())
            refuse = len(self.arrivals) <= busy
            payload = json.dumps({"ok": not refuse}).encode()
            return (status, payload, {"Retry-After": header()}) if refuse else (200, payload, {})

        super().__init__(reply, path="/")


@pytest.fixture
def servers() -> Iterator[list[BusyServer]]:
    started: list[BusyServer] = []
    yield started
    for server in started:
        server.close()


async def call(url: str, policy: RetryPolicy):
    async with httpx.AsyncClient() as client:
        return await asyncio.wait_for(post_json(client, url, {"q": 1}, policy=policy), DEADLINE)


# backoff 0.01 s: any wait of a second or more comes from the header, not the backoff.
QUICK = RetryPolicy(max_attempts=3, backoff=0.01, timeout=30)


async def test_a_429_with_retry_after_seconds_is_retried_no_sooner_than_asked(servers) -> None:
    server = BusyServer(429, lambda: "2")
    servers.append(server)
    assert await call(server.url, QUICK) == {"ok": True}
    first, second = server.arrivals
    assert second - first >= 2.0, server.arrivals


async def test_a_503_with_retry_after_as_an_http_date_is_retried_no_sooner_than_asked(
    servers,
) -> None:
    # An HTTP date counts whole seconds: 3 s from now is at least 2 s away.
    server = BusyServer(503, lambda: formatdate(time.time() + 3, usegmt=True))
    servers.append(server)
    assert await call(server.url, QUICK) == {"ok": True}
    first, second = server.arrivals
    assert second - first >= 2.0, server.arrivals


async def test_a_retry_after_beyond_the_bound_waits_only_the_bound(servers) -> None:
    server = BusyServer(429, lambda: "3600")
    servers.append(server)
    policy = RetryPolicy(max_attempts=3, backoff=0.01, timeout=30, max_retry_after=1.0)
    assert await call(server.url, policy) == {"ok": True}  # not an hour later
    first, second = server.arrivals
    assert second - first >= 1.0, server.arrivals


async def test_a_service_busy_on_every_attempt_fails_naming_the_status(servers) -> None:
    server = BusyServer(429, lambda: "1", busy=10)
    servers.append(server)
    with pytest.raises(RemoteCallError, match="gave up after 3 attempts; last error: HTTP 429"):
        await call(server.url, QUICK)
    assert len(server.arrivals) == 3
    assert all(b - a >= 1.0 for a, b in pairwise(server.arrivals)), server.arrivals


async def test_an_unreadable_retry_after_falls_back_to_the_backoff(servers) -> None:
    server = BusyServer(503, lambda: "whenever")
    servers.append(server)
    assert await call(server.url, QUICK) == {"ok": True}
    assert len(server.arrivals) == 2
