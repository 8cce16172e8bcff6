"""Chunking: sizes, overlap and the locators each chunk carries."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heta_eval.models.records import Document
from heta_eval.reference.chunking import chunk_document, split_sentences

SENTENCES = [
    "Alpha beta gamma delta.",
    "Epsilon zeta eta.",
    "Theta iota kappa lambda mu.",
    "Nu xi omicron.",
    "Pi rho sigma tau upsilon phi.",
]


def make_doc(pages: bool = False) -> Document:
    text = " ".join(SENTENCES)
    spans, pos = [], 0
    for s in SENTENCES:
        spans.append((pos, pos + len(s)))
        pos += len(s) + 1
    page_spans = [(0, spans[2][0]), (spans[2][0], len(text))] if pages else []
    return Document(id="doc", title="Greek", text=text, sentences=spans, pages=page_spans)


def test_whole_document_when_it_fits() -> None:
    doc = make_doc()
    [chunk] = chunk_document(doc, size=512)
    assert (chunk.start, chunk.end, chunk.text) == (0, len(doc.text), doc.text)
    assert chunk.chunk_id == "doc#0"
    assert chunk.sentence_index == [0, 1, 2, 3, 4]


def test_sentence_aligned_chunks_with_locators() -> None:
    doc = make_doc(pages=True)
    chunks = chunk_document(doc, size=8, overlap=0)
    assert [c.text for c in chunks] == [
        "Alpha beta gamma delta. Epsilon zeta eta.",
        "Theta iota kappa lambda mu. Nu xi omicron.",
        "Pi rho sigma tau upsilon phi.",
    ]
    for n, c in enumerate(chunks):
        assert doc.text[c.start : c.end] == c.text  # the span points at the chunk text
        assert c.chunk_id == f"doc#{n}"
        assert len(c.text.split()) <= 8
    assert [c.sentence_index for c in chunks] == [[0, 1], [2, 3], [4]]
    assert [c.page_index for c in chunks] == [0, 1, 1]
    source = chunks[1].source()
    assert source == {
        "document_id": "doc",
        "chunk_id": "doc#1",
        "start": chunks[1].start,
        "end": chunks[1].end,
        "page_index": 1,
        "sentence_index": [2, 3],
    }


def test_overlap_repeats_trailing_sentences() -> None:
    doc = make_doc()
    chunks = chunk_document(doc, size=8, overlap=3)
    # "Epsilon zeta eta." (3 tokens) is carried into the next chunk.
    assert chunks[0].text.endswith("Epsilon zeta eta.")
    assert chunks[1].text.startswith("Epsilon zeta eta.")
    assert chunks[-1].end == len(doc.text)


def test_sentence_index_needs_half_the_sentence() -> None:
    text = "aaaa bbbb cccc dddd eeee ffff"
    # Sentence 1 spans 10..29; a character chunk of 20 covers 0..20: half of sentence 1 is
    # 10 chars (10..20), exactly half, so it counts; sentence 0 (0..9) is whole.
    doc = Document(id="x", text=text, sentences=[(0, 9), (10, 29)])
    first = chunk_document(doc, size=20, overlap=0, unit="chars")[0]
    assert (first.start, first.end) == (0, 9)  # sentence-aligned: sentence 1 does not fit
    assert first.sentence_index == [0]


def test_long_sentence_is_cut_and_no_sentences_uses_regex() -> None:
    text = "one two three four five six seven. Short one."
    doc = Document(id="y", text=text)
    chunks = chunk_document(doc, size=3, overlap=0)
    assert [c.text for c in chunks] == ["one two three", "four five six", "seven. Short one."]
    assert all(c.sentence_index is None and c.page_index is None for c in chunks)
    for c in chunks:
        assert text[c.start : c.end] == c.text


def test_character_unit() -> None:
    doc = make_doc()
    chunks = chunk_document(doc, size=50, overlap=0, unit="chars")
    assert all(len(c.text) <= 50 for c in chunks)
    assert chunks[0].text == "Alpha beta gamma delta. Epsilon zeta eta."


def test_bad_sizes_are_rejected() -> None:
    with pytest.raises(ValueError, match="overlap"):
        chunk_document(make_doc(), size=4, overlap=4)
    with pytest.raises(ValueError, match="size"):
        chunk_document(make_doc(), size=0)


def test_split_sentences() -> None:
    text = 'He said "stop." Then left!  Why?'
    assert [text[s:e] for s, e in split_sentences(text)] == [
        'He said "stop."',
        "Then left!",
        "Why?",
    ]


words = st.text(alphabet="abcdefg", min_size=1, max_size=6)
sentence = st.lists(words, min_size=1, max_size=12).map(lambda ws: " ".join(ws) + ".")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(sentence, min_size=1, max_size=15),
    st.integers(1, 20),
    st.integers(0, 19),
    st.sampled_from(["tokens", "chars"]),
)
def test_chunks_cover_the_text_and_spans_match(
    sentences: list[str], size: int, overlap: int, unit: str
) -> None:
    overlap = min(overlap, size - 1)
    text = " ".join(sentences)
    doc = Document(id="h", text=text)
    chunks = chunk_document(doc, size=size, overlap=overlap, unit=unit)  # type: ignore[arg-type]
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for prev, cur in itertools.pairwise(chunks):
        assert cur.start > prev.start  # always moves forward
        assert cur.start <= prev.end + 1  # no gap bigger than the separating space
    for c in chunks:
        assert text[c.start : c.end] == c.text
        measure = len(c.text.split()) if unit == "tokens" else len(c.text)
        assert measure <= size or len(chunks) == 1
