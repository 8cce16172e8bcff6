"""What a framework adapter costs: SciFact's 300 test queries asked of langchain-core's
``InMemoryVectorStore`` (the whole SciFact corpus, 5,183 documents) through heta-eval's
adapter (``from_langchain(store).query``: the call in a worker thread, the hits handed over
as checked ``ResultColumns``) against calling the store directly
(``similarity_search_with_score`` and the run's ``{doc_id: score}``), one query at a time on
both sides, alternated, median of ``--repeats`` rounds (``--quick``: the first 100 queries).
The embeddings are langchain-core's ``DeterministicFakeEmbedding`` (384 dimensions): a
model's cost is the same on both sides, so leaving it out shows the adapter's share at its
largest. ``ratio`` is ours / peer (goal <= 1.05); ``identical``: the adapter's documents and
scores equal the direct ones, query by query.

Usage: ``python bench/bench_integrations.py [--quick] [--repeats N] [--output FILE]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _rows import emit, interleaved, log, row  # noqa: E402


def data_dir() -> Path:
    env = os.environ.get("HETA_EVAL_DATA")
    return (Path(env) if env else ROOT.parent / "shared" / "datasets" / "beir") / "scifact"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first 100 queries")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output")
    args = parser.parse_args(argv)
    repeats = args.repeats

    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    from heta_eval.data.beir_loader import load_beir
    from heta_eval.integrations import from_langchain, langchain_documents

    folder = data_dir()
    queries = list(load_beir(folder).queries.values())  # the 300 judged test queries
    queries = queries[:100] if args.quick else queries
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=384))
    store.add_documents(langchain_documents(folder))
    kb = from_langchain(store)
    rows = []
    for depth in (100, 1000):

        def direct(depth: int = depth, asked: list[str] = queries) -> list[list[Any]]:
            found = [store.similarity_search_with_score(query, k=depth) for query in asked]
            return [
                [[doc.metadata["doc_id"] for doc, _ in hits], [s for _, s in hits]]
                for hits in found
            ]

        def adapter(depth: int = depth, asked: list[str] = queries) -> list[list[Any]]:
            async def ask() -> list[Any]:
                return [await kb.query(query, top_k=depth) for query in asked]

            # What the runner reads: the columns' arrays (no result object is built).
            return [
                [reply.results.document_ids, reply.results.scores.tolist()]
                for reply in asyncio.run(ask())
            ]

        adapter(asked=queries[:10]), direct(asked=queries[:10])  # warm: imports, threads
        ours_s, ours, peer_s, peer = interleaved(adapter, direct, repeats)
        ratio = ours_s / peer_s
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        log(f"bench_integrations: k={depth} adapter {ours_s:.3f} s, direct {peer_s:.3f} s")
        rows.append(
            row(
                f"LangChain InMemoryVectorStore through from_langchain, {len(queries)} "
                f"SciFact queries, k={depth}",
                peer="the store's similarity_search_with_score, called directly",
                goal="<= 1.05",
                ours_s=ours_s,
                peer_s=peer_s,
                units=len(queries),
                ratio=ratio,
                met=ratio <= 1.05,
                identical=ours == peer,
                notes=f"5,183 documents, DeterministicFakeEmbedding(384); one query at a time "
                f"on both sides, alternated, {repeats} rounds; ratio is our time over the "
                f"peer's; load average {load}",
            )
        )
    emit(rows, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
