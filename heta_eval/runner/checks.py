"""What a run checks before it trusts its inputs and its numbers.

* :func:`scan_documents`: one pass over the benchmark's documents that fingerprints their
  content (a results folder resumes only on the same documents) and collects their ids,
  so judgments and replies that name no document are reported instead of scored as 0;
  :func:`cases_fingerprint`: the same for the cases;
* :func:`dangling_judgments`: relevance judgments and gold evidence naming a document the
  benchmark does not have (a typo scores 0 without a word otherwise);
* :func:`name_documents`: replies whose results name their document in another common
  field (``id``, ``reference_id``) are mapped when that field names a known document;
* :func:`reply_problem`: a reply whose document or chunk ids break the id rule, or whose
  text cannot be written: that query fails, with the reason, and the run goes on;
* :func:`system_identity`: what the system under test is (recipe, service, object).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from heta_eval.data.corpus_store import CorpusStore
from heta_eval.io.ids import holds_surrogate, id_problem, unscorable_id
from heta_eval.models.columns import ResultColumns
from heta_eval.models.corpus import corpus_fingerprint
from heta_eval.models.document_id import known_document_id
from heta_eval.models.records import BenchmarkCase, Document, QueryResponse, QueryResult
from heta_eval.systems.protocol import member

__all__ = [
    "DocumentScan",
    "case_id_problem",
    "cases_fingerprint",
    "dangling_judgments",
    "inputs_id_problem",
    "name_documents",
    "reply_problem",
    "scan_documents",
    "scan_store",
    "system_identity",
]

#: How many individual warnings of one kind are listed before they are only counted.
LISTED = 10


@dataclass
class DocumentScan:
    """The documents' content fingerprint (``count:sha256-prefix``, what a results folder
    records), their ids (a set, or a corpus store's :class:`DocumentIds`), and the full
    :func:`~heta_eval.models.corpus.corpus_fingerprint` (what keys the artifact cache: a
    recipe's build reuses it instead of hashing again)."""

    fingerprint: str
    ids: Collection[str] = field(default_factory=set)
    corpus: str = ""


def scan_store(store: CorpusStore) -> DocumentScan:
    """:func:`scan_documents` of a corpus store: its fingerprint was taken as it was built,
    its ids are looked up where they are stored.

    >>> store = CorpusStore.from_documents([Document(id="d1", text="Paris.")])
    >>> scan_store(store).fingerprint == scan_documents(store.documents()).fingerprint
    True
    """
    ids = store.id_index
    return DocumentScan(_counted(len(ids), store.fingerprint), ids, store.fingerprint)


def scan_documents(documents: Iterable[Document]) -> DocumentScan:
    """Fingerprint id, title, text, sentences and pages of every document, in order.

    >>> a = scan_documents([Document(id="d1", text="Paris.")])
    >>> b = scan_documents([Document(id="d1", text="Rome.")])
    >>> a.fingerprint == b.fingerprint, sorted(a.ids)
    (False, ['d1'])
    """
    ids: set[str] = set()
    corpus = corpus_fingerprint(documents, ids=ids)
    return DocumentScan(_counted(len(ids), corpus), ids, corpus)


def cases_fingerprint(cases: Sequence[BenchmarkCase]) -> str:
    """The cases' fingerprint a results folder records (``count:sha256-prefix``): a rerun
    resumes only on the same cases.

    >>> cases_fingerprint([BenchmarkCase(id="q1", query="?")]).startswith("1:")
    True
    """
    digest = hashlib.sha256()
    for case in cases:
        digest.update(case.model_dump_json().encode("utf-8"))
        digest.update(b"\0")
    return _counted(len(cases), digest.hexdigest())


def _counted(count: int, hexdigest: str) -> str:
    # What a results folder records of its inputs: how many, and a digest short enough to read.
    return f"{count}:{hexdigest[:16]}"


def content_fingerprint(value: Any) -> str:
    """A short SHA-256 of a JSON-serializable value (a recipe, a list of cases).

    >>> content_fingerprint({"a": 1}) == content_fingerprint({"a": 1})
    True
    """
    blob = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def system_identity(recipe: Any, knowledge_base: Any, name: str) -> dict[str, Any]:
    """What the system under test is: a recipe (by content), a service URL (and the names
    of the headers it is sent, never their values), or an object.

    >>> system_identity(None, type("Kb", (), {"url": "http://h/q"})(), "kb")["url"]
    'http://h/q'
    """
    if recipe is not None and knowledge_base is None:
        # Without its modes: they only say which indexes to build, not how any mode works;
        # without its second stage, which only its reranked modes use (``run.json``'s rerank).
        dump = {
            k: v for k, v in recipe.model_dump(mode="json").items() if k not in ("modes", "rerank")
        }
        return {"kind": "recipe", "name": name, "fingerprint": content_fingerprint(dump)}
    # A second stage over a system: the system's identity (the stage has its own record).
    knowledge_base = member(knowledge_base, "first_stage") or knowledge_base
    url = member(knowledge_base, "url")
    if url is not None:
        service = {"kind": "service", "name": name, "url": str(url)}
        # Headers take part by name only: their values are secrets (and a token may rotate).
        headers = list(member(knowledge_base, "header_names"))
        return {**service, "headers": headers} if headers else service
    kind = type(knowledge_base)
    identity = member(knowledge_base, "identity")
    return {
        "kind": "object",
        "name": name,
        "type": f"{kind.__module__}.{kind.__qualname__}",
        **({"identity": identity} if identity is not None else {}),
    }


def _judged(case: BenchmarkCase) -> list[str]:
    named = list(case.expected.relevance)
    named += [
        str(item.locator["document_id"])
        for item in case.expected.evidence
        if item.locator.get("document_id") is not None
    ]
    return named


def case_id_problem(case: BenchmarkCase) -> str | None:
    """Why a case cannot be run: its id, or a document id it judges, breaks the id rule
    (:func:`~heta_eval.io.ids.id_problem`); such an id would split a line of a run file.

    >>> print(case_id_problem(BenchmarkCase(id="q\\n1", query="?")))
    case id 'q\\n1' holds a newline ('\\n') (an id is one word without whitespace or controls)
    """
    why = id_problem(case.id)
    if why is not None:
        return f"case id {case.id!r} {why} (an id is one word without whitespace or controls)"
    for doc_id in _judged(case):
        why = id_problem(doc_id)
        if why is not None:
            return f"case {case.id!r} judges document id {doc_id!r}, which {why}"
    return None


def inputs_id_problem(cases: Sequence[BenchmarkCase], scan: DocumentScan) -> str | None:
    """Why a benchmark's cases or documents cannot be run, whatever read them (a benchmark
    from files names file and line itself, before this): a case or document id that breaks
    the id rule, or a judged id C code cannot take (NUL, a lone surrogate; others that break
    the rule name no document and are warned about as such). One pass over joined ids."""
    for case in cases:
        why = id_problem(case.id)
        if why is not None:
            return f"case id {case.id!r} {why} (an id is one word without whitespace or controls)"
    if "" in scan.ids or id_problem("".join(scan.ids) or "x") is not None:
        doc_id = next(d for d in sorted(scan.ids) if id_problem(d) is not None)
        return f"document id {doc_id!r} {id_problem(doc_id)}"
    judged = [(case.id, doc_id) for case in cases for doc_id in _judged(case)]
    if unscorable_id("".join(doc_id for _, doc_id in judged)):
        case_id, doc_id = next((c, d) for c, d in judged if unscorable_id(d))
        return f"case {case_id!r} judges document id {doc_id!r}, which {id_problem(doc_id)}"
    return None


def dangling_judgments(
    cases: Sequence[BenchmarkCase], ids: Container[str]
) -> list[tuple[str, str]]:
    """``(case id, document id)`` of every judgment or gold evidence naming no document.

    >>> case = BenchmarkCase(id="q1", query="?", expected={"relevance": {"d1": 1, "d9": 1}})
    >>> dangling_judgments([case], {"d1"})
    [('q1', 'd9')]
    """
    found: list[tuple[str, str]] = []
    for case in cases:
        named = _judged(case)
        found += [(case.id, doc_id) for doc_id in dict.fromkeys(named) if doc_id not in ids]
    return found


def name_documents(response: QueryResponse, ids: Collection[str]) -> QueryResponse:
    """Map results whose ``source`` has no ``document_id`` but whose ``id`` or ``reference_id``
    names a known document to that document (the rule: :mod:`heta_eval.models.document_id`);
    everything else is left as it is.

    >>> reply = QueryResponse(query="q", results=[{"reference_id": "d1", "score": 1.0}])
    >>> name_documents(reply, {"d1"}).results[0].source
    {'document_id': 'd1'}
    """
    results = response.results
    if not isinstance(results, list) or not ids:
        return response  # ResultColumns always name their documents
    changed = False
    mapped: list[QueryResult] = []
    for result in results:
        # A known id outranks source_key / object_key (step 3 before step 4): it was checked
        # against the corpus, a storage key was not.
        if result.source.get("document_id") in (None, ""):
            fields = {**(result.model_extra or {}), "reference_id": result.reference_id}
            value = known_document_id(fields, ids)
            if value is not None:
                source = {**result.source, "document_id": value}
                result = result.model_copy(update={"source": source})
                changed = True
        mapped.append(result)
    return response.model_copy(update={"results": mapped}) if changed else response


def reply_problem(response: QueryResponse, documents: Sequence[str]) -> str | None:
    """Why a reply cannot be kept, or ``None``: a document it ranks (``documents``, as the
    collapse resolved them) breaks the id rule (:func:`~heta_eval.io.ids.id_problem`:
    it would forge or break a line of ``runs/<mode>.trec``), a chunk id (``source.chunk_id``,
    ``reference_id``) holds a NUL or a lone surrogate (chunk ids are locators, kept in JSON
    and shown by the report, never written into a run file: any other text is kept), or its
    answer holds a lone surrogate (no UTF-8 file can hold one).

    >>> reply = QueryResponse(query="q", results=[{"source": {"document_id": "d\\x00"}}])
    >>> print(reply_problem(reply, ["d\\x00"]))
    document id 'd\\x00' holds a NUL character ('\\x00')
    """
    # One search over the joined ids; one by one only when it finds something.
    if "" in documents or (documents and id_problem("".join(documents)) is not None):
        doc_id = next(d for d in documents if id_problem(d) is not None)
        return f"document id {doc_id!r} {id_problem(doc_id)}"
    chunks: list[str] = []
    if not isinstance(response.results, ResultColumns):  # built-in indexes name no chunk ids
        for result in response.results:
            chunk = result.source.get("chunk_id", result.reference_id)
            if chunk is not None:
                chunks.append(chunk if isinstance(chunk, str) else str(chunk))
    if unscorable_id("".join(chunks)):
        chunk = next(c for c in chunks if unscorable_id(c))
        return f"chunk id {chunk!r} {id_problem(chunk)}"
    if response.answer is not None and holds_surrogate(response.answer):
        return "the answer holds a lone surrogate, which is not text"
    return None
