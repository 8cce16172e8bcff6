"""The passages a knowledge base indexes: a corpus's documents, whole or chunked, as columns.

Whole documents (BEIR's protocol: ``chunking.size=None``) are the corpus store's own rows:
nothing is copied, each passage's text is read from the store when something asks for it.
Chunked documents are cut by :func:`~heta_eval.reference.chunking.chunk_documents`, which needs
the documents' sentence and page spans, so they are materialized (custom corpora, small).

>>> from heta_eval.data.corpus_store import CorpusStore
>>> from heta_eval.models.records import Document
>>> store = CorpusStore.from_documents([Document(id="d1", title="Paris", text="Big. Old.")])
>>> whole = passages(store, size=None)
>>> len(whole), whole.texts[0], whole.table.result(0).source
(1, 'Paris Big. Old.', {'document_id': 'd1', 'chunk_id': 'd1#0', 'start': 0, 'end': 9})
>>> chunked = passages(store, size=1, unit="tokens")
>>> [chunked.table.result(i).text for i in range(len(chunked))]
['Big.', 'Old.']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from heta_eval.data.corpus_store import CorpusStore
from heta_eval.data.store_columns import StringColumn
from heta_eval.models.columns import ChunkTable
from heta_eval.reference.chunking import Chunk, Unit, chunk_documents

__all__ = ["Passages", "passages"]


@dataclass(frozen=True)
class Passages:
    """Row ``i`` is one passage: :attr:`table` maps it to its document (and builds results),
    :attr:`texts` is what BM25 (one field) and the encoder index (``title + " " + text``),
    :attr:`titles` and :attr:`bodies` the two fields of a multifield BM25 index."""

    table: ChunkTable
    texts: Sequence[str]
    titles: Sequence[str]
    bodies: Sequence[str]
    #: The passages as :class:`~heta_eval.reference.chunking.Chunk` objects (whole documents: built
    #: when read).
    chunks: Sequence[Chunk]

    def __len__(self) -> int:
        return len(self.table)


def passages(
    store: CorpusStore, *, size: int | None, overlap: int = 0, unit: Unit = "tokens"
) -> Passages:
    """The passages of ``store``: its documents whole when none needs cutting
    (``size=None``), else their chunks."""
    if size is None and not store.has_spans:
        table = ChunkTable(
            store.ids,
            texts=store.texts,
            reference_ids=_ChunkIds(store.ids),
            sources=_WholeSources(store),
        )
        joined = _Joined(store.titles, store.texts)
        return Passages(table, joined, store.titles, store.texts, _WholeChunks(store))
    chunks = chunk_documents(list(store.documents()), size=size, overlap=overlap, unit=unit)
    table = ChunkTable(
        [c.document_id for c in chunks],
        texts=[c.text for c in chunks],
        reference_ids=[c.chunk_id for c in chunks],
        sources=_ChunkSources(chunks),
    )
    texts = [f"{c.title} {c.text}".strip() for c in chunks]
    return Passages(table, texts, [c.title for c in chunks], [c.text for c in chunks], chunks)


class _Lazy(Sequence[str]):
    """A column computed row by row from store columns (never all at once)."""

    def __init__(self, *columns: StringColumn) -> None:
        self.columns = columns

    def value(self, *parts: str) -> str:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.columns[0])

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            sliced = [column[index] for column in self.columns]
            return [self.value(*parts) for parts in zip(*sliced, strict=True)]
        return self.value(*(column[index] for column in self.columns))

    def __iter__(self) -> Iterator[str]:
        return (self.value(*parts) for parts in zip(*self.columns, strict=True))

    def take(self, rows: Sequence[int]) -> list[str]:
        taken = [column.take(rows) for column in self.columns]
        return [self.value(*parts) for parts in zip(*taken, strict=True)]


class _Joined(_Lazy):
    """``f"{title} {text}".strip()``: the text a passage is indexed by."""

    def value(self, *parts: str) -> str:
        title, text = parts
        return f"{title} {text}".strip()


class _ChunkIds(_Lazy):
    """A whole document's chunk id, ``"<doc>#0"``, as chunking names it."""

    def value(self, *parts: str) -> str:
        return f"{parts[0]}#0"


class _WholeChunks(Sequence[Chunk]):
    """A store's documents as whole-document chunks, built when read."""

    def __init__(self, store: CorpusStore) -> None:
        self.store = store

    def __len__(self) -> int:
        return len(self.store)

    @overload
    def __getitem__(self, index: int) -> Chunk: ...
    @overload
    def __getitem__(self, index: slice) -> list[Chunk]: ...
    def __getitem__(self, index: int | slice) -> Chunk | list[Chunk]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        s = self.store
        doc_id, text = s.ids[index], s.texts[index]
        return Chunk(doc_id, f"{doc_id}#0", s.titles[index], text, 0, len(text))


class _WholeSources:
    """Row -> a whole document's locator (what :meth:`Chunk.source` gives for it)."""

    def __init__(self, store: CorpusStore) -> None:
        self.store = store

    def __call__(self, row: int) -> dict[str, Any]:
        doc_id = self.store.ids[row]
        return {
            "document_id": doc_id,
            "chunk_id": f"{doc_id}#0",
            "start": 0,
            "end": self.store.text_length(row),
        }


class _ChunkSources:
    """Row -> the chunk's locator, built on demand (a class, not a lambda: picklable)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = chunks

    def __call__(self, row: int) -> dict[str, Any]:
        return self.chunks[row].source()
