"""Calling a remote service: a JSON POST with timeouts, retries with exponential backoff
(tenacity) or as long as the service's ``Retry-After`` asks, an optional request rate, and
secrets kept out of every message.

Used by the knowledge-base client (``--kb-url``) and the LLM client (the judge).

>>> RequestRate.parse("5/s").per_second, RequestRate.parse("120/min").per_second
(5.0, 2.0)
>>> redact("POST failed: token s3cret rejected", ["s3cret"])
'POST failed: token *** rejected'
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from heta_eval.redaction import Secrets

__all__ = [
    "RETRY_STATUS",
    "RemoteCallError",
    "RequestRate",
    "RetryPolicy",
    "post_json",
    "redact",
    "retry_after_seconds",
]

#: HTTP statuses worth another attempt: the service is busy or briefly broken.
RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


_RATE = re.compile(r"([0-9]*\.?[0-9]+)\s*(?:/\s*(s|sec|second|m|min|minute))?")


class RemoteCallError(RuntimeError):
    """A call to a remote service failed; the message names the URL and why."""

    def __init__(self, url: str, message: str, *, attempts: int = 1) -> None:
        super().__init__(f"POST {url}: {message}")
        self.url = url
        self.attempts = attempts


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry.

    Retried: connection errors, timeouts, HTTP 408, 425, 429 and 5xx gateway errors. Not
    retried: other 4xx (a wrong URL or a refused credential does not heal), and replies that
    are not valid JSON (a bug on the other side, not a transient failure).

    A retried reply with a ``Retry-After`` header (seconds, or an HTTP date) is retried after
    the time it asks instead of the backoff, but never later than ``max_retry_after``
    seconds: a service that asks for an hour is tried again after that bound (and, if it
    still refuses, the call fails once the attempts are spent).

    >>> RetryPolicy(max_attempts=3, backoff=0.5).delay(2)
    2.0
    """

    max_attempts: int = 3
    backoff: float = 0.5  # seconds before the 2nd attempt; doubles each time
    max_backoff: float = 8.0
    timeout: float = 30.0  # per attempt, seconds
    max_retry_after: float = 60.0  # the longest a Retry-After header makes us wait, seconds

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed ``attempt`` (0-based), before jitter."""
        return min(self.max_backoff, self.backoff * 2**attempt)


@dataclass
class RequestRate:
    """At most ``per_second`` requests start each second (retries count too).

    Requests are spaced evenly, at least ``1 / per_second`` apart, whatever the concurrency;
    the spacing counts from when the previous request really started, so a process that was
    paused (a loaded machine) does not make up for lost time with a burst. The schedule
    belongs to the event loop that uses it.
    """

    per_second: float
    _last: dict[int, float] = field(default_factory=dict, repr=False)
    _turns: dict[int, asyncio.Lock] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # From one a day to a million a second: a slower one would wait past any timeout.
        if not 1 / 86_400 <= self.per_second <= 1_000_000:
            raise ValueError(
                f"a request rate must be from 1/day to 1,000,000/s, got {self.per_second:g}/s"
            )

    @classmethod
    def parse(cls, text: str) -> RequestRate:
        """``N/s``, ``N/min`` or a bare ``N`` (per second); ``N`` may be a fraction.

        >>> RequestRate.parse("0.5").per_second
        0.5
        """
        match = _RATE.fullmatch(text.strip())
        if not match:
            raise ValueError(f"a rate is N/s or N/min (e.g. 5/s), got {text!r}")
        value = float(match.group(1))
        per_second = value / 60 if (match.group(2) or "s").startswith("m") else value
        return cls(per_second)

    async def wait(self) -> None:
        """Wait for this request's turn."""
        loop = id(asyncio.get_running_loop())
        # One request at a time takes its turn, in the order they asked (asyncio's lock is fair).
        async with self._turns.setdefault(loop, asyncio.Lock()):
            if loop in self._last:
                pause = self._last[loop] + 1.0 / self.per_second - time.monotonic()
                if pause > 0:
                    await asyncio.sleep(pause)
            self._last[loop] = time.monotonic()


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value, in every form a service may echo it
    (:class:`~heta_eval.redaction.Secrets`), replaced by ``***``."""
    return Secrets(secrets).redact(text)


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (0 for a date in the past), or None when
    it is absent or neither a number of seconds nor an HTTP date.

    >>> retry_after_seconds("7"), retry_after_seconds("soon"), retry_after_seconds(None)
    (7.0, None, None)
    >>> now = datetime(2015, 10, 21, 7, 28, 0, tzinfo=timezone.utc)
    >>> retry_after_seconds("Wed, 21 Oct 2015 07:28:30 GMT", now)
    30.0
    """
    if value is None:
        return None
    text = value.strip()
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # HTTP dates are GMT
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


class _Transient(Exception):
    """An attempt that failed in a way worth retrying; the message says how, ``retry_after``
    how long the service asked us to wait (seconds), if it did."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _wait(policy: RetryPolicy) -> Any:
    """Tenacity's wait: the service's ``Retry-After`` (bounded) when it sent one, else
    exponential backoff whose jitter spreads the retries of many concurrent callers."""
    backoff = wait_exponential(multiplier=policy.backoff, max=policy.max_backoff) + wait_random(
        0, 0.1 * policy.backoff
    )

    def wait(state: RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome else None
        asked = getattr(failure, "retry_after", None)
        if asked is not None:
            return min(asked, policy.max_retry_after)
        return backoff(state)

    return wait


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    payload: dict[str, Any],
    *,
    policy: RetryPolicy,
    headers: dict[str, str] | None = None,
    error: type[RemoteCallError] = RemoteCallError,
    rate: RequestRate | None = None,
    secrets: Secrets | None = None,
) -> Any:
    """POST ``payload`` as JSON and return the decoded JSON reply, retrying transient errors.

    Raises ``error`` (a :class:`RemoteCallError`) naming ``url`` when the reply is not JSON,
    the status is a non-retryable error, or every attempt failed.

    This is where a service's reply enters, so secrets are redacted here, once: ``secrets``
    (default: the header values) and every form of them, in every scalar of the decoded
    reply (strings, keys, numbers as written; :meth:`~heta_eval.redaction.Secrets.loads`)
    and in every error message (the body echoed, the URL, a
    transport error's text). What the caller receives holds none of them.
    """
    if secrets is None:
        secrets = Secrets((headers or {}).values())
    attempts = 0

    def failure(message: str, tries: int) -> RemoteCallError:
        return error(secrets.redact(url), secrets.redact(message), attempts=tries)

    async def attempt() -> Any:
        nonlocal attempts
        attempts += 1
        if rate is not None:
            await rate.wait()
        try:
            reply = await client.post(url, json=payload, headers=headers, timeout=policy.timeout)
        except httpx.TimeoutException:
            raise _Transient(f"timed out after {policy.timeout:g}s") from None
        except httpx.TransportError as exc:
            why = secrets.redact(f"{type(exc).__name__}: {exc}")  # its text may hold the URL
            raise _Transient(f"connection failed ({why})") from None
        except UnicodeEncodeError:  # httpx sends header values as ASCII; never show one
            raise failure("a header value holds a character outside ASCII", attempts) from None

        def body() -> str:
            # Secrets out first, then cut: a cut must not leave part of a secret behind.
            return secrets.redact(reply.text)[:200]

        if reply.status_code < 400:
            try:
                return secrets.loads(reply.content)  # every scalar checked, numbers too
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                why = f"reply is not valid JSON ({exc}); body starts {body()!r}"
                raise failure(why, attempts) from None
            except RecursionError:
                raise failure("reply is JSON nested too deeply to read", attempts) from None
        last = f"HTTP {reply.status_code}: {body()!r}"
        if reply.status_code in RETRY_STATUS:
            raise _Transient(last, retry_after_seconds(reply.headers.get("Retry-After")))
        raise failure(last, attempts)

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=_wait(policy),
        retry=retry_if_exception_type(_Transient),
        reraise=True,
    )
    try:
        return await retrying(attempt)
    except _Transient as last:
        message = f"gave up after {policy.max_attempts} attempts; last error: {last}"
        raise failure(message, policy.max_attempts) from None
