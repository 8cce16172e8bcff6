"""Seeded synthetic inputs for the metric benchmarks (MS MARCO dev-sized by default).

* ``make_run_arrays`` — a document-level run: ``queries`` × ``depth`` results drawn from a
  corpus of ``corpus`` ids, scores descending with some exact ties, plus qrels with about
  1.07 relevant documents per query (as MS MARCO dev), about half of them retrieved.
* ``write_run_files`` — the same as a TREC run file and a BEIR qrels tsv.
* ``make_chunk_responses`` — chunk-level ``QueryResponse`` objects (≈3 chunks per document)
  and the equivalent document-level run; ``make_chunk_columns`` — the same responses as
  ``ResultColumns`` over one ``ChunkTable``.

>>> qids, docs, scores, qrels = make_run_arrays(queries=3, depth=5, seed=1)
>>> len(qids), len(docs[0]), len(qrels) == 3
(3, 5, True)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def make_run_arrays(
    queries: int = 6980, depth: int = 1000, *, corpus: int = 8_841_823, seed: int = 0
) -> tuple[list[str], list[list[str]], list[list[float]], dict[str, dict[str, int]]]:
    """Query ids, per-query doc ids and scores (rank order), and qrels."""
    rng = np.random.default_rng(seed)
    qids = [str(q) for q in rng.choice(1_200_000, size=queries, replace=False)]
    docs: list[list[str]] = []
    scores: list[list[float]] = []
    qrels: dict[str, dict[str, int]] = {}
    for qid in qids:
        ids = np.unique(rng.integers(0, corpus, size=depth + depth // 10))[:depth]
        rng.shuffle(ids)
        # Descending scores rounded to 3 decimals: exact ties are common, as in real runs.
        raw = np.sort(np.round(rng.gamma(2.0, 3.0, size=len(ids)), 3))[::-1]
        names = [str(x) for x in ids.tolist()]
        docs.append(names)
        scores.append(raw.tolist())
        n_rel = 1 + (rng.random() < 0.07)
        judged: dict[str, int] = {}
        for _ in range(n_rel):
            if rng.random() < 0.55:
                judged[names[int(rng.integers(0, min(len(names), 200)))]] = 1
            else:
                judged[str(int(rng.integers(0, corpus)))] = 1
        qrels[qid] = judged
    return qids, docs, scores, qrels


def write_run_files(
    folder: Path, queries: int = 6980, depth: int = 1000, *, seed: int = 0
) -> tuple[Path, Path]:
    """Write ``run.trec`` and ``qrels.tsv`` into ``folder`` (reused when already there)."""
    folder.mkdir(parents=True, exist_ok=True)
    run_path = folder / f"run-{queries}x{depth}-s{seed}.trec"
    qrels_path = folder / f"qrels-{queries}x{depth}-s{seed}.tsv"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    qids, docs, scores, qrels = make_run_arrays(queries, depth, seed=seed)
    tmp = run_path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for qid, names, values in zip(qids, docs, scores, strict=True):
            handle.write(
                "".join(
                    f"{qid} Q0 {doc} {rank} {score!r} synthetic\n"
                    for rank, (doc, score) in enumerate(zip(names, values, strict=True), 1)
                )
            )
    tmp.replace(run_path)
    with qrels_path.open("w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for qid, judged in qrels.items():
            for doc, label in judged.items():
                handle.write(f"{qid}\t{doc}\t{label}\n")
    return run_path, qrels_path


def _chunk_orders(queries: int, chunks: int, seed: int):
    """qrels, then per query ``(qid, doc names, [(score, doc index, chunk number), ...])``:
    each document yields 3 chunks; later chunks score lower and land further down."""
    qids, docs, scores, qrels = make_run_arrays(queries, (chunks + 2) // 3, seed=seed)
    rng = np.random.default_rng(seed + 1)

    def orders():
        for qid, names, values in zip(qids, docs, scores, strict=True):
            order = [(values[i], i, 0) for i in range(len(names))]
            for i in range(len(names)):
                for c in (1, 2):
                    order.append((values[i] - 0.001 * c - rng.random(), i, c))
            order.sort(key=lambda item: -item[0])
            yield qid, names, order[:chunks]

    return qrels, orders()


def _document_run(names: list[str], order: list) -> dict[str, float]:
    first: dict[str, float] = {}
    for s, i, _ in order:
        first.setdefault(names[i], s)
    return first


def make_chunk_responses(
    queries: int = 6980, chunks: int = 1000, *, seed: int = 0
) -> tuple[list, dict, dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """Cases, ``{case id: QueryResponse}`` of ``chunks`` results (≈3 per document), the
    equivalent document-level run, and qrels."""
    from heta_eval.models.records import BenchmarkCase, QueryResponse, QueryResult

    qrels, orders = _chunk_orders(queries, chunks, seed)
    cases = []
    responses = {}
    run: dict[str, dict[str, float]] = {}
    for qid, names, order in orders:
        sources = [{"document_id": name} for name in names]
        results = [
            QueryResult.model_construct(text="", score=s, reference_id=None, source=sources[i])
            for s, i, _ in order
        ]
        responses[qid] = QueryResponse.model_construct(
            query=qid, mode="synthetic", results=results, answer=None, metadata={}
        )
        run[qid] = _document_run(names, order)
        cases.append(BenchmarkCase(id=qid, query=qid, expected={"relevance": qrels[qid]}))
    return cases, responses, run, qrels


def make_chunk_columns(
    queries: int = 6980, chunks: int = 1000, *, seed: int = 0
) -> tuple[list, dict, dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """:func:`make_chunk_responses`' responses as ``ResultColumns`` over one ``ChunkTable``
    (3 chunk rows per document), as a knowledge base keeping its chunks in a table returns
    them; the same cases, document-level run and qrels."""
    from heta_eval.evaluation import BenchmarkCase, QueryResponse
    from heta_eval.models.columns import ChunkTable

    qrels, orders = _chunk_orders(queries, chunks, seed)
    doc_number: dict[str, int] = {}
    layout = []
    run: dict[str, dict[str, float]] = {}
    cases = []
    for qid, names, order in orders:
        base = np.array([doc_number.setdefault(name, len(doc_number)) for name in names])
        picked = np.array([(s, i, c) for s, i, c in order], dtype=np.float64).reshape(-1, 3)
        rows = base[picked[:, 1].astype(np.int64)] * 3 + picked[:, 2].astype(np.int64)
        layout.append((qid, rows, picked[:, 0].copy()))
        run[qid] = _document_run(names, order)
        cases.append(BenchmarkCase(id=qid, query=qid, expected={"relevance": qrels[qid]}))
    table = ChunkTable([name for name in doc_number for _ in range(3)])
    responses = {
        qid: QueryResponse(query=qid, mode="synthetic", results=table.columns(rows, scores))
        for qid, rows, scores in layout
    }
    return cases, responses, run, qrels
