"""What a report reads: results folders (one *system* per folder and mode) and the dataset
they were run on (document titles and texts, relevance labels).

The dataset is optional: without it the report still shows every number, and says that
titles, snippets and labels are absent.

>>> label_systems([("results/a", "bm25"), ("results/a", "dense")])
['bm25', 'dense']
>>> label_systems([("results/a", "bm25"), ("results/b", "bm25")])
['a:bm25', 'b:bm25']
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval.adapters import load_benchmark
from heta_eval.data.registry import get_dataset
from heta_eval.io import json_text
from heta_eval.runner.results import BenchmarkResults, QueryRecord, load_results

__all__ = ["Dataset", "ReportError", "System", "label_systems", "load_dataset", "load_systems"]


class ReportError(ValueError):
    """A report cannot be written as asked; the message says why."""


@dataclass
class System:
    """One mode of one results folder: its summary (as ``summary.json`` holds it) and records."""

    label: str
    folder: Path
    mode: str
    summary: dict[str, Any]
    results: BenchmarkResults
    records: dict[str, QueryRecord] = field(default_factory=dict)
    _values: dict[str, dict[str, float]] | None = field(default=None, repr=False)

    def values(self, metric: str) -> dict[str, float]:
        """``{case id: value}`` of one evaluator, as ``per_query.jsonl`` holds it (skipped
        cases and values that are not numbers left out); one pass for every metric."""
        if self._values is None:
            self._values = {}
            for qid, record in self.records.items():
                for name, score in record.scores.items():
                    value = score.value
                    if not score.skipped and isinstance(value, int | float):
                        self._values.setdefault(name, {})[qid] = float(value)
        return self._values.get(metric, {})

    @property
    def mode_summary(self) -> dict[str, Any]:
        return self.summary["modes"][self.mode]

    @property
    def run_json(self) -> dict[str, Any]:
        """``run.json`` of the folder (what was run), or an empty dict."""
        path = self.folder / "run.json"
        try:
            return json_text.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}


@dataclass
class Dataset:
    """Titles and texts of the documents a report names, and the relevance labels."""

    name: str
    documents: dict[str, tuple[str, str]]
    labels: dict[str, dict[str, int]]
    note: str = ""


def label_systems(pairs: Sequence[tuple[str | Path, str]]) -> list[str]:
    """Names for (folder, mode) pairs: the mode alone when one folder is given, else
    ``folder:mode`` with the folder's own name (its parent's too where two folders share a
    name, as a sweep's ``<recipe>/<mode>`` cells do; ``:mode`` left out when the folder is
    named after it).

    >>> label_systems([("s/small/bm25", "bm25"), ("s/large/bm25", "bm25")])
    ['small/bm25', 'large/bm25']
    """
    folders = list(dict.fromkeys(str(folder) for folder, _ in pairs))
    if len(folders) == 1:
        return [mode for _, mode in pairs]
    paths = {folder: Path(folder).resolve() for folder in folders}
    names = {folder: path.name for folder, path in paths.items()}
    if len(set(names.values())) < len(names):
        names = {folder: "/".join(path.parts[-2:]) for folder, path in paths.items()}
    seen: dict[str, int] = {}
    for folder in folders:
        count = seen.get(names[folder], 0)
        seen[names[folder]] = count + 1
        if count:
            names[folder] = f"{names[folder]}#{count + 1}"
    return [
        names[str(folder)]
        if Path(names[str(folder)]).name == mode
        else f"{names[str(folder)]}:{mode}"
        for folder, mode in pairs
    ]


def load_systems(
    folders: Sequence[str | os.PathLike[str]],
    results: Sequence[BenchmarkResults] | None = None,
) -> list[System]:
    """Every mode of every results folder, in the order given; ``results`` are the folders'
    contents when the caller has them in memory already (a run that just wrote them)."""
    if not folders:
        raise ReportError("give at least one results folder")
    loaded: list[tuple[Path, str, dict[str, Any], BenchmarkResults]] = []
    for index, raw in enumerate(folders):
        folder = Path(raw)
        if not (folder / "summary.json").is_file():
            raise ReportError(f"{folder}: no summary.json here; is this a results folder?")
        run = results[index] if results is not None else load_results(folder)
        # The summary as written, so the report shows exactly the numbers of summary.json.
        summary = json_text.loads((folder / "summary.json").read_text(encoding="utf-8"))
        for mode in summary.get("modes", {}):
            loaded.append((folder, mode, summary, run))
    labels = label_systems([(folder, mode) for folder, mode, _, _ in loaded])
    systems = []
    for label, (folder, mode, summary, results) in zip(labels, loaded, strict=True):
        records = {r.case_id: r for r in results.records if r.mode == mode}
        systems.append(System(label, folder, mode, summary, results, records))
    return systems


def load_dataset(
    name: str,
    wanted: Iterable[str],
    *,
    benchmark: Any = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> Dataset:
    """Titles and texts of the ``wanted`` documents, and every case's relevance labels.

    ``benchmark`` is the benchmark object of a run (as ``heta-eval run`` has it); without it
    the registered dataset ``name`` is looked up on disk (never downloaded). A dataset that
    cannot be read gives an empty :class:`Dataset` whose ``note`` says why.
    """
    if benchmark is None:
        try:
            benchmark = _find_benchmark(name, data_dir)
        except Exception as error:  # any reason: the report goes on without the texts
            return Dataset(name, {}, {}, note=f"dataset {name!r} not read: {_short(error)}")
    want = set(wanted)
    try:
        labels = {
            case.id: dict(case.expected.relevance)
            for case in benchmark.cases()
            if case.expected.relevance
        }
        for judged in labels.values():
            want.update(judged)
        documents = _texts(benchmark, want)
    except Exception as error:
        return Dataset(name, {}, {}, note=f"dataset {name!r} not read: {_short(error)}")
    return Dataset(name, documents, labels)


def _texts(benchmark: Any, want: set[str]) -> dict[str, tuple[str, str]]:
    """Title and text of each ``want``ed document: looked up in the benchmark's corpus store
    where it has one (a BEIR corpus: one vectorized pass over the ids, no Document objects),
    else read from its documents."""
    documents: dict[str, tuple[str, str]] = {}
    own = getattr(benchmark, "corpus_store", None)
    if callable(own):
        import pyarrow as pa
        import pyarrow.compute as pc

        store = own()
        wanted = pa.array(sorted(want), type=pa.large_string())
        found = pc.is_in(store.ids.arrow, value_set=wanted).to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(found)
        for doc_id, title, text in zip(
            store.ids.take(rows), store.titles.take(rows), store.texts.take(rows), strict=True
        ):
            documents[doc_id] = (title, text)  # a repeated id: its last line, as below
        store.release_pages()  # the gather's scattered pages: copied out, let go
        return documents
    for document in benchmark.documents():
        if document.id in want:
            documents[document.id] = (document.title or "", document.text or "")
    return documents


def _find_benchmark(name: str, data_dir: str | os.PathLike[str] | None) -> Any:
    info = get_dataset(name)
    if (getattr(info, "adapter", None) or "beir") == "beir":
        from heta_eval.adapters.beir import BeirBenchmark

        return BeirBenchmark(name, data_dir=data_dir, download=False)
    return load_benchmark(name, data_dir=data_dir)


def _short(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]
