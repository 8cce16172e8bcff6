"""Lucene parity against the real Lucene: Anserini 0.22.1's jar on Java, on real SciFact.

Needs ``java``/``javac`` and the ``pyserini==0.22.1`` wheel (fetched once with ``pip download``
into ``~/.cache/heta-eval/anserini``); every test here skips with the reason when either is
missing. Cold (empty cache) the oracle costs about a minute on 2 cores: jar download 3 s,
SciFact analysis 3 s, flat index + search 26 s, multifield 28 s. Its outputs are cached by
their inputs, so a rerun reads them back in well under a second.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from heta_eval.data.beir_loader import load_beir
from heta_eval.evaluation import evaluate_run
from heta_eval.lucene import analyze
from heta_eval.lucene.index import LuceneBM25Index
from tools.lucene_oracle import anserini as oracle

pytestmark = pytest.mark.system  # starts the Lucene oracle's JVM (Anserini)


@pytest.fixture(scope="module")
def java_oracle() -> None:
    reason = oracle.unavailable()
    if reason is not None:
        pytest.skip(f"Anserini oracle unavailable: {reason}")


@pytest.fixture(scope="module")
def scifact(scifact_dir: Path):
    docs = [json.loads(line) for line in (scifact_dir / "corpus.jsonl").open(encoding="utf-8")]
    dataset = load_beir(scifact_dir, "test")
    topics = {qid: dataset.queries[qid] for qid in dataset.qrels}
    return docs, topics, dataset.qrels


def test_token_streams_equal_lucene_for_every_scifact_document_and_query(java_oracle, scifact):
    docs, topics, _ = scifact
    all_queries = [json.loads(line)["text"] for line in _queries_file(scifact)]
    texts = [f"{d['title']} {d['text']}" for d in docs] + all_queries + list(topics.values())
    expected = oracle.analyze_texts(texts)
    mismatches = [(t, e, analyze(t)) for t, e in zip(texts, expected, strict=True)]
    mismatches = [m for m in mismatches if m[1] != m[2]]
    assert len(texts) == len(docs) + len(all_queries) + 300
    assert not mismatches, mismatches[:3]


def test_token_streams_equal_lucene_on_random_unicode_text(java_oracle):
    # Word-break edge cases Lucene's grammar handles: joiners between letters and digits,
    # apostrophes and possessives, underscores, combining marks and format characters, Greek,
    # Hebrew, CJK, Hiragana/Katakana, Thai, Hangul, emoji, full-width digits, a mathematical
    # letter (two UTF-16 units, which the stemmer counts), a symbol Lucene keeps.
    pieces = [
        "a",
        "B",
        "z",
        "x",
        "1",
        "9",
        "0",
        ".",
        ",",
        ";",
        ":",
        "'",
        "\u2019",
        "_",
        "-",
        " ",
        "\n",
        "s",
        "S",
        "\u00e9",
        "\u0301",
        "\u00ad",
        "\u200d",
        "\u03b1",
        "\u03a3",
        "\u05d0",
        '"',
        "\u65e5",
        "\u3042",
        "\u30ab",
        "\u0e01",
        "\uac00",
        "\U0001f600",
        "\ufe0f",
        "\u20e3",
        "\uff11",
        "\u00b5",
        "\u00b1",
        "%",
        "/",
        "(",
        "the",
        "ing",
        "ies",
        "ational",
        "\u0130",
        "\U0001f1fa",
        "\U0001f3fb",
        "#",
        "*",
        "\u00b7",
        "\U0001d41a",
        "\u266a",
    ]
    rng = random.Random(17)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    # Tokens past Lucene's 255-character limit are cut where its scanner window ends.
    long_pieces = ["ab", "c.", "1", ",", "_", "\u00e9", "\u00ad", "'", "\u05d0", "\U0001d400"]
    texts += [
        "".join(rng.choice(long_pieces) for _ in range(rng.randint(100, 400))) for _ in range(100)
    ]
    expected = oracle.analyze_texts(texts)
    mismatches = [(t, e, analyze(t)) for t, e in zip(texts, expected, strict=True)]
    assert [m for m in mismatches if m[1] != m[2]][:3] == []


def _queries_file(scifact) -> list[str]:
    # All SciFact queries (train and test), as the corpus file lies beside them.
    from support.paths import shared_path

    return shared_path("datasets", "beir", "scifact", "queries.jsonl").read_text().splitlines()


def _our_run(index: LuceneBM25Index, ids: list[str], topics: dict[str, str]):
    idx, scores = index.search(list(topics.values()), k=1001)
    run = {}
    for row, qid in enumerate(topics):
        hits = [(ids[i], float(s)) for i, s in zip(idx[row], scores[row], strict=True) if i >= 0]
        # Anserini's -removeQuery: a document whose id is the query's is dropped, then 1,000.
        run[qid] = [(d, s) for d, s in hits if d != qid][:1000]
    return run


def _compare(ours, theirs) -> tuple[float, float]:
    """(share of queries with the same ranked document ids, largest score difference)."""
    same, worst = 0, 0.0
    for qid, expected in theirs.items():
        got = ours[qid][: len(expected)]
        same += [d for d, _ in got] == [d for d, _ in expected]
        scores = dict(got)
        worst = max([worst, *(abs(scores[d] - s) for d, s in expected if d in scores)])
    return same / len(theirs), worst


@pytest.mark.parametrize("flavor", ["flat", "multifield"])
def test_bm25_runs_equal_anserini_on_scifact(java_oracle, scifact, scifact_dir, flavor):
    docs, topics, qrels = scifact
    ids = [d["_id"] for d in docs]
    if flavor == "flat":
        fields = {"contents": [f"{d['title']} {d['text']}" for d in docs]}
    else:
        fields = {"contents": [d["text"] for d in docs], "title": [d["title"] for d in docs]}
    index = LuceneBM25Index.build(fields, tie_keys=ids)
    ours = _our_run(index, ids, topics)
    theirs = oracle.bm25_run(scifact_dir / "corpus.jsonl", topics, multifield=flavor != "flat")
    same, worst = _compare(ours, theirs.hits)
    # Anserini prints scores to 4 decimals, so they are within 1e-4 of the exact float.
    assert same >= 0.99 and worst <= 1e-4, (same, worst)
    assert all(len(ours[q]) == len(theirs.hits[q]) for q in topics)

    # trec_eval -c semantics (the strict aggregate): the 2CR numbers, ours and Anserini's.
    def strict(run) -> dict[str, float]:
        report = evaluate_run(qrels, {q: dict(h) for q, h in run.items()}, (10, 100, 1000))
        return {k: round(report.aggregates[k].strict_unrounded, 4) for k in REPORTED}

    assert strict(ours) == strict(theirs.hits)
    if flavor == "flat":
        assert strict(ours) == {"NDCG@10": 0.6789, "Recall@100": 0.9253, "Recall@1000": 0.9767}
    else:
        # 2CR's BM25 multifield row.
        assert strict(ours) == {"NDCG@10": 0.6647, "Recall@100": 0.9076, "Recall@1000": 0.98}


REPORTED = ("NDCG@10", "Recall@100", "Recall@1000")


# Blank texts: Anserini skips a document whose contents is only characters up to U+0020 (Java's
# String.trim), so in multifield its title is neither searched nor counted; "\u00a0" is not
# blank to Java, and a text of stop words is indexed with no terms (its title counts).
_EDGE_CORPUS = [
    ("d1", "gene therapy", ""),
    ("d2", "gene", "therapy results in mice"),
    ("d3", "", "gene gene expression"),
    ("d4", "therapy", " \t\n"),
    ("d5", "cells therapy", "the"),
    ("d6", "gene cells", "\u00a0"),
    ("d7", "", ""),
    ("d8", "mice", "cells and gene"),
]


@pytest.mark.parametrize("flavor", ["flat", "multifield"])
def test_blank_documents_are_skipped_as_anserini_skips_them(java_oracle, tmp_path, flavor):
    corpus = tmp_path / "corpus.jsonl"
    rows = [{"_id": i, "title": t, "text": x} for i, t, x in _EDGE_CORPUS]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    topics = {"q1": "gene therapy cells", "q2": "therapy", "q3": "mice gene"}
    theirs = oracle.bm25_run(corpus, topics, multifield=flavor == "multifield", hits=10)
    ids = [i for i, _, _ in _EDGE_CORPUS]
    if flavor == "flat":
        # As the reference knowledge base builds it: title and text joined, then stripped.
        fields = {"contents": [f"{t} {x}".strip() for _, t, x in _EDGE_CORPUS]}
    else:
        fields = {
            "contents": [x for _, _, x in _EDGE_CORPUS],
            "title": [t for _, t, _ in _EDGE_CORPUS],
        }
    with pytest.warns(UserWarning, match="skipped"):
        index = LuceneBM25Index.build(fields, tie_keys=ids)
    assert index.skipped == (3 if flavor == "multifield" else 1)
    ours = _our_run(index, ids, topics)
    for qid in topics:
        assert [d for d, _ in ours[qid]] == [d for d, _ in theirs.hits[qid]], qid
        for (_, a), (_, b) in zip(ours[qid], theirs.hits[qid], strict=True):
            assert abs(a - b) <= 1e-4
