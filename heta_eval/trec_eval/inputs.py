"""The two files of a trec_eval command line, read as trec_eval 9.0.8 reads them.

Both go through the project's readers (:mod:`heta_eval.io.run`, :mod:`heta_eval.io.qrels`)
in their ``trec_eval`` mode (:mod:`heta_eval.io.grammar`): run lines of six or more fields
(the rest ignored) and blank lines skipped; scores read by ``atof`` and labels by ``atol``
(``abc`` reads 0); a byte-order mark kept in the first query id; qrels comment-like and
header lines read as judgments. Still errors naming the file and line: a non-UTF-8 byte, a
score that is not finite, a repeated document, an empty id or one holding NUL, BEIR
results JSON. ``runid`` is the tag of the run's last line. Either file may be ``-``
(standard input), a pipe or a FIFO; each is read once.

Where trec_eval mode keeps something the library would drop or refuse, ``warn`` is called
with one line saying so (default: :func:`log_note`, a warning logged; the drop-in prints it on
standard error).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "run"
>>> _ = path.write_text("q1 Q0 d1 1 2.5 bm25 extra words\\n\\nq1 Q0 d2 2 1.5 bm25\\n")
>>> read_trec_eval_run(path)
({'q1': {'d1': 2.5, 'd2': 1.5}}, 'bm25')
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Container
from typing import Any

import numpy as np

from heta_eval.io.grammar import Reading, TrecFormatError, parse_score
from heta_eval.io.qrels import Qrels, read_qrels
from heta_eval.io.run import Duplicates, Run, read_run_and_tag, refuse_repeat
from heta_eval.io.source import InputBytes, open_input

__all__ = ["log_note", "read_trec_eval_qrels", "read_trec_eval_run"]

logger = logging.getLogger(__name__)

Warn = Callable[[str], None]


def log_note(message: str) -> None:
    """The default ``warn``: the note, logged as one line (a warning; ``heta-eval trec_eval``
    prints it on standard error)."""
    logger.warning("heta-eval trec_eval: note: %s", message)


def read_trec_eval_qrels(source: Any, warn: Warn | None = log_note) -> Qrels:
    """The qrels as trec_eval reads them (4 fields a line; a repeated judgment is an error)."""
    return read_qrels(source, reading=Reading("trec_eval", warn))


def read_trec_eval_run(
    source: Any,
    warn: Warn | None = log_note,
    *,
    repeats_refused_in: Container[str] | None = None,
    max_per_topic: int | None = None,
    ties_by_increasing_docno: bool = False,
) -> tuple[Run, str]:
    """The run and its tag (``runid``); a TrecFormatError names the file and line.

    A repeated document is an error in the queries of ``repeats_refused_in`` (every query
    when None). trec_eval refuses one only in a query it ranks (one that is judged, when a
    measure other than ``runid`` and ``num_q`` is asked for), and with ``-M`` only when both
    copies are among the ``max_per_topic`` it keeps; such a query keeps those documents
    (score ties broken by decreasing docno, or increasing with ``ties_by_increasing_docno``,
    as trec_eval's preference measures break them).
    """
    data = open_input(source)  # in memory: a second pass never reopens a pipe
    try:
        return _read(data, "error", warn)
    except TrecFormatError as error:
        if repeats_refused_in is None or not error.reason.startswith(_REPEAT):
            raise
    run, tag = _read(data, "last", None)  # notes were given by the first pass
    rows: dict[str, list[tuple[str, float, int]]] = {}
    reading = Reading("trec_eval", None)
    for number, raw in data.lines(drop_bom=False):
        parts = raw.split()  # ASCII whitespace, as the reader split it
        if len(parts) >= 6 and parts[0].decode() in repeats_refused_in:
            score = parse_score(parts[4].decode(), data.name, number, reading)
            rows.setdefault(parts[0].decode(), []).append((parts[2].decode(), score, number))
    for qid, docs in rows.items():
        if len({doc for doc, _, _ in docs}) < len(docs):
            run[qid] = _kept(qid, docs, max_per_topic, data.name, ties_by_increasing_docno)
    return run, tag


def _kept(
    qid: str, rows: list[tuple[str, float, int]], limit: int | None, name: str, up: bool
) -> dict[str, float]:
    """trec_eval's ranking of a query's rows, repeats included, cut at ``limit``; a document
    twice in what is kept is an error naming its second line."""
    with np.errstate(over="ignore"):  # as io.write.ranked: float32 keys, as trec_eval
        keys = np.asarray([score for _, score, _ in rows], dtype=np.float32).tolist()
    if up:
        order = sorted(zip(keys, rows, strict=True), key=lambda kr: (-kr[0], kr[1][0]))
    else:
        order = sorted(zip(keys, rows, strict=True), key=lambda kr: (kr[0], kr[1][0]), reverse=True)
    kept = [row for _, row in order[:limit]]
    seen: dict[tuple[str, str], int] = {}
    for doc, _, number in sorted(kept, key=lambda row: row[2]):
        refuse_repeat(seen, qid, doc, number, name, "(query, doc) pair")
    return {doc: score for doc, score, _ in kept}


# The start of the reader's message for a repeated document.
_REPEAT = "duplicate (query, doc) pair"


def _read(data: InputBytes, duplicates: Duplicates, warn: Warn | None) -> tuple[Run, str]:
    run, tag = read_run_and_tag(data, duplicates=duplicates, reading=Reading("trec_eval", warn))
    if tag is None:  # not reached: trec_eval mode refuses JSON
        raise TrecFormatError("trec_eval reads TREC runs", data.name)
    return run, tag
