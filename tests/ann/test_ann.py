"""Approximate search (``heta_eval.ann``, ``heta-eval run --ann``, ``heta-eval ann``) on the
real local engines (FAISS, Qdrant's local mode, LanceDB), on a small seeded corpus of unit
vectors: exact indexes rank as exact search does, the recall of the exact top k is what numpy
recomputes, the run's nDCG@10 is pytrec_eval's on its run file, bad settings are one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from heta_eval.ann import AnnError, build_index, parse_ann, scored_rows
from heta_eval.ann.base import library
from heta_eval.ann.compare import overlap_at
from heta_eval.ann.exact_search import exact_search

REPO = Path(__file__).resolve().parents[2]
DOCS, QUERIES, DIM = 3000, 40, 32


def unit(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """A BEIR folder whose queries lie near their judged documents, with ``corpus.npy`` and
    ``queries.npy`` (unit float32 vectors, one per line, in order)."""
    rng = np.random.default_rng(7)
    folder = tmp_path_factory.mktemp("ann") / "seeded"
    (folder / "qrels").mkdir(parents=True)
    corpus = unit(rng.normal(size=(DOCS, DIM)))
    judged = rng.choice(DOCS, size=(QUERIES, 3), replace=False)
    queries = unit(corpus[judged].sum(axis=1) + rng.normal(scale=0.1, size=(QUERIES, DIM)))
    with (folder / "corpus.jsonl").open("w") as out:
        for i in range(DOCS):
            out.write(json.dumps({"_id": f"d{i}", "title": "", "text": f"doc {i}"}) + "\n")
    with (folder / "queries.jsonl").open("w") as out:
        for q in range(QUERIES):
            out.write(json.dumps({"_id": f"q{q}", "text": f"query {q}"}) + "\n")
    with (folder / "qrels" / "test.tsv").open("w") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for q, docs in enumerate(judged):
            for label, doc in zip((2, 1, 1), docs, strict=True):
                out.write(f"q{q}\td{doc}\t{label}\n")
    np.save(folder / "corpus.npy", corpus)
    np.save(folder / "queries.npy", queries)
    return folder


def vectors(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    return np.load(folder / "corpus.npy"), np.load(folder / "queries.npy")


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


@pytest.mark.parametrize("kind", ["faiss-flat", "qdrant", "lancedb"])
def test_exact_indexes_rank_as_exact_search_does(dataset, kind):
    corpus, queries = vectors(dataset)
    index = build_index(parse_ann(kind), scored_rows(corpus, None))
    try:
        rows, scores = index.search(queries, 100)
    finally:
        index.close()
    exact_rows, exact_scores = exact_search(corpus, queries, 100)
    assert rows.shape == exact_rows.shape == (QUERIES, 100)
    # The same scores, up to float rounding; the same rows wherever scores are not tied.
    assert np.abs(scores - exact_scores).max() < 1e-5
    differ = rows != exact_rows
    gaps = np.abs(np.diff(exact_scores, axis=1))
    near_tie = np.zeros_like(differ)
    near_tie[:, 1:] |= gaps < 1e-5
    near_tie[:, :-1] |= gaps < 1e-5
    assert not (differ & ~near_tie).any()
    assert index.record["vectors"] == DOCS and index.record["library"]


@pytest.mark.parametrize(
    "text",
    [
        "faiss-hnsw:M=8,efSearch=8",
        "faiss-ivf:nlist=64,nprobe=2",
        "lancedb-ivfpq:sub_vectors=8,nprobes=4",
        "lancedb-hnsw:partitions=2,ef=20",
    ],
)
def test_recall_of_the_exact_top_k_is_what_numpy_recomputes(dataset, text):
    corpus, queries = vectors(dataset)
    index = build_index(parse_ann(text), scored_rows(corpus, None))
    try:
        rows, _ = index.search(queries, 100)
    finally:
        index.close()
    truth = np.argsort(-(queries @ corpus.T), axis=1, kind="stable")
    for k in (10, 100):
        expected = np.mean(
            [
                len(set(r[:k].tolist()) & set(t[:k].tolist())) / k
                for r, t in zip(rows, truth, strict=True)
            ]
        )
        found = overlap_at(rows, exact_search(corpus, queries, 100)[0], k)
        assert 0 <= found <= 1 and found == pytest.approx(expected, abs=1e-5)
    # Small settings on purpose: the indexes miss some rows, which the measure must see.
    assert overlap_at(rows, truth[:, :100], 100) < 1


def test_cosine_scores_the_rows_divided_by_their_lengths():
    corpus = np.array([[3.0, 4.0], [0.0, 2.0], [1.0, 0.0]], np.float16)
    scale = (1 / np.linalg.norm(corpus.astype(np.float32), axis=1)).astype(np.float32)
    index = build_index(parse_ann("faiss-flat"), scored_rows(corpus, scale))
    rows, scores = index.search(np.array([[0.0, 1.0]], np.float32), 3)
    assert rows.tolist() == [[1, 0, 2]]
    assert scores[0].tolist() == pytest.approx([1.0, 0.8, 0.0])


def test_run_with_an_index_scores_its_run_file_as_pytrec_eval_does(dataset, tmp_path):
    out = tmp_path / "hnsw"
    done = heta(
        "run",
        "--dataset",
        str(dataset),
        "--modes",
        "vector_search",
        "--quiet",
        "--corpus-embeddings",
        str(dataset / "corpus.npy"),
        "--query-embeddings",
        str(dataset / "queries.npy"),
        "--ann",
        "faiss-hnsw:M=8,efSearch=10",
        "--output",
        str(out),
        "--k",
        "10,100",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    mode = "vector_search+faiss-hnsw"
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["modes"]) == [mode]
    built = summary["build"]["ann"]
    assert built["library"] == "faiss" and built["index"] == "IndexHNSWFlat"
    assert built["settings"] == {"M": 8, "efConstruction": 40, "efSearch": 10}
    assert summary["recipe"]["dense"]["ann"] == {
        "kind": "faiss-hnsw",
        "settings": {"M": 8, "efSearch": 10},
    }
    run: dict[str, dict[str, float]] = {}
    for line in (out / "runs" / f"{mode}.trec").read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    qrels: dict[str, dict[str, int]] = {}
    for line in (dataset / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        qid, doc, label = line.split("\t")
        qrels.setdefault(qid, {})[doc] = int(label)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    expected = np.mean([values["ndcg_cut_10"] for values in per_query.values()])
    metrics = summary["modes"][mode]["metrics"]
    ndcg = next(v for k, v in metrics.items() if k.lower().startswith("ndcg@10"))
    assert ndcg["value"] == pytest.approx(expected, abs=1e-5)


def test_ann_command_puts_each_index_beside_exact_search(dataset, tmp_path):
    output = tmp_path / "ann.json"
    indexes = (
        "faiss-flat,faiss-hnsw:M=8,efSearch=8,faiss-ivf:nlist=64,nprobe=2,qdrant,"
        "lancedb,lancedb-ivfpq:sub_vectors=8"
    )
    done = heta(
        "ann",
        "--dataset",
        str(dataset),
        "--corpus-embeddings",
        str(dataset / "corpus.npy"),
        "--query-embeddings",
        str(dataset / "queries.npy"),
        "--index",
        indexes,
        "--output",
        str(output),
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| index | settings | nDCG@10 | Recall@100 | recall of exact top 10")
    assert [line.split(" | ")[0][2:] for line in table[1:]] == [
        "exact",
        "faiss-flat",
        "faiss-hnsw",
        "faiss-ivf",
        "qdrant",
        "lancedb",
        "lancedb-ivfpq",
    ]
    found = json.loads(output.read_text())
    rows = {row["index"]: row for row in found["indexes"]}
    exact = rows["exact"]
    assert exact["nDCG@10"] > 0.3  # the queries lie near their judged documents
    for name in ("faiss-flat", "qdrant", "lancedb"):  # exact indexes: exact's numbers
        assert rows[name]["nDCG@10"] == exact["nDCG@10"]
        assert rows[name]["recall_of_exact"] == {"top10": 1.0, "top100": 1.0}
    for row in found["indexes"]:
        assert all(0 <= v <= 1 for v in row["recall_of_exact"].values())
        assert row["queries_per_second"] > 0
    approximate = rows["faiss-ivf:nlist=64,nprobe=2"]
    assert approximate["recall_of_exact"]["top100"] < 1
    assert approximate["record"]["settings"] == {"nlist": 64, "nprobe": 2}
    assert rows["qdrant"]["record"]["library"] == "qdrant-client"
    assert rows["lancedb-ivfpq:sub_vectors=8"]["record"]["index"] == "IvfPq"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--index", "faiss-hnsw:M=0"],
            "--index faiss-hnsw: M must be an integer from 2 to 512, got 0",
        ),
        (["--index", "faiss-ivf:nprobe=x"], "--index faiss-ivf: nprobe must be an integer"),
        (
            ["--index", "faiss-hnsw:ef=3"],
            "--index: faiss-hnsw: unknown setting 'ef'; it takes M, efConstruction, efSearch",
        ),
        (["--index", "hnswlib"], "--index: unknown index 'hnswlib'; the indexes are faiss-flat"),
        (["--index", "qdrant:m=16"], "--index: qdrant: unknown setting 'm'; it takes no settings"),
        (["--index", "faiss-flat,faiss-flat"], "--index: faiss-flat is given twice"),
        (
            ["--index", "faiss-ivf:nlist=100000"],
            "faiss-ivf: nlist=100,000 lists need at least as many vectors",
        ),
    ],
)
def test_bad_settings_are_refused_in_one_line(dataset, tmp_path, args, message):
    done = heta(
        "ann",
        "--dataset",
        str(dataset),
        "--corpus-embeddings",
        str(dataset / "corpus.npy"),
        "--query-embeddings",
        str(dataset / "queries.npy"),
        "--quiet",
        "--output",
        str(tmp_path / "a.json"),
        *args,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert not (tmp_path / "a.json").exists()


def test_run_refuses_an_index_without_a_dense_mode(dataset, tmp_path):
    done = heta(
        "run",
        "--dataset",
        str(dataset),
        "--modes",
        "keyword_search",
        "--ann",
        "faiss-flat",
        "--quiet",
        "--output",
        str(tmp_path / "out"),
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "heta-eval run: error: --ann is searched by vector_search "
        "and hybrid_search; --modes has neither (keyword_search)"
    )


def test_a_missing_library_names_its_extra():
    spec = parse_ann("faiss-flat")
    with pytest.raises(AnnError, match=r"pip install 'heta-eval\[faiss\]'"):
        library("faiss_not_installed_here", spec)


def test_hybrid_search_through_an_exact_index_scores_as_exact_hybrid(dataset, tmp_path):
    def hybrid(*extra: str) -> dict:
        out = tmp_path / ("+".join(extra) or "exact")
        done = heta(
            "run",
            "--dataset",
            str(dataset),
            "--modes",
            "hybrid_search",
            "--quiet",
            "--corpus-embeddings",
            str(dataset / "corpus.npy"),
            "--query-embeddings",
            str(dataset / "queries.npy"),
            "--output",
            str(out),
            "--k",
            "10,100",
            "--no-cache",
            *extra,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        summary = json.loads((out / "summary.json").read_text())
        [(mode, found)] = summary["modes"].items()
        return {"mode": mode, **{k: v["value"] for k, v in found["metrics"].items()}}

    exact, flat = hybrid(), hybrid("--ann", "faiss-flat")
    assert exact.pop("mode") == "hybrid_search" and flat.pop("mode") == "hybrid_search+faiss-flat"
    assert flat == exact
