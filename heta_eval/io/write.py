"""Writing files whole, and runs and qrels: TREC runs with real ranks in trec_eval's order,
BEIR results JSON, TREC or BEIR qrels.

Every output file is written whole (:func:`whole_file`, :func:`open_whole`,
:func:`write_whole`): into a temporary file beside it, renamed onto it once complete. A
signal, an error or a full disk halfway leaves the file as it was (or no file), never a stub;
the interrupt's message says so.

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
import math
import os
import stat
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from heta_eval import interrupts
from heta_eval.io.grammar import PathLike, fields
from heta_eval.io.ids import id_problem

__all__ = [
    "open_whole",
    "ranked",
    "whole_file",
    "write_qrels",
    "write_run",
    "write_run_json",
    "write_whole",
]


@contextmanager
def whole_file(path: PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` to write; renamed onto ``path`` when the block ends,
    removed if it raises (an interrupt included). ``path`` keeps its old content until the
    new one is complete; a symbolic link is written through, and keeps its mode. A device or
    a FIFO (``/dev/stdout``) is written in place: there is nothing to rename onto it.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "out.txt"
    >>> with whole_file(out) as temporary:
    ...     _ = temporary.write_text("whole")
    >>> out.read_text(), sorted(p.name for p in out.parent.iterdir())
    ('whole', ['out.txt'])
    """
    shown = os.fspath(path)
    try:
        before: os.stat_result | None = os.stat(shown)  # through links: /dev/stdout's pipe too
    except FileNotFoundError:
        before = None
    if before is not None and not stat.S_ISREG(before.st_mode):
        yield Path(shown)
        return
    target = Path(os.path.realpath(shown))
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    done = False

    def note() -> str | None:
        if done:
            return f"{shown}, written whole"
        return f"{shown} as it was before (the new one was not finished)" if before else None

    # The main thread's files are the command's outputs: the message names them. (Other
    # threads write notes for other processes, a lock's status: no news to the user.)
    main = threading.current_thread() is threading.main_thread()
    key = f"file {target}"
    interrupts.keep(key, note if main else None, resumes=False)
    doing = interrupts.phase(f"writing {shown}") if main else nullcontext()
    try:
        with interrupts.unfinished(os.fspath(temporary)), doing:
            try:
                yield temporary
                if before is not None:
                    os.chmod(temporary, stat.S_IMODE(before.st_mode))
                with interrupts.deferred():  # the rename and its note, never half
                    os.replace(temporary, target)
                    done = True
            finally:
                if not done:
                    temporary.unlink(missing_ok=True)
    except KeyboardInterrupt:
        raise  # the note stays for the interrupt's message
    except BaseException:
        interrupts.keep(key, None)
        raise
    interrupts.keep(key, None)


@contextmanager
def open_whole(path: PathLike, mode: str = "w", **options: Any) -> Iterator[IO[Any]]:
    """:func:`open` of a file written whole (:func:`whole_file`); text in UTF-8 with
    ``\\n`` line ends unless ``options`` say otherwise."""
    if "b" not in mode:
        options = {"encoding": "utf-8", "newline": "\n", **options}
    with whole_file(path) as temporary, open(temporary, mode, **options) as handle:
        yield handle


def write_whole(path: PathLike, data: str | bytes) -> None:
    """Write ``data`` (text in UTF-8, or bytes) to ``path``, whole (:func:`whole_file`)."""
    with open_whole(path, "wb" if isinstance(data, bytes) else "w") as handle:
        handle.write(data)


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


def _refuse_non_finite(run: Mapping[str, Mapping[str, float]]) -> None:
    """ValueError naming the first score that is NaN or infinite: no reader takes it back
    (trec_eval ranks it nowhere), so it is not written."""
    for qid, docs in run.items():
        if all(map(math.isfinite, docs.values())):
            continue
        for doc, score in docs.items():
            if not math.isfinite(score):
                raise ValueError(
                    f"write_run: query {qid!r}, doc {doc!r}: score {score!r} is not a finite "
                    "number; it cannot be written"
                )


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
    control character, a lone surrogate, empty), or a score that is NaN or infinite, is
    refused with a ``ValueError`` naming it, and nothing is written. The file is written
    whole (:func:`whole_file`).
    """
    if fields(tag) != [tag]:  # one field, by the readers' grammar
        raise ValueError(f"tag must be a non-empty word without whitespace, got {tag!r}")
    _refuse_bad_ids(run, "write_run")
    _refuse_non_finite(run)
    with open_whole(path) as handle:
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
    write_whole(path, json.dumps(run) + "\n")


def write_qrels(
    qrels: Mapping[str, Mapping[str, int]],
    path: PathLike,
    *,
    format: Literal["trec", "beir"] = "trec",
) -> None:
    """Write qrels as TREC (``qid 0 docid rel``) or BEIR tsv (with its header)."""
    _refuse_bad_ids(qrels, "write_qrels")
    with open_whole(path) as handle:
        if format == "beir":
            handle.write("query-id\tcorpus-id\tscore\n")
        for qid, docs in qrels.items():
            for docid, label in docs.items():
                if format == "beir":
                    handle.write(f"{qid}\t{docid}\t{int(label)}\n")
                else:
                    handle.write(f"{qid} 0 {docid} {int(label)}\n")
