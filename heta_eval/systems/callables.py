"""Any function as a knowledge base: :func:`from_callable` wraps ``fn(query, top_k) -> hits``
(or a batch form, ``fn(queries, top_k) -> [hits, ...]``), sync or async.

A hit is a ``(doc_id, score)`` pair, a dict naming its document (``{"id": ..., "score":
...}``, ``doc_id`` / ``document_id``, or a ``source``: the rule of
:mod:`heta_eval.models.document_id`) or a :class:`~heta_eval.models.records.QueryResult`;
a function may also return a whole :class:`~heta_eval.models.records.QueryResponse` (with an
answer). The hits are checked where they enter, by the one validation a service's reply goes
through (:meth:`QueryResponse.model_validate`: finite scores, ids as strings), after
:func:`hits_response` has turned each into a result; a hit that is none of these fails its
query with one line naming the hit and the query. A function that raises fails only its case,
as a bad service reply does; several chunks of one document are scored at document level by
the collapse's rule (its first hit counts, the others are counted as duplicates).

>>> import asyncio
>>> kb = from_callable(lambda query, top_k: [("d1", 2.0), ("d7", 1.5)][:top_k])
>>> reply = asyncio.run(kb.query("capital of France?", top_k=1))
>>> [(hit.source["document_id"], hit.score) for hit in reply.results]
[('d1', 2.0)]
>>> print(asyncio.run(from_callable(lambda q, k: ["d1"]).query("why?", top_k=10)))
Traceback (most recent call last):
...
heta_eval.systems.callables.HitError: hit 0 of query 'why?' is 'd1' (a str): a hit is (doc_id, ...
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from numbers import Real
from typing import Any

from pydantic import ValidationError

from heta_eval.models.records import QueryResponse, QueryResult
from heta_eval.systems.protocol import DEFAULT_BATCH, is_async

__all__ = ["BatchCallableKnowledgeBase", "CallableKnowledgeBase", "HitError", "from_callable"]

#: What a hit may be, for messages.
HIT_FORMS = "a hit is (doc_id, score), a dict with id / doc_id and score, or a QueryResult"


class HitError(ValueError):
    """A function's hits cannot be scored: the message names the first bad hit and its query."""


def hits_response(hits: Any, query: str, mode: str = "default") -> QueryResponse:
    """``hits`` (what a function returned for ``query``) as the response the runner scores.

    >>> hits_response([("d1", 3), {"doc_id": 7, "score": 1.5}], "q").results[1].source
    {'document_id': '7'}
    >>> hits_response([("d1", float("nan"))], "q")
    Traceback (most recent call last):
    ...
    heta_eval.systems.callables.HitError: hit 0 of query 'q', ('d1', nan): score must be ...
    """
    if isinstance(hits, QueryResponse):
        return hits
    if isinstance(hits, Mapping):  # a whole reply, as a service sends it
        return _validated(dict(hits), hits.get("results") or [], query)
    if isinstance(hits, (str, bytes)) or not isinstance(hits, Iterable):
        raise HitError(
            f"query {query!r}: the function returned {_shown(hits)} ({type(hits).__name__}), "
            f"not a list of hits ({HIT_FORMS})"
        )
    hits = list(hits)
    results = [_result(hit, i, query) for i, hit in enumerate(hits)]
    return _validated({"query": query, "mode": mode, "results": results}, hits, query)


def _validated(reply: dict[str, Any], hits: Sequence[Any], query: str) -> QueryResponse:
    """The reply through the one validation a service's reply gets; its first error named."""
    reply.setdefault("query", query)
    try:
        return QueryResponse.model_validate(reply)
    except ValidationError as error:
        first = error.errors()[0]
        where = first["loc"]
        if len(where) >= 2 and where[0] == "results" and isinstance(where[1], int):
            hit = hits[where[1]] if where[1] < len(hits) else None
            field = ".".join(map(str, where[2:])) or "the hit"
            raise HitError(
                f"hit {where[1]} of query {query!r}, {_shown(hit)}: {_message(first, field)}"
            ) from None
        raise HitError(f"query {query!r}: the reply is not valid: {error}") from None


def _message(error: Mapping[str, Any], field: str) -> str:
    message = str(error["msg"]).removeprefix("Value error, ")
    return message if message.startswith(field) else f"{field}: {message}"


def _result(hit: Any, i: int, query: str) -> Any:
    """One hit as a result (a dict, or the QueryResult given); one line where it is neither."""
    if isinstance(hit, (QueryResult, dict)):
        return hit
    if isinstance(hit, Mapping):
        return dict(hit)
    if isinstance(hit, (tuple, list)) and len(hit) == 2:
        doc_id, score = hit
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or doc_id == "":
            what = "empty" if doc_id == "" else f"a {type(doc_id).__name__}"
            raise HitError(
                f"hit {i} of query {query!r}, {_shown(hit)}: its document id is {what}; "
                "ids are strings"
            )
        if score is not None and (isinstance(score, bool) or not isinstance(score, Real)):
            raise HitError(
                f"hit {i} of query {query!r}, {_shown(hit)}: its score is a "
                f"{type(score).__name__}, not a number"
            )
        score = None if score is None else float(score)
        return {"score": score, "source": {"document_id": str(doc_id)}}
    raise HitError(
        f"hit {i} of query {query!r} is {_shown(hit)} (a {type(hit).__name__}): {HIT_FORMS}"
    )


def _shown(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _name(fn: Any) -> str:
    """``module.qualname`` of a function (or its class): what ran, stable across runs."""
    target = fn if hasattr(fn, "__qualname__") else type(fn)
    return f"{getattr(target, '__module__', '?')}.{target.__qualname__}"


class CallableKnowledgeBase:
    """A knowledge base that answers each query with a function: ``fn(query, top_k) ->
    hits`` (see :func:`from_callable`, which builds it). A sync function runs in a worker
    thread (the runner asks ``concurrency`` queries at once; ``max_concurrency`` caps it for
    a function that cannot run in parallel), an async one in the run's event loop.

    >>> import asyncio
    >>> async def search(query, top_k):
    ...     return [{"id": "d3", "score": 0.5}]
    >>> kb = CallableKnowledgeBase({"dense": search})
    >>> kb.modes, asyncio.run(kb.query("q", mode="dense", top_k=5)).results[0].model_extra
    (('dense',), {'id': 'd3'})
    """

    def __init__(
        self,
        functions: Mapping[str, Callable[..., Any]],
        *,
        max_concurrency: int | None = None,
        identity: Any = None,
        build_info: Mapping[str, Any] | None = None,
    ) -> None:
        for mode, fn in functions.items():
            if not callable(fn):
                raise TypeError(f"mode {mode!r}: {_shown(fn)} is not callable")
        if not functions:
            raise ValueError("no function given: name at least one mode's function")
        self._functions = dict(functions)
        #: The modes, one per function.
        self.modes = tuple(self._functions)
        self.max_concurrency = max_concurrency
        names = {mode: _name(fn) for mode, fn in self._functions.items()}
        wrapped = names["default"] if list(names) == ["default"] else names
        #: What a results folder records as the system (it resumes only with the same).
        self.identity = identity if identity is not None else {"callable": wrapped}
        #: What summary.json keeps as the build record.
        self.build_info = dict(build_info) if build_info is not None else {"wraps": wrapped}
        self._limits: dict[int, asyncio.Semaphore] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(modes={self.modes})"

    def _function(self, mode: str | None) -> tuple[str, Callable[..., Any]]:
        mode = self.modes[0] if mode is None else mode
        if mode not in self._functions:
            raise ValueError(f"no mode {mode!r}; the modes are {list(self.modes)}")
        return mode, self._functions[mode]

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``: awaited, or in a worker thread when it is sync."""
        if self.max_concurrency is None:
            return await _called(fn, *args)
        loop = id(asyncio.get_running_loop())  # a semaphore belongs to one event loop
        limit = self._limits.setdefault(loop, asyncio.Semaphore(self.max_concurrency))
        async with limit:
            return await _called(fn, *args)

    async def query(self, text: str, *, mode: str | None = None, top_k: int = 10) -> QueryResponse:
        """The function's hits for ``text``, checked (:class:`HitError` names a bad one)."""
        mode, fn = self._function(mode)
        return hits_response(await self._call(fn, text, top_k), text, mode)


class BatchCallableKnowledgeBase(CallableKnowledgeBase):
    """A knowledge base whose function answers many queries at once: ``fn(queries, top_k)
    -> [hits, ...]``, one list per query, in order. The runner hands it ``batch_size``
    queries a call (:class:`~heta_eval.systems.protocol.BatchKnowledgeBase`); a batch that fails
    is asked again query by query (``fn([query], top_k)``), so a failure costs its own case.

    >>> import asyncio
    >>> kb = from_callable(lambda queries, top_k: [[(q, 1.0)] for q in queries], batch=True)
    >>> replies = asyncio.run(kb.query_batch(["a", "b"], mode="default", top_k=3))
    >>> [reply.results[0].source["document_id"] for reply in replies], kb.batch_size
    (['a', 'b'], 64)
    """

    def __init__(
        self,
        functions: Mapping[str, Callable[..., Any]],
        *,
        batch_size: int = DEFAULT_BATCH,
        **options: Any,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        super().__init__(functions, **options)
        #: Queries per call of the function.
        self.batch_size = batch_size

    async def query(self, text: str, *, mode: str | None = None, top_k: int = 10) -> QueryResponse:
        """One query, asked as a batch of one."""
        return (await self.query_batch([text], mode=mode, top_k=top_k))[0]

    async def query_batch(
        self,
        texts: Sequence[str],
        *,
        mode: str | None = None,
        top_k: int = 10,
        query_ids: Sequence[str] | None = None,
    ) -> list[QueryResponse]:
        """The function's hits for every text, in order, each checked."""
        mode, fn = self._function(mode)
        texts = list(texts)
        answers = await self._call(fn, texts, top_k)
        if isinstance(answers, (str, bytes, Mapping)) or not isinstance(answers, Sequence):
            raise HitError(
                f"the batch function returned {_shown(answers)} ({type(answers).__name__}), "
                f"not one list of hits per query"
            )
        if len(answers) != len(texts):
            raise HitError(
                f"the batch function returned {len(answers)} hit lists for {len(texts)} "
                f"queries (first query {texts[0]!r})"
            )
        return [hits_response(hits, text, mode) for hits, text in zip(answers, texts, strict=True)]


async def _called(fn: Callable[..., Any], *args: Any) -> Any:
    if is_async(fn):
        return await fn(*args)
    result = await asyncio.to_thread(fn, *args)
    return await result if inspect.isawaitable(result) else result


def from_callable(
    fn: Callable[..., Any] | Mapping[str, Callable[..., Any]],
    *,
    batch: bool = False,
    batch_size: int = DEFAULT_BATCH,
    mode: str = "default",
    max_concurrency: int | None = None,
    identity: Any = None,
    build_info: Mapping[str, Any] | None = None,
) -> CallableKnowledgeBase:
    """A knowledge base that answers with ``fn(query, top_k) -> hits`` (sync or async), in
    mode ``mode``; or with one function per mode (``{"bm25": f, "dense": g}``). With
    ``batch=True`` each function answers a list of queries, ``fn(queries, top_k) -> [hits,
    ...]``, ``batch_size`` at a time. ``identity`` (default: the functions' names) is what a
    results folder records as the system: a rerun resumes only with the same; ``build_info``
    is kept in summary.json (the adapters of :mod:`heta_eval.integrations` record the
    library, version, class and settings they wrap).

    >>> from heta_eval import BenchmarkRunner, BenchmarkCase, Document
    >>> class Pets:
    ...     name = "pets"
    ...     def documents(self): return [Document(id="cat", text="Cats purr."),
    ...                                  Document(id="dog", text="Dogs bark.")]
    ...     def cases(self): return [BenchmarkCase(id="q1", query="barking",
    ...                                             expected={"relevance": {"dog": 1}})]
    ...     def evaluators(self):
    ...         from heta_eval import beir_default_metrics
    ...         return beir_default_metrics(k_values=(1,))
    >>> kb = from_callable(lambda query, top_k: [("dog", 0.9), ("cat", 0.1)])
    >>> results = BenchmarkRunner(progress=False).run(benchmark=Pets(), knowledge_base=kb,
    ...                                               query_modes=("default",))
    >>> results.metric("default", "ndcg@1").beir
    1.0
    """
    functions = dict(fn) if isinstance(fn, Mapping) else {mode: fn}
    options: dict[str, Any] = {
        "max_concurrency": max_concurrency,
        "identity": identity,
        "build_info": build_info,
    }
    if batch:
        return BatchCallableKnowledgeBase(functions, batch_size=batch_size, **options)
    return CallableKnowledgeBase(functions, **options)
