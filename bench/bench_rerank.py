"""Cross-encoder reranking speed: ``CrossEncoderReranker.score`` against sentence-transformers'
own ``CrossEncoder.predict`` (what BEIR's ``Rerank`` calls) on the same pairs, same process.

Pairs: SciFact test queries, each with SciFact documents (``(title + " " + text).strip()``,
BEIR's pair text), 192 pairs (quick: 48). The model: a MiniLM-L6 cross-encoder built offline
(``demo_cross_encoder``: the bundled all-MiniLM-L6-v2 weights under a seeded one-output head;
the architecture and size of ``cross-encoder/ms-marco-MiniLM-L-6-v2``). Ours: the encoder's
route here (``auto``: torch-bfloat16 where the CPU's default is bfloat16), each pair alone on
the single-threaded CPU workers, no cache; a second row, the int8 route (``onnxruntime-int8``:
the encoder in int8, its head in float32). The peer: ``CrossEncoder.predict`` in float32,
batch 32 (its default), length-sorted and padded batches. All loaded and warmed up first;
medians of ``--repeats`` rounds, the three rotated round to round. ``ratio``: peer time /
ours (goal >= 1.5 on a CPU without AMX; the int8 row's goal >= 1.0: its place is where
``auto`` takes int8, docs/rerank.md). ``identical`` is null (another precision); the notes
give the largest score difference to the peer's.

Usage: ``python bench/bench_rerank.py [--quick] [--repeats N] [--output FILE]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _rows import emit, log, row, timed

from heta_eval.rerank.cross_encoder import demo_cross_encoder
from heta_eval.rerank.reranker import CrossEncoderReranker, document_text

SCIFACT = Path(__file__).resolve().parent.parent.parent / "shared/datasets/beir/scifact"


def pairs(count: int) -> list[tuple[str, str]]:
    """``count`` SciFact (query, document text) pairs, 8 documents a query, in file order."""
    queries = [json.loads(line)["text"] for line in (SCIFACT / "queries.jsonl").open()]
    docs = []
    with (SCIFACT / "corpus.jsonl").open() as lines:
        for line in lines:
            docs.append(document_text(json.loads(line)))
            if len(docs) >= count:
                break
    return [(queries[i // 8], docs[i]) for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output")
    args = parser.parse_args()
    from sentence_transformers import CrossEncoder

    chosen = pairs(48 if args.quick else 192)
    model = demo_cross_encoder(tempfile.mkdtemp(), seed=46)
    ours = CrossEncoderReranker(model, device="cpu", cache_dir=False)
    int8 = CrossEncoderReranker(model, precision="int8", device="cpu", cache_dir=False)
    peer = CrossEncoder(model, device="cpu")
    runs = {
        "ours": lambda: ours.score(chosen),
        "int8": lambda: int8.score(chosen),
        "peer": lambda: peer.predict(chosen, batch_size=32, show_progress_bar=False),
    }
    # Load (int8: export and quantize once, cached), warm up.
    (
        ours.score(chosen[:8]),
        int8.score(chosen[:8]),
        peer.predict(chosen[:8], show_progress_bar=False),
    )
    log(
        f"reranking {len(chosen)} pairs: ours ({ours.route}), onnxruntime-int8 and "
        "CrossEncoder.predict, rotated"
    )
    times: dict[str, list[float]] = {name: [] for name in runs}
    results: dict[str, np.ndarray] = {}
    names = list(runs)
    for turn in range(1 if args.quick else args.repeats):
        for name in names[turn % 3 :] + names[: turn % 3]:
            seconds, results[name] = timed(runs[name])
            times[name].append(seconds)
    peer_s = statistics.median(times["peer"])
    theirs = np.asarray(results["peer"])
    rows = []
    for name, reranker, target, goal in (
        ("ours", ours, "rerank pairs/s (cross-encoder)", ">= 1.5"),
        ("int8", int8, "rerank pairs/s (cross-encoder, onnxruntime-int8)", ">= 1.0"),
    ):
        gap = float(np.max(np.abs(np.asarray(results[name]) - theirs)))
        notes = (
            f"{len(chosen)} SciFact pairs, MiniLM-L6 cross-encoder; ours {reranker.route} "
            f"({reranker.route_choice.reason}), each pair alone on {reranker.workers} workers; "
            f"peer float32 batch 32; largest score difference {gap:.4f}"
        )
        rows.append(
            row(
                target,
                peer="sentence-transformers CrossEncoder.predict",
                goal=goal,
                ours_s=statistics.median(times[name]),
                peer_s=peer_s,
                units=len(chosen),
                notes=notes,
            )
        )
    emit(rows, args.output)


if __name__ == "__main__":
    main()
