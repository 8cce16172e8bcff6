"""A knowledge base served over HTTP: POST a query, receive ``QueryResponse`` JSON."""

from __future__ import annotations

import asyncio
import urllib.request
from typing import Any

import httpx
from pydantic import ValidationError

from heta_eval import config
from heta_eval.models.records import QueryResponse
from heta_eval.redaction import Secrets, split_credentials
from heta_eval.remote import RemoteCallError, RequestRate, RetryPolicy, post_json

__all__ = ["HttpKnowledgeBase", "HttpKnowledgeBaseError"]


class HttpKnowledgeBaseError(RemoteCallError):
    """The knowledge base service failed or replied with something unusable."""


class HttpKnowledgeBase:
    """Evaluates a deployed RAG service.

    Each query is ``POST url`` with JSON ``{"query": ..., "mode": ..., "top_k": ...}``; the
    reply must validate as :class:`~heta_eval.models.records.QueryResponse`. Timeouts,
    connection errors, 429 and 5xx are retried with exponential backoff; at most
    ``max_concurrency`` requests are in flight at once, and with ``rate`` (requests per
    second, or a :class:`~heta_eval.remote.RequestRate`) they start no faster than that.

    ``headers`` go with every request (``{"X-Api-Key": ...}``); ``token`` is sent as
    ``Authorization: Bearer <token>``. Their values are secrets: they, and every form a
    service may echo them in (:mod:`heta_eval.redaction`), are redacted from every reply and
    message, and :attr:`header_names` (what a results folder records) holds only names.
    :meth:`from_env` takes the token from ``HETA_EVAL_KB_TOKEN``. After ``breaker`` consecutive
    queries that could not connect, later queries fail at once without a request (a
    service that went down costs seconds, not minutes of retries); ``check_connection()``
    tells whether anything listens at the URL before a run starts.

    >>> kb = HttpKnowledgeBase("http://127.0.0.1:8000/query", modes=("hybrid_search",),
    ...                        timeout=10, max_attempts=3)
    >>> kb.modes
    ('hybrid_search',)
    """

    def __init__(
        self,
        url: str,
        *,
        modes: tuple[str, ...] = ("default",),
        timeout: float = 30.0,
        max_attempts: int = 3,
        backoff: float = 0.5,
        max_concurrency: int = 8,
        headers: dict[str, str] | None = None,
        token: str | None = None,
        rate: float | RequestRate | None = None,
        breaker: int = 5,
    ) -> None:
        # Credentials in the URL go as Basic auth, kept out of the URL every message shows.
        self.url, self._auth, basic = split_credentials(url)
        #: After this many consecutive queries failed to connect, later queries fail at once.
        self.breaker = breaker
        self._connection_failures = 0
        self.modes = tuple(modes)
        self.policy = RetryPolicy(max_attempts=max_attempts, backoff=backoff, timeout=timeout)
        self.max_concurrency = max_concurrency
        self.headers = dict(headers or {})
        if token and not any(name.lower() == "authorization" for name in self.headers):
            self.headers["Authorization"] = f"Bearer {token}"
        self.rate = RequestRate(float(rate)) if isinstance(rate, (int, float)) else rate
        # Redacted from every reply where it enters (post_json), in every form.
        self.secrets = Secrets([*self.headers.values(), token, basic])
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self._clients: dict[int, httpx.AsyncClient] = {}
        self._first: dict[int, asyncio.Lock] = {}
        self._warm: set[int] = set()

    @classmethod
    def from_env(cls, url: str, **kwargs: Any) -> HttpKnowledgeBase:
        """A client whose bearer token comes from ``HETA_EVAL_KB_TOKEN`` (when set)."""
        return cls(url, token=config.kb_token(), **kwargs)

    @property
    def header_names(self) -> list[str]:
        """The names of the headers sent with every request, sorted; never their values."""
        return sorted(self.headers, key=str.lower)

    def __repr__(self) -> str:
        return f"HttpKnowledgeBase({self.url!r}, modes={self.modes})"

    def _loop_state(self) -> tuple[asyncio.Semaphore, httpx.AsyncClient, asyncio.Lock]:
        # Semaphores, locks and connection pools belong to one event loop; one set per loop.
        loop = id(asyncio.get_running_loop())
        if loop not in self._semaphores:
            self._semaphores[loop] = asyncio.Semaphore(self.max_concurrency)
            self._clients[loop] = httpx.AsyncClient(
                limits=httpx.Limits(max_connections=self.max_concurrency), auth=self._auth
            )
            self._first[loop] = asyncio.Lock()
        return self._semaphores[loop], self._clients[loop], self._first[loop]

    async def check_connection(self, timeout: float = 5.0) -> None:
        """Open (and close) a TCP connection to the service; raise a one-line error naming
        the URL when nothing listens there, so a run does not start only to fail."""
        parts = httpx.URL(self.url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        if urllib.request.getproxies() and not urllib.request.proxy_bypass(parts.host):
            return  # reached through a proxy: the queries (and the breaker) will tell
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(parts.host, port), timeout)
        except (OSError, asyncio.TimeoutError) as error:
            why = "timed out" if isinstance(error, asyncio.TimeoutError) else error.strerror
            raise HttpKnowledgeBaseError(
                self.url, f"cannot connect to {parts.host}:{port} ({why}); is the service up?"
            ) from None
        writer.close()

    async def query(self, text: str, *, mode: str = "default", top_k: int = 10) -> QueryResponse:
        """POST the query and return the validated response."""
        if self.breaker and self._connection_failures >= self.breaker:
            raise HttpKnowledgeBaseError(
                self.url,
                f"not tried: the last {self._connection_failures} queries could not connect "
                "(circuit breaker open)",
            )
        semaphore, client, first = self._loop_state()
        payload: dict[str, Any] = {"query": text, "mode": mode, "top_k": top_k}
        async with semaphore:
            loop = id(asyncio.get_running_loop())
            if self.rate is not None and loop not in self._warm:
                # The first request goes alone: its one-off set-up (connection, imports)
                # would otherwise hold back the next ones and release them in a burst.
                async with first:
                    if loop not in self._warm:
                        try:
                            return self._response(await self._post(client, payload))
                        finally:
                            self._warm.add(loop)
            data = await self._post(client, payload)
        return self._response(data)

    async def _post(self, client: httpx.AsyncClient, payload: dict[str, Any]) -> Any:
        try:
            data = await post_json(
                client,
                self.url,
                payload,
                policy=self.policy,
                headers=self.headers or None,
                error=HttpKnowledgeBaseError,
                rate=self.rate,
                secrets=self.secrets,
            )
        except HttpKnowledgeBaseError as error:
            if "last error: connection failed" in str(error):
                self._connection_failures += 1
            raise
        self._connection_failures = 0
        return data

    def _response(self, data: Any) -> QueryResponse:
        try:
            return QueryResponse.model_validate(data)
        except ValidationError as exc:
            why = self.secrets.redact(f"reply is not a valid QueryResponse: {exc}")
            raise HttpKnowledgeBaseError(self.url, why) from None

    async def aclose(self) -> None:
        """Close the connection pool of the running event loop."""
        client = self._clients.pop(id(asyncio.get_running_loop()), None)
        self._semaphores.pop(id(asyncio.get_running_loop()), None)
        self._first.pop(id(asyncio.get_running_loop()), None)
        self._warm.discard(id(asyncio.get_running_loop()))
        if client is not None:
            await client.aclose()
