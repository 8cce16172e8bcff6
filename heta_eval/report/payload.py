"""The per-query data of a report, as one JSON-ready dict the page's script reads.

Queries are indexed once (``qids``, ``queries``) and documents once (``docs``); per metric
and system, ``values`` holds each query's score from ``per_query.jsonl`` (``None`` where the
query was not scored). ``detail`` holds, per system and query, what the drill-down shows.
Every text is shown as :mod:`heta_eval.report.text` says (cut to a bounded length, so a 1 MB
line cannot make a 1 MB report row; control and bidi characters visible). Ids are kept whole
(``qids``, ``docs.ids``: sorting, filtering, titles) and ``shown_ids`` holds, only for those a
cell shows otherwise, ``[shown, title]`` (``[shown]`` where the title is the id). Each shown
document carries the chunk hits that collapsed into it, where the folder keeps them.

>>> cut("abc", 10), cut("abcdef", 4)
('abc', 'abcd… (2 more characters)')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heta_eval.io.ids import first_stage_mode
from heta_eval.report.sources import Dataset, System
from heta_eval.report.text import TEXT_LIMIT, cut, plain_ids, shown, shown_id, whole_id
from heta_eval.runner.hits import HIT_DOCUMENTS

__all__ = ["build_payload", "cut", "numeric_metrics"]

#: The ranked documents a drill-down shows: those whose chunk hits the results folder keeps.
TOP_DOCUMENTS = HIT_DOCUMENTS
TITLE_LIMIT = 300
#: Characters of document snippets in all, shared out over the documents a report names.
SNIPPET_BUDGET = 12_000_000
SNIPPET_RANGE = (80, 400)
#: Retrieval metrics' metadata repeats per metric; one copy is kept (``collapse``).
_RETRIEVAL_KINDS = ("retrieval",)


def numeric_metrics(systems: Sequence[System]) -> list[str]:
    """Evaluators with a number per query (not categorical ones), in first-seen order."""
    seen: dict[str, None] = {}
    for system in systems:
        for name, metric in system.mode_summary.get("metrics", {}).items():
            if metric.get("kind") in ("retrieval", "numeric", "boolean"):
                seen.setdefault(name, None)
    return list(seen)


def _answers_scored(system: System) -> bool:
    metrics = system.mode_summary.get("metrics", {}).values()
    return any(
        m.get("kind") != "retrieval" and not m.get("name", "").startswith("evidence")
        for m in metrics
    )


def _query_order(systems: Sequence[System]) -> tuple[list[str], list[str]]:
    texts: dict[str, str] = {}
    for system in systems:
        for qid, record in system.records.items():
            texts.setdefault(qid, record.query)
    qids = list(texts)
    return qids, [shown(texts[q], TEXT_LIMIT) for q in qids]


def _values(system: System, qids: Sequence[str], metric: str) -> list[float | None] | None:
    values = system.values(metric)
    if not values:
        return None
    return [values.get(qid) for qid in qids]


def _score_detail(record: Any, kinds: dict[str, str]) -> dict[str, Any]:
    scores = {}
    for name, score in record.scores.items():
        entry: dict[str, Any] = {"value": score.value, "skipped": score.skipped}
        if score.passed is not None:
            entry["passed"] = score.passed
        if score.metadata and kinds.get(name) not in _RETRIEVAL_KINDS:
            entry["metadata"] = shown(_json(score.metadata), TEXT_LIMIT)
            # A judge's reason is shown beside its verdict, not only in the details.
            if isinstance(score.metadata.get("reason"), str):
                entry["reason"] = shown(score.metadata["reason"], TEXT_LIMIT)
        scores[name] = entry
    return scores


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


class _DocIndex:
    """Document ids numbered in order of first use, so each title is stored once."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.position: dict[str, int] = {}

    def __call__(self, doc_id: str) -> int:
        if doc_id not in self.position:
            self.position[doc_id] = len(self.ids)
            self.ids.append(doc_id)
        return self.position[doc_id]


def _detail(
    record: Any,
    labels: dict[str, int],
    docs: _DocIndex,
    kinds: dict[str, str],
    first: Any = None,
) -> dict[str, Any]:
    """One query's drill-down; ``first``: its record in the first stage of a reranked mode,
    whose rank of each shown document says how the second stage moved it."""
    top = record.documents[:TOP_DOCUMENTS]
    in_top = {doc_id for doc_id, _ in top}
    wanted = {doc_id for doc_id, label in labels.items() if label > 0 and doc_id not in in_top}
    # Ranks deeper than the top, only of the relevant documents missed there.
    ranks = {}
    if wanted:
        for rank, (doc_id, _) in enumerate(record.documents, 1):
            if doc_id in wanted:
                ranks[doc_id] = rank
    missed = [
        [docs(doc_id), label, ranks.get(doc_id)]
        for doc_id, label in sorted(labels.items(), key=lambda item: -item[1])
        if doc_id in wanted
    ]
    collapse = record.collapse[0] if record.collapse else {}
    return {
        "top": [[docs(doc_id), score] for doc_id, score in top],
        "retrieved": len(record.documents),
        "missed": missed,
        "answer": None if record.answer is None else shown(record.answer, TEXT_LIMIT),
        "scores": _score_detail(record, kinds),
        "failures": [shown(f"{f.evaluator}: {f.error}", TEXT_LIMIT) for f in record.failures],
        "error": None if record.error is None else shown(record.error, TEXT_LIMIT),
        "latency_ms": record.latency_ms,
        "results": record.results,
        "unmapped": record.unmapped_results,
        "duplicate_chunks": collapse.get("duplicate_chunks"),
        # Per shown document, its chunk hits [chunk id, rank, score]; None when not kept.
        "hits": _hits(record.hits[:TOP_DOCUMENTS]) if record.hits else None,
        # Per shown document, its rank in the first stage (None: not among its results).
        "moved": None if first is None else _first_ranks(first, top),
        "self_hits_removed": collapse.get("self_hits_removed"),
    }


def _hits(top: list[Any]) -> list[Any]:
    # Chunk ids are shown as any id is; one a cell shows otherwise carries its whole id
    # (the title) fourth. Most reports have none: checked first.
    if plain_ids([c for doc in top for c, _, _ in doc if c]):
        return top
    return [[_hit(c, rank, score) for c, rank, score in doc] for doc in top]


def _hit(chunk: str | None, rank: int, score: float) -> list[Any]:
    if not chunk or shown_id(chunk) == chunk:
        return [chunk, rank, score]
    return [shown_id(chunk), rank, score, whole_id(chunk)]


def _shown_ids(ids: Sequence[str]) -> dict[str, list[str]]:
    """``{position: [shown, title]}`` of the ids a cell does not show as they are; the title
    is left out where it is the id itself (a long id of plain characters: not stored twice)."""
    if plain_ids(ids):
        return {}
    changed = {}
    for i, value in enumerate(ids):
        if shown_id(value) != value:
            whole = whole_id(value)
            changed[str(i)] = [shown_id(value)] if whole == value else [shown_id(value), whole]
    return changed


def _documents(index: _DocIndex, dataset: Dataset) -> dict[str, list[str]]:
    known = [doc_id for doc_id in index.ids if doc_id in dataset.documents]
    width = SNIPPET_BUDGET // max(len(known), 1)
    width = max(SNIPPET_RANGE[0], min(SNIPPET_RANGE[1], width))
    titles, snippets = [], []
    for doc_id in index.ids:
        title, text = dataset.documents.get(doc_id, ("", ""))
        titles.append(shown(title, TITLE_LIMIT))
        words = " ".join(text[: width * 2].split())
        snippets.append(shown(words if len(words) <= width else words[:width] + "…"))
    return {"ids": index.ids, "titles": titles, "snippets": snippets}


def _first_ranks(first: Any, top: Sequence[tuple[str, float]]) -> list[int | None]:
    if not first.ok:
        return [None] * len(top)
    rank = {doc_id: r for r, (doc_id, _) in enumerate(first.documents, 1)}
    return [rank.get(doc_id) for doc_id, _ in top]


def build_payload(
    systems: Sequence[System], dataset: Dataset, metrics: Sequence[str] | None = None
) -> dict[str, Any]:
    """The per-query table and drill-down data of ``systems``, ready for ``json.dumps``."""
    qids, queries = _query_order(systems)
    metrics = list(metrics) if metrics is not None else numeric_metrics(systems)
    values: dict[str, dict[str, list[float | None]]] = {}
    for metric in metrics:
        for system in systems:
            column = _values(system, qids, metric)
            if column is not None:
                values.setdefault(metric, {})[system.label] = column
    docs = _DocIndex()
    detail: dict[str, list[dict[str, Any] | None]] = {}
    stages = {(str(s.folder), s.mode): s for s in systems}
    for system in systems:
        kinds = {n: m.get("kind", "") for n, m in system.mode_summary.get("metrics", {}).items()}
        first_mode = first_stage_mode(system.mode)
        first = stages.get((str(system.folder), first_mode)) if first_mode else None
        column: list[dict[str, Any] | None] = []
        for qid in qids:
            record = system.records.get(qid)
            labels = dataset.labels.get(qid, {})
            before = None if first is None else first.records.get(qid)
            column.append(None if record is None else _detail(record, labels, docs, kinds, before))
        detail[system.label] = column
    labels = [
        {str(docs(doc_id)): label for doc_id, label in dataset.labels.get(qid, {}).items()}
        for qid in qids
    ]
    return {
        "systems": [system.label for system in systems],
        # Per system: whether it was chunked (chunk hits always shown) and whether anything
        # scored its answers (else the answer is not put first).
        "chunked": [
            bool(((s.summary.get("recipe") or {}).get("chunking") or {}).get("size"))
            for s in systems
        ],
        "answers_scored": [_answers_scored(s) for s in systems],
        "metrics": [m for m in metrics if m in values],
        "qids": qids,
        "queries": queries,
        "values": values,
        "labels": labels,
        "has_labels": bool(dataset.labels),
        "has_texts": bool(dataset.documents),
        "dataset_note": shown(dataset.note),
        "detail": detail,
        "docs": _documents(docs, dataset),
        "shown_ids": {"q": _shown_ids(qids), "d": _shown_ids(docs.ids)},
    }
