"""Writing runs and qrels: TREC runs with real ranks in trec_eval's order, BEIR results JSON,
TREC or BEIR qrels.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
>>> write_run({"q1": {"d1": 0.5, "d2": 0.5, "d3": 2.0}}, path, tag="demo")
>>> print(path.read_text(), end="")
q1 Q0 d3 1 2.0 demo
q1 Q0 d2 2 0.5 demo
q1 Q0 d1 3 0.5 demo
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import numpy as np

from heta_eval.io.grammar import PathLike, fields
from heta_eval.io.ids import id_problem

__all__ = ["ranked", "write_qrels", "write_run", "write_run_json"]


def ranked(docs: Mapping[str, float]) -> list[tuple[str, float]]:
    """A query's documents in pytrec_eval's rank order: float32 score desc, then doc id desc.

    >>> ranked({"a": 1.0, "b": 1.0, "c": 2.0})
    [('c', 2.0), ('b', 1.0), ('a', 1.0)]
    """
    ids = list(docs)
    values = list(docs.values())
    # trec_eval stores scores as C floats: rank on the float32 value, as it does.
    with np.errstate(over="ignore"):  # |score| > 3.4e38 becomes +-inf in float32, as in C
        keys = np.asarray(values, dtype=np.float32).tolist() if values else []
    order = sorted(zip(keys, ids, values, strict=True), reverse=True)
    return [(doc, value) for _, doc, value in order]


def _refuse_bad_ids(table: Mapping[str, Mapping[str, object]], what: str) -> None:
    """ValueError naming the first id that breaks :func:`~heta_eval.io.ids.id_problem`:
    written as is, it would split a field or a line (``"d1 0 x 1 9.9 t\\nq1"`` adds a line)."""
    for qid, docs in table.items():
        # One search over a query's joined ids; the ids one by one only when it finds one.
        plain = set(map(type, docs)) <= {str} and "" not in docs
        if plain and id_problem(qid) is None and id_problem("".join(docs) or "x") is None:
            continue
        for value, name in [(qid, "query id"), *((doc, f"query {qid!r}: doc id") for doc in docs)]:
            why = id_problem(value)
            if why is not None:
                raise ValueError(f"{what}: {name} {value!r} {why}; it cannot be written")


def write_run(
    run: Mapping[str, Mapping[str, float]],
    path: PathLike,
    *,
    tag: str = "heta-eval",
    top_k: int | None = None,
    sort: bool = True,
) -> None:
    """Write a TREC run with real ranks 1..n in pytrec_eval's order (BEIR's ``save_runfile``
    writes rank 0 and breaks ties by insertion order). Scores keep full precision (``repr``).

    ``sort=False`` keeps each query's documents in the given order (a system's own ranking,
    as the benchmark runner writes it), so tied scores keep the system's order when read back.
    An id that breaks the id rule (:func:`~heta_eval.io.ids.id_problem`: whitespace, a
    control character, a lone surrogate, empty) is refused with a ``ValueError`` naming it,
    and nothing is written.
    """
    if fields(tag) != [tag]:  # one field, by the readers' grammar
        raise ValueError(f"tag must be a non-empty word without whitespace, got {tag!r}")
    _refuse_bad_ids(run, "write_run")
    path = Path(path)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for qid, docs in run.items():
            rows = ranked(docs) if sort else list(docs.items())
            if top_k is not None:
                rows = rows[:top_k]
            handle.write(
                "".join(
                    f"{qid} Q0 {doc} {rank} {score!r} {tag}\n"
                    for rank, (doc, score) in enumerate(rows, start=1)
                )
            )


def write_run_json(run: Mapping[str, Mapping[str, float]], path: PathLike) -> None:
    """Write BEIR's results JSON ``{qid: {docid: score}}``."""
    Path(path).write_text(json.dumps(run) + "\n", encoding="utf-8")


def write_qrels(
    qrels: Mapping[str, Mapping[str, int]],
    path: PathLike,
    *,
    format: Literal["trec", "beir"] = "trec",
) -> None:
    """Write qrels as TREC (``qid 0 docid rel``) or BEIR tsv (with its header)."""
    _refuse_bad_ids(qrels, "write_qrels")
    with Path(path).open("w", encoding="utf-8", newline="\n") as handle:
        if format == "beir":
            handle.write("query-id\tcorpus-id\tscore\n")
        for qid, docs in qrels.items():
            for docid, label in docs.items():
                if format == "beir":
                    handle.write(f"{qid}\t{docid}\t{int(label)}\n")
                else:
                    handle.write(f"{qid} 0 {docid} {int(label)}\n")
