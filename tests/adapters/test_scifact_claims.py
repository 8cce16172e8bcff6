"""The SciFact claims adapter against the raw release files: sentence spans, rationales,
relevance (= BEIR's test qrels), labels, evidence recall on hand-built responses, the
download layout, and a small end-to-end run with the reference knowledge base."""

from __future__ import annotations

import asyncio
import functools
import io
import json
import tarfile
import threading
from collections import Counter
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.kb_fixtures import FirstClaims
from support.paths import shared_path

from heta_eval.adapters import load_benchmark
from heta_eval.adapters.scifact_claims import (
    ClaimLabelExactMatch,
    SciFactClaimsBenchmark,
    find_release,
    sentence_spans,
)
from heta_eval.data.beir_loader import load_beir
from heta_eval.data.registry import REGISTRY_PATH
from heta_eval.evaluation import EvidenceRecallAtK, QueryResponse
from heta_eval.reference import Recipe
from heta_eval.reference.chunking import chunk_document
from heta_eval.runner import BenchmarkRunner


@pytest.fixture(scope="module")
def release() -> Path:
    return shared_path("datasets", "scifact-release")


@pytest.fixture(scope="module")
def bench(release: Path) -> SciFactClaimsBenchmark:
    return SciFactClaimsBenchmark(data_dir=release, download=False)


@pytest.fixture(scope="module")
def raw(release: Path) -> tuple[dict[str, dict], list[dict]]:
    with (release / "corpus.jsonl").open(encoding="utf-8") as handle:
        corpus = {str(r["doc_id"]): r for r in map(json.loads, handle)}
    with (release / "claims_dev.jsonl").open(encoding="utf-8") as handle:
        claims = [json.loads(line) for line in handle]
    return corpus, claims


@pytest.fixture(scope="module")
def documents(bench):
    return bench.document_map()


@pytest.fixture(scope="module")
def cases(bench):
    return {case.id: case for case in bench.cases()}


def recall(case, results, k: int = 10):
    response = QueryResponse.model_validate({"query": case.query, "results": results})
    return asyncio.run(EvidenceRecallAtK(k).evaluate(case=case, response=response))


# ------------------------------------------------------------------- against the raw files


def test_documents_are_beir_text_with_one_span_per_sentence(documents, raw):
    corpus, _ = raw
    assert len(documents) == len(corpus) == 5183
    for doc_id, record in corpus.items():
        doc = documents[doc_id]
        assert doc.text == " ".join(record["abstract"]) and doc.title == record["title"]
        assert len(doc.sentences) == len(record["abstract"])
        for (start, end), sentence in zip(doc.sentences, record["abstract"], strict=True):
            assert doc.text[start:end] == sentence.strip()


def test_document_text_equals_beir_scifact_corpus(documents):
    beir = load_beir(shared_path("datasets", "beir", "scifact"), "test")
    texts = {doc.id: (doc.title, doc.text) for doc in beir.corpus()}
    assert texts == {doc.id: (doc.title, doc.text) for doc in documents.values()}


def test_every_rationale_sentence_is_at_its_span_for_all_300_dev_claims(cases, documents, raw):
    corpus, claims = raw
    assert len(claims) == len(cases) == 300
    checked = 0
    for claim in claims:
        case = cases[str(claim["id"])]
        expected = [
            (str(doc_id), index)
            for doc_id, rationales in claim["evidence"].items()
            for rationale in rationales
            for index in rationale["sentences"]
        ]
        got = [
            (g.locator["document_id"], g.locator["sentence_index"]) for g in case.expected.evidence
        ]
        assert got == expected, claim["id"]
        for gold in case.expected.evidence:
            doc = documents[gold.locator["document_id"]]
            start, end = doc.sentences[gold.locator["sentence_index"]]
            raw_sentence = corpus[doc.id]["abstract"][gold.locator["sentence_index"]]
            assert doc.text[start:end] == gold.text == raw_sentence.strip()
            checked += 1
    assert checked == 366


def test_relevance_is_exactly_beir_scifact_test_qrels(cases, raw):
    qrels = load_beir(shared_path("datasets", "beir", "scifact"), "test").qrels
    assert {case_id: case.expected.relevance for case_id, case in cases.items()} == qrels
    # BEIR judged the cited documents, not the evidence keys: 112 NEI claims have no
    # evidence, and 13 more cite documents that hold none of their rationales.
    _, claims = raw
    by_evidence = sum({str(d): 1 for d in c["evidence"]} == qrels[str(c["id"])] for c in claims)
    assert by_evidence == 175


def test_labels_and_not_enough_info(cases, raw):
    _, claims = raw
    assert Counter(case.expected.answers[0] for case in cases.values()) == {
        "SUPPORT": 124,
        "CONTRADICT": 64,
        "NOT_ENOUGH_INFO": 112,
    }
    for claim in claims:
        case = cases[str(claim["id"])]
        labels = {r["label"] for rs in claim["evidence"].values() for r in rs}
        assert case.expected.answers == (list(labels) or ["NOT_ENOUGH_INFO"])
        assert bool(case.expected.evidence) == bool(claim["evidence"])


def test_load_benchmark_dispatches_and_evaluators(release, monkeypatch):
    monkeypatch.setenv("HETA_EVAL_DATA", str(release))
    benchmark = load_benchmark("scifact-claims")
    assert isinstance(benchmark, SciFactClaimsBenchmark) and benchmark.name == "scifact-claims"
    names = [e.name for e in benchmark.evaluators()]
    assert names[:4] == [f"evidence_recall@{k}" for k in (1, 3, 5, 10)]
    assert {"ndcg@10", "recall@100", "mrr@10"} <= set(names)
    assert names[-1] == "label_exact_match"


# ------------------------------------------------------------- evidence recall, hand-built


def test_evidence_split_across_two_chunks(cases, documents):
    case = cases["3"]  # doc 14717500, rationale sentences 2, 5 and 7
    doc = documents["14717500"]
    chunks = chunk_document(doc, size=150, overlap=0)  # sentences [0..4] and [5..7]
    assert [c.sentence_index for c in chunks] == [[0, 1, 2, 3, 4], [5, 6, 7]]
    both = [{"text": c.text, "source": c.source()} for c in chunks]
    score = recall(case, both)
    assert score.value == 1.0 and [d["rank"] for d in score.metadata["details"]] == [1, 2, 2]
    assert {d["method"] for d in score.metadata["details"]} == {"locator"}
    # Only the first chunk in the top k: sentence 2 found, 5 and 7 missing.
    assert recall(case, both, k=1).value == pytest.approx(1 / 3)
    assert recall(case, both[::-1], k=1).value == pytest.approx(2 / 3)


def test_evidence_text_in_a_chunk_of_another_document_does_not_match(cases, documents):
    case = cases["5"]  # doc 13734012, sentence 4
    gold = case.expected.evidence[0]
    other = {"document_id": "4983", "chunk_id": "4983#0", "sentence_index": [4]}
    score = recall(case, [{"text": gold.text, "source": other}])
    assert score.value == 0.0 and score.metadata["missing"][0]["locator"] == gold.locator
    # The same chunk text under the right document matches by locator.
    right = {"document_id": "13734012", "sentence_index": [3, 4, 5]}
    assert recall(case, [{"text": gold.text, "source": right}]).value == 1.0


def test_evidence_found_only_by_text(cases):
    case = cases["5"]
    text = "Background. " + case.expected.evidence[0].text + " More text follows."
    score = recall(case, [{"text": "Unrelated.", "source": {}}, {"text": text}])
    assert score.value == 1.0 and score.metadata["details"][0] == {
        "index": 0,
        "method": "text",
        "rank": 2,
    }


def test_label_exact_match_scores_labels_and_skips_other_answers(cases):
    def score(case_id: str, answer: str | None):
        response = QueryResponse(query="?", answer=answer)
        return asyncio.run(ClaimLabelExactMatch().evaluate(case=cases[case_id], response=response))

    assert score("3", "SUPPORT").value is True
    assert score("48", "support").value is False  # claim 48 is CONTRADICT
    assert score("1", "Not enough info.").value is True
    assert score("3", "Variants may create synthetic associations.").skipped
    assert score("3", None).skipped


# ------------------------------------------------------------------- layout and download


def test_sentence_spans_skip_surrounding_whitespace():
    text, spans = sentence_spans(["One.   \n", "", "Two."])
    assert text == "One.   \n  Two." and [text[s:e] for s, e in spans] == ["One.", "", "Two."]


def release_tarball() -> bytes:
    corpus = {
        "doc_id": 7,
        "title": "T",
        "abstract": ["A cat sat.", "It purred."],
        "structured": False,
    }
    claim = {
        "id": 1,
        "claim": "Cats purr.",
        "cited_doc_ids": [7],
        "evidence": {"7": [{"sentences": [1], "label": "SUPPORT"}]},
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, record in (("corpus.jsonl", corpus), ("claims_dev.jsonl", claim)):
            data = (json.dumps(record) + "\n").encode()
            info = tarfile.TarInfo(f"data/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_download_pins_the_unknown_checksum_and_finds_the_data_folder(tmp_path, monkeypatch):
    served = tmp_path / "served"
    served.mkdir()
    (served / "data.tar.gz").write_bytes(release_tarball())
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        registry = json.loads(REGISTRY_PATH.read_text(encoding="utf-8"))
        entry = registry["datasets"]["scifact-claims"]
        assert (
            entry["url"] == "https://scifact.s3-us-west-2.amazonaws.com/release/latest/data.tar.gz"
        )
        assert entry["md5"] is None and entry["adapter"] == "scifact-claims"
        entry["url"] = f"http://127.0.0.1:{server.server_port}/data.tar.gz"
        (tmp_path / "registry.json").write_text(json.dumps(registry), encoding="utf-8")
        monkeypatch.setenv("HETA_EVAL_REGISTRY", str(tmp_path / "registry.json"))
        root = tmp_path / "root"
        with pytest.raises(FileNotFoundError, match="scifact-claims"):
            _ = SciFactClaimsBenchmark(data_dir=root, download=False).folder
        with pytest.warns(UserWarning, match="recorded sha256"):
            folder = SciFactClaimsBenchmark(data_dir=root).folder
        assert folder == root / "scifact-claims" / "data" == find_release(root)
        pins = json.loads((root / "_downloads" / "checksums.json").read_text())
        assert set(pins) == {"scifact-claims.tar.gz"}
        case = SciFactClaimsBenchmark(data_dir=root).cases()[0]
        assert case.expected.evidence[0].text == "It purred."
        assert case.expected.relevance == {"7": 1} and case.expected.answers == ["SUPPORT"]
    finally:
        server.shutdown()


# ------------------------------------------------------------------------------ end to end


def test_keyword_search_end_to_end_on_a_subset(release, tmp_path):
    bench = FirstClaims(40, data_dir=release, download=False)
    recipe = Recipe(modes=["keyword_search"], chunking={"size": 64})
    results = BenchmarkRunner(progress=False).run(
        benchmark=bench,
        recipe=recipe,
        query_modes=("keyword_search",),
        output_dir=tmp_path / "out",
        cache_dir=False,
    )
    mode = results.summary.modes["keyword_search"]
    assert mode.answered == 40 and not results.partial
    er5 = results.metric("keyword_search", "evidence_recall@5")
    er1 = results.metric("keyword_search", "evidence_recall@1")
    with_evidence = sum(bool(c.expected.evidence) for c in bench.cases())
    assert er5.scored == er1.scored == with_evidence and er5.skipped == 40 - with_evidence
    assert 0.3 < er5.value <= 1 and er1.value <= er5.value
    assert 0.4 < results.metric("keyword_search", "ndcg@10").value <= 1
    # The reference KB answers with a sentence, not a label: every label score is skipped.
    assert results.metric("keyword_search", "label_exact_match").skipped == 40
    # Every located chunk carries the sentence indices it holds.
    record = results.records[0]
    assert record.mode == "keyword_search" and record.documents


def test_cli_run_on_all_300_claims_with_keyword_search(release, tmp_path, capsys):
    from heta_eval.cli import main as cli_main

    out = tmp_path / "results"
    code = cli_main(
        [
            "run",
            "--dataset",
            "scifact-claims",
            "--data-dir",
            str(release),
            "--modes",
            "keyword_search",
            "--output",
            str(out),
            "--quiet",
            "--no-cache",
        ]
    )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    metrics = summary["modes"]["keyword_search"]["metrics"]
    assert summary["benchmark"] == "scifact-claims"
    assert summary["modes"]["keyword_search"]["answered"] == 300
    # Same documents and qrels as BEIR SciFact: BM25 lands on Pyserini's 0.6789 nDCG@10.
    assert abs(metrics["ndcg@10"]["beir"] - 0.6789) <= 0.01
    assert metrics["evidence_recall@5"]["scored"] == 188
    assert "evidence_recall@5" in capsys.readouterr().out
