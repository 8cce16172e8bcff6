"""Does chunking lose evidence? Evidence recall@5 on SciFact claims by mode and chunk size.

Runs the reference knowledge base in every mode at each chunk size on the 300 SciFact dev
claims (``heta_eval.adapters.scifact_claims``) and prints a markdown table of evidence_recall@5 (the
rationale sentences held by the top 5 chunks) with nDCG@10 (whole-document retrieval) for
context. Results folders go to ``bench/out/claims/size-<N>/``; a rerun reuses them and the
cached indexes, so only what is missing is computed.

    python bench/claims_chunking.py --data-dir ../shared/datasets/scifact-release
    make claims-report

>>> print(format_table({64: {"keyword_search": (0.5, 0.25)}}, ["keyword_search"], [64]))
| mode | evidence_recall@5, 64 tok | nDCG@10, 64 tok |
|---|---:|---:|
| keyword_search | 0.5000 | 0.2500 |
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Runnable as a script from the repository root: the checkout's heta_eval wins.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ALL_MODES = ("keyword_search", "vector_search", "hybrid_search")
EVIDENCE = "evidence_recall@5"
NDCG = "ndcg@10"

Table = dict[int, dict[str, tuple[float | None, float | None]]]


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def format_table(
    values: Table,
    modes: Sequence[str],
    sizes: Sequence[int],
    ceiling: dict[int, float] | None = None,
) -> str:
    """Markdown: one row per mode; evidence recall@5 per size, then nDCG@10 per size; with
    ``ceiling``, a last row of the best evidence recall one chunk per document allows."""
    header = [f"{EVIDENCE}, {s} tok" for s in sizes] + [f"nDCG@10, {s} tok" for s in sizes]
    lines = ["| mode | " + " | ".join(header) + " |", "|---|" + "---:|" * len(header)]
    for mode in modes:
        recall = [_fmt(values[s][mode][0]) for s in sizes]
        ndcg = [_fmt(values[s][mode][1]) for s in sizes]
        cells = recall + ndcg
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    if ceiling is not None:
        cells = [_fmt(ceiling[s]) for s in sizes] + ["–"] * len(sizes)
        lines.append("| *ceiling: one chunk per document* | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def evidence_ceiling(bench: Any, size: int, overlap: int = 0) -> float:
    """Mean over claims with evidence of the best evidence recall reachable when every
    evidence document is retrieved but, as in the reference KB (``distinct_documents``),
    only its best chunk is returned: the loss due to chunking alone.

    >>> from heta_eval.evaluation import BenchmarkCase, Document
    >>> class Tiny:
    ...     def documents(self):
    ...         return [Document(id="d", text="A b. C d.", sentences=[(0, 4), (5, 9)])]
    ...     def cases(self):
    ...         return [BenchmarkCase(id="q", query="?", expected={"evidence": [
    ...             {"locator": {"document_id": "d", "sentence_index": i}} for i in (0, 1)]})]
    >>> evidence_ceiling(Tiny(), size=2), evidence_ceiling(Tiny(), size=4)
    (0.5, 1.0)
    """
    from heta_eval.reference.chunking import chunk_document

    held: dict[str, list[set[int]]] = {
        doc.id: [
            set(c.sentence_index or []) for c in chunk_document(doc, size=size, overlap=overlap)
        ]
        for doc in bench.documents()
    }
    shares = []
    for case in bench.cases():
        gold = [g.locator for g in case.expected.evidence]
        if not gold:
            continue
        by_doc: dict[str, list[int]] = {}
        for locator in gold:
            by_doc.setdefault(str(locator["document_id"]), []).append(locator["sentence_index"])
        best = sum(
            max(sum(i in chunk for i in indices) for chunk in held[doc_id])
            for doc_id, indices in by_doc.items()
        )
        shares.append(best / len(gold))
    return sum(shares) / len(shares)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", help="the SciFact release folder (default: data root)")
    parser.add_argument("--sizes", default="64,256", help="chunk sizes in tokens (default 64,256)")
    parser.add_argument("--overlap", type=int, default=0, help="chunk overlap in tokens")
    parser.add_argument("--modes", default=",".join(ALL_MODES))
    parser.add_argument("--precision", default="float32", choices=("float32", "bfloat16"))
    parser.add_argument("--limit", type=int, help="only the first N claims (a quick look)")
    parser.add_argument("--output", type=Path, default=Path("bench/out/claims"))
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)

    from heta_eval.adapters.scifact_claims import SciFactClaimsBenchmark
    from heta_eval.reference import Recipe
    from heta_eval.runner import BenchmarkRunner

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bench = SciFactClaimsBenchmark(data_dir=args.data_dir)
    if args.limit:
        # A smaller benchmark: same documents, first N claims.
        subset = bench.cases()[: args.limit]
        bench.cases = lambda: subset  # type: ignore[method-assign]
    runner = BenchmarkRunner(progress=not args.quiet)
    values: Table = {}
    notes = []
    started = time.perf_counter()
    for size in sizes:
        t = time.perf_counter()
        recipe = Recipe(
            modes=modes,
            chunking={"size": size, "overlap": args.overlap},
            dense={"precision": args.precision},
        )
        suffix = f"-first{args.limit}" if args.limit else ""
        results = runner.run(
            benchmark=bench,
            recipe=recipe,
            knowledge_base_name=f"claims-{size}",
            query_modes=tuple(modes),
            output_dir=args.output / f"size-{size}{suffix}",
        )
        values[size] = {
            mode: (results.metric(mode, EVIDENCE).value, results.metric(mode, NDCG).value)
            for mode in modes
        }
        build = results.summary.build
        if build:
            how = (
                f"build {build.get('seconds')}s: bm25 {build.get('bm25', '-')}, "
                f"embeddings {build.get('embeddings', '-')}"
            )
        else:  # every case was already in the results folder
            how = f"results reused from {results.path}"
        notes.append(f"size {size}: {time.perf_counter() - t:.0f}s ({how})")
    cases = len(bench.cases())
    print(
        f"\nSciFact claims ({cases} dev claims), reference KB, {args.precision} encoder, "
        f"overlap {args.overlap}:\n"
    )
    ceiling = {size: evidence_ceiling(bench, size, args.overlap) for size in sizes}
    print(format_table(values, modes, sizes, ceiling))
    print(f"\ntotal {time.perf_counter() - started:.0f}s; " + "; ".join(notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
