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
with one line saying so (default: printed on standard error).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "run"
>>> _ = path.write_text("q1 Q0 d1 1 2.5 bm25 extra words\\n\\nq1 Q0 d2 2 1.5 bm25\\n")
>>> read_trec_eval_run(path)
({'q1': {'d1': 2.5, 'd2': 1.5}}, 'bm25')
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from heta_eval.io.grammar import Reading, TrecFormatError
from heta_eval.io.qrels import Qrels, read_qrels
from heta_eval.io.run import Run, read_run_and_tag

__all__ = ["print_note", "read_trec_eval_qrels", "read_trec_eval_run"]

Warn = Callable[[str], None]


def print_note(message: str) -> None:
    """The default ``warn``: the note as one line on standard error."""
    print(f"heta-eval trec_eval: note: {message}", file=sys.stderr)


def read_trec_eval_qrels(source: Any, warn: Warn | None = print_note) -> Qrels:
    """The qrels as trec_eval reads them (4 fields a line; a repeated judgment is an error)."""
    return read_qrels(source, reading=Reading("trec_eval", warn))


def read_trec_eval_run(source: Any, warn: Warn | None = print_note) -> tuple[Run, str]:
    """The run and its tag (``runid``); a TrecFormatError names the file and line."""
    run, tag = read_run_and_tag(source, reading=Reading("trec_eval", warn))
    if tag is None:  # not reached: trec_eval mode refuses JSON
        raise TrecFormatError("trec_eval reads TREC runs", str(source))
    return run, tag
