"""A small real SciFact for tests that run the whole pipeline: every test query and qrels
line, the judged documents and a few hundred others."""

from __future__ import annotations

import json
import shutil
from pathlib import Path


def small_scifact(source: Path, target: Path, others: int = 200) -> Path:
    """``target/scifact`` in the BEIR layout: SciFact's test queries and qrels, the judged
    documents and ``others`` more, in corpus order. Returns ``target`` (a ``--data-dir``)."""
    folder = target / "scifact"
    (folder / "qrels").mkdir(parents=True)
    shutil.copy(source / "queries.jsonl", folder / "queries.jsonl")
    shutil.copy(source / "qrels" / "test.tsv", folder / "qrels" / "test.tsv")
    judged = {
        line.split("\t")[1]
        for line in (source / "qrels" / "test.tsv").read_text().splitlines()[1:]
        if line.strip()
    }
    with (source / "corpus.jsonl").open() as lines, (folder / "corpus.jsonl").open("w") as out:
        for line in lines:
            doc_id = json.loads(line)["_id"]
            if doc_id in judged or others > 0:
                others -= doc_id not in judged
                out.write(line)
    return target
