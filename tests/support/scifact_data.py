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


#: CQADupStack's 12 forums, as the registry names them.
FORUMS = (
    "android",
    "english",
    "gaming",
    "gis",
    "mathematica",
    "physics",
    "programmers",
    "stats",
    "tex",
    "unix",
    "webmasters",
    "wordpress",
)


def cqadupstack_forums(source: Path, target: Path, queries: int = 20, others: int = 40) -> Path:
    """``target/cqadupstack/<forum>`` for CQADupStack's 12 forums, each in the BEIR layout:
    ``queries`` real SciFact test queries (other ones in each forum) with their qrels, the
    documents they judge and ``others`` more. Returns ``target`` (a ``--data-dir``)."""
    corpus = (source / "corpus.jsonl").read_text().splitlines(keepends=True)
    header, *qrels = (source / "qrels" / "test.tsv").read_text().splitlines()
    qids = list(dict.fromkeys(line.split("\t")[0] for line in qrels))
    for n, forum in enumerate(FORUMS):
        folder = target / "cqadupstack" / forum
        (folder / "qrels").mkdir(parents=True)
        mine = set(qids[queries * n : queries * (n + 1)])
        lines = [line for line in qrels if line.split("\t")[0] in mine]
        (folder / "qrels" / "test.tsv").write_text("\n".join([header, *lines]) + "\n")
        shutil.copy(source / "queries.jsonl", folder / "queries.jsonl")
        judged = {line.split("\t")[1] for line in lines}
        unjudged = [d for d in corpus if json.loads(d)["_id"] not in judged]
        kept = [d for d in corpus if json.loads(d)["_id"] in judged]
        (folder / "corpus.jsonl").write_text(
            "".join(kept + unjudged[others * n : others * (n + 1)])
        )
    return target
