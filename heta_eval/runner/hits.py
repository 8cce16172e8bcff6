"""The chunk hits behind each shown document: what a results folder keeps in ``hits.jsonl``.

A knowledge base answers with chunks; the per-query record keeps documents (each document's
best chunk). For the first ``HIT_DOCUMENTS`` documents of each query and mode (those the
report's drill-down shows), ``hits.jsonl`` keeps every chunk hit that collapsed into them:
``[chunk id, rank, score]``, where the rank is the hit's 1-based position in the reply and the
chunk id is ``source.chunk_id`` (else the hit's ``reference_id``, else null). One line per
case and mode, the list aligned with the record's documents (none where each document is one
hit at its own rank with no chunk id: whole documents from a service that names no chunks):

``{"case_id": "7", "mode": "vector_search", "hits": [[["d3#2", 1, 0.81], ["d3#0", 4, 0.7]],
[["d9#1", 2, 0.8]]]}``

>>> from heta_eval.evaluation import QueryResponse
>>> reply = QueryResponse(query="q", results=[
...     {"score": 0.9, "source": {"document_id": "a", "chunk_id": "a#1"}},
...     {"score": 0.8, "source": {"document_id": "b", "chunk_id": "b#0"}},
...     {"score": 0.7, "source": {"document_id": "a", "chunk_id": "a#0"}}])
>>> chunk_hits(reply.results, ["a", "b"])
[[['a#1', 1, 0.9], ['a#0', 3, 0.7]], [['b#0', 2, 0.8]]]
>>> whole = QueryResponse(query="q", results=[{"score": 2.0, "source": {"document_id": "a"}}])
>>> chunk_hits(whole.results, ["a"])
[]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from heta_eval.io import json_text
from heta_eval.models.columns import ResultColumns
from heta_eval.retrieval.collapse import default_document_resolver

__all__ = ["HITS_FILE", "HIT_DOCUMENTS", "Hits", "chunk_hits", "hits_line", "read_hits"]

#: Documents per query whose chunk hits are kept: the drill-down's top documents.
HIT_DOCUMENTS = 10
#: The file beside ``per_query.jsonl`` that keeps them.
HITS_FILE = "hits.jsonl"

#: Per shown document, its chunk hits ``[chunk id (str or None), rank (int), score (float or
#: None)]``: lists, as JSON reads them back, so a record in memory equals one read from disk.
Hits = list[list[list[Any]]]


def chunk_hits(
    results: Sequence[Any],
    documents: Sequence[str],
    resolver: Callable[[Any], str | None] | None = None,
) -> Hits:
    """The chunk hits of the first ``HIT_DOCUMENTS`` of ``documents`` among ``results`` (a
    reply's hits, best first), mapped to documents as the collapse maps them."""
    shown = {doc_id: i for i, doc_id in enumerate(documents[:HIT_DOCUMENTS])}
    hits: Hits = [[] for _ in shown]
    if not shown:
        return hits
    columns = resolver is None and isinstance(results, ResultColumns)
    if columns:
        owners: Sequence[str | None] = results.document_ids  # no result built for this
    else:
        resolve = resolver or default_document_resolver
        owners = [resolve(result) for result in results]
    for rank, owner in enumerate(owners, 1):
        slot = shown.get(owner) if owner is not None else None
        if slot is None:
            continue
        if columns:  # no result built either: its text is never read
            chunk, score = results.chunk_id(rank - 1), results.score(rank - 1)
        else:
            result = results[rank - 1]
            chunk, score = result.source.get("chunk_id", result.reference_id), result.score
        hits[slot].append([None if chunk is None else str(chunk), rank, score])
    # Each document one hit, at its own rank and with no chunk id: the documents say it all.
    if all(len(h) == 1 and h[0][0] is None and h[0][1] == i for i, h in enumerate(hits, 1)):
        return []
    return hits


def hits_line(case_id: str, mode: str, hits: Hits) -> str:
    """One line of ``hits.jsonl``."""
    record = {"case_id": case_id, "mode": mode, "hits": hits}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def read_hits(path: Path) -> dict[tuple[str, str], Hits]:
    """``{(case id, mode): hits}`` of a ``hits.jsonl`` (the last line of a key wins); a
    missing file is empty, and a last line cut short by a killed run is ignored."""
    found: dict[tuple[str, str], Hits] = {}
    if not path.exists():
        return found
    text = path.read_text(encoding="utf-8").split("\n")
    lines = [(number, line) for number, line in enumerate(text, 1) if line.strip()]
    try:  # one parse of the whole file: much faster than a parse per line
        records = json_text.loads("[" + ",".join(line for _, line in lines) + "]")
        return {(str(r["case_id"]), str(r["mode"])): r["hits"] for r in records}
    except (ValueError, KeyError, TypeError):
        pass  # a line is cut short or wrong: find it, line by line
    for number, line in lines:
        try:
            record = json_text.loads(line)
            found[(str(record["case_id"]), str(record["mode"]))] = record["hits"]
        except (ValueError, KeyError, TypeError) as error:
            if number == lines[-1][0] and not line.endswith("}"):
                break  # the process was killed while writing this line
            raise ValueError(f"{path}:{number}: not a hits record ({error})") from None
    return found
