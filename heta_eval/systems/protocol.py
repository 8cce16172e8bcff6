"""The knowledge base protocol: what the harness needs from a system under evaluation, and
every optional member the runner reads, with its default (:data:`OPTIONAL_MEMBERS`).

Two members are required: ``modes`` and an async ``query``. The runner reads every other
member through :func:`member`, which gives the declared default where a knowledge base has
none, so this table is the whole list of what is probed; :func:`protocol_problem` says, in
one line naming the member, why an object cannot be run, before its first query.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from heta_eval.models.records import Document, QueryResponse

__all__ = [
    "DEFAULT_BATCH",
    "OPTIONAL_MEMBERS",
    "REQUIRED_MEMBERS",
    "BatchKnowledgeBase",
    "IngestingKnowledgeBase",
    "KnowledgeBase",
    "Member",
    "is_async",
    "member",
    "protocol_problem",
]


@runtime_checkable
class KnowledgeBase(Protocol):
    """Anything with ``modes`` and an async ``query`` can be evaluated. No base class needed:

    >>> class Echo:
    ...     modes = ("default",)
    ...     async def query(self, text, *, mode="default", top_k=10):
    ...         return QueryResponse(query=text, mode=mode)
    >>> isinstance(Echo(), KnowledgeBase)
    True

    The optional members the runner reads (batches, query ids, connection check, build
    record, identity, ...) are listed in :data:`OPTIONAL_MEMBERS`.
    """

    #: The query modes this knowledge base answers, e.g. ``("keyword_search", ...)``.
    modes: tuple[str, ...]

    async def query(self, text: str, *, mode: str, top_k: int) -> QueryResponse: ...


@runtime_checkable
class IngestingKnowledgeBase(KnowledgeBase, Protocol):
    """A knowledge base the harness can also load a benchmark's documents into.

    >>> class Store:
    ...     modes = ("default",)
    ...     async def ingest(self, documents): self.docs = list(documents)
    ...     async def query(self, text, *, mode="default", top_k=10):
    ...         return QueryResponse(query=text, mode=mode)
    >>> isinstance(Store(), IngestingKnowledgeBase)
    True
    """

    async def ingest(self, documents: Sequence[Document]) -> None: ...


@runtime_checkable
class BatchKnowledgeBase(KnowledgeBase, Protocol):
    """A knowledge base that also answers many queries in one call (optional): the runner
    then hands it ``batch_size`` cases at a time, their texts and ids in order, and expects
    one response per query, in order. A batch that fails (or answers another number of
    queries) is asked again case by case through ``query``, so a failure costs only its own
    case. The reference knowledge base searches a batch in one pass over its indexes.

    >>> class Batched:
    ...     modes = ("default",)
    ...     batch_size = 64
    ...     async def query(self, text, *, mode="default", top_k=10):
    ...         return QueryResponse(query=text, mode=mode)
    ...     async def query_batch(self, texts, *, mode="default", top_k=10, query_ids=None):
    ...         return [QueryResponse(query=text, mode=mode) for text in texts]
    >>> isinstance(Batched(), BatchKnowledgeBase)
    True
    """

    #: Queries per ``query_batch`` call.
    batch_size: int

    async def query_batch(
        self,
        texts: Sequence[str],
        *,
        mode: str,
        top_k: int,
        query_ids: Sequence[str] | None = None,
    ) -> Sequence[QueryResponse]: ...


#: Cases a knowledge base with ``query_batch`` is handed at once when it names no
#: ``batch_size``.
DEFAULT_BATCH = 64


@dataclass(frozen=True)
class Member:
    """One member of the protocol: its name, what the runner does with it, and the value
    the runner takes when a knowledge base does not have it."""

    name: str
    doc: str
    default: Any = None


#: The members every knowledge base has: refused without them (:func:`protocol_problem`).
REQUIRED_MEMBERS: dict[str, Member] = {
    m.name: m
    for m in (
        Member("modes", "the modes it answers, a tuple of names; a run asks only these"),
        Member(
            "query",
            "async query(text, *, mode, top_k) -> QueryResponse (or its dict): one query's "
            "hits, best first; what it raises fails only that case",
        ),
    )
}

#: Every optional member the runner reads, with the default it takes in its place.
OPTIONAL_MEMBERS: dict[str, Member] = {
    m.name: m
    for m in (
        Member(
            "query_batch",
            "async query_batch(texts, *, mode, top_k, query_ids=None) -> one response per "
            "text, in order: the runner then asks batch_size cases at a time and asks a "
            "failed batch again case by case through query",
        ),
        Member("batch_size", "queries per query_batch call", DEFAULT_BATCH),
        Member(
            "takes_query_id",
            "True: query (and query_batch) also get the case id, query_id= (a run file, "
            "given query vectors)",
            False,
        ),
        Member(
            "check_connection",
            "async check_connection(): raises a one-line error when the system cannot be "
            "reached; awaited once before the first query",
        ),
        Member(
            "build_info",
            "a dict of how it was built or what it wraps (library, version, class, "
            "settings): kept as summary.json's build record and shown by the report",
            {},
        ),
        Member(
            "first_stage",
            "a second stage's first stage (a reranker over a service or run file): the system "
            "whose identity run.json keeps, the stage having its own record",
        ),
        Member(
            "rerank_identity",
            "a second stage's own record (model, depth, level): run.json's rerank, apart "
            "from the system's identity",
        ),
        Member("url", "the URL of a service: the system's identity in run.json"),
        Member("header_names", "the names (never values) of the headers a service is sent", []),
        Member(
            "identity",
            "a JSON value saying what the system is (class, settings): a results folder "
            "resumes only with the same identity",
        ),
        Member(
            "unanswered",
            "{mode: cases it had no answer for}: said after the run (they score 0)",
            {},
        ),
        Member(
            "aclose",
            "async aclose(): awaited once the run's queries are done (connection pools); a "
            "later query opens what it needs again",
        ),
    )
}


def member(kb: Any, name: str) -> Any:
    """``kb``'s optional member ``name``, or its declared default (a fresh copy of a list
    or dict). Reading a member not in :data:`OPTIONAL_MEMBERS` is a programming error.

    >>> class Plain:
    ...     modes = ("default",)
    >>> member(Plain(), "batch_size"), member(Plain(), "takes_query_id")
    (64, False)
    >>> member(Plain(), "build_info") is member(Plain(), "build_info")
    False
    """
    declared = OPTIONAL_MEMBERS[name]
    value = getattr(kb, name, None)
    if value is None:
        default = declared.default
        return type(default)(default) if isinstance(default, (list, dict)) else default
    return value


def protocol_problem(kb: Any) -> str | None:
    """Why ``kb`` cannot be run as a knowledge base, in one line naming the member, or
    ``None``: no ``modes`` (or not a tuple of names), no ``query``, a ``query`` (or
    ``query_batch``) that is not async or does not take the runner's arguments, a
    ``batch_size`` that is not a positive integer.

    >>> class NoQuery:
    ...     modes = ("default",)
    >>> print(protocol_problem(NoQuery()))
    it has no query: async query(text, *, mode, top_k) -> QueryResponse (or its dict): ...
    >>> class Blocking:
    ...     modes = ("default",)
    ...     def query(self, text, *, mode, top_k): ...
    >>> print(protocol_problem(Blocking()))
    its query is not async: declare it `async def query(...)` (heta_eval.systems.from_callable ...)
    """
    modes = getattr(kb, "modes", None)
    if modes is None:
        return f"it has no modes: {REQUIRED_MEMBERS['modes'].doc}"
    if isinstance(modes, str) or not all(isinstance(m, str) for m in _items(modes)):
        return f"its modes must be a tuple of names, got {modes!r}"
    if not _items(modes):
        return "its modes are empty: name at least one"
    by_id = {"query_id": "q"} if member(kb, "takes_query_id") else {}
    problem = _method_problem(kb, "query", ("text",), {"mode": "m", "top_k": 1, **by_id})
    if problem is not None:
        return problem
    if getattr(kb, "query_batch", None) is None:
        return None
    size = member(kb, "batch_size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        return f"its batch_size must be a positive integer, got {size!r}"
    ids = {"query_ids": ["q"]}
    return _method_problem(kb, "query_batch", (["text"],), {"mode": "m", "top_k": 1, **ids})


def _items(modes: Any) -> list[Any]:
    try:
        return list(modes)
    except TypeError:
        return [modes]


def _method_problem(kb: Any, name: str, args: tuple, kwargs: dict[str, Any]) -> str | None:
    """Why ``kb.<name>`` cannot be awaited as the runner calls it (``args``, ``kwargs``)."""
    method = getattr(kb, name, None)
    if method is None:
        return f"it has no {name}: {REQUIRED_MEMBERS[name].doc}"
    if not callable(method):
        return f"its {name} is not callable (a {type(method).__name__})"
    if not is_async(method):
        return (
            f"its {name} is not async: declare it `async def {name}(...)` "
            "(heta_eval.systems.from_callable wraps a plain function)"
        )
    try:
        inspect.signature(method).bind(*args, **kwargs)
    except TypeError as error:
        return f"its {name} cannot take the runner's arguments {sorted(kwargs)}: {error}"
    except ValueError:
        pass  # no signature to read (a builtin): the first call will tell
    return None


def is_async(fn: Any) -> bool:
    """Whether calling ``fn`` gives a coroutine: an ``async def`` (bound, or in a
    ``functools.partial``), or an object whose ``__call__`` is one.

    >>> async def search(query, top_k): ...
    >>> is_async(search), is_async(len)
    (True, False)
    """
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
