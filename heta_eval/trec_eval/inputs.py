"""The two files of a trec_eval command line, read through :mod:`heta_eval.io.trec`.

trec_eval reads a run line as ``qid iter docno rank sim run_id`` and ignores anything after
``run_id`` and blank lines; the project's reader (:func:`heta_eval.io.trec.read_run`) refuses
both. When it refuses a file, the file is read again under trec_eval's grammar: at least six
whitespace-separated fields, extra fields and blank lines ignored, every other check kept
(UTF-8, numeric and finite score, no document twice in a query). ``runid`` is the
``run_id`` field of the run's last line, as trec_eval prints it.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "run"
>>> _ = path.write_text("q1 Q0 d1 1 2.5 bm25 extra words\\n\\nq1 Q0 d2 2 1.5 bm25\\n")
>>> read_trec_eval_run(path)
({'q1': {'d1': 2.5, 'd2': 1.5}}, 'bm25')
"""

from __future__ import annotations

import math
from pathlib import Path

from heta_eval.io.trec import PathLike, Qrels, Run, TrecFormatError, read_qrels, read_run

__all__ = ["read_trec_eval_qrels", "read_trec_eval_run", "run_tag"]


def read_trec_eval_qrels(path: PathLike) -> Qrels:
    """The qrels as trec_eval reads them (4 fields a line; a repeated judgment is an error)."""
    return read_qrels(path)


def read_trec_eval_run(path: PathLike) -> tuple[Run, str]:
    """The run and its tag (``runid``); a TrecFormatError names the file and line."""
    path = Path(path)
    with path.open("rb") as handle:
        if handle.read(4096).lstrip()[:1] == b"{":
            raise TrecFormatError("trec_eval reads TREC runs, not BEIR results JSON", path)
    try:
        return read_run(path), run_tag(path)
    except TrecFormatError as error:
        refused = error
    run = _read_with_trec_eval_grammar(path)
    if run is None:
        raise refused
    return run, run_tag(path)


def run_tag(path: PathLike) -> str:
    """The sixth field of the file's last non-blank line (trec_eval's ``runid``)."""
    path = Path(path)
    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        block = 1 << 16
        while True:
            start = max(0, size - block)
            handle.seek(start)
            tail = handle.read(size - start)
            lines = [raw for raw in tail.splitlines() if raw.strip()]
            # The first line of a partial block may be cut: trust it only at the file's start.
            if lines and (start == 0 or len(lines) > 1):
                fields = lines[-1].split()
                if len(fields) < 6:
                    raise TrecFormatError("last line has no run tag (6th field)", path)
                return fields[5].decode("utf-8", errors="replace")
            if start == 0:
                raise TrecFormatError("empty file: no run lines", path)
            block *= 4


def _read_with_trec_eval_grammar(path: Path) -> Run | None:
    """The run under trec_eval's grammar, or None when the file has a line trec_eval would
    refuse too (the project reader's message then stands)."""
    run: Run = {}
    with path.open("rb") as handle:
        for raw in handle:
            try:
                fields = raw.decode("utf-8").split()
            except UnicodeDecodeError:
                return None
            if not fields:
                continue
            if len(fields) < 6:
                return None
            qid, docid, score_text = fields[0], fields[2], fields[4]
            try:
                score = float(score_text)
            except ValueError:
                return None
            docs = run.setdefault(qid, {})
            if not math.isfinite(score) or docid in docs:
                return None
            docs[docid] = score
    return run or None
