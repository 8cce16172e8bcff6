"""One block of documents analyzed into postings, in worker processes (as Lucene writes
segments), for :mod:`.build` to merge.

:func:`analyze_block` turns a block's texts (one list per field) into, per field, the block's
distinct terms, each term's postings (block-relative document numbers,
ascending, and term frequencies) and each document's length; the postings go to ``.npy``
files, the rest back to the caller. :class:`BlockAnalyzers` runs it in the calling process and
worker processes, one process per usable CPU (a fresh interpreter each: no fork of the caller,
nothing of its ``__main__`` re-imported).

Workers start in a session of their own, so a Ctrl-C at the terminal reaches only the main
process, which ends them (``close``); a worker whose parent dies exits within half a second.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from heta_eval.lucene.analyzer import term_of
from heta_eval.lucene.porter import porter_stem
from heta_eval.lucene.tokenizer import block_tokens

__all__ = ["BlockAnalyzers", "BlockPostings", "analyze_block"]

# Java's String.trim() strips every character up to U+0020 (and only those): Anserini skips a
# document whose contents is nothing else.
JAVA_TRIM = "".join(map(chr, range(0x21)))
_STOP = -1  # a token the analyzer drops (a stop word)
# A process's tokens and their terms (None: a stop word), across blocks. Past _TERMS_LIMIT it
# keeps only the tokens of the block just analyzed: the frequent ones come back in every
# block, and the rare ones, most of a large corpus's vocabulary, would only fill memory.
_TERMS: dict[str, str | None] = {}
_TERMS_LIMIT = 200_000
_UNSEEN = object()
_stem = porter_stem.__wrapped__  # _TERMS caches the stems: the stemmer's own cache would repeat it


@dataclass
class BlockPostings:
    """What the main process needs of one analyzed block (the postings are on disk)."""

    number: int
    start: int  # the block's first document
    size: int
    terms: list[list[str]]  # per field: the block's distinct terms (ids: positions here)
    counts: list[np.ndarray]  # per field: postings per term (int64)
    lengths: list[np.ndarray]  # per field: terms per document (int64)
    max_freq: int
    skipped: int


def block_files(folder: Path, number: int, field: int) -> tuple[Path, Path]:
    """Where a block's postings of one field live: (documents, frequencies)."""
    return folder / f"{number}-{field}-docs.npy", folder / f"{number}-{field}-freqs.npy"


def analyze_block(
    number: int, start: int, texts: list[list[str]], contents: int | None, folder: str
) -> BlockPostings:
    """Analyze one block (``texts[f][i]``: field ``f`` of document ``start + i``); a document
    whose field ``contents`` is blank is skipped whole, as Anserini skips it."""
    size = len(texts[0])
    keep = [True] * size
    if contents is not None:
        keep = [_text(t, start + i).strip(JAVA_TRIM) != "" for i, t in enumerate(texts[contents])]
    terms, counts, lengths, max_freq = [], [], [], 0
    for field, column in enumerate(texts):
        flat, owners, vocabulary = _field_terms(column, keep, start)
        docs, freqs, per_term = _postings(flat, owners, size, len(vocabulary))
        max_freq = max(max_freq, int(freqs.max(initial=0)))
        docs_path, freqs_path = block_files(Path(folder), number, field)
        np.save(docs_path, docs.astype(np.uint32 if size <= 1 << 32 else np.int64))
        np.save(freqs_path, freqs.astype(np.uint16 if max_freq < 1 << 16 else np.uint32))
        terms.append(vocabulary)
        counts.append(per_term)
        lengths.append(np.bincount(owners, minlength=size).astype(np.int64))
    return BlockPostings(number, start, size, terms, counts, lengths, max_freq, keep.count(False))


def _field_terms(
    column: list[str], keep: list[bool], start: int
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """One field's terms in the block: each term occurrence's term id (ids in this block) and
    document, and the block's terms by id. Python touches each distinct token once; the
    occurrences go through C (the tokenizer's block path, ``set``, ``map``, numpy)."""
    texts = [_text(text, start + i) if keep[i] else "" for i, text in enumerate(column)]
    tokens, owners = block_tokens(texts)
    ids: dict[str, int] = {}  # term -> id in this block and field
    local: dict[str, int] = {}  # token -> term id, or _STOP
    for token in set(tokens):
        term = _TERMS.get(token, _UNSEEN)
        if term is _UNSEEN:
            term = term_of(token, _stem)
            # A token that is its own term is kept once, not twice.
            term = _TERMS[token] = token if term == token else term
        local[token] = _STOP if term is None else ids.setdefault(term, len(ids))
    if len(_TERMS) > _TERMS_LIMIT:
        _keep_only(local)
    flat = np.fromiter(map(local.__getitem__, tokens), np.int64, len(tokens))
    found = flat != _STOP
    return flat[found], owners[found], list(ids)


def _keep_only(tokens: Iterable[str]) -> None:
    """Forget every cached token but ``tokens``."""
    kept = {token: _TERMS[token] for token in tokens}
    _TERMS.clear()
    _TERMS.update(kept)


def _text(text: Any, number: int) -> str:
    if not isinstance(text, str):
        raise TypeError(f"document {number}: text must be a string, not {type(text).__name__}")
    return text


def _postings(
    flat: np.ndarray, owners: np.ndarray, size: int, terms: int
) -> tuple[np.ndarray, ...]:
    """Postings sorted by term then document: (documents, frequencies, postings per term)."""
    size = max(size, 1)
    keys, freqs = np.unique(flat * size + owners, return_counts=True)
    term_of, docs = np.divmod(keys, size)
    return docs, freqs, np.bincount(term_of, minlength=terms).astype(np.int64)


class BlockAnalyzers:
    """Runs :func:`analyze_block` on ``workers`` processes: this one and ``workers - 1``
    worker processes, blocks taken in turn (a worker's first, so it works while this process
    analyzes its own), at most one block per process at a time, results in submission order.

    >>> import tempfile
    >>> with BlockAnalyzers(1) as analyzers:
    ...     analyzers.submit((0, 0, [["Cats sat.", ""]], 0, tempfile.mkdtemp()))
    ...     [(sorted(r.terms[0]), r.skipped) for r in analyzers.results()]
    [(['cat', 'sat'], 1)]
    """

    def __init__(self, workers: int) -> None:
        # The slots blocks go to in turn: the worker processes, then None for this process.
        self._slots: list[_Worker | None] = [_Worker() for _ in range(workers - 1)]
        self._slots.append(None)
        self._pending: deque[tuple[Any, Any]] = deque()  # (worker or None, result or None)
        self._next = 0

    @property
    def busy(self) -> bool:
        """Whether a new block would have to wait for a result to be taken first."""
        return len(self._pending) >= len(self._slots)

    def submit(self, task: tuple) -> None:
        """Queue one block (``analyze_block``'s arguments); never call it while ``busy``."""
        worker = self._slots[self._next % len(self._slots)]
        self._next += 1
        if worker is None:
            self._pending.append((None, analyze_block(*task)))
        else:
            worker.send(task)
            self._pending.append((worker, None))

    def take(self) -> BlockPostings:
        """The oldest block's result (waits for it)."""
        worker, result = self._pending.popleft()
        return result if worker is None else worker.receive()

    def results(self) -> Any:
        """Every result still pending, in order."""
        while self._pending:
            yield self.take()

    def close(self) -> None:
        """End the workers (at once: a worker mid-block is killed); forget the tokens an
        analysis in this process kept."""
        for worker in self._slots:
            if worker is not None:
                worker.stop()
        self._slots = [None]
        _TERMS.clear()

    def __enter__(self) -> BlockAnalyzers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# A worker process's program. It needs the analyzer, not what the package heta_eval.lucene
# exports (the index: numba's search kernel, pyarrow), so that package stands in bare, as a
# plain folder.
_WORKER = """
import sys, types
package = types.ModuleType("heta_eval.lucene")
package.__path__ = [sys.argv[1]]
sys.modules["heta_eval.lucene"] = package
from heta_eval.lucene.blocks import main
main()
"""


class _Worker:
    """One worker process: tasks pickled to its stdin, results pickled from its stdout."""

    def __init__(self) -> None:
        here = Path(__file__).resolve().parent
        path = os.pathsep.join(filter(None, [str(here.parents[1]), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path, "OPENBLAS_NUM_THREADS": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(here)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            start_new_session=True,  # the terminal's Ctrl-C goes to the main process alone
        )

    def send(self, task: tuple) -> None:
        assert self.process.stdin is not None
        pickle.dump(task, self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self.process.stdin.flush()

    def receive(self) -> BlockPostings:
        assert self.process.stdout is not None
        try:
            kind, value = pickle.load(self.process.stdout)
        except EOFError:
            status = self.process.wait()
            raise RuntimeError(
                f"a BM25 indexing worker ended unexpectedly (exit status "
                f"{status}); see its message above"
            ) from None
        if kind == "error":  # the worker's exception, as analyzing here would have raised it
            raise value
        return value

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:  # a broken pipe to a killed worker
                pass


def _watch_parent(parent: int) -> None:
    """End this worker when the process that started it is gone (it was killed)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _serve(tasks: BinaryIO, results: BinaryIO) -> None:
    while True:
        try:
            task = pickle.load(tasks)
        except EOFError:  # the main process closed the pipe (or died)
            return
        try:
            reply: tuple[str, Any] = ("ok", analyze_block(*task))
        except Exception as error:
            reply = ("error", error)
        try:
            data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # an exception that does not pickle: its text
            detail = "".join(traceback.format_exception_only(type(reply[1]), reply[1])).strip()
            data = pickle.dumps(("error", RuntimeError(f"BM25 indexing failed: {detail}")))
        results.write(data)
        results.flush()


def main() -> None:
    """A worker: serve blocks until stdin closes. Its stdout carries only results (anything
    else printed goes to stderr)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    results = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    _serve(sys.stdin.buffer, results)
