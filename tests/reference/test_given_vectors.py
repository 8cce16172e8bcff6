"""Your own vectors: ``heta-eval run --corpus-embeddings C.npy --query-embeddings Q.npy``
searches and scores them as BEIR's DenseRetrievalExactSearch does (its rankings, its
numbers), refuses what it cannot search in one line, and records the files it searched."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from beir.retrieval.evaluation import EvaluateRetrieval
from beir.retrieval.search.dense import DenseRetrievalExactSearch
from support.given_vectors_model import GivenVectorsModel

from heta_eval.io.trec import read_run

REPO = Path(__file__).resolve().parents[2]
DIM = 24


def beir_folder(root: Path, *, docs: int = 1500, queries: int = 30, seed: int = 0) -> Path:
    """A BEIR folder of ``docs`` documents and ``queries`` queries (all judged, some ids shared
    by a document: self-hits), with float16 vectors: ``corpus.npy`` and ``queries.npy``."""
    rng = np.random.default_rng(seed)
    folder = root / "own"
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as out:
        for i in range(docs):
            out.write(
                json.dumps({"_id": f"d{i}", "title": f"t{i}", "text": f"apple {i % 7}"}) + "\n"
            )
    ids = [f"q{q}" if q % 5 else f"d{q}" for q in range(queries)]  # every fifth: a self-hit id
    with (folder / "queries.jsonl").open("w") as out:
        for q, qid in enumerate(ids):
            out.write(json.dumps({"_id": qid, "text": f"apple {q % 7} query"}) + "\n")
    with (folder / "qrels" / "test.tsv").open("w") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for qid in ids[::-1]:  # qrels order differs from queries.jsonl's
            for doc in rng.choice(docs, size=3, replace=False):
                out.write(f"{qid}\td{doc}\t{int(rng.integers(0, 3))}\n")
    corpus = rng.normal(size=(docs, DIM)).astype(np.float16)
    np.save(folder / "corpus.npy", corpus)
    np.save(folder / "queries.npy", rng.normal(size=(queries, DIM)).astype(np.float16))
    return folder


def heta(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def run_given(folder: Path, out: Path, *extra: str, modes: str = "vector_search"):
    return heta(
        "run",
        "--dataset",
        str(folder),
        "--modes",
        modes,
        "--output",
        str(out),
        "--corpus-embeddings",
        str(folder / "corpus.npy"),
        "--quiet",
        *extra,
        cwd=folder.parent,
    )


def beir_oracle(folder: Path, score_function: str, queries_file: str = "queries.npy"):
    """BEIR's own exact search and numbers over the same vectors (top 1,000, as a run)."""
    from heta_eval.data.beir_loader import load_beir, load_queries

    dataset = load_beir(folder, "test")
    order = list(load_queries(folder / "queries.jsonl"))
    corpus_ids = [json.loads(line)["_id"] for line in (folder / "corpus.jsonl").open()]
    model = GivenVectorsModel(np.load(folder / "corpus.npy"), np.load(folder / queries_file))
    search = DenseRetrievalExactSearch(model, corpus_chunk_size=600, show_progress_bar=False)
    results = search.search(
        {doc: {"title": "", "text": str(row)} for row, doc in enumerate(corpus_ids)},
        {qid: f"{order.index(qid)} {text}" for qid, text in dataset.queries.items()},
        1000,
        score_function,
    )
    ndcg, _map, recall, _precision = EvaluateRetrieval.evaluate(
        dataset.qrels, json.loads(json.dumps(results)), [1, 3, 5, 10, 100, 1000]
    )
    return results, {**ndcg, **recall}


@pytest.mark.parametrize("score_function", ["cos_sim", "dot"])
def test_given_vectors_rank_and_score_as_beir_does(tmp_path, score_function):
    folder = beir_folder(tmp_path)
    done = run_given(
        folder,
        tmp_path / "out",
        "--query-embeddings",
        str(folder / "queries.npy"),
        "--score-function",
        score_function,
    )
    assert done.returncode == 0, done.stderr
    results, numbers = beir_oracle(folder, score_function)
    ours = read_run(tmp_path / "out" / "runs" / "vector_search.trec")
    for qid, theirs in results.items():
        mine = {doc: score for doc, score in ours[qid].items() if doc != qid}
        ranked = sorted(mine, key=lambda doc: -mine[doc])[:1000]
        assert ranked[:10] == sorted(theirs, key=lambda doc: -theirs[doc])[:10], qid
        assert set(ranked) == set(theirs), qid
        for doc in ranked[:50]:
            assert abs(mine[doc] - theirs[doc]) < 2e-6
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    metrics = summary["modes"]["vector_search"]["metrics"]
    for name, beir_key in (("ndcg@10", "NDCG@10"), ("recall@100", "Recall@100")):
        assert metrics[name]["beir"] == pytest.approx(numbers[beir_key], abs=1e-12), name
    build = summary["build"]
    assert build["embeddings"] == "given" and build["corpus_vectors"] == "corpus.npy"


def test_the_results_folder_records_the_vectors_and_refuses_others(tmp_path):
    folder = beir_folder(tmp_path)
    queries = str(folder / "queries.npy")
    assert run_given(folder, tmp_path / "out", "--query-embeddings", queries).returncode == 0
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    given = record["recipe"]["dense"]["corpus_vectors"]
    assert given["sha256"] and given["rows"] == 1500 and given["dtype"] == "float16"
    assert given["bytes"] == (folder / "corpus.npy").stat().st_size
    # Other vectors of the same shape: another run, refused with what changed.
    other = np.load(folder / "corpus.npy")
    other[0] = -other[0]
    np.save(folder / "corpus.npy", other)
    again = run_given(folder, tmp_path / "out", "--query-embeddings", queries)
    assert again.returncode == 2
    assert "holds results of a different run" in again.stderr and "recipe" in again.stderr
    assert "Traceback" not in again.stderr


def test_hybrid_search_fuses_bm25_with_the_given_vectors(tmp_path):
    folder = beir_folder(tmp_path)
    done = run_given(
        folder,
        tmp_path / "out",
        "--query-embeddings",
        str(folder / "queries.npy"),
        modes="vector_search,hybrid_search,keyword_search",
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert set(summary["modes"]) == {"vector_search", "hybrid_search", "keyword_search"}
    hybrid = read_run(tmp_path / "out" / "runs" / "hybrid_search.trec")
    assert all(len(docs) == 1001 for docs in hybrid.values())


def bad(folder: Path, name: str, array: np.ndarray) -> Path:
    path = folder / name
    np.save(path, array)
    return path


def test_vectors_that_cannot_be_searched_are_refused_in_one_line(tmp_path):
    folder = beir_folder(tmp_path, docs=300, queries=10)
    good = np.load(folder / "corpus.npy")
    nan = good.copy()
    nan[123, 5] = np.nan
    zero = good.copy()
    zero[7] = 0
    cases = [
        (bad(folder, "short.npy", good[:-1]), "299 vectors, but corpus.jsonl has 300 documents"),
        (bad(folder, "nan.npy", nan), "row 123 (line 124 of corpus.jsonl) holds NaN"),
        (bad(folder, "zero.npy", zero), "row 7 (line 8 of corpus.jsonl) is a zero vector"),
        (bad(folder, "int.npy", good.astype(np.int32)), "expected float16 or float32 vectors"),
        (bad(folder, "flat.npy", good.ravel()), "expected a 2-D array"),
        (bad(folder, "fortran.npy", np.asfortranarray(good)), "column (Fortran) order"),
    ]
    (folder / "text.npy").write_text("not an array")
    cases.append((folder / "text.npy", "not a .npy array file"))
    cases.append((folder / "missing.npy", "no such file"))
    for path, message in cases:
        done = heta(
            "run",
            "--dataset",
            str(folder),
            "--modes",
            "vector_search",
            "--quiet",
            "--output",
            str(tmp_path / path.stem),
            "--corpus-embeddings",
            str(path),
            "--query-embeddings",
            str(folder / "queries.npy"),
            cwd=tmp_path,
        )
        assert done.returncode == 2, (path, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert message in lines[-1] and path.name in lines[-1], (path, done.stderr)
        assert "Traceback" not in done.stderr
    wide = bad(folder, "wide.npy", np.ones((10, DIM + 1), np.float16))
    done = run_given(folder, tmp_path / "w", "--query-embeddings", str(wide))
    assert done.returncode == 2 and "dense.query_vectors are 25-dimensional" in done.stderr
    rows = bad(folder, "rows.npy", np.ones((9, DIM), np.float16))
    done = run_given(folder, tmp_path / "r", "--query-embeddings", str(rows))
    assert "9 vectors, but queries.jsonl has 10 queries" in done.stderr.strip().splitlines()[-1]
    alone = heta("run", "--dataset", str(folder), "--query-embeddings", str(rows), cwd=tmp_path)
    assert alone.returncode == 2 and "--query-embeddings needs --corpus-embeddings" in alone.stderr
    keyword = run_given(folder, tmp_path / "k", modes="keyword_search")
    assert keyword.returncode == 2 and "vector_search and hybrid_search" in keyword.stderr


def test_vectors_not_of_unit_length_are_scored_by_cosine_and_said(tmp_path):
    folder = beir_folder(tmp_path, docs=400, queries=12)
    done = run_given(folder, tmp_path / "out", "--query-embeddings", str(folder / "queries.npy"))
    assert done.returncode == 0
    assert "corpus.npy: 400 of 400 vectors are not of unit length" in done.stderr
    assert "scored by their cosine" in done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert any("not of unit length" in w for w in summary["warnings"])
    # Unit vectors: nothing to say.
    unit = np.load(folder / "corpus.npy").astype(np.float32)
    np.save(folder / "corpus.npy", (unit / np.linalg.norm(unit, axis=1, keepdims=True)))
    queries = np.load(folder / "queries.npy").astype(np.float32)
    np.save(folder / "queries.npy", queries / np.linalg.norm(queries, axis=1, keepdims=True))
    quiet = run_given(folder, tmp_path / "unit", "--query-embeddings", str(folder / "queries.npy"))
    assert quiet.returncode == 0 and "unit length" not in quiet.stderr


def test_queries_encoded_by_the_model_must_match_the_corpus_vectors(tmp_path):
    # 24-dimensional corpus vectors; MiniLM's queries are 384-dimensional.
    folder = beir_folder(tmp_path, docs=50, queries=5)
    done = run_given(folder, tmp_path / "out")
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert "corpus.npy: 24-dimensional vectors, but the query encoder" in last
    assert "384-dimensional" in last and "Traceback" not in done.stderr


@pytest.mark.system
def test_ctrl_c_mid_search_keeps_the_finished_batches_and_the_rerun_completes_them(tmp_path):
    # 400,000 x 256 vectors and 3,000 queries: three batches of 1,024 queries, each seconds of
    # search, so the signal lands between two of them (the first is journaled).
    import signal
    import time

    rng = np.random.default_rng(1)
    docs, queries = 400_000, 3_000
    folder = tmp_path / "big"
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as out:
        out.writelines(f'{{"_id": "d{i}", "text": "t"}}\n' for i in range(docs))
    with (folder / "queries.jsonl").open("w") as out:
        out.writelines(f'{{"_id": "q{q}", "text": "q"}}\n' for q in range(queries))
    with (folder / "qrels" / "test.tsv").open("w") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        out.writelines(f"q{q}\td{rng.integers(docs)}\t1\n" for q in range(queries))
    np.save(folder / "c.npy", rng.normal(size=(docs, 256)).astype(np.float16))
    np.save(folder / "q.npy", rng.normal(size=(queries, 256)).astype(np.float16))
    args = [
        "run",
        "--dataset",
        str(folder),
        "--modes",
        "vector_search",
        "--corpus-embeddings",
        str(folder / "c.npy"),
        "--query-embeddings",
        str(folder / "q.npy"),
        "--quiet",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "heta_eval", *args, "--output", str(out)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    journal = out / "per_query.jsonl"
    deadline = time.monotonic() + 900
    # A case is journaled when answered and again once scored: count the cases.
    answered = re.compile(r'"case_id":\s*"(q\d+)"')
    while not (journal.exists() and len(set(answered.findall(journal.read_text()))) >= 1024):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    signalled = time.monotonic()
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert time.monotonic() - signalled < 30  # generous: the machine may be loaded
    assert "interrupted (Ctrl-C) while running the vector_search queries" in stderr
    kept = [json.loads(line) for line in journal.read_text().splitlines()]
    assert 1024 <= len({r["case_id"] for r in kept}) < queries
    assert all(len(r["documents"]) == 1001 for r in kept)  # each kept case is whole
    again = heta(*args, "--output", str(out), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    whole = heta(*args, "--output", str(tmp_path / "whole"), cwd=tmp_path)
    assert whole.returncode == 0
    resumed = read_run(out / "runs" / "vector_search.trec")
    assert resumed == read_run(tmp_path / "whole" / "runs" / "vector_search.trec")
    assert len(resumed) == queries
