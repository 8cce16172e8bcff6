"""Validation of a BEIR-layout dataset folder, with file and line numbers.

Errors are problems that make BEIR's own loader crash or the data unusable (malformed or
empty lines, lines that are not UTF-8 or hold a lone surrogate, an ``_id`` that breaks the id
rule of :func:`heta_eval.io.ids.id_problem`, non-integer labels, judged queries missing
from queries.jsonl). Warnings are
problems BEIR tolerates but that change numbers: duplicated ids (last line wins), qrels
naming documents that are not in the corpus (they count in the recall denominator but can
never be retrieved), a first qrels line that is data (BEIR skips it). Known upstream defects
(ArguAna's dangling qrels document, BEIR #101) are marked as such. The corpus is streamed;
duplicate detection keeps only 8-byte hashes of ids in memory.

>>> report = validate_dataset("../shared/datasets/beir/scifact")  # doctest: +SKIP
>>> report.ok, report.stats["corpus_documents"]  # doctest: +SKIP
(True, 5183)
"""

from __future__ import annotations

import csv
import os
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from heta_eval.data.beir_loader import jsonl_line_problem
from heta_eval.io.trec import TrecFormatError, iter_qrels

__all__ = ["Issue", "ValidationReport", "validate_dataset"]

#: At most this many issues of one kind are listed; the rest are counted.
MAX_PER_KIND = 20

#: ``{qid: {docid: (label, line)}}``: the judgments read, with their lines.
Qrels = dict[str, dict[str, tuple[int, int]]]


@dataclass(frozen=True)
class Issue:
    """One finding: severity, file, 1-based line (None for file-level) and message."""

    severity: Literal["error", "warning"]
    kind: str
    file: str
    line: int | None
    message: str
    known_defect: bool = False

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        tag = " (known upstream defect)" if self.known_defect else ""
        return f"{self.severity}: {where}: {self.message}{tag}"


@dataclass
class ValidationReport:
    """The outcome of :func:`validate_dataset`; ``ok`` is True when there is no error."""

    folder: Path
    split: str
    issues: list[Issue] = field(default_factory=list)
    suppressed: Counter[str] = field(default_factory=Counter)
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors and not any(kind.startswith("error:") for kind in self.suppressed)

    def add(
        self,
        severity: Literal["error", "warning"],
        kind: str,
        file: Path,
        line: int | None,
        message: str,
        *,
        known_defect: bool = False,
    ) -> None:
        listed = sum(1 for i in self.issues if i.kind == kind)
        if listed >= MAX_PER_KIND:
            self.suppressed[f"{severity}:{kind}"] += 1
            return
        self.issues.append(Issue(severity, kind, str(file), line, message, known_defect))

    def format(self) -> str:
        """A human-readable report (what the CLI prints)."""
        lines = [f"{self.folder} (split {self.split})"]
        lines += [f"  {key.replace('_', ' ')}: {value:,}" for key, value in self.stats.items()]
        lines += [f"  {issue}" for issue in self.issues]
        for key, count in sorted(self.suppressed.items()):
            severity, kind = key.split(":", 1)
            lines.append(f"  {severity}: ... and {count:,} more {kind.replace('_', ' ')}")
        n_err = len(self.errors) + sum(c for k, c in self.suppressed.items() if k[0] == "e")
        n_warn = len(self.warnings) + sum(c for k, c in self.suppressed.items() if k[0] == "w")
        lines.append(f"  => {'OK' if self.ok else 'INVALID'}: {n_err} errors, {n_warn} warnings")
        return "\n".join(lines)


def _scan_jsonl(path: Path, report: ValidationReport, what: str) -> Iterator[tuple[int, str]]:
    """Yield ``(line, id)`` for each well-formed line; report the malformed ones."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                report.add("error", f"empty_{what}_line", path, number, "empty line")
                continue
            obj, why = jsonl_line_problem(raw)
            if why is not None:
                kind = (
                    "encoding"
                    if why.startswith("not UTF-8") or "surrogate" in why
                    else "id"
                    if why.startswith("_id")
                    else "line"
                )
                code = f"bad_{what}_{kind}" if kind != "line" else f"malformed_{what}_line"
                report.add("error", code, path, number, why)
                continue
            assert isinstance(obj, dict)
            doc_id = obj["_id"]
            if not isinstance(doc_id, str):
                report.add(
                    "warning",
                    f"non_string_{what}_id",
                    path,
                    number,
                    f"_id {doc_id!r} is a {type(doc_id).__name__}, not a string "
                    "(BEIR keeps it as is; qrels ids are strings)",
                )
                doc_id = str(doc_id)
            if not isinstance(obj.get("text"), str) or not obj.get("text"):
                report.add(
                    "warning", f"empty_{what}_text", path, number, f"{what} {doc_id!r} has no text"
                )
            yield number, doc_id


def _read_qrels(path: Path, report: ValidationReport) -> Qrels:
    """``{qid: {docid: (label, line)}}``, reporting malformed lines and duplicates; read by
    the project's one qrels reader with BEIR's first-line rule."""
    qrels: Qrels = {}
    try:
        _warn_if_first_line_is_data(path, report)
        for record in iter_qrels(path, layout="beir", skip_first_line=True, errors="yield"):
            if isinstance(record, TrecFormatError):
                report.add("error", record.code, path, record.line, record.reason)
                continue
            number, qid, docid, label = record
            previous = qrels.setdefault(qid, {}).get(docid)
            if previous is not None:
                report.add(
                    "warning",
                    "duplicate_qrels_pair",
                    path,
                    number,
                    f"({qid!r}, {docid!r}) already judged on line {previous[1]}; "
                    "the last line wins (as in BEIR)",
                )
            qrels[qid][docid] = (label, number)
    except TrecFormatError as error:  # not UTF-8: the reader cannot go on
        report.add("error", "bad_qrels_encoding", path, error.line, error.reason)
    return qrels


def _warn_if_first_line_is_data(path: Path, report: ValidationReport) -> None:
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as handle:
        first = handle.readline()
    row = next(csv.reader([first], delimiter="\t"), [])
    if len(row) >= 3 and row[2].strip().lstrip("-").isdigit():
        report.add(
            "warning",
            "qrels_header",
            path,
            1,
            f"first line {row!r} looks like data; BEIR always skips "
            "the first line as a header, so this judgment is lost",
        )


def validate_dataset(
    folder: str | os.PathLike[str],
    split: str = "test",
    *,
    known_defects: dict[str, list[str]] | None = None,
) -> ValidationReport:
    """Check a BEIR-layout folder: corpus, queries and ``qrels/<split>.tsv``."""
    folder = Path(folder)
    report = ValidationReport(folder=folder, split=split)
    corpus_path = folder / "corpus.jsonl"
    queries_path = folder / "queries.jsonl"
    qrels_path = folder / "qrels" / f"{split}.tsv"
    for path in (corpus_path, queries_path, qrels_path):
        if not path.is_file():
            report.add("error", "missing_file", path, None, "file does not exist")
    if report.errors:
        return report
    known_missing = set((known_defects or {}).get("qrels_docs_missing_from_corpus", []))

    qrels = _read_qrels(qrels_path, report)
    query_lines = _check_queries(queries_path, qrels, qrels_path, report)
    n_docs, found = _check_corpus(corpus_path, qrels, report)
    for qid, docs in qrels.items():
        for docid, (_, line) in docs.items():
            if docid not in found:
                report.add(
                    "warning",
                    "qrels_doc_missing",
                    qrels_path,
                    line,
                    f"query {qid!r} judges document {docid!r}, which is not in "
                    "corpus.jsonl (it counts in recall's denominator but can never "
                    "be retrieved)",
                    known_defect=docid in known_missing,
                )

    report.stats = {
        "corpus_documents": n_docs,
        "queries_in_file": len(query_lines),
        "judged_queries": len(qrels),
        "judgments": sum(len(d) for d in qrels.values()),
        "zero_only_queries": sum(
            1 for d in qrels.values() if d and all(lab <= 0 for lab, _ in d.values())
        ),
    }
    return report


def _check_queries(
    queries_path: Path, qrels: Qrels, qrels_path: Path, report: ValidationReport
) -> dict[str, int]:
    """``{qid: first line}`` of the queries file (small enough for a dict), reporting
    duplicated ids and judged queries it lacks."""
    query_lines: dict[str, int] = {}
    for number, qid in _scan_jsonl(queries_path, report, "query"):
        if qid in query_lines:
            report.add(
                "warning",
                "duplicate_query_id",
                queries_path,
                number,
                f"query id {qid!r} already on line {query_lines[qid]}; last line wins",
            )
        else:
            query_lines[qid] = number
    for qid, docs in qrels.items():
        if qid not in query_lines:
            first_line = min(line for _, line in docs.values())
            report.add(
                "error",
                "judged_query_missing",
                qrels_path,
                first_line,
                f"judged query {qid!r} is not in {queries_path.name} "
                "(BEIR's loader raises KeyError)",
            )
    return query_lines


def _check_corpus(
    corpus_path: Path, qrels: Qrels, report: ValidationReport
) -> tuple[int, set[str]]:
    """The number of documents and the judged ones among them, reporting duplicated ids.

    Streamed: only the ids that qrels judge and 8-byte hashes of the others are kept; the
    file is read a second time only when two hashes are equal.
    """
    judged_docs = {d for docs in qrels.values() for d in docs}
    hashes = array("q")
    found: set[str] = set()
    n_docs = 0
    for _, doc_id in _scan_jsonl(corpus_path, report, "corpus"):
        n_docs += 1
        hashes.append(hash(doc_id))
        if doc_id in judged_docs:
            found.add(doc_id)
    values = np.frombuffer(hashes, dtype=np.int64) if len(hashes) else np.zeros(0, np.int64)
    ordered = np.sort(values)
    dup_hashes = set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())
    if dup_hashes:  # second pass only when there is something to report
        quiet = ValidationReport(report.folder, report.split)  # its issues are reported above
        first: dict[str, int] = {}
        for number, doc_id in _scan_jsonl(corpus_path, quiet, "corpus"):
            if hash(doc_id) in dup_hashes:
                if doc_id in first:
                    report.add(
                        "warning",
                        "duplicate_corpus_id",
                        corpus_path,
                        number,
                        f"document id {doc_id!r} already on line {first[doc_id]}; "
                        "BEIR keeps the last line",
                    )
                else:
                    first[doc_id] = number
    return n_docs, found
