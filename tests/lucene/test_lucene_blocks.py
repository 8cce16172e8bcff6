"""The blocked BM25 build (docs/bm25.md): any block size, in this process or in worker
processes, gives the index a one-block build gives, array for array, and both equal a plain
brute force (analysis per document, Lucene's float32 steps written out); search equals that
brute force's ranking rank by rank, bit for bit. Random seeded corpora with blank documents,
two fields, unicode, many equal scores; queries that match nothing, everything, or are empty."""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from support.paths import DATA

from heta_eval.lucene.analyzer import analyze
from heta_eval.lucene.index import LUCENE_INDEX_VERSION, LuceneBM25Index
from heta_eval.lucene.similarity import byte4_to_int, int_to_byte4
from heta_eval.lucene.tokenizer import block_tokens, standard_tokens

REPO = Path(__file__).resolve().parents[2]
K1, B = 0.9, 0.4
WORDS = [
    "cell",
    "cells",
    "celled",
    "protein",
    "proteins",
    "binding",
    "bind",
    "the",
    "of",
    "a",
    "mouse",
    "mice",
    "tumor",
    "café",
    "naïve",
    "日本",
    "𝐚s",
    "e.g.",
    "3.5",
    "Σίσυφος",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "x_y",
    "IL-6",
    "don't",
    "İstanbul",
]
BLANKS = ["", " ", "\t\n", "\x00 \x1f"]
# Java's String.trim(): what Anserini strips before it calls a document's contents empty.
JAVA_TRIM = "".join(map(chr, range(0x21)))


def random_corpus(seed: int, n: int, *, multifield: bool) -> tuple[dict[str, list[str]], list]:
    """``n`` documents: words (repeated, so terms recur within a document), a blank text now
    and then, exact duplicates (equal scores); ids in random order, some non-ASCII."""
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(n):
        if rng.random() < 0.1:
            texts.append(BLANKS[int(rng.integers(len(BLANKS)))])
        elif texts and rng.random() < 0.2:
            texts.append(texts[int(rng.integers(len(texts)))])
        else:
            size = int(rng.integers(1, 30))
            texts.append(" ".join(rng.choice(WORDS, size=size, p=_zipf(len(WORDS)))))
    ids = [
        f"{chr(int(rng.choice([0x61, 0xE9, 0x1F600])))}{int(rng.integers(1000))}-{i}"
        for i in range(n)
    ]
    fields = {"contents": texts}
    if multifield:
        fields["title"] = [
            " ".join(rng.choice(WORDS, size=int(rng.integers(0, 4)))) for _ in range(n)
        ]
    return fields, ids


def _zipf(n: int) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1)
    return p / p.sum()


def brute_force(fields: dict[str, list[str]], tie_keys: list[str]) -> dict:
    """The index's arrays from first principles: per field, every document analyzed alone."""
    names = list(fields)
    n = len(tie_keys)
    keep = [fields["contents"][i].strip(JAVA_TRIM) != "" for i in range(n)]
    analyzed = [[analyze(t) if keep[i] else [] for i, t in enumerate(fields[f])] for f in names]
    vocab = [sorted({t for doc in docs for t in doc}) for docs in analyzed]
    indptr, docs, freqs = [0], [], []
    for f, terms in enumerate(vocab):
        counted = [Counter(doc) for doc in analyzed[f]]
        for term in terms:
            hits = [(d, c[term]) for d, c in enumerate(counted) if term in c]
            docs += [d for d, _ in hits]
            freqs += [tf for _, tf in hits]
            indptr.append(len(docs))
    order = sorted(range(n), key=lambda i: (tie_keys[i].encode("utf-8", "surrogatepass"), i))
    ranks = np.empty(n, dtype=np.int64)
    ranks[order] = np.arange(n)
    return {
        "vocab": vocab,
        "indptr": np.array(indptr),
        "docs": np.array(docs, dtype=np.int64),
        "freqs": np.array(freqs, dtype=np.int64),
        "norms": np.array([[int_to_byte4(len(d)) for d in docs_] for docs_ in analyzed]),
        "lengths": [[len(d) for d in docs_] for docs_ in analyzed],
        "tie_ranks": ranks,
        "doc_counts": [sum(1 for d in docs_ if d) for docs_ in analyzed],
        "sums": [sum(len(d) for d in docs_) for docs_ in analyzed],
        "skipped": keep.count(False),
        "analyzed": analyzed,
    }


def brute_scores(expected: dict, query: str) -> np.ndarray:
    """Lucene's score of every document, each float32 step written out, summed in float64."""
    f32, one = np.float32, np.float32(1)
    counts = Counter(analyze(query))
    n = len(expected["tie_ranks"])
    total = np.zeros(n, dtype=np.float64)
    for f, vocab in enumerate(expected["vocab"]):
        docs_with = expected["doc_counts"][f]
        avgdl = f32(expected["sums"][f] / docs_with) if docs_with else f32(0)
        for term, count in counts.items():
            if term not in vocab:
                continue
            tfs = [Counter(doc)[term] for doc in expected["analyzed"][f]]
            df = sum(1 for tf in tfs if tf)
            w = f32(count) * f32(math.log(1 + (docs_with - df + 0.5) / (df + 0.5)))
            for d, tf in enumerate(tfs):
                if tf:
                    length = f32(byte4_to_int(int_to_byte4(expected["lengths"][f][d])))
                    inverse = one / (f32(K1) * ((one - f32(B)) + f32(B) * length / avgdl))
                    total[d] += w - w / (one + f32(tf) * inverse)
    return total.astype(np.float32)


def brute_ranking(expected: dict, query: str, k: int) -> tuple[list[int], list[float]]:
    scores = brute_scores(expected, query)
    hits = np.flatnonzero(scores > 0)
    hits = hits[np.lexsort((expected["tie_ranks"][hits], -scores[hits]))][:k]
    return hits.tolist(), scores[hits].tolist()


def assert_index_is(index: LuceneBM25Index, expected: dict) -> None:
    vocab = [t for terms in expected["vocab"] for t in terms]
    assert [index.terms.term(i) for i in range(len(index.terms))] == vocab
    starts = index.terms.field_starts
    assert [starts[f + 1] - starts[f] for f in range(len(starts) - 1)] == [
        len(terms) for terms in expected["vocab"]
    ]
    for name in ("indptr", "docs", "freqs", "norms", "tie_ranks"):
        assert getattr(index, name).tolist() == expected[name].tolist(), name
    assert index.doc_counts.tolist() == expected["doc_counts"]
    assert index.sums.tolist() == expected["sums"]
    assert index.skipped == expected["skipped"]


def assert_same_index(a: LuceneBM25Index, b: LuceneBM25Index) -> None:
    for name in ("indptr", "docs", "freqs", "norms", "tie_ranks"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert np.array_equal(a.terms.blob, b.terms.blob)
    assert np.array_equal(a.terms.offsets, b.terms.offsets)
    assert a.terms.field_starts == b.terms.field_starts
    assert (a.skipped, a.doc_counts.tolist(), a.sums.tolist()) == (
        b.skipped,
        b.doc_counts.tolist(),
        b.sums.tolist(),
    )


def build(fields, **options) -> LuceneBM25Index:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # blank documents skipped: tested apart
        return LuceneBM25Index.build(fields, **options)


QUERIES = [
    "cell binding",
    "the of a",
    "",
    "mice",
    "cells cells tumor",
    "nothing here",
    "café naïve 日本",
    "𝐚s Σίσυφος istanbul",
    "e.g. 3.5 x_y il 6 don't",
]


@pytest.mark.parametrize("seed", range(6))
def test_every_block_size_builds_the_brute_force_index_and_searches_as_it_ranks(seed, tmp_path):
    n = 25 + 7 * seed
    fields, ids = random_corpus(seed, n, multifield=seed % 2 == 1)
    expected = brute_force(fields, ids)
    one_block = build(fields, tie_keys=ids, workers=1)
    assert_index_is(one_block, expected)
    for size in (1, 2, 7, n - 1, n, n + 1):
        blocked = build(
            fields, tie_keys=ids, block_size=size, workers=1, directory=tmp_path / f"blocks-{size}"
        )
        assert_same_index(blocked, one_block)
    for k in (1, 3, n, n + 10):
        idx, scores = one_block.search(QUERIES, k=k)
        assert idx.shape == scores.shape == (len(QUERIES), min(k, n))
        for row, query in enumerate(QUERIES):
            hits, values = brute_ranking(expected, query, k)
            assert idx[row, : len(hits)].tolist() == hits, (query, k)
            assert scores[row, : len(hits)].tolist() == values  # bit for bit
            assert (idx[row, len(hits) :] == -1).all() and (scores[row, len(hits) :] == 0).all()
            assert one_block.scores(query).tolist() == brute_scores(expected, query).tolist()


def test_worker_processes_build_what_one_process_builds() -> None:
    fields, ids = random_corpus(11, 60, multifield=True)
    inline = build(fields, tie_keys=ids, block_size=4, workers=1)
    for size, workers in [(1, 2), (4, 3), (13, 2)]:
        assert_same_index(build(fields, tie_keys=ids, block_size=size, workers=workers), inline)


def test_many_equal_scores_rank_by_the_tie_keys_in_byte_order() -> None:
    n = 200
    rng = np.random.default_rng(5)
    # Code point (UTF-8 byte) order, not UTF-16's: U+FFFF sorts before U+1F600.
    ids = [f"{c}{i}" for i, c in enumerate(rng.choice(["\uffff", "\U0001f600", "a", "Z", "é"], n))]
    fields = {"contents": ["gene therapy"] * n}
    expected = sorted(range(n), key=lambda i: (ids[i].encode(), i))
    for keys in (ids, np.array(ids), pa.array(ids), pa.chunked_array([ids[:50], ids[50:]])):
        index = build(fields, tie_keys=keys, block_size=17, workers=1)
        idx, scores = index.search(["gene"], k=n + 5)
        assert idx[0].tolist() == expected and len(set(scores[0].tolist())) == 1
    ranks = np.empty(n, dtype=np.int64)
    ranks[expected] = np.arange(n)
    index = build(fields, tie_ranks=ranks, block_size=17, workers=1)
    assert index.search(["gene"], k=n)[0][0].tolist() == expected
    # Equal keys keep index order; a lone surrogate (no UTF-8) still sorts by code point.
    index = build({"contents": ["x"] * 4}, tie_keys=["b", "a", "b", "\ud800"], workers=1)
    assert index.search(["x"], k=4)[0][0].tolist() == [1, 0, 2, 3]


def test_bad_tie_input_is_refused_in_one_line() -> None:
    fields = {"contents": ["a b", "b c", "c d"]}
    for bad, message in [
        ({"tie_keys": ["a"]}, "one key per document"),
        ({"tie_ranks": [0, 1]}, "one integer per document"),
        ({"tie_ranks": [0, 0, 1]}, "each of 0"),
        ({"tie_ranks": [0, 1, 3]}, "each of 0"),
        ({"tie_keys": ["a", "b", "c"], "tie_ranks": [0, 1, 2]}, "not both"),
        ({"tie_keys": pa.array([1, 2, 3])}, "must be strings"),
        ({"tie_keys": pa.array(["a", None, "c"])}, "missing key"),
    ]:
        with pytest.raises((ValueError, TypeError), match=message):
            LuceneBM25Index.build(fields, **bad)


class Column:
    """A lazy column: ``len()`` and one pass of iteration, nothing else (no indexing)."""

    def __init__(self, texts: list[str], length: int | None = None) -> None:
        self.texts, self.length, self.passes = texts, length, 0

    def __len__(self) -> int:
        return len(self.texts) if self.length is None else self.length

    def __iter__(self):
        self.passes += 1
        yield from self.texts


def test_fields_are_read_once_in_lockstep_and_lengths_are_checked() -> None:
    fields, ids = random_corpus(3, 40, multifield=True)
    columns = {name: Column(texts) for name, texts in fields.items()}
    lazy = build(columns, tie_keys=ids, block_size=6, workers=1)
    assert [c.passes for c in columns.values()] == [1, 1]
    assert_same_index(lazy, build(fields, tie_keys=ids, workers=1))
    with pytest.raises(ValueError, match="one text per document"):
        LuceneBM25Index.build({"contents": ["a"], "title": ["a", "b"]})
    with pytest.raises(ValueError, match="field 'contents' ended after 2 texts; its len"):
        LuceneBM25Index.build({"contents": Column(["a", "b"], length=3)}, block_size=2)
    with pytest.raises(ValueError, match="field 'title' holds more texts"):
        LuceneBM25Index.build({"contents": ["a", "b"], "title": Column(["a", "b", "c"], 2)})
    # The same error from this process and from a worker process.
    for workers in (1, 2):
        with pytest.raises(TypeError, match="document 3: text must be a string, not NoneType"):
            LuceneBM25Index.build(
                {"contents": ["a", "b", "c", None]}, block_size=2, workers=workers
            )


def test_frequencies_widen_where_a_term_repeats_more_than_a_byte_holds() -> None:
    for repeats, dtype in [(255, np.uint8), (256, np.uint16), (70_000, np.uint32)]:
        fields = {"contents": ["gene " * repeats, "gene therapy", "therapy"]}
        index = build(fields, block_size=2, workers=1)
        assert index.freqs.dtype == dtype and index.freqs.max() == repeats
        expected = brute_force(fields, ["0", "1", "2"])
        assert (
            index.search(["gene therapy"], k=3)[1][0].tolist()
            == (brute_ranking(expected, "gene therapy", 3)[1])
        )


def test_blank_documents_are_skipped_across_block_boundaries() -> None:
    fields = {
        "contents": ["", "gene", " ", "gene gene", "\t", "therapy"] * 3,
        "title": ["gene"] * 18,
    }
    for size in (1, 4, 18):
        with pytest.warns(UserWarning, match="9 of 18 documents skipped"):
            index = LuceneBM25Index.build(fields, block_size=size, workers=1)
        assert index.skipped == 9 and index.doc_counts.tolist() == [9, 9]
        assert sorted(index.search(["gene"], k=18)[0][0][:9].tolist()) == [
            1,
            3,
            5,
            7,
            9,
            11,
            13,
            15,
            17,
        ]


def test_an_index_in_a_folder_of_yours_saves_loads_and_a_temporary_one_is_removed(tmp_path):
    fields, ids = random_corpus(7, 30, multifield=True)
    index = build(fields, tie_keys=ids, directory=tmp_path / "mine", block_size=8, workers=1)
    meta = json.loads((tmp_path / "mine" / "lucene_bm25.json").read_text())
    assert meta["format"] == LUCENE_INDEX_VERSION and not (tmp_path / "mine" / "blocks").exists()
    index.save(tmp_path / "copy")
    for other in (LuceneBM25Index.load(tmp_path / "mine"), LuceneBM25Index.load(tmp_path / "copy")):
        assert isinstance(other.docs, np.memmap)
        assert_same_index(other, index)
        assert [a.tolist() for a in other.search(QUERIES, 9)] == [
            a.tolist() for a in index.search(QUERIES, 9)
        ]
    index.close()  # a folder of yours stays
    assert (tmp_path / "mine" / "docs.npy").exists()
    temporary = build(fields, tie_keys=ids, workers=1)
    folder = temporary.directory
    assert folder.exists()
    temporary.close()
    assert not folder.exists()
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "lucene_bm25.json").write_text('{"fields": ["contents"]}')
    with pytest.raises(ValueError, match="build it again"):
        LuceneBM25Index.load(tmp_path / "old")


def test_an_empty_corpus_and_a_corpus_of_stop_words_search_to_nothing(tmp_path: Path) -> None:
    for texts in ([], ["the of", "a"], ["", " "]):
        index = build({"contents": texts}, workers=1, block_size=1)
        idx, scores = index.search(["the", "gene", ""], k=5)
        assert idx.shape == (3, min(5, len(texts))) and (idx == -1).all() and (scores == 0).all()


# A real process building into a cache entry with two worker processes (and itself), as
# `heta-eval run` builds; blocks big enough (a second or so) that a worker the signal did not
# end would still be busy.
_BUILD_SCRIPT = """
import sys
import numpy as np
from heta_eval import interrupts
from heta_eval.cache.store import ArtifactCache
from heta_eval.lucene.index import LuceneBM25Index

words = np.array([f"w{i}" for i in range(5000)])
rng = np.random.default_rng(0)
texts = [" ".join(rng.choice(words, 40)) for _ in range(60_000)]
cache = ArtifactCache(sys.argv[1])
with interrupts.handled(), interrupts.phase("building the BM25 index"):
    cache.get_or_build("bm25", "key", lambda d: LuceneBM25Index.build(
        {"contents": texts}, directory=d, block_size=4000, workers=3, progress=True))
"""


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc for the workers")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_build_ends_workers_and_leaves_no_cache_entry(tmp_path, signum) -> None:
    log = tmp_path / "err.txt"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with log.open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-c", _BUILD_SCRIPT, str(tmp_path / "cache")], stderr=err, env=env
        )
    try:
        # Wait until blocks have come back from the workers (the bar counts documents).
        deadline = time.monotonic() + 600
        while not re.search(r"\| [1-9][\d,]*/60000", log.read_text().replace("\r", "\n")):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.05)
        workers = _children(process.pid)
        assert len(workers) == 2
        process.send_signal(signum)
        status = process.wait(timeout=600)
    finally:
        process.kill()
    stderr = log.read_text()
    assert status == 128 + signum, stderr
    name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    assert f"heta-eval: interrupted ({name}) while building the BM25 index" in stderr
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers), "a worker outlived it"
    # Neither a finished entry nor a half-written one is left for a later run to find.
    assert [p.name for p in (tmp_path / "cache").iterdir() if "lock" not in p.name] == []


def _per_text(texts: list[str]) -> dict[int, list[str]]:
    return {i: list(standard_tokens(text)) for i, text in enumerate(texts)}


def _grouped(texts: list[str]) -> dict[int, list[str]]:
    tokens, owners = block_tokens(texts)
    grouped: dict[int, list[str]] = {i: [] for i in range(len(texts))}
    for token, owner in zip(tokens, owners.tolist(), strict=True):
        grouped[owner].append(token)
    return grouped


def test_block_tokens_are_each_texts_standard_tokens() -> None:
    # The pinned Lucene cases (emoji, old word-break properties, the 255-unit cut, class
    # mixes, long texts), and plain ASCII edge cases for the texts split together.
    pins = json.loads((DATA / "lucene_tokens.json").read_text())
    texts = [text for text, _ in pins["texts"]]
    texts += [
        "",
        " ",
        "\x01",
        "a\x01b",
        "x" * 300,
        "y" * 255 + " z",
        "e.g",
        "a.b c",
        "a_b",
        "a. b",
        "it's",
        "A1b2, c3",
        "\t\n",
        "end.",
    ]
    rng = np.random.default_rng(4)
    alphabet = [*"ab1 .,;:'_-\x01\n", "\u00e9", "\U0001f600"]
    texts += ["".join(rng.choice(alphabet, int(rng.integers(0, 40)))) for _ in range(2000)]
    for order in (texts, texts[::-1], texts[:7], texts[-3:]):
        assert _grouped(order) == _per_text(order)
    tokens, owners = block_tokens([])
    assert tokens == [] and owners.tolist() == []


def test_the_plain_text_test_is_the_rule_it_states() -> None:
    # Plain: no "_", and no ":.,;'" between two ASCII letters or digits (the old pattern).
    from heta_eval.lucene import tokenizer

    rule = re.compile(r"_|[A-Za-z0-9][:.,;'][A-Za-z0-9]")
    rng = np.random.default_rng(9)
    alphabet = [*"aZ09_:.,;'- !?\n\x01", "\u00e9"]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet, int(rng.integers(0, 12))))
        assert tokenizer._plain(text) == (text.isascii() and rule.search(text) is None), text


def test_a_process_forgets_all_but_the_last_blocks_tokens_and_builds_the_same_index(monkeypatch):
    # Past its limit, the cache of tokens' terms keeps only the block just analyzed (the
    # frequent tokens): the index is the one a cache that forgets nothing builds.
    from heta_eval.lucene import blocks

    fields, ids = random_corpus(7, 80, multifield=True)
    remembering = build(fields, tie_keys=ids, block_size=3, workers=1)
    monkeypatch.setattr(blocks, "_TERMS_LIMIT", 4)
    seen: list[set[str]] = []
    analyze_block = blocks.analyze_block

    def watched(number, start, texts, contents, folder):
        result = analyze_block(number, start, texts, contents, folder)
        seen.append(set(blocks._TERMS))
        return result

    monkeypatch.setattr(blocks, "analyze_block", watched)
    forgetting = build(fields, tie_keys=ids, block_size=3, workers=1)
    assert_same_index(forgetting, remembering)
    most = max(
        len(set(block_tokens(column[s : s + 3])[0]))
        for column in fields.values()
        for s in range(0, 80, 3)
    )
    assert max(map(len, seen)) <= max(4, most)  # bounded: the limit, or one block's tokens
    assert any(len(a) > len(b) for a, b in itertools.pairwise(seen))  # it forgot
