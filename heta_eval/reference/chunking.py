"""Sentence-aware chunking with size and overlap, in whitespace tokens or characters.

Every chunk keeps its locator: the document id, a chunk id ``"<doc>#<n>"``, the character
span ``[start, end)`` into the document text, the page holding the chunk's start (when the
document has pages) and the indices of the document's sentences the chunk holds (when the
document has sentence spans).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from heta_eval.models.records import Document

__all__ = ["Chunk", "chunk_document", "chunk_documents", "split_sentences"]

Unit = Literal["tokens", "chars"]

# A sentence ends at . ! or ? (optionally followed by closing quotes/brackets) and whitespace.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True)
class Chunk:
    """One piece of a document, with the locator that says where it came from.

    >>> doc = Document(id="d1", title="T", text="One two. Three four.", sentences=[(0, 8), (9, 20)])
    >>> [c.text for c in chunk_document(doc, size=2, overlap=0)]
    ['One two.', 'Three four.']
    """

    document_id: str
    chunk_id: str
    title: str
    text: str
    start: int
    end: int
    page_index: int | None = None
    sentence_index: list[int] | None = field(default=None)

    def source(self) -> dict[str, Any]:
        """The locator dict that goes into ``QueryResult.source``."""
        source: dict[str, Any] = {
            "document_id": self.document_id,
            "chunk_id": self.chunk_id,
            "start": self.start,
            "end": self.end,
        }
        if self.page_index is not None:
            source["page_index"] = self.page_index
        if self.sentence_index is not None:
            source["sentence_index"] = list(self.sentence_index)
        return source


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (a simple regex splitter).

    >>> text = "Cats purr. Dogs bark! Fish?"
    >>> [text[s:e] for s, e in split_sentences(text)]
    ['Cats purr.', 'Dogs bark!', 'Fish?']
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.start() + len(match.group(0).rstrip())
        if text[start:end].strip():
            spans.append(_strip(text, start, end))
        start = match.end()
    if text[start:].strip():
        spans.append(_strip(text, start, len(text)))
    return spans


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _length(text: str, unit: Unit) -> int:
    return len(text.split()) if unit == "tokens" else len(text)


def _split_long(text: str, start: int, end: int, size: int, unit: Unit) -> list[tuple[int, int]]:
    """Cut one over-long sentence into pieces of at most ``size`` units."""
    if unit == "chars":
        return [(s, min(s + size, end)) for s in range(start, end, size)]
    tokens = [(m.start() + start, m.end() + start) for m in _TOKEN.finditer(text[start:end])]
    return [
        (tokens[i][0], tokens[min(i + size, len(tokens)) - 1][1])
        for i in range(0, len(tokens), size)
    ]


def chunk_document(
    document: Document,
    *,
    size: int | None = 512,
    overlap: int = 0,
    unit: Unit = "tokens",
) -> list[Chunk]:
    """Split a document into sentence-aligned chunks of at most ``size`` units.

    A document that fits in ``size`` (or ``size=None``) stays whole. Otherwise whole
    sentences are packed greedily; the next chunk starts with the trailing sentences of the
    previous one that fit in ``overlap`` units. A single sentence longer than ``size`` is
    cut at token (or character) boundaries.

    >>> doc = Document(id="d", text="A b c. D e f. G h i.")
    >>> [(c.chunk_id, c.text) for c in chunk_document(doc, size=6, overlap=3)]
    [('d#0', 'A b c. D e f.'), ('d#1', 'D e f. G h i.')]
    """
    if size is not None and size <= 0:
        raise ValueError(f"chunk size must be positive, got {size}")
    if overlap < 0 or (size is not None and overlap >= size):
        raise ValueError(f"chunk overlap must be in [0, size), got {overlap} for size {size}")
    text = document.text
    if size is None or _length(text, unit) <= size:
        spans = [(0, len(text))]
    else:
        spans = _pack(text, document.sentences or split_sentences(text), size, overlap, unit)
    return [_make_chunk(document, n, start, end) for n, (start, end) in enumerate(spans)]


def _pack(
    text: str, sentences: list[tuple[int, int]], size: int, overlap: int, unit: Unit
) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    for start, end in sentences:
        if _length(text[start:end], unit) > size:
            pieces.extend(_split_long(text, start, end, size, unit))
        elif text[start:end].strip():
            pieces.append((start, end))
    if not pieces:
        return [(0, len(text))]
    lengths = [_length(text[s:e], unit) for s, e in pieces]

    def span_length(i: int, j: int) -> int:
        # Characters count the whitespace between pieces too; tokens do not.
        return pieces[j][1] - pieces[i][0] if unit == "chars" else sum(lengths[i : j + 1])

    spans: list[tuple[int, int]] = []
    first = 0
    while first < len(pieces):
        last = first
        while last + 1 < len(pieces) and span_length(first, last + 1) <= size:
            last += 1
        spans.append((pieces[first][0], pieces[last][1]))
        if last + 1 >= len(pieces):
            break
        # Back off over trailing pieces that fit in the overlap, but always move forward.
        nxt = last + 1
        while nxt - 1 > first and span_length(nxt - 1, last) <= overlap:
            nxt -= 1
        first = nxt
    return spans


def _make_chunk(document: Document, n: int, start: int, end: int) -> Chunk:
    page_index = None
    if document.pages:
        # The page holding the chunk's first character; else the last page starting before it.
        page_index = next(
            (i for i, (ps, pe) in enumerate(document.pages) if ps <= start < pe),
            max((i for i, (ps, _) in enumerate(document.pages) if ps <= start), default=0),
        )
    sentence_index = None
    if document.sentences:
        sentence_index = [
            i
            for i, (ss, se) in enumerate(document.sentences)
            # A sentence belongs to the chunk when at least half of it lies inside.
            if se > ss and 2 * (min(se, end) - max(ss, start)) >= se - ss
        ]
    return Chunk(
        document_id=document.id,
        chunk_id=f"{document.id}#{n}",
        title=document.title,
        text=document.text[start:end],
        start=start,
        end=end,
        page_index=page_index,
        sentence_index=sentence_index,
    )


def chunk_documents(
    documents: list[Document], *, size: int | None = 512, overlap: int = 0, unit: Unit = "tokens"
) -> list[Chunk]:
    """Chunk every document, in order (see :func:`chunk_document`).

    >>> len(chunk_documents([Document(id="a", text="x"), Document(id="b", text="y")]))
    2
    """
    return [c for d in documents for c in chunk_document(d, size=size, overlap=overlap, unit=unit)]
