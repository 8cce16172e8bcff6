"""The Lucene analyzer and BM25 without Java: Lucene's documented behaviour, the arithmetic
against a plain float64 BM25, and the reference knowledge base and BEIR adapter using them.
(Parity with the real Lucene is in test_lucene_parity.py.)"""

from __future__ import annotations

import json
import math
import random
import sys
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import DATA

from heta_eval.adapters.beir import BeirBenchmark
from heta_eval.evaluation import Document
from heta_eval.lucene import ENGLISH_STOP_WORDS, analyze, porter_stem, standard_tokens
from heta_eval.lucene.index import LuceneBM25Index
from heta_eval.lucene.similarity import byte4_to_int, int_to_byte4, length_table
from heta_eval.reference import Recipe

# Porter's 1980 paper examples; Lucene 9 (Anserini 0.22.1) stems every one this way (checked
# with the jar), including the reference code's "-bli" -> "-ble" and "-logi" -> "-log".
_PORTER_PAIRS = (
    "caresses caress ponies poni ties ti caress caress cats cat feed feed agreed agre "
    "plastered plaster motoring motor sing sing conflated conflat troubled troubl sized size "
    "hopping hop tanned tan falling fall hissing hiss fizzed fizz failing fail filing file "
    "happy happi sky sky relational relat conditional condit rational ration valenci valenc "
    "digitizer digit conformabli conform radicalli radic differentli differ vileli vile "
    "analogousli analog vietnamization vietnam predication predic operator oper feudalism "
    "feudal decisiveness decis hopefulness hope callousness callous formaliti formal "
    "sensitiviti sensit sensibiliti sensibl triplicate triplic formative form formalize formal "
    "electriciti electr electrical electr hopeful hope goodness good revival reviv allowance "
    "allow inference infer airliner airlin gyroscopic gyroscop adjustable adjust defensible "
    "defens irritant irrit replacement replac adjustment adjust dependent depend adoption adopt "
    "homologou homolog communism commun activate activ angulariti angular homologous homolog "
    "effective effect bowdlerize bowdler probate probat rate rate cease ceas controll control "
    "roll roll biology biologi apology apolog ecology ecolog"
)
PORTER = _PORTER_PAIRS.split()


@pytest.mark.parametrize(("word", "stem"), list(zip(PORTER[0::2], PORTER[1::2], strict=True)))
def test_porter_stems_as_lucene(word: str, stem: str) -> None:
    assert porter_stem(word) == stem


def test_the_stemmer_counts_a_character_outside_the_bmp_as_two_as_java_does() -> None:
    # Measured with the jar: Lucene leaves words of 2 UTF-16 units alone, so "us" stays,
    # but a mathematical "a" is two units and its "s" goes.
    pairs = {
        "us": "us",
        "\U0001d41as": "\U0001d41a",
        "\U00010400s": "\U00010428",
        "\U0001d41aed": "\U0001d41aed",
        "o\U0001d41aed": "o\U0001d41a",
        "\U0001d41aies": "\U0001d41ai",
    }
    assert {word: analyze(word) for word in pairs} == {w: [t] for w, t in pairs.items()}


def test_analyzer_drops_possessives_and_lucene_stop_words_only() -> None:
    assert len(ENGLISH_STOP_WORDS) == 33
    assert analyze("The DOG'S bowl's rim: it was not THERE") == ["dog", "bowl", "rim"]
    # bm25s's and NLTK's longer lists would drop these; Lucene's keeps them.
    assert analyze("we have been very") == ["we", "have", "been", "veri"]


def test_tokenizer_follows_word_break_rules() -> None:
    text = "p<0.05, 1,000.5 e.g. U.S.A. can't x_y 日本 カタカナ ไทย 한국어 α-helix"
    assert list(standard_tokens(text)) == [
        "p",
        "0.05",
        "1,000.5",
        "e.g",
        "U.S.A",
        "can't",
        "x_y",
        "日",
        "本",
        "カタカナ",
        "ไทย",
        "한국어",
        "α",
        "helix",
    ]


PINS = json.loads((DATA / "lucene_tokens.json").read_text("utf-8"))


def _spans(text: str) -> str:
    """Token spans in code point offsets, as the pins write them: "start-end," each."""
    out, pos = [], 0
    for token in standard_tokens(text):
        start = text.index(token, pos)
        pos = start + len(token)
        out.append(f"{start}-{pos},")
    return "".join(out)


def test_every_code_point_tokenizes_as_lucene_in_the_pinned_contexts() -> None:
    # The pins hold, for every code point (surrogates aside) in each context, Lucene's token
    # spans, as runs of code points that behave alike; both ends of each run are checked.
    runs = [item.split(":") for item in PINS["runs"].split()]
    starts = [int(start, 16) for start, _ in runs]
    ends = [*(s - 1 for s in starts[1:]), 0x10FFFF]
    checked = 0
    for (_, behaviour), first, last in zip(runs, starts, ends, strict=True):
        expected = PINS["spans"][int(behaviour)].split("|")
        for code_point in {first, last} - set(range(0xD800, 0xE000)):
            for context, spans in zip(PINS["contexts"], expected, strict=False):
                text = context.replace("{}", chr(code_point))
                assert _spans(text) == spans, (hex(code_point), context)
                checked += 1
    assert len(runs) > 1800 and checked > 20000


def test_pinned_texts_tokenize_as_lucene() -> None:
    # The cases named in the pins (emoji sequences, symbols Lucene keeps, old word-break
    # properties, the 255-unit cut), random mixes of every class, long texts.
    texts = PINS["texts"]
    assert len(texts) > 2000
    wrong = [(t, e) for t, e in texts if list(standard_tokens(t)) != e]
    assert wrong == []
    named = dict(zip(PINS["names"], (e for _, e in texts), strict=False))
    assert named["zwj family"] == ["\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"]
    assert [len(t) for t in named["mathematical bold run"]] == [127, 73]
    assert max(len(t) for t in named["long underscore run"]) == 255


def test_the_python_scan_equals_the_compiled_one() -> None:
    from heta_eval.lucene import tokenizer

    texts = [t for t, _ in PINS["texts"][:300]]
    compiled = [list(standard_tokens(t)) for t in texts]
    tokenizer._compiled_scan.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setitem(sys.modules, "numba", None)  # import fails: the plain Python scan
            assert [list(standard_tokens(t)) for t in texts] == compiled
    finally:
        tokenizer._compiled_scan.cache_clear()


@pytest.mark.parametrize(
    "text",
    [
        "a" * 1_000_000,
        "_" * 1_000_000,
        "\u200d" * 1_000_000,
        "\u05d0" + "a" * 999_999,
        "a." + "\u0301" * 999_998,
        "#" + "\u0301" * 999_999,
        "x" + "_" * 999_998 + "y",
        "".join(
            random.Random(3).choice("a\u05d0\u30a2\u0e01_1.'\"\u4e00\u200d\u0301")
            for _ in range(10**6)
        ),
    ],
    ids=["letters", "underscores", "joiners", "hebrew", "extends", "keycap", "connected", "mixed"],
)
def test_a_hostile_megabyte_is_analyzed_in_linear_time(text: str) -> None:
    # About 0.1-0.5 s each here; a scan that rescans runs from every start takes minutes.
    # CPU time of this process: other processes on a loaded machine do not count.
    list(standard_tokens("warm up"))
    started = time.process_time()
    analyze(text)
    assert time.process_time() - started < 5


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZ09_.,;:'-\n é", max_size=60))
def test_ascii_fast_path_equals_the_full_grammar(text: str) -> None:
    # A non-ASCII word appended sends the text through the full Unicode grammar.
    full = list(standard_tokens(text + " \u00e9"))
    assert full[-1] == "\u00e9"
    assert list(standard_tokens(text)) == full[:-1]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_lengths_are_stored_as_the_largest_encodable_length_not_above(n: int) -> None:
    table = length_table()
    byte = int_to_byte4(n)
    assert 0 <= byte <= 255 and byte4_to_int(byte) == table[byte]
    assert table[byte] <= n and (byte == 255 or table[byte + 1] > n)
    if n < 24:
        assert table[byte] == n


def _float64_bm25(docs, query, k1=0.9, b=0.4):
    """Textbook Lucene BM25 (no k1 + 1 factor) in float64, lengths decoded as Lucene stores
    them; a query term repeated counts that many times."""
    analyzed = [analyze(d) for d in docs]
    lengths = [byte4_to_int(int_to_byte4(len(a))) for a in analyzed]
    avgdl = sum(len(a) for a in analyzed) / max(1, sum(1 for a in analyzed if a))
    scores = []
    for terms, dl in zip(analyzed, lengths, strict=True):
        total = 0.0
        for term in set(analyze(query)):
            tf = terms.count(term)
            if tf:
                df = sum(term in a for a in analyzed)
                idf = math.log(1 + (sum(1 for a in analyzed if a) - df + 0.5) / (df + 0.5))
                total += (
                    analyze(query).count(term) * idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))
                )
        scores.append(total)
    return np.array(scores)


WORDS = ["cell", "cells", "protein", "gene", "the", "binding", "bind", "mouse", "mice", "tumor"]


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join), min_size=1, max_size=12
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
)
def test_scores_equal_textbook_bm25_and_every_search_path_agrees(docs, query):
    with warnings.catch_warnings():
        # Empty documents are skipped with a warning (tested below); here only the arithmetic.
        warnings.simplefilter("ignore", UserWarning)
        index = LuceneBM25Index.build({"contents": docs})
    scores = index.scores(query)
    np.testing.assert_allclose(scores, _float64_bm25(docs, query), rtol=2e-6, atol=1e-6)
    hits = np.flatnonzero(scores > 0)
    expected = hits[np.lexsort((hits, -scores[hits]))]
    idx, top = index.search([query, query], k=len(docs))
    assert idx[0][: len(expected)].tolist() == expected.tolist()
    assert (idx[0][len(expected) :] == -1).all() and (idx[1] == idx[0]).all()
    assert top[0][: len(expected)].tolist() == scores[expected].tolist()  # bit for bit


def test_numpy_fallback_equals_the_compiled_kernel(monkeypatch) -> None:
    from heta_eval.lucene import index as module

    docs = ["cells bind protein", "mouse cells", "tumor gene gene", "binding cells cells"]
    index = LuceneBM25Index.build({"contents": docs}, tie_keys=["d", "c", "b", "a"])
    compiled = index.search(["cell binding", "gene", "nothing"], k=4)
    monkeypatch.setattr(module, "_numba_kernel", lambda: None)
    fallback = index.search(["cell binding", "gene", "nothing"], k=4)
    assert compiled[0].tolist() == fallback[0].tolist()
    assert compiled[1].tolist() == fallback[1].tolist()
    assert compiled[0][2].tolist() == [-1, -1, -1, -1]


def test_equal_scores_rank_by_document_id_and_fields_add(tmp_path) -> None:
    index = LuceneBM25Index.build(
        {"contents": ["gene x", "gene y", "gene w"], "title": ["", "gene", ""]},
        tie_keys=["z", "m", "a"],
    )
    idx, scores = index.search(["gene"], k=3)
    # Document 1 matches in both fields; 0 and 2 tie and go by id ("a" before "z").
    assert idx[0].tolist() == [1, 2, 0]
    assert scores[0][1] == scores[0][2] < scores[0][0]
    index.save(tmp_path / "idx")
    loaded = LuceneBM25Index.load(tmp_path / "idx")
    assert [a.tolist() for a in loaded.search(["gene"], k=3)] == [idx.tolist(), scores.tolist()]


def test_reference_kb_keyword_search_is_lucene_bm25_with_ties_by_document_id() -> None:
    import asyncio

    docs = [Document(id=i, text=t) for i, t in [("d9", "gene x"), ("d1", "gene y"), ("d5", "z")]]
    kb = Recipe(modes=["keyword_search"]).build("t", docs, cache_dir=False, progress=False)
    response = asyncio.run(kb.query("genes", mode="keyword_search", top_k=3))
    assert [r.source["document_id"] for r in response.results] == ["d1", "d9"]
    with pytest.raises(ValueError, match="English only"):
        Recipe(bm25={"analyzer": "lucene", "language": "french"})
    with pytest.raises(ValueError, match="multifield"):
        Recipe(bm25={"analyzer": "bm25s", "fields": "multifield"})


def test_beir_runs_keep_1000_hits_over_whole_documents() -> None:
    bench = BeirBenchmark("scifact", download=False)
    assert max(m.k for m in bench.evaluators()) == 1000
    recipe = bench.recipe(["keyword_search"])
    assert recipe.chunking.size is None and recipe.bm25.analyzer == "lucene"


def test_check_require_ok_accepts_our_scifact_bm25_and_rejects_okish(scifact_dir, tmp_path):
    import json

    from heta_eval.cli import main
    from heta_eval.data.beir_loader import load_beir

    docs = [json.loads(line) for line in (scifact_dir / "corpus.jsonl").open(encoding="utf-8")]
    ids = [d["_id"] for d in docs]
    index = LuceneBM25Index.build(
        {"contents": [f"{d['title']} {d['text']}" for d in docs]}, tie_keys=ids
    )
    dataset = load_beir(scifact_dir, "test")
    qids = list(dataset.qrels)
    idx, scores = index.search([dataset.queries[q] for q in qids], k=1001)
    lines = [
        f"{q} Q0 {ids[i]} {rank} {s} ours"
        for row, q in enumerate(qids)
        for rank, (i, s) in enumerate(zip(idx[row], scores[row], strict=True), 1)
        if i >= 0
    ]
    run = tmp_path / "bm25.trec"
    run.write_text("\n".join(lines) + "\n")
    # The same run without a query whose first hit is relevant: nDCG@10 falls by about
    # 1/300, within 0.01 of 2CR's, so only OKish.
    hit = next(q for row, q in enumerate(qids) if ids[idx[row][0]] in dataset.qrels[q])
    okish = tmp_path / "okish.trec"
    okish.write_text("\n".join(x for x in lines if not x.startswith(f"{hit} ")) + "\n")
    args = [
        "check",
        "--dataset",
        "scifact",
        "--data-dir",
        str(scifact_dir.parent),
        "--system",
        "bm25-flat",
        "--require-ok",
    ]
    assert main([*args, str(run)]) == 0
    assert main([*args, str(okish), "--metric", "ndcg@10"]) == 1
    assert main([*args[:-1], str(okish), "--metric", "ndcg@10"]) == 0  # OKish alone passes


def test_documents_with_blank_text_are_skipped_as_anserini_skips_them(tmp_path) -> None:
    fields = {
        "contents": ["", "gene therapy", " \t\n", "the", "\u00a0"],
        "title": ["gene gene", "mice", "gene", "gene cells", "gene"],
    }
    with pytest.warns(UserWarning, match="2 of 5 documents skipped"):
        index = LuceneBM25Index.build(fields, tie_keys=["a", "b", "c", "d", "e"])
    assert index.skipped == 2
    # Documents 0 and 2 are not there at all: their titles neither match nor count.
    assert index.doc_counts.tolist() == [1, 3]
    idx, _ = index.search(["gene"], k=5)
    assert sorted(idx[0][idx[0] >= 0].tolist()) == [1, 3, 4]
    index.save(tmp_path / "idx")
    assert LuceneBM25Index.load(tmp_path / "idx").skipped == 2


def test_oracle_says_in_one_line_why_it_cannot_run(monkeypatch, tmp_path):
    from tools.lucene_oracle import anserini

    monkeypatch.setenv("HETA_EVAL_ANSERINI_CACHE", str(tmp_path))
    monkeypatch.setattr(anserini.shutil, "which", lambda tool: None)
    anserini.fatjar.cache_clear()
    try:
        reason = anserini.unavailable()
    finally:
        anserini.fatjar.cache_clear()
    assert reason == "java not found on PATH (the Anserini oracle needs Java 11+)"
    assert list(tmp_path.iterdir()) == []  # nothing downloaded without Java
