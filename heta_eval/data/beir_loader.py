"""Loader for the BEIR layout with BEIR's exact semantics (beir 2.2.0 ``GenericDataLoader``).

``<folder>/corpus.jsonl``, ``<folder>/queries.jsonl`` and ``<folder>/qrels/<split>.tsv``:

* qrels: read by the project's one qrels reader (:func:`heta_eval.io.trec.iter_qrels`), with
  BEIR's rules: the **first line is always skipped** (BEIR treats it as the header even when
  it is data); CSV quotes are removed as BEIR's ``csv.reader`` does; labels are integers
  (``"1.0"`` is an error); extra columns are ignored; a repeated (query, doc) pair: the
  **last line wins**; zero labels and zero-only queries are kept.
* queries: ``_id`` → ``text``, last line wins, then restricted to the judged queries, in
  qrels first-appearance order. A judged query missing from queries.jsonl is an error.
* corpus: **streamed** — :func:`iter_corpus` yields one :class:`Document` per line, so an
  8.8M-passage corpus never sits in memory. ``title``/``text`` missing → ``""`` (BEIR: None).
  Other fields (``metadata``) are dropped, as BEIR does. Unlike BEIR's dict, a duplicated
  ``_id`` is yielded twice; ``heta-eval datasets validate`` reports duplicates (none of the
  official BEIR corpora has one as far as we know).

>>> ds = load_beir("../shared/datasets/beir/scifact", split="test")  # doctest: +SKIP
>>> len(ds.queries), len(ds.qrels), next(ds.corpus()).id  # doctest: +SKIP
(300, 300, '4983')
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from heta_eval.io import json_text
from heta_eval.io.ids import holds_surrogate, id_problem
from heta_eval.io.trec import TrecFormatError, iter_qrels

if TYPE_CHECKING:
    from heta_eval.models.records import Document

__all__ = [
    "BeirDataset",
    "DatasetFormatError",
    "QueryRows",
    "count_lines",
    "iter_corpus",
    "load_beir",
    "load_qrels",
    "load_queries",
    "load_query_metadata",
    "query_rows",
]

PathLike = str | os.PathLike[str]


class DatasetFormatError(ValueError):
    """A dataset file is malformed; the message names the file and line."""

    def __init__(self, message: str, path: PathLike | None = None, line: int | None = None):
        where = (
            f"{path}:{line}: "
            if path is not None and line is not None
            else (f"{path}: " if path is not None else "")
        )
        super().__init__(where + message)
        self.path = None if path is None else Path(path)
        self.line = line


def load_qrels(path: PathLike) -> dict[str, dict[str, int]]:
    """A BEIR qrels tsv as ``{qid: {docid: int}}`` (first line skipped; last duplicate wins).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "test.tsv"
    >>> _ = f.write_text("query-id\\tcorpus-id\\tscore\\n"
    ...                  "q1\\td1\\t1\\nq1\\td2\\t0\\nq1\\td1\\t2\\n")
    >>> load_qrels(f)
    {'q1': {'d1': 2, 'd2': 0}}
    """
    qrels: dict[str, dict[str, int]] = {}
    try:
        # The project's one qrels reader, with BEIR's rule: the first line is the header.
        for _, qid, docid, label in iter_qrels(path, layout="beir", skip_first_line=True):
            qrels.setdefault(qid, {})[docid] = label
    except TrecFormatError as error:
        raise DatasetFormatError(error.reason, path, error.line) from None
    return qrels


def jsonl_line_problem(raw: bytes) -> tuple[object, str | None]:
    """One line of a BEIR jsonl: its object, and why it cannot be read (``None`` when it can).

    Not UTF-8, not JSON, no ``_id``, an ``_id`` that breaks the id rule
    (:func:`~heta_eval.io.ids.id_problem`), or a lone surrogate (``"\\ud800"``) in any
    field: it is not text, and nothing can write it to a UTF-8 file.
    """
    try:
        obj = json_text.loads(raw)
    except UnicodeDecodeError as error:
        return None, f"not UTF-8 (byte {raw[error.start]:#04x} at column {error.start + 1})"
    except json.JSONDecodeError as error:
        return None, "empty line" if not raw.strip() else f"invalid JSON ({error.msg})"
    except (ValueError, RecursionError) as error:  # e.g. an integer too long to convert
        return None, f"invalid JSON ({type(error).__name__})"
    if not isinstance(obj, dict) or "_id" not in obj:
        return obj, 'expected a JSON object with an "_id"'
    doc_id = obj["_id"]
    why = id_problem(str(doc_id) if isinstance(doc_id, int | float) else doc_id)
    if why is not None:
        return obj, f"_id {doc_id!r} {why} (an id is one word without whitespace or controls)"
    # A JSON escape of a surrogate is the only way one can get in: look only where one is.
    if (b"\\ud" in raw or b"\\uD" in raw) and holds_surrogate(obj):
        return obj, "a field holds a lone surrogate (an escape such as \\ud800), which is not text"
    return obj, None


def _iter_jsonl(path: PathLike) -> Iterator[tuple[int, dict]]:
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            obj, why = jsonl_line_problem(raw)
            if why is not None:
                raise DatasetFormatError(why, path, number)
            yield number, obj  # type: ignore[misc]


def load_queries(path: PathLike, qrels: dict[str, dict[str, int]] | None = None) -> dict[str, str]:
    """``{qid: text}`` from queries.jsonl; with ``qrels``, only judged queries, in qrels order
    (BEIR's filtering). A judged query missing from the file raises :class:`DatasetFormatError`."""
    queries: dict[str, str] = {}
    for _, obj in _iter_jsonl(path):
        queries[str(obj["_id"])] = obj.get("text") or ""
    if qrels is None:
        return queries
    missing = [qid for qid in qrels if qid not in queries]
    if missing:
        raise DatasetFormatError(
            f"{len(missing)} judged queries are missing from this file (first: "
            f"{', '.join(map(repr, missing[:5]))}); run `heta-eval datasets validate`",
            path,
        )
    return {qid: queries[qid] for qid in qrels}


@dataclass(frozen=True)
class QueryRows:
    """Where each query is in a file of one row per query (vectors given with a run): the
    row of each query id, the rows expected, and what the rows follow.

    >>> QueryRows({"q1": 0}, 1).source
    'queries.jsonl'
    """

    rows: dict[str, int]
    total: int
    source: str = "queries.jsonl"


def query_rows(path: PathLike) -> QueryRows:
    """The line (0-based) of each query id in queries.jsonl: where its vector is in a file of
    one vector per line. An id on several lines is at its last, whose text BEIR keeps."""
    rows: dict[str, int] = {}
    total = 0
    for number, obj in _iter_jsonl(path):
        rows[str(obj["_id"])] = number - 1
        total = number
    return QueryRows(rows, total, Path(path).name)


def load_query_metadata(path: PathLike, qids: Iterable[str]) -> dict[str, dict]:
    """``{qid: metadata}`` of the queries ``qids`` in queries.jsonl: each line's ``metadata``
    object (BEIR's loader drops it; a slice of the run may group by it). Queries without one
    are left out."""
    wanted = set(qids)
    found: dict[str, dict] = {}
    for _, obj in _iter_jsonl(path):
        qid, metadata = str(obj["_id"]), obj.get("metadata")
        if qid in wanted and isinstance(metadata, dict) and metadata:
            found[qid] = metadata
    return found


def iter_corpus(path: PathLike, *, keep_metadata: bool = False) -> Iterator[Document]:
    """Stream corpus.jsonl as :class:`Document` objects (id = BEIR ``_id``), one line at a time."""
    # pydantic's models load only when a corpus is read, not for qrels alone.
    from heta_eval.models.records import Document

    for _, obj in _iter_jsonl(path):
        yield Document(
            id=str(obj["_id"]),
            title=obj.get("title") or "",
            text=obj.get("text") or "",
            metadata=(obj.get("metadata") or {}) if keep_metadata else {},
        )


def count_lines(path: PathLike) -> int:
    """Number of non-empty lines (cheap: counts bytes, parses nothing)."""
    count = 0
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                count += 1
    return count


@dataclass
class BeirDataset:
    """A loaded BEIR split: queries and qrels in memory, the corpus streamed from disk."""

    folder: Path
    split: str
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]

    @property
    def corpus_path(self) -> Path:
        return self.folder / "corpus.jsonl"

    def corpus(self, *, keep_metadata: bool = False) -> Iterator[Document]:
        """A fresh generator over the corpus each call."""
        return iter_corpus(self.corpus_path, keep_metadata=keep_metadata)


def load_beir(folder: PathLike, split: str = "test") -> BeirDataset:
    """Load ``folder``'s queries and ``qrels/<split>.tsv`` with BEIR semantics.

    Missing files raise :class:`FileNotFoundError` naming the path (BEIR: ``ValueError``).
    """
    folder = Path(folder)
    paths = [folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels" / f"{split}.tsv"]
    for path in paths:
        if not path.is_file():
            available = sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))
            hint = f" (available splits: {', '.join(available)})" if available else ""
            raise FileNotFoundError(f"{path} does not exist{hint}")
    qrels = load_qrels(paths[2])
    queries = load_queries(paths[1], qrels)
    return BeirDataset(folder=folder, split=split, queries=queries, qrels=qrels)
