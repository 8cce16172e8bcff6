"""Cross-encoder reranking speed: ``CrossEncoderReranker.score`` against sentence-transformers'
own ``CrossEncoder.predict`` (what BEIR's ``Rerank`` calls) on the same pairs, same process.

Pairs: SciFact test queries, each with SciFact documents (``(title + " " + text).strip()``,
BEIR's pair text), 192 pairs (quick: 48). The model: a MiniLM-L6 cross-encoder built offline
(``demo_cross_encoder``: the bundled all-MiniLM-L6-v2 weights under a seeded one-output head;
the architecture and size of ``cross-encoder/ms-marco-MiniLM-L-6-v2``). Ours: the encoder's
route here (``auto``: torch-bfloat16 where the CPU's default is bfloat16), each pair alone on
the single-threaded CPU workers, no cache. The peer: ``CrossEncoder.predict`` in float32,
batch 32 (its default), length-sorted and padded batches. Both loaded and warmed up first;
medians of ``--repeats`` alternated rounds. ``ratio``: peer time / ours (goal >= 1.5 on a CPU
without AMX). ``identical`` is null (another precision); the notes give the largest score
difference to the peer's.

Usage: ``python bench/bench_rerank.py [--quick] [--repeats N] [--output FILE]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _rows import emit, interleaved, log, row

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
    peer = CrossEncoder(model, device="cpu")
    ours.score(chosen[:8]), peer.predict(chosen[:8], show_progress_bar=False)  # load, warm up
    log(f"reranking {len(chosen)} pairs: ours ({ours.route}) against CrossEncoder.predict")
    ours_s, mine, peer_s, theirs = interleaved(
        lambda: ours.score(chosen),
        lambda: peer.predict(chosen, batch_size=32, show_progress_bar=False),
        1 if args.quick else args.repeats,
    )
    gap = float(np.max(np.abs(np.asarray(mine) - np.asarray(theirs))))
    notes = (
        f"{len(chosen)} SciFact pairs, MiniLM-L6 cross-encoder; ours {ours.route} "
        f"({ours.route_choice.reason}), each pair alone on {ours.workers} workers; peer "
        f"float32 batch 32; largest score difference {gap:.4f}"
    )
    emit(
        [
            row(
                "rerank pairs/s (cross-encoder)",
                peer="sentence-transformers CrossEncoder.predict",
                goal=">= 1.5",
                ours_s=ours_s,
                peer_s=peer_s,
                units=len(chosen),
                notes=notes,
            )
        ],
        args.output,
    )


if __name__ == "__main__":
    main()
