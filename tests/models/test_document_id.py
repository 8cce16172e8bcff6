"""Where a result names its benchmark document: one rule (heta_eval.models.document_id), the
same through every door that reads it: a QueryResult's validation, the collapse's default
resolver, and the runner's mapping of ``id`` / ``reference_id`` to known documents."""

from __future__ import annotations

import pytest

from heta_eval.models.document_id import (
    DOCUMENT_ID_ALIASES,
    KNOWN_ID_FIELDS,
    SOURCE_FIELDS,
)
from heta_eval.models.records import QueryResponse
from heta_eval.retrieval.collapse import collapse_to_documents, default_document_resolver
from heta_eval.runner.checks import name_documents

KNOWN = {"d1", "d2", "d3"}


def scored_document(raw: dict) -> str | None:
    """The document a benchmark run scores for one raw result (what reaches the metrics)."""
    response = name_documents(QueryResponse(query="q", results=[{**raw, "score": 1.0}]), KNOWN)
    ranking = collapse_to_documents(response)
    return next(iter(ranking.scores), None)


@pytest.mark.parametrize(
    ("raw", "document"),
    [
        ({"source": {"document_id": "d1"}}, "d1"),
        ({"source": {"doc_id": "d1"}}, "d1"),
        ({"document_id": "d1"}, "d1"),
        ({"doc_id": 7}, "7"),  # a number is an id too
        ({"source": {"source_key": "d1"}}, "d1"),
        ({"source": {"object_key": "d1"}}, "d1"),
        ({"id": "d1"}, "d1"),
        ({"reference_id": "d1"}, "d1"),
        ({"reference_id": "d1#0"}, None),  # a chunk id is not a known document
        ({"id": "nope", "reference_id": "d2"}, "d2"),
        # Earlier steps win over later ones.
        ({"source": {"document_id": "d1", "doc_id": "d2"}, "doc_id": "d3"}, "d1"),
        ({"source": {"doc_id": "d1"}, "document_id": "d2"}, "d1"),
        ({"document_id": "d1", "doc_id": "d2"}, "d1"),
        ({"doc_id": "d1", "source": {"source_key": "d2"}}, "d1"),
        ({"source": {"source_key": "d1", "object_key": "d2"}}, "d1"),
        ({"source": {"source_key": "d1"}, "reference_id": "d2"}, "d2"),  # a known id: checked
        ({"source": {"source_key": "d1"}, "reference_id": "x9"}, "d1"),  # unknown: the key
        # An empty field names nothing: the next one is read.
        ({"source": {"document_id": "", "source_key": "d1"}}, "d1"),
        ({"source": {"document_id": ""}, "doc_id": "d2"}, "d2"),
        ({"source": {"document_id": ""}, "reference_id": "d3"}, "d3"),
        ({"source": {"chunk_id": "d1"}}, None),
    ],
)
def test_a_result_names_its_document_by_the_first_field_set(raw, document):
    assert scored_document(raw) == document


def test_every_field_of_the_rule_is_read_by_the_run():
    # The tables are the rule: each field they list names a document through the run's doors.
    for field in SOURCE_FIELDS:
        assert scored_document({"source": {field: "d1"}}) == "d1", field
    for where, field in DOCUMENT_ID_ALIASES:
        raw = {"source": {field: "d1"}} if where == "source" else {field: "d1"}
        assert scored_document(raw) == "d1", (where, field)
    for field in KNOWN_ID_FIELDS:
        assert scored_document({field: "d1"}) == "d1", field
        assert scored_document({field: "unknown"}) is None, field


def test_the_default_resolver_reads_what_validation_put_in_source():
    from heta_eval.models.query_result import QueryResult

    result = QueryResult.model_validate({"doc_id": "d1", "source": {"page": 3}})
    assert result.source == {"page": 3, "document_id": "d1"}
    assert default_document_resolver(result) == "d1"
