"""What the framework adapters share: the benchmark's documents they load, the record of what
they wrap, and a framework's hit as a result that names its BEIR document.

>>> from heta_eval import Document
>>> [d.id for d in documents_of([Document(id="d1", text="Cats purr.")])]
['d1']
>>> json_safe({"k": 4, "store": object(), "fields": ("a", 1.5)})
{'k': 4, 'store': '<builtins.object>', 'fields': ['a', 1.5]}
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval.data.beir_loader import iter_corpus
from heta_eval.models.columns import ChunkTable
from heta_eval.models.records import Document, QueryResponse
from heta_eval.systems.callables import CallableKnowledgeBase, from_callable

__all__ = ["ID_KEY", "documents_of", "hit", "json_safe", "passage_text", "reply", "wrapped"]

#: The metadata field every loader writes the BEIR document id into, and adapters read.
ID_KEY = "doc_id"


def documents_of(source: Any) -> Iterator[Document]:
    """The documents of ``source``: a benchmark (its ``documents()``: a
    :class:`~heta_eval.adapters.beir.BeirBenchmark`), a BEIR folder (its corpus.jsonl) or
    documents themselves."""
    if isinstance(source, (str, os.PathLike)):
        folder = Path(source)
        yield from iter_corpus(folder / "corpus.jsonl" if folder.is_dir() else folder)
        return
    documents = source.documents() if callable(getattr(source, "documents", None)) else source
    yield from documents


def passage_text(document: Document) -> str:
    """What a framework indexes: ``title + " " + text``, as the reference knowledge base."""
    return f"{document.title} {document.text}".strip()


def reply(
    query: str, found: Sequence[tuple[Any, Mapping[str, Any] | None, Any]], id_key: str
) -> Any:
    """A framework's hits for ``query`` (``(score, metadata, chunk id)``, best first) as the
    reply :func:`~heta_eval.systems.callables.hits_response` checks: where every hit names its
    document (a non-empty string) and the scores are all numbers (or all absent), the
    columns the reference knowledge base answers with (:class:`ResultColumns`: validated as
    they are built, no object per hit: an adapter costs next to nothing over the framework);
    else one dict per hit, which the callable's check validates one by one and names the
    first bad one of."""
    ids = [(metadata or {}).get(id_key) for _, metadata, _ in found]
    scores = [score for score, _, _ in found]
    kinds = set(map(type, scores))
    plain = kinds <= {float, int} or kinds == {type(None)}
    if found and plain and set(map(type, ids)) == {str} and "" not in ids:
        numbers = None if kinds == {type(None)} else np.array(scores, dtype=np.float64)
        if numbers is None or np.isfinite(numbers).all():
            chunks = [None if chunk is None else str(chunk) for _, _, chunk in found]
            table = ChunkTable(ids, reference_ids=chunks)
            return QueryResponse(query=query, results=table.columns(np.arange(len(ids)), numbers))
    return [hit(score, metadata, chunk, id_key) for score, metadata, chunk in found]


def hit(score: Any, metadata: Mapping[str, Any] | None, chunk_id: Any, id_key: str) -> dict:
    """A framework's hit as a result: its document from ``metadata[id_key]`` (else its own
    id, when that is a document's), its own id as the chunk id."""
    chunk = None if chunk_id is None else str(chunk_id)
    source: dict[str, Any] = {"chunk_id": chunk}
    document = (metadata or {}).get(id_key)
    if document is not None:
        source["document_id"] = document
    return {"score": score, "id": chunk, "source": source}


def json_safe(value: Any) -> Any:
    """``value`` as JSON that stays the same from run to run: objects by their class."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    kind = type(value)
    return f"<{kind.__module__}.{kind.__qualname__}>"


def class_name(obj: Any) -> str:
    kind = type(obj)
    return f"{kind.__module__}.{kind.__qualname__}"


def wrapped(
    search: Callable[[str, int], Any],
    *,
    library: str,
    wraps: Any,
    settings: Mapping[str, Any],
    mode: str = "default",
    **options: Any,
) -> CallableKnowledgeBase:
    """A knowledge base answering with ``search`` that records what it wraps: the library
    (its installed version), the class of ``wraps`` and ``settings``. A results folder
    resumes only with the same library, class and settings (not version: an upgrade of the
    library is recorded, and resumed)."""
    what = {"library": library, "class": class_name(wraps), "settings": json_safe(settings)}
    record = {**what, "version": _version(library)}
    return from_callable(
        {mode: search}, identity={"wraps": what}, build_info={"wraps": record}, **options
    )


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
