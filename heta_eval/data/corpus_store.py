"""A corpus as columns on disk: ids, titles and texts read once from ``corpus.jsonl`` into an
Arrow file that every later step memory-maps, so no step holds the corpus as Python objects.

MS MARCO's 8.8M passages as ``Document`` objects take more memory than the machine a BEIR
run should fit on; as Arrow columns they are a file of the corpus's size, mapped, of which a
step touches only what it reads. The store is built by streaming the file once, with the
loader's checks on every line (file and line in every error), and in the same pass the
corpus fingerprint (:func:`~heta_eval.models.corpus.corpus_fingerprint`, the very value that
hashing ``Document`` objects gives, so results folders and caches keyed on it stay valid).

Stores of files are cached under ``$HETA_EVAL_CACHE_DIR/corpus/``, keyed by the file's path,
size and modification time: an edited corpus is read again. A store is written to a
temporary file and renamed into place when complete, so an interrupted build leaves nothing
a later run trusts.

>>> store = CorpusStore.from_documents([Document(id="d1", title="Paris", text="Big."),
...                                     Document(id="d2", text="Rome.")])
>>> len(store), store.ids[1], store.texts[0], "d2" in store.id_index, "d3" in store.id_index
(2, 'd2', 'Big.', True, False)
>>> store.document(0).title
'Paris'
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, overload

from heta_eval import config
from heta_eval._runtime import return_free_memory
from heta_eval.data.beir_loader import DatasetFormatError, jsonl_line_problem
from heta_eval.data.store_columns import DocumentIds, StringColumn
from heta_eval.io.ids import holds_surrogate, id_problem
from heta_eval.models.corpus import corpus_fingerprint
from heta_eval.models.records import Document

__all__ = ["STORE_VERSION", "CorpusStore"]

#: Bumped when the file layout or the checks change, so older stores are read again.
STORE_VERSION = 2
#: Rows per Arrow record batch: the unit of writing and of reading in order.
BATCH_ROWS = 65_536
_COLUMNS = ("id", "title", "text")
# JSON's own string quoting (the C one where the interpreter has it), as json.dumps quotes.
_quote = json.encoder.encode_basestring
_decode = json.JSONDecoder().decode


class CorpusStore(Sequence[Document]):
    """A corpus as three string columns (:attr:`ids`, :attr:`titles`, :attr:`texts`), row
    ``i`` being the corpus's ``i``-th document, and its :attr:`fingerprint`. It is also a
    ``Sequence[Document]`` (each built when read), so code written for a list of documents
    takes a store unchanged.

    Build one with :meth:`from_jsonl` (a BEIR ``corpus.jsonl``: streamed once, cached) or
    :meth:`from_documents` (documents already in memory; their sentence and page spans are
    kept for chunking).
    """

    def __init__(
        self,
        table: Any,
        fingerprint: str,
        *,
        documents: Sequence[Document] | None = None,
        path: Path | None = None,
        keep_alive: Any = None,
    ) -> None:
        def column(name: str) -> StringColumn:
            return StringColumn(table.column(name), source=None if path is None else (path, name))

        self.ids, self.titles, self.texts = column("id"), column("title"), column("text")
        # Each text's length in characters, one zero-copy array per record batch: a whole
        # document's locator ends there, and reading the text to count it would touch the
        # file wherever a deep run's hits fall.
        self._text_lengths = [c.to_numpy() for c in table.column("text_length").chunks]
        #: :func:`~heta_eval.models.corpus.corpus_fingerprint` of the documents.
        self.fingerprint = fingerprint
        #: The Arrow file the columns are mapped from (``None``: in memory).
        self.path = path
        self._documents = documents
        self._keep_alive = keep_alive  # a temporary folder that lives as long as the store
        self._mapped: mmap.mmap | None = None  # the file's mapping, when opened from one

    def __len__(self) -> int:
        return len(self.ids)

    def text_length(self, row: int) -> int:
        """The length of row ``row``'s text in characters, without reading the text."""
        chunk, offset = self.ids.locate(row)
        return int(self._text_lengths[chunk][offset])

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        return f"CorpusStore({len(self)} documents{where})"

    @cached_property
    def id_index(self) -> DocumentIds:
        """The document ids as a set (:class:`DocumentIds`), built on first use."""
        return DocumentIds(self.ids)

    @overload
    def __getitem__(self, index: int) -> Document: ...
    @overload
    def __getitem__(self, index: slice) -> list[Document]: ...
    def __getitem__(self, index: int | slice) -> Document | list[Document]:
        if isinstance(index, slice):
            return [self.document(i) for i in range(*index.indices(len(self)))]
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"document {index} out of range ({n} documents)")
        return self.document(index % n)

    def __iter__(self) -> Iterator[Document]:
        return self.documents()

    def document(self, row: int) -> Document:
        """Row ``row`` as a :class:`Document`."""
        if self._documents is not None:
            return self._documents[row]
        return Document(id=self.ids[row], title=self.titles[row], text=self.texts[row])

    def documents(self) -> Iterator[Document]:
        """Every document, in order, built one record batch at a time."""
        if self._documents is not None:
            yield from self._documents
            return
        for doc_id, title, text in zip(self.ids, self.titles, self.texts, strict=True):
            yield Document(id=doc_id, title=title, text=text)

    @property
    def has_spans(self) -> bool:
        """Whether some document has sentence or page spans (only documents given in memory
        can: a BEIR corpus has none)."""
        docs = self._documents
        return docs is not None and any(d.sentences or d.pages for d in docs)

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def from_documents(cls, documents: Iterable[Document]) -> CorpusStore:
        """A store of documents already in memory (they are kept, spans and all)."""
        import pyarrow as pa

        docs = list(documents)
        fingerprint = corpus_fingerprint(docs)
        table = pa.table(
            {
                "id": pa.array([d.id for d in docs], type=pa.large_string()),
                "title": pa.array([d.title for d in docs], type=pa.large_string()),
                "text": pa.array([d.text for d in docs], type=pa.large_string()),
                "text_length": pa.array([len(d.text) for d in docs], type=pa.int64()),
            }
        )
        return cls(table, fingerprint, documents=docs)

    @classmethod
    def from_jsonl(
        cls, path: str | os.PathLike[str], *, cache: bool = True, progress: bool = False
    ) -> CorpusStore:
        """The store of a BEIR ``corpus.jsonl``: read from the cache when this very file
        (path, size, modification time) was read before, else streamed once into it.
        ``cache=False`` builds into a temporary folder removed with the store. A line that
        cannot be read is a :class:`~heta_eval.data.beir_loader.DatasetFormatError` naming
        the file and line."""
        source = Path(path).resolve()
        stat = source.stat()
        if not cache:
            folder = tempfile.TemporaryDirectory(prefix="heta-eval-corpus-")
            target = Path(folder.name) / "corpus.arrow"
            fingerprint = _build(source, stat.st_size, target, progress)
            store = cls.open(target, fingerprint)
            store._keep_alive = folder
            return store
        key = hashlib.sha256(
            json.dumps([STORE_VERSION, str(source), stat.st_size, stat.st_mtime_ns]).encode()
        ).hexdigest()[:24]
        root = config.cache_dir("corpus")
        target = root / f"{source.parent.name or 'corpus'}-{key}.arrow"
        meta = target.with_suffix(".json")
        if target.exists() and meta.exists():
            recorded = json.loads(meta.read_text(encoding="utf-8"))
            return cls.open(target, recorded["fingerprint"])
        root.mkdir(parents=True, exist_ok=True)
        partial = root / f".{target.name}.{uuid.uuid4().hex}.part"
        try:
            fingerprint = _build(source, stat.st_size, partial, progress)
            meta_partial = partial.with_suffix(".json.part")
            meta_partial.write_text(json.dumps({"fingerprint": fingerprint, "source": str(source)}))
            os.replace(partial, target)  # the data first: a store without its meta is not read
            os.replace(meta_partial, meta)
        finally:
            partial.unlink(missing_ok=True)
            partial.with_suffix(".json.part").unlink(missing_ok=True)
        return cls.open(target, fingerprint)

    @classmethod
    def open(cls, path: Path, fingerprint: str) -> CorpusStore:
        """A store from its Arrow file, memory-mapped."""
        import pyarrow as pa

        # Mapped by Python, read by Arrow in place: the mapping can give its pages back.
        with open(path, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        table = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(mapped))).read_all()
        store = cls(table, fingerprint, path=path)
        store._mapped = mapped
        return store

    def release_pages(self) -> None:
        """Give back the pages of the file that reads have touched (texts for answers,
        snippets, reranking): they stay in the system's file cache, but no longer count as
        this process's memory, which would otherwise grow towards the whole corpus over a
        deep run's scattered reads. A store in memory has nothing to give back."""
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if self._mapped is not None and advice is not None:
            with contextlib.suppress(OSError, ValueError):  # advice only: never worth failing
                self._mapped.madvise(advice)


def _build(source: Path, size: int, target: Path, progress: bool) -> str:
    """Stream ``source`` into the Arrow file ``target``; the corpus fingerprint."""
    import pyarrow as pa
    from tqdm.auto import tqdm

    schema = pa.schema(
        [*((name, pa.large_string()) for name in _COLUMNS), ("text_length", pa.int64())]
    )
    digest = hashlib.sha256()
    columns: tuple[list[str], list[str], list[str]] = ([], [], [])

    def flush(writer: Any) -> None:
        if columns[0]:
            arrays = [pa.array(values, type=pa.large_string()) for values in columns]
            arrays.append(pa.array(map(len, columns[2]), type=pa.int64(), size=len(columns[2])))
            writer.write_batch(pa.record_batch(arrays, schema=schema))
            for values in columns:
                values.clear()

    with (
        open(source, "rb") as handle,
        pa.OSFile(str(target), "wb") as sink,
        pa.ipc.new_file(sink, schema) as writer,
        tqdm(
            total=size,
            desc=f"reading {source.name}",
            unit="B",
            unit_scale=True,
            disable=not progress,
            dynamic_ncols=True,
        ) as bar,
    ):
        ids, titles, texts = columns
        for number, raw in enumerate(handle, start=1):
            doc_id, title, text = _fields(raw, source, number)
            # corpus_fingerprint's record, json.dumps([id, title, text, [], []]) spelled out.
            record = f"[{_quote(doc_id)}, {_quote(title)}, {_quote(text)}, [], []]\n"
            digest.update(record.encode())
            ids.append(doc_id)
            titles.append(title)
            texts.append(text)
            if len(ids) == BATCH_ROWS:
                flush(writer)
                bar.update(handle.tell() - bar.n)
        flush(writer)
        bar.update(size - bar.n)
    if size >= 1 << 26:  # the batches' strings: the next step (an index build) reuses none
        return_free_memory()
    return digest.hexdigest()


def _fields(raw: bytes, source: Path, number: int) -> tuple[str, str, str]:
    """One line's id, title and text, as the loader reads them (missing: ``""``)."""
    try:  # the common case, checked as the loader checks it but without its detours
        obj = _decode(raw.decode("utf-8"))
        doc_id = obj["_id"]
        if type(doc_id) is not str or id_problem(doc_id) is not None:
            raise ValueError("an id to look at closely")
        if (b"\\ud" in raw or b"\\uD" in raw) and holds_surrogate(obj):
            raise ValueError("a lone surrogate")
    except (ValueError, KeyError, TypeError, RecursionError):
        obj, why = jsonl_line_problem(raw)
        if why is not None:
            raise DatasetFormatError(why, source, number) from None
        assert isinstance(obj, dict)
        doc_id = str(obj["_id"])
    title, text = obj.get("title") or "", obj.get("text") or ""
    if type(title) is not str or type(text) is not str:
        name, value = ("title", title) if type(title) is not str else ("text", text)
        raise DatasetFormatError(
            f'"{name}" is a {type(value).__name__}, expected a string', source, number
        )
    return doc_id, title, text
