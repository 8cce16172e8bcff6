"""The BEIR-layout loader against beir's GenericDataLoader, and its semantics on edge cases."""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from beir.datasets.data_loader import GenericDataLoader

from heta_eval.adapters.beir import BeirBenchmark
from heta_eval.data.beir_loader import DatasetFormatError, iter_corpus, load_beir, load_qrels
from heta_eval.models.records import BenchmarkCase, Document


def make_dataset(root: Path, *, corpus: str, queries: str, qrels: str, split="test") -> Path:
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (root / "queries.jsonl").write_text(queries, encoding="utf-8")
    (root / "qrels" / f"{split}.tsv").write_text(qrels, encoding="utf-8")
    return root


def test_scifact_equals_beir_generic_data_loader(scifact_dir):
    corpus, queries, qrels = GenericDataLoader(str(scifact_dir)).load("test")
    ours = load_beir(scifact_dir, "test")
    assert ours.qrels == qrels and list(ours.qrels) == list(qrels)
    assert ours.queries == queries and list(ours.queries) == list(queries)
    assert len(ours.queries) == 300
    docs = ours.corpus()
    assert isinstance(docs, types.GeneratorType)  # streamed, not a dict
    seen = 0
    for doc in docs:
        assert isinstance(doc, Document)
        assert corpus[doc.id] == {"text": doc.text, "title": doc.title}
        seen += 1
    assert seen == len(corpus) == 5183


def test_train_split_too(scifact_dir):
    ours = load_beir(scifact_dir, "train")
    assert (len(ours.queries), sum(map(len, ours.qrels.values()))) == (809, 919)


def test_beir_semantics_on_edge_cases(tmp_path):
    folder = make_dataset(
        tmp_path,
        corpus='{"_id": "d1", "text": "one", "metadata": {"a": 1}}\n{"_id": "d2", "title": "T"}\n',
        queries='{"_id": "q0", "text": "unjudged"}\n{"_id": "q2", "text": "two"}\n'
        '{"_id": "q1", "text": "old"}\n{"_id": "q1", "text": "one"}\n',
        # The first line is data here: BEIR drops it anyway.
        qrels="q0\td1\t1\nq2\td2\t0\nq1\td1\t1\nq1\td2\t1\nq1\td1\t2\n",
    )
    ours = load_beir(folder)
    _, beir_queries, beir_qrels = GenericDataLoader(str(folder)).load("test")
    assert ours.qrels == beir_qrels == {"q2": {"d2": 0}, "q1": {"d1": 2, "d2": 1}}
    assert list(ours.queries) == list(beir_queries) == ["q2", "q1"]  # qrels order
    assert ours.queries["q1"] == "one"  # last line wins
    assert "q2" in ours.queries  # zero-label query kept
    docs = list(ours.corpus())
    assert docs[1] == Document(id="d2", title="T", text="")  # missing text -> ""
    assert docs[0].metadata == {}  # dropped, as in BEIR
    assert next(ours.corpus(keep_metadata=True)).metadata == {"a": 1}


def test_non_integer_label_names_file_and_line(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq\td\t1\nq\te\t1.0\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"t.tsv:3: relevance label '1.0'"):
        load_qrels(path)
    path.write_text("query-id\tcorpus-id\tscore\nq\td\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"t.tsv:2: expected 3"):
        load_qrels(path)


def test_judged_query_missing_from_queries_is_an_error(tmp_path):
    folder = make_dataset(
        tmp_path,
        corpus='{"_id": "d"}\n',
        queries='{"_id": "q1", "text": "x"}\n',
        qrels="h\th\th\nq1\td\t1\nq9\td\t1\n",
    )
    with pytest.raises(DatasetFormatError, match="'q9'"):
        load_beir(folder)


def test_malformed_corpus_line(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a", "text": "x"}\n{"_id": "b", "text": \n', encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"corpus.jsonl:2: invalid JSON"):
        list(iter_corpus(path))
    path.write_text('{"_id": "a", "text": "x"}\n\n', encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"corpus.jsonl:2: empty line"):
        list(iter_corpus(path))


def test_missing_split_lists_available_ones(scifact_dir):
    with pytest.raises(FileNotFoundError, match="available splits: test, train"):
        load_beir(scifact_dir, "dev")


# ---------------------------------------------------------------- the adapter


def test_beir_benchmark_adapter_on_scifact(scifact_dir):
    bench = BeirBenchmark("scifact", data_dir=scifact_dir.parent, download=False)
    assert bench.split == "test" and bench.ignore_identical_ids and bench.aggregate is None
    cases = bench.cases()
    _, queries, qrels = GenericDataLoader(str(scifact_dir)).load("test")
    assert [c.id for c in cases] == list(queries)
    assert all(isinstance(c, BenchmarkCase) for c in cases)
    assert {c.id: c.expected.relevance for c in cases} == qrels
    assert {c.id: c.query for c in cases} == queries
    first = next(bench.documents())
    assert first.id == "4983" and first.title.startswith("Microstructural")
    evaluators = bench.evaluators()
    assert len(evaluators) == 30  # 5 metrics at k = 1, 3, 5, 10, 100, 1000 (BEIR's, 2CR's depth)
    assert {e.name for e in evaluators} >= {"ndcg@10", "recall@1000", "map@1", "mrr@5"}


def test_cqadupstack_is_split_into_sub_benchmarks(tmp_path):
    bench = BeirBenchmark("cqadupstack", data_dir=tmp_path, download=False)
    assert bench.aggregate == "mean"
    subs = bench.sub_benchmarks()
    assert len(subs) == 12 and subs[0].name == "cqadupstack/android"
    with pytest.raises(ValueError, match="sub_benchmarks"):
        bench.cases()


def test_adapter_without_data_and_download_off_says_how_to_get_it(tmp_path):
    bench = BeirBenchmark("scifact", data_dir=tmp_path, download=False)
    with pytest.raises(FileNotFoundError, match="heta-eval datasets download scifact"):
        bench.cases()
