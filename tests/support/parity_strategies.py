"""The random inputs of the parity tests (retrieval, engine, BEIR's custom measures): ids that
sort differently as strings and overlap (self-hits), non-ASCII ids, tied and float32-close
scores, random k; and chunk-level responses that collapse to a given document-level run."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from heta_eval.evaluation import QueryResponse

QIDS = ["q1", "q2", "q3", "文-q4", "10"]

# Doc ids overlap query ids (self-hits), sort differently as strings, and are non-ASCII.
DOCS = ["d1", "d2", "D3", "é4", "文5", "q1", "q2", "10", "9", "100", "z"]

# Scores with exact ties, float32-close values (1+1e-9 ties 1.0 in float32, 1+1e-7 does not).
SCORES = st.one_of(
    st.sampled_from([1.0, 2.0, 0.5, 1.0 + 1e-9, 1.0 + 1e-7, 3.0, -1.0, 0.0]),
    st.floats(min_value=-10, max_value=10, allow_nan=False, allow_infinity=False),
    st.integers(min_value=-3, max_value=3),
)

qrels_strategy = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOCS), st.integers(min_value=0, max_value=3), max_size=6),
    max_size=5,
)

run_strategy = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOCS), SCORES, max_size=11),
    max_size=5,
)

K_VALUES = st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=4, unique=True)

# Longer lists than the core strategies, so k cuts inside them and ties are frequent.
MANY_DOCS = [*DOCS, "ü", "Ü", "a b", "d10", "d1 ", "ß", "😀", ""]

wide_run_strategy = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from([d for d in MANY_DOCS if d]), SCORES),
    max_size=5,
)

# TREC files cannot hold ids with whitespace.
file_run_strategy = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from([d for d in MANY_DOCS if d and d.split() == [d]]), SCORES),
    max_size=5,
)

WIDE_K = st.lists(st.integers(min_value=1, max_value=25), min_size=1, max_size=6, unique=True)


def chunked_response(qid: str, docs: dict[str, float], rng: random.Random) -> QueryResponse:
    """Results whose first occurrence per document reproduces ``docs`` in order, padded with
    later duplicate chunks, chunks that map to no document, and self-hits."""
    results = []
    for doc, score in docs.items():
        results.append({"text": f"{doc} first", "score": score, "source": {"document_id": doc}})
    for doc in list(docs) * 2:
        if rng.random() < 0.5:
            position = rng.randint(
                results.index(next(r for r in results if r["source"].get("document_id") == doc))
                + 1,
                len(results),
            )
            results.insert(
                position,
                {
                    "text": "dup",
                    "score": rng.uniform(-20, 20),
                    "source": {"document_id": doc, "chunk_id": "x"},
                },
            )
    for _ in range(rng.randint(0, 2)):
        results.insert(rng.randint(0, len(results)), {"text": "orphan", "score": 99.0})
    if rng.random() < 0.3:
        results.insert(
            rng.randint(0, len(results)),
            {"text": "self", "score": 50.0, "source": {"source_key": qid}},
        )
    return QueryResponse.model_validate({"query": qid, "results": results})
