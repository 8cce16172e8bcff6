"""A small async client for OpenAI-compatible chat completions. Its calls go through
:func:`heta_eval.remote.post_json`: timeouts, retries with exponential backoff, clear errors.

Configuration comes from arguments or the environment:

* ``HETA_EVAL_LLM_BASE_URL`` (default ``https://api.openai.com/v1``)
* ``HETA_EVAL_LLM_MODEL`` (required unless passed)
* ``HETA_EVAL_LLM_API_KEY`` or ``OPENAI_API_KEY`` (optional for local servers); a secret:
  it, and every form a server may echo it in, is redacted from each reply and message
  (:mod:`heta_eval.redaction`)
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import httpx

from heta_eval import config
from heta_eval.redaction import Secrets, split_credentials
from heta_eval.remote import RemoteCallError, RetryPolicy, post_json

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


class LLMError(RemoteCallError):
    """An LLM call failed (transport, HTTP status, or an unusable reply)."""


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
        # Credentials in the URL go as Basic auth, kept out of the URL every message shows.
        base_url, self._auth, basic = split_credentials(base_url)
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        # Redacted from every reply where it enters (post_json), in every form.
        self.secrets = Secrets([api_key, f"Bearer {api_key}" if api_key else None, basic])
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
        async with self._semaphore(), httpx.AsyncClient(auth=self._auth) as client:
            reply = await post_json(
                client,
                self.url,
                payload,
                policy=self.policy,
                headers=headers,
                error=LLMError,
                secrets=self.secrets,
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
