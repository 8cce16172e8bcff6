"""A small async client for OpenAI-compatible chat completions, and the JSON POST helper
with timeout, retries (exponential backoff) and clear errors shared with the HTTP KB client.

Configuration comes from arguments or the environment:

* ``HETA_EVAL_LLM_BASE_URL`` (default ``https://api.openai.com/v1``)
* ``HETA_EVAL_LLM_MODEL`` (required unless passed)
* ``HETA_EVAL_LLM_API_KEY`` or ``OPENAI_API_KEY`` (optional for local servers)
"""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass
from typing import Any

import httpx

from heta_eval import config

__all__ = [
    "ChatReply",
    "LLMClient",
    "LLMError",
    "RemoteCallError",
    "RetryPolicy",
    "post_json",
    "reply_usage",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class RemoteCallError(RuntimeError):
    """A call to a remote service failed; the message names the URL and why."""

    def __init__(self, url: str, message: str, *, attempts: int = 1) -> None:
        super().__init__(f"POST {url}: {message}")
        self.url = url
        self.attempts = attempts


class LLMError(RemoteCallError):
    """An LLM call failed (transport, HTTP status, or an unusable reply)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry.

    Retried: connection errors, timeouts, HTTP 429 and 5xx. Not retried: other 4xx, and
    replies that are not valid JSON (a bug on the other side, not a transient failure).

    >>> RetryPolicy(max_attempts=3, backoff=0.5).delay(2)
    2.0
    """

    max_attempts: int = 3
    backoff: float = 0.5  # seconds before the 2nd attempt; doubles each time
    max_backoff: float = 8.0
    timeout: float = 30.0  # per attempt, seconds

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed ``attempt`` (0-based), before jitter."""
        return min(self.max_backoff, self.backoff * 2**attempt)


_RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    payload: dict[str, Any],
    *,
    policy: RetryPolicy,
    headers: dict[str, str] | None = None,
    error: type[RemoteCallError] = RemoteCallError,
) -> Any:
    """POST ``payload`` as JSON and return the decoded JSON reply, retrying transient errors.

    Raises ``error`` (a :class:`RemoteCallError`) naming ``url`` when the reply is not JSON,
    the status is a non-retryable error, or every attempt failed.
    """
    last = "no attempt made"
    for attempt in range(policy.max_attempts):
        try:
            reply = await client.post(url, json=payload, headers=headers, timeout=policy.timeout)
        except httpx.TimeoutException:
            last = f"timed out after {policy.timeout:g}s"
        except httpx.TransportError as exc:
            last = f"connection failed ({type(exc).__name__}: {exc})"
        else:
            if reply.status_code < 400:
                try:
                    return reply.json()
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    raise error(
                        url,
                        f"reply is not valid JSON ({exc}); body starts {reply.text[:200]!r}",
                        attempts=attempt + 1,
                    ) from None
            last = f"HTTP {reply.status_code}: {reply.text[:200]!r}"
            if reply.status_code not in _RETRY_STATUS:
                raise error(url, last, attempts=attempt + 1)
        if attempt + 1 < policy.max_attempts:
            # Jitter spreads retries of many concurrent callers.
            await asyncio.sleep(policy.delay(attempt) * (1 + 0.1 * random.random()))
    raise error(
        url,
        f"gave up after {policy.max_attempts} attempts; last error: {last}",
        attempts=policy.max_attempts,
    )


@dataclass(frozen=True)
class ChatReply:
    """The first choice's content and the reply's token ``usage`` (None when the server
    sent none: a missing count is never taken as zero)."""

    content: str
    usage: dict[str, int] | None = None


def reply_usage(reply: Any) -> dict[str, int] | None:
    """``prompt_tokens`` and ``completion_tokens`` of an OpenAI-compatible reply's ``usage``.

    >>> reply_usage({"usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}})
    {'prompt_tokens': 12, 'completion_tokens': 3}
    >>> reply_usage({"usage": {"prompt_tokens": "12"}}) is None
    True
    """
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return None
    counts = {key: usage.get(key) for key in ("prompt_tokens", "completion_tokens")}
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counts.values()):
        return None
    return counts  # type: ignore[return-value]


class LLMClient:
    """Async OpenAI-compatible chat-completions client with bounded concurrency and retries.

    >>> client = LLMClient(base_url="http://127.0.0.1:9/v1", model="m", api_key=None)
    >>> client.url
    'http://127.0.0.1:9/v1/chat/completions'
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        max_concurrency: int = 8,
        policy: RetryPolicy | None = None,
    ) -> None:
        base_url = base_url or config.llm_base_url() or DEFAULT_BASE_URL
        model = model or config.llm_model()
        if not model:
            raise ValueError("no LLM model given: pass model=... or set HETA_EVAL_LLM_MODEL")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.policy = policy or RetryPolicy()
        self.max_concurrency = max_concurrency
        # Semaphores bind to an event loop on first use; keep one per loop.
        self._semaphores: dict[int, asyncio.Semaphore] = {}

    @classmethod
    def from_env(cls, **kwargs: Any) -> LLMClient:
        """A client configured from ``HETA_EVAL_LLM_*`` / ``OPENAI_API_KEY``."""
        return cls(api_key=config.llm_api_key(), **kwargs)

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _semaphore(self) -> asyncio.Semaphore:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._semaphores:
            self._semaphores[loop_id] = asyncio.Semaphore(self.max_concurrency)
        return self._semaphores[loop_id]

    async def chat(
        self, messages: list[dict[str, str]], *, temperature: float = 0.0, **extra: Any
    ) -> str:
        """Send ``messages`` and return the first choice's content (raises :class:`LLMError`)."""
        return (await self.complete(messages, temperature=temperature, **extra)).content

    async def complete(
        self, messages: list[dict[str, str]], *, temperature: float = 0.0, **extra: Any
    ) -> ChatReply:
        """Send ``messages``; the first choice's content and the reply's token usage."""
        payload = {"model": self.model, "messages": messages, "temperature": temperature, **extra}
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else None
        async with self._semaphore(), httpx.AsyncClient() as client:
            reply = await post_json(
                client, self.url, payload, policy=self.policy, headers=headers, error=LLMError
            )
        try:
            content = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise LLMError(
                self.url, f"reply has no choices[0].message.content: {json.dumps(reply)[:200]}"
            ) from None
        if not isinstance(content, str):
            raise LLMError(self.url, f"choices[0].message.content is not a string: {content!r}")
        return ChatReply(content, reply_usage(reply))
