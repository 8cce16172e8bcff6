"""The second stage against BEIR's own ``Rerank``, on a real cross-encoder built here (the
bundled MiniLM weights under a seeded one-output head, loaded by sentence-transformers'
``CrossEncoder``), over real BM25 on a real SciFact sample: the same documents per query,
scores to float32 tolerance, BEIR's order, nDCG@10 to the last digit. Also the pair cache,
the refusals and the results folder's record."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from beir.datasets.data_loader import GenericDataLoader
from beir.reranking import Rerank
from beir.reranking.models import CrossEncoder as BeirCrossEncoder
from beir.retrieval.evaluation import EvaluateRetrieval
from support.paths import shared_path

from heta_eval.encoding.runners import default_model_path
from heta_eval.rerank import CrossEncoderReranker, RerankingKnowledgeBase
from heta_eval.rerank.cross_encoder import (
    CrossEncoderError,
    check_cross_encoder,
    demo_cross_encoder,
)
from heta_eval.systems.run_files import RunFileKnowledgeBase

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ["--sample", "12", "--sample-documents", "300", "--k", "1,10", "--quiet"]
#: Scores of one pair alone against BEIR's batches (padding changes the last bits).
FLOAT32_TOLERANCE = 1e-5


def scifact_dir() -> Path:
    return shared_path("datasets", "beir", "scifact")


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> str:
    return demo_cross_encoder(tmp_path_factory.mktemp("cross-encoder"), seed=46)


def _cli(*args: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HETA_EVAL_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", "run", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _read_run(path: Path) -> dict[str, dict[str, float]]:
    """A run file as BEIR's users read one: a dict per query, in the file's order."""
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        run.setdefault(query, {})[doc] = float(score)
    return run


def _assert_same_ranking(ours: dict, beir: dict) -> None:
    for query in beir:
        mine = ours.get(query, {})
        assert set(mine) == set(beir[query]), query
        for doc, score in beir[query].items():
            assert mine[doc] == pytest.approx(score, abs=FLOAT32_TOLERANCE), (query, doc)
        # BEIR's order: by score, equal scores as given; ours only differs inside a near tie.
        order = sorted(beir[query], key=lambda d: beir[query][d], reverse=True)
        mine_order = sorted(mine, key=lambda d: mine[d], reverse=True)
        for a, b in zip(order, mine_order, strict=True):
            assert a == b or abs(beir[query][a] - beir[query][b]) < FLOAT32_TOLERANCE


def test_bm25_reranked_equals_beirs_rerank_on_scifact(model, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    done = _cli(
        "--dataset",
        str(scifact_dir()),
        *SAMPLE,
        "--modes",
        "keyword_search",
        "--rerank",
        model,
        "--rerank-depth",
        "5",
        "--rerank-precision",
        "float32",
        "--output",
        str(out),
        cache=cache,
    )
    assert done.returncode == 0, done.stderr
    first = _read_run(out / "runs" / "keyword_search.trec")
    corpus, queries, qrels = GenericDataLoader(str(scifact_dir())).load(split="test")
    queries = {q: queries[q] for q in first}
    beir = Rerank(BeirCrossEncoder(model), batch_size=128).rerank(corpus, queries, first, 5)
    ours = _read_run(out / "runs" / "keyword_search+rerank.trec")
    _assert_same_ranking(ours, beir)
    assert sum(map(len, beir.values())) == sum(map(len, ours.values())) > 0
    judged = {q: qrels[q] for q in queries if q in qrels}
    ndcg, *_ = EvaluateRetrieval.evaluate(judged, beir, [10])
    summary = json.loads((out / "summary.json").read_text())
    metric = summary["modes"]["keyword_search+rerank"]["metrics"]["ndcg@10"]
    assert metric["beir"] == round(ndcg["NDCG@10"], 5)
    # BEIR rounds to 5 digits; its mean of pytrec_eval's values, unrounded, to the last digit.
    each = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10"}).evaluate(
        {q: {d: s for d, s in docs.items() if d != q} for q, docs in beir.items()}
    )
    unrounded = sum(values["ndcg_cut_10"] for values in each.values()) / len(each)
    assert metric["beir_unrounded"] == unrounded
    record = json.loads((out / "run.json").read_text())["rerank"]
    assert (record["model"], record["depth"], record["level"]) == (model, 5, "document")

    # The same first stage as a run file (--kb-run): the same reranked run, from the cache.
    again = _cli(
        "--dataset",
        str(scifact_dir()),
        *SAMPLE,
        "--kb-run",
        f"bm25={out / 'runs' / 'keyword_search.trec'}",
        "--rerank",
        model,
        "--rerank-depth",
        "5",
        "--rerank-precision",
        "float32",
        "--output",
        str(tmp_path / "run-file"),
        cache=cache,
    )
    assert again.returncode == 0, again.stderr
    assert _read_run(tmp_path / "run-file" / "runs" / "bm25+rerank.trec") == ours


def test_ties_and_the_cut_follow_beir(model, tmp_path):
    corpus = {
        "a": {"title": "Cats", "text": "Cats purr when they are content."},
        "b": {"title": "Cats", "text": "Cats purr when they are content."},  # a's twin
        "c": {"title": "", "text": "Dogs bark at strangers."},
        "d": {"title": "Fish", "text": "Fish breathe through gills."},
        "e": {"title": "Birds", "text": "Birds sing at dawn."},
    }
    queries = {"q1": "do cats purr", "q2": "how do fish breathe", "q3": "nothing"}
    # q1: d and c tie at the cut (3 of 5): BEIR keeps the order given. q3: no results.
    results = {
        "q1": {"e": 1.0, "a": 5.0, "b": 5.0, "d": 2.0, "c": 2.0},
        "q2": {"d": 1.0, "e": 3.0},
        "q3": {},
    }
    reranker = CrossEncoderReranker(model, precision="float32", device="cpu", cache_dir=False)
    beir = Rerank(BeirCrossEncoder(model)).rerank(corpus, queries, results, 3)
    ours = reranker.rerank(corpus, queries, results, 3)
    assert {q: list(docs) for q, docs in ours.items()} == {q: list(d) for q, d in beir.items()}
    assert list(ours["q1"]) == ["a", "b", "d"]
    _assert_same_ranking(ours, beir)
    assert ours["q1"]["a"] == ours["q1"]["b"]  # the twins: one text, one score

    # Through a knowledge base: the reply is best first, equal scores in first-stage order.
    run = tmp_path / "first.trec"
    run.write_text(
        "".join(f"{q} Q0 {d} 0 {s} t\n" for q, docs in results.items() for d, s in docs.items())
    )
    kb = RerankingKnowledgeBase(
        RunFileKnowledgeBase({"bm25": run}), reranker, depth=3, documents=corpus
    )
    reply = asyncio.run(kb.query("do cats purr", mode="bm25+rerank", top_k=10, query_id="q1"))
    shown = [(r.source["document_id"], r.score) for r in reply.results]
    assert shown == sorted(shown, key=lambda item: -item[1])
    twins = [doc for doc, _ in shown if doc in "ab"]
    assert twins == ["b", "a"]  # the run file ranks equal scores by id, descending


def test_scores_are_kept_and_reused_by_another_depth_and_a_new_process(model, tmp_path):
    corpus, queries, _ = GenericDataLoader(str(scifact_dir())).load(split="test")
    first = dict(list(queries.items())[:2])
    ids = list(corpus)[:6]
    results = {q: {doc: float(-i) for i, doc in enumerate(ids)} for q in first}
    reranker = CrossEncoderReranker(model, device="cpu", cache_dir=tmp_path)
    deep = reranker.rerank(corpus, first, results, 6)
    assert (reranker.scored, reranker.reused) == (12, 0)
    fresh = CrossEncoderReranker(model, device="cpu", cache_dir=tmp_path)
    shallow = fresh.rerank(corpus, first, results, 3)
    assert (fresh.scored, fresh.reused) == (0, 6)
    assert all(shallow[q][d] == deep[q][d] for q in shallow for d in shallow[q])
    # Another route is another identity: nothing of bfloat16's is served to float32.
    other = CrossEncoderReranker(model, precision="float32", device="cpu", cache_dir=tmp_path)
    other.rerank(corpus, first, results, 3)
    assert (other.scored, other.reused) == (6, 0)


def test_bfloat16_scores_stay_close_to_float32(model):
    corpus, queries, _ = GenericDataLoader(str(scifact_dir())).load(split="test")
    pairs = [
        (queries[q], corpus[d]["title"] + " " + corpus[d]["text"])
        for q, d in zip(list(queries)[:24], list(corpus)[:24], strict=True)
    ]
    wide = CrossEncoderReranker(model, precision="float32", device="cpu", cache_dir=False)
    narrow = CrossEncoderReranker(model, precision="bfloat16", device="cpu", cache_dir=False)
    assert narrow.route == "torch-bfloat16"
    gap = np.abs(wide.score(pairs) - narrow.score(pairs))
    assert gap.max() < 0.02, gap.max()  # scores in (0, 1) through the model's Sigmoid
    assert len(set(narrow.score(pairs).tolist())) == len(pairs)  # the float32 head: no ties


def test_a_bi_encoder_or_several_outputs_without_a_label_are_refused(tmp_path):
    done = _cli(
        "--dataset",
        str(scifact_dir()),
        "--modes",
        "keyword_search",
        "--rerank",
        default_model_path(),
        cache=tmp_path,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a cross-encoder" in lines[0] and "BertModel" in lines[0]
    assert "bi-encoder" in lines[0]
    two = demo_cross_encoder(tmp_path / "two", outputs=2)
    with pytest.raises(CrossEncoderError, match=r"has 2 outputs \(LABEL_0, LABEL_1\) and no label"):
        check_cross_encoder(two)
    assert check_cross_encoder(two, "LABEL_1") == 1
    scores = CrossEncoderReranker(two, label="LABEL_1", device="cpu", cache_dir=False).score(
        [("q", "a text")]
    )
    assert scores.shape == (1,)


# Three CLI runs, each loading the cross-encoder (half a minute): with the system tests.
@pytest.mark.system
def test_a_folder_takes_its_reranked_modes_later_and_a_shallow_depth_is_said(model, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    common = [
        "--dataset",
        str(scifact_dir()),
        *SAMPLE,
        "--modes",
        "keyword_search",
        "--output",
        str(out),
    ]
    assert _cli(*common, cache=cache).returncode == 0
    added = _cli(*common, "--rerank", model, "--rerank-depth", "5", cache=cache)
    assert added.returncode == 0, added.stderr
    assert (
        "warning: --rerank-depth 5 is below k = 10: a reranked mode holds at most 5 "
        "documents a query, which caps ndcg@10"
    ) in added.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["modes"]) == ["keyword_search", "keyword_search+rerank"]
    other = _cli(*common, "--rerank", model, "--rerank-depth", "6", cache=cache)
    assert other.returncode == 2 and "changed: rerank" in other.stderr
    assert (
        "--rerank-depth must be an integer from 1 to 1,000,000"
        in _cli(*common, "--rerank", model, "--rerank-depth", "0", cache=cache).stderr
    )
