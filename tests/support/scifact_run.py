"""The real SciFact run beside the checkout (../shared/datasets/runs) and its test judgments."""

from __future__ import annotations

from support.paths import shared_path

RUN = "scifact-test.reranked.trec"


def _qrels() -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    lines = shared_path("datasets", "beir", "scifact", "qrels", "test.tsv").read_text()
    for line in lines.splitlines()[1:]:
        qid, doc, label = line.split("\t")
        qrels.setdefault(qid, {})[doc] = int(label)
    return qrels
