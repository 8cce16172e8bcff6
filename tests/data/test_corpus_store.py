"""The corpus store: a BEIR corpus.jsonl streamed once into Arrow columns on disk, with the
same fingerprint, ids and errors as reading it into Document objects; cached by the file's
identity, never left half-written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from heta_eval.data.beir_loader import DatasetFormatError, iter_corpus
from heta_eval.data.corpus_store import BATCH_ROWS, CorpusStore
from heta_eval.data.store_columns import DocumentIds, StringColumn
from heta_eval.models.corpus import corpus_fingerprint
from heta_eval.runner.checks import scan_documents, scan_store

TRICKY = [
    {"_id": "d1", "title": "Ärger", "text": 'naïve café \u2028 line\tsep "quoted" \\ back'},
    {"_id": 7, "title": None, "text": "an integer id, a null title"},
    {"_id": "d3", "text": "no title at all"},
    {"_id": "d4", "title": "no text"},
    {"_id": "d5", "title": "", "text": ""},
    {"_id": "d1", "title": "again", "text": "a repeated id"},
    {"_id": "é\u200d", "title": "emoji 👍🏽", "text": "😀 a pair when escaped"},
]


def write_corpus(path: Path, rows: list[dict], *, ascii_only: bool = False) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=ascii_only) + "\n")
    return path


@pytest.mark.parametrize("ascii_only", [False, True])
def test_store_holds_what_the_loader_reads_with_the_same_fingerprint(tmp_path, ascii_only):
    corpus = write_corpus(tmp_path / "corpus.jsonl", TRICKY, ascii_only=ascii_only)
    store = CorpusStore.from_jsonl(corpus, cache=False)
    documents = list(iter_corpus(corpus))
    assert store.fingerprint == corpus_fingerprint(documents)
    assert list(store.ids) == [d.id for d in documents]
    assert list(store.titles) == [d.title for d in documents]
    assert list(store.texts) == [d.text for d in documents]
    assert [d.model_dump() for d in store.documents()] == [d.model_dump() for d in documents]
    # Lengths in characters (not bytes, not UTF-16 units), kept so a locator needs no text.
    in_memory = CorpusStore.from_documents(documents)
    for held in (store, in_memory):
        assert [held.text_length(i) for i in range(len(held))] == [len(d.text) for d in documents]
    # The run's scan: the same fingerprint, document count (distinct ids) and membership.
    scanned, stored = scan_documents(iter_corpus(corpus)), scan_store(store)
    assert stored.fingerprint == scanned.fingerprint and stored.corpus == scanned.corpus
    assert len(stored.ids) == len(scanned.ids) == 6
    assert all(doc_id in stored.ids for doc_id in scanned.ids)
    assert "d2" not in stored.ids and "" not in stored.ids and None not in stored.ids


def test_real_scifact_store_equals_its_documents(scifact_dir):
    corpus = scifact_dir / "corpus.jsonl"
    store = CorpusStore.from_jsonl(corpus, cache=False)
    documents = list(iter_corpus(corpus))
    assert len(store) == len(documents) == 5183
    assert store.fingerprint == corpus_fingerprint(documents)
    rows = [0, 4000, 17, 5182]
    assert store.ids.take(rows) == [documents[r].id for r in rows]
    assert store.texts[4000] == documents[4000].text
    assert store.document(17) == documents[17]
    assert store.id_index.rows(documents[17].id) == [17]


def test_columns_cross_record_batches(tmp_path):
    rows = [{"_id": f"d{i}", "text": f"text {i}"} for i in range(BATCH_ROWS + 5)]
    store = CorpusStore.from_jsonl(write_corpus(tmp_path / "corpus.jsonl", rows), cache=False)
    assert len(store.ids.arrow.chunks) == 2
    edge = [BATCH_ROWS - 1, BATCH_ROWS, BATCH_ROWS + 4, 0]
    assert [store.ids[i] for i in edge] == [f"d{i}" for i in edge]
    assert store.ids.take(edge) == [f"d{i}" for i in edge]
    assert store.texts[BATCH_ROWS - 2 : BATCH_ROWS + 2] == [
        f"text {i}" for i in range(BATCH_ROWS - 2, BATCH_ROWS + 2)
    ]
    assert store.ids[-1] == f"d{BATCH_ROWS + 4}"
    with pytest.raises(IndexError):
        store.ids[BATCH_ROWS + 5]
    assert len(store.id_index) == BATCH_ROWS + 5
    assert f"d{BATCH_ROWS + 2}" in store.id_index
    # A gather over both batches, in any order, with repeats and negative rows, equals
    # indexing row by row; a row out of range is refused as indexing refuses it.
    rows = [BATCH_ROWS + 4, 3, BATCH_ROWS, 3, -1, -(BATCH_ROWS + 5), BATCH_ROWS - 1]
    assert store.texts.take(rows) == [store.texts[i] for i in rows]
    assert store.texts.take([]) == []
    for bad in ([BATCH_ROWS + 5], [0, -(BATCH_ROWS + 6)]):
        with pytest.raises(IndexError, match="out of range"):
            store.texts.take(bad)


def _mapped_mb(path: Path) -> float:
    """This process's resident pages of ``path``'s mappings, in MB (Linux's smaps)."""
    kb, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            parts = line.split()
            if "-" in parts[0] and not parts[0].endswith(":"):
                inside = len(parts) > 5 and parts[5] == str(path)
            elif inside and parts[0] == "Rss:":
                kb += int(parts[1])
    return kb / 1024


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads Linux's smaps")
def test_scattered_reads_leave_no_pages_behind(tmp_path, monkeypatch):
    # A deep run reads texts all over the corpus (answers, snippets, reranking): the pages
    # those reads touch must not stay this process's memory (a whole corpus, at MS MARCO).
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    rows = [{"_id": f"d{i}", "text": f"{i} " + "x" * 2000} for i in range(6000)]
    store = CorpusStore.from_jsonl(write_corpus(tmp_path / "corpus.jsonl", rows))
    assert store.path is not None
    spread = list(range(0, 6000, 7))
    # A gather maps each batch on its own and lets it go: nothing stays mapped.
    assert [t.split()[0] for t in store.texts.take(spread)] == [str(i) for i in spread]
    assert _mapped_mb(store.path) < 1
    # Reads through the store's own mapping stay until the store gives them back.
    assert [store.texts[i].split()[0] for i in spread] == [str(i) for i in spread]
    assert _mapped_mb(store.path) > 5
    store.release_pages()
    assert _mapped_mb(store.path) < 1
    assert store.texts[4242].startswith("4242 ")  # read again from the file cache


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"_id": "x", "text": 5}', '"text" is a int, expected a string'),
        (b'{"_id": "x", "title": ["a"], "text": "t"}', '"title" is a list, expected a string'),
        (b'{"_id": "a b", "text": "t"}', "_id 'a b' holds a space"),
        (b'{"text": "t"}', 'expected a JSON object with an "_id"'),
        (b'{"_id": "x", "text": "\\ud800"}', "lone surrogate"),
        (b'{"_id": "x", "text": "t"', "invalid JSON"),
        (b"\n", "empty line"),
        (b'{"_id": "x", "text": "\xff"}', "not UTF-8"),
    ],
)
def test_a_bad_line_is_named_with_its_file_and_line_and_nothing_is_kept(
    tmp_path, monkeypatch, line, message
):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(b'{"_id": "ok", "text": "fine"}\n' + line + b"\n")
    cache = tmp_path / "cache"
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(cache))
    with pytest.raises(DatasetFormatError) as caught:
        CorpusStore.from_jsonl(corpus)
    assert str(caught.value).startswith(f"{corpus.resolve()}:2: ")
    assert message in str(caught.value)
    # The partial store is gone: nothing a later run could trust.
    assert list((cache / "corpus").iterdir()) == []


def test_the_cache_is_reused_for_the_same_file_and_rebuilt_for_an_edited_one(tmp_path, monkeypatch):
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    corpus = write_corpus(tmp_path / "corpus.jsonl", TRICKY)
    first = CorpusStore.from_jsonl(corpus)
    assert first.path is not None and first.path.parent == tmp_path / "cache" / "corpus"
    built = first.path.stat().st_mtime_ns
    again = CorpusStore.from_jsonl(corpus)
    assert again.path == first.path and again.path.stat().st_mtime_ns == built
    assert again.fingerprint == first.fingerprint
    # An edit (same length even) changes the modification time: the store is read again.
    text = corpus.read_text(encoding="utf-8").replace("naïve", "naive", 1)
    corpus.write_text(text, encoding="utf-8")
    os.utime(corpus, ns=(built + 10**9, built + 10**9))
    edited = CorpusStore.from_jsonl(corpus)
    assert edited.path != first.path
    assert edited.fingerprint == corpus_fingerprint(iter_corpus(corpus)) != first.fingerprint


def test_document_ids_count_distinct_ids_and_find_every_row():
    import pyarrow as pa

    values = ["a", "b", "a", "c", "b", "a"]
    ids = DocumentIds(StringColumn(pa.array(values)))
    assert len(ids) == 3
    assert ids.rows("a") == [0, 2, 5] and ids.rows("c") == [3] and ids.rows("z") == []
    assert sorted(set(ids)) == ["a", "b", "c"]


def test_in_memory_store_keeps_spans_for_chunking():
    from heta_eval.evaluation import Document

    docs = [Document(id="d", text="One. Two.", sentences=[(0, 4), (5, 9)])]
    store = CorpusStore.from_documents(docs)
    assert store.has_spans and store.document(0) is docs[0]
    assert store.fingerprint == corpus_fingerprint(docs)
