"""Where a result names its benchmark document: the one rule, read by the records
(:class:`~heta_eval.models.query_result.QueryResult`), the collapse to documents and the runner.

A result names its document by the first of these that is set (neither ``None`` nor empty):

1. ``source["document_id"]``;
2. ``source["doc_id"]``, the result's own ``document_id``, its own ``doc_id`` (replies of other
   systems: a ``QueryResult`` reads them as ``source["document_id"]`` when it is validated);
3. in a benchmark run, the result's ``id`` or ``reference_id``, only when it is the id of one
   of the benchmark's documents (a chunk id is not a document id; a checked id outranks a
   storage key);
4. ``source["source_key"]``, then ``source["object_key"]``.

>>> source_document_id({"source_key": "doc-7", "chunk_id": 2})
'doc-7'
>>> alias_document_id({"doc_id": 3, "source": {}})
'3'
>>> known_document_id({"reference_id": "d1"}, {"d1"})
'd1'
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

__all__ = [
    "DOCUMENT_ID_ALIASES",
    "DOCUMENT_ID_FIELDS_HELP",
    "KNOWN_ID_FIELDS",
    "SOURCE_FIELDS",
    "alias_document_id",
    "known_document_id",
    "source_document_id",
]

#: ``source`` fields that name the document, in order (steps 1 and 4).
SOURCE_FIELDS = ("document_id", "source_key", "object_key")

#: Other spellings of ``source["document_id"]`` (step 2), in order: ``("source", field)`` is
#: read in the result's ``source``, ``("result", field)`` on the result itself.
DOCUMENT_ID_ALIASES = (("source", "doc_id"), ("result", "document_id"), ("result", "doc_id"))

#: Result fields that name a document only when they are a known document's id (step 3).
KNOWN_ID_FIELDS = ("id", "reference_id")

#: The rule in one line, for messages about results that map to no document.
DOCUMENT_ID_FIELDS_HELP = (
    "source.document_id (or doc_id / document_id, or an id / reference_id that is a document id)"
)


def _is_set(value: Any) -> bool:
    return value is not None and value != ""


def source_document_id(source: Mapping[str, Any]) -> str | None:
    """The document a result's ``source`` names (steps 1 and 4), or ``None``."""
    for key in SOURCE_FIELDS:
        value = source.get(key)
        if _is_set(value):
            return str(value)
    return None


def alias_document_id(result: Mapping[str, Any]) -> str | None:
    """The document a raw result (a dict) names under another spelling (step 2) when its
    ``source["document_id"]`` is not set, else ``None``."""
    source = result.get("source")
    source = source if isinstance(source, Mapping) else {}
    if _is_set(source.get("document_id")):
        return None
    for where, key in DOCUMENT_ID_ALIASES:
        value = (source if where == "source" else result).get(key)
        if _is_set(value):
            return str(value)
    return None


def known_document_id(fields: Mapping[str, Any], ids: Container[str]) -> str | None:
    """The result field among :data:`KNOWN_ID_FIELDS` that is a known document's id (step 3)."""
    for key in KNOWN_ID_FIELDS:
        value = fields.get(key)
        if value is not None and str(value) in ids:
            return str(value)
    return None
