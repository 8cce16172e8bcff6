"""The benchmark protocol, and a benchmark loaded from your own files."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import ValidationError

from heta_eval.data.beir_loader import QueryRows
from heta_eval.data.corpus_store import CorpusStore
from heta_eval.evaluation import (
    AnswerContains,
    AnswerExactMatch,
    BenchmarkCase,
    Document,
    EvidenceRecallAtK,
    beir_default_metrics,
)
from heta_eval.io import json_text
from heta_eval.io.ids import holds_surrogate, id_problem
from heta_eval.models.protocol import BenchmarkEvaluatorProtocol
from heta_eval.models.validation import one_line
from heta_eval.rag.answers import AnswerF1
from heta_eval.runner.checks import case_id_problem

__all__ = [
    "Benchmark",
    "BenchmarkFormatError",
    "JsonlBenchmark",
    "corpus_of",
    "default_evaluators",
    "query_rows_of",
]


@runtime_checkable
class Benchmark(Protocol):
    """A benchmark: a name, its documents, its cases and its scoring policy.

    >>> class Tiny:
    ...     name = "tiny"
    ...     def documents(self): return [Document(id="d1", text="Cats purr.")]
    ...     def cases(self): return [BenchmarkCase(id="q1", query="cats?",
    ...                                            expected={"relevance": {"d1": 1}})]
    ...     def evaluators(self): return beir_default_metrics(k_values=(1, 10))
    >>> isinstance(Tiny(), Benchmark)
    True
    """

    name: str

    def documents(self) -> Iterable[Document]: ...

    def cases(self) -> Sequence[BenchmarkCase]: ...

    def evaluators(self) -> Sequence[BenchmarkEvaluatorProtocol]: ...


def corpus_of(benchmark: Benchmark, *, cache: bool = True, progress: bool = False) -> CorpusStore:
    """The benchmark's documents as a :class:`~heta_eval.data.corpus_store.CorpusStore`: its
    own (``corpus_store``: a BEIR corpus, streamed once into columns on disk), else its
    documents gathered in memory.

    >>> class Tiny:
    ...     def documents(self): return [Document(id="d1", text="Cats purr.")]
    >>> len(corpus_of(Tiny()))
    1
    """
    own = getattr(benchmark, "corpus_store", None)
    if callable(own):
        return own(cache=cache, progress=progress)
    return CorpusStore.from_documents(benchmark.documents())


def query_rows_of(benchmark: Benchmark, cases: Sequence[BenchmarkCase]) -> QueryRows:
    """Where each query is in a file of one vector per query: the benchmark's own order
    (``query_rows``: a BEIR dataset's queries.jsonl), else the order of its cases.

    >>> query_rows_of(object(), [BenchmarkCase(id="q1", query="?")]).rows
    {'q1': 0}
    """
    own = getattr(benchmark, "query_rows", None)
    if callable(own):
        return own()
    return QueryRows({case.id: i for i, case in enumerate(cases)}, len(cases), "the cases")


class BenchmarkFormatError(ValueError):
    """A benchmark file that cannot be read; the message names the file, line and field."""


def default_evaluators(cases: Sequence[BenchmarkCase]) -> tuple[BenchmarkEvaluatorProtocol, ...]:
    """What a user-defined benchmark is scored with, by what its cases carry: BEIR metrics
    when cases have relevance judgments, evidence recall at 1/3/5/10 when they have gold
    evidence, answer contains / exact match / F1 when they have gold answers.

    >>> [e.name for e in default_evaluators([BenchmarkCase(id="1", query="?",
    ...                                      expected={"answers": ["x"]})])]
    ['answer_contains', 'answer_exact_match', 'answer_f1']
    """
    evaluators: list[BenchmarkEvaluatorProtocol] = []
    if any(case.expected.relevance for case in cases):
        evaluators.extend(beir_default_metrics())
    if any(case.expected.evidence for case in cases):
        evaluators.extend(EvidenceRecallAtK(k) for k in (1, 3, 5, 10))
    if any(case.expected.answers for case in cases):
        evaluators.extend([AnswerContains(), AnswerExactMatch(), AnswerF1()])
    return tuple(evaluators)


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    try:
        handle = path.open("rb")
    except OSError as error:
        raise BenchmarkFormatError(f"{path}: cannot open: {error.strerror}") from error
    with handle:
        for number, raw in enumerate(handle, 1):
            try:  # line by line, so that bytes that are not UTF-8 are named with their line
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise BenchmarkFormatError(
                    f"{path}:{number}: not UTF-8 text (byte {raw[error.start]:#04x} at column "
                    f"{error.start + 1})"
                ) from None
            if not line.strip():
                continue
            try:
                row = json_text.loads(line)
            except json.JSONDecodeError as error:
                raise BenchmarkFormatError(f"{path}:{number}: invalid JSON: {error}") from None
            except (ValueError, RecursionError) as error:  # too long a number, too deep
                what = type(error).__name__
                raise BenchmarkFormatError(f"{path}:{number}: invalid JSON ({what})") from None
            if not isinstance(row, dict):
                raise BenchmarkFormatError(f"{path}:{number}: expected a JSON object")
            # A JSON escape is the only way a surrogate gets in: look only where one is.
            if "\\ud" in line.lower() and holds_surrogate(row):
                raise BenchmarkFormatError(
                    f"{path}:{number}: a field holds a lone surrogate (an escape such as "
                    "\\ud800), which is not text"
                )
            yield number, row


def _document_id_problem(doc: Document) -> str | None:
    why = id_problem(doc.id)
    if why is None:
        return None
    return f"document id {doc.id!r} {why} (an id is one word without whitespace or controls)"


class JsonlBenchmark:
    """A benchmark from your own files: a JSONL of cases and a folder (or JSONL) of documents.

    Each case line is a ``BenchmarkCase``: ``{"id", "query", "expected": {"answers",
    "evidence", "relevance"}, "metadata"}``. Documents are either a JSONL file of
    ``Document`` records (``{"id", "text", "title"}``) or a folder whose ``.txt`` / ``.md``
    files become documents (id = path relative to the folder, without the suffix).
    Evaluators default to :func:`default_evaluators`.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / "docs").mkdir()
    >>> _ = (folder / "docs" / "paris.txt").write_text("Paris is in France.")
    >>> _ = (folder / "cases.jsonl").write_text(
    ...     '{"id": "q1", "query": "Where is Paris?", "expected": {"relevance": {"paris": 1}}}\\n')
    >>> bench = JsonlBenchmark(folder / "cases.jsonl", folder / "docs")
    >>> bench.name, [d.id for d in bench.documents()], len(bench.evaluators())
    ('cases', ['paris'], 25)
    """

    def __init__(
        self,
        cases_path: str | Path,
        documents_path: str | Path,
        *,
        name: str | None = None,
        evaluators: Sequence[BenchmarkEvaluatorProtocol] | None = None,
    ) -> None:
        self.cases_path = Path(cases_path)
        self.documents_path = Path(documents_path)
        self.name = name or self.cases_path.stem
        self._evaluators = tuple(evaluators) if evaluators is not None else None
        self._cases: list[BenchmarkCase] | None = None
        #: Files of the documents folder that are not .txt / .md (the runner warns about them).
        self.skipped_files: list[str] = []

    def cases(self) -> list[BenchmarkCase]:
        if self._cases is None:
            cases: list[BenchmarkCase] = []
            seen: dict[str, int] = {}
            for number, row in _read_jsonl(self.cases_path):
                try:
                    case = BenchmarkCase.model_validate(row)
                except ValidationError as error:
                    message = one_line(error)
                    raise BenchmarkFormatError(f"{self.cases_path}:{number}: {message}") from None
                why = case_id_problem(case)
                if why is not None:
                    raise BenchmarkFormatError(f"{self.cases_path}:{number}: {why}")
                if case.id in seen:
                    raise BenchmarkFormatError(
                        f"{self.cases_path}:{number}: duplicate case id {case.id!r} "
                        f"(first on line {seen[case.id]})"
                    )
                seen[case.id] = number
                cases.append(case)
            if not cases:
                raise BenchmarkFormatError(f"{self.cases_path}: no cases")
            self._cases = cases
        return self._cases

    def documents(self) -> Iterator[Document]:
        path = self.documents_path
        if path.is_dir():
            every = sorted(p for p in path.rglob("*") if p.is_file())
            files = [p for p in every if p.suffix in {".txt", ".md"}]
            # Hidden files (.DS_Store, editor swap files) are not documents anyone meant.
            self.skipped_files = [
                p.relative_to(path).as_posix()
                for p in every
                if p.suffix not in {".txt", ".md"} and not p.name.startswith(".")
            ]
            if not files:
                raise BenchmarkFormatError(f"{path}: no .txt or .md documents in this folder")
            for file in files:
                try:
                    text = file.read_text(encoding="utf-8")
                except UnicodeDecodeError as error:
                    raise BenchmarkFormatError(f"{file}: not UTF-8 text: {error}") from None
                doc_id = file.relative_to(path).with_suffix("").as_posix()
                document = Document(id=doc_id, text=text, metadata={"path": str(file)})
                why = _document_id_problem(document)
                if why is not None:
                    raise BenchmarkFormatError(f"{file}: {why}, from its path: rename the file")
                yield document
            return
        for number, row in _read_jsonl(path):
            try:
                document = Document.model_validate(row)
            except ValidationError as error:
                raise BenchmarkFormatError(f"{path}:{number}: {one_line(error)}") from None
            why = _document_id_problem(document)
            if why is not None:
                raise BenchmarkFormatError(f"{path}:{number}: {why}")
            yield document

    def evaluators(self) -> tuple[BenchmarkEvaluatorProtocol, ...]:
        if self._evaluators is not None:
            return self._evaluators
        return default_evaluators(self.cases())
