"""BEIR datasets as heta-eval benchmarks: a registered dataset, or any folder in the BEIR
layout (named after the folder).

>>> bench = BeirBenchmark("scifact", data_dir="../shared/datasets/beir")  # doctest: +SKIP
>>> cases = bench.cases()  # doctest: +SKIP
>>> len(cases), cases[0].id, cases[0].expected.relevance  # doctest: +SKIP
(300, '1', {'31715818': 1})
>>> next(bench.documents()).id  # doctest: +SKIP
'4983'
>>> [b.name for b in BeirBenchmark("cqadupstack", download=False).sub_benchmarks()][:2]
['cqadupstack/android', 'cqadupstack/english']
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path

from heta_eval.config import cache_dir
from heta_eval.data.beir_loader import (
    BeirDataset,
    QueryRows,
    load_beir,
    load_query_metadata,
    query_rows,
)
from heta_eval.data.corpus_store import CorpusStore
from heta_eval.data.download import DownloadError, download_dataset
from heta_eval.data.folders import ResolvedDataset, compare_folder, folder_info, is_folder_argument
from heta_eval.data.locate import DatasetNotFoundError, find_dataset
from heta_eval.data.registry import DatasetInfo, get_dataset
from heta_eval.data.sample import SAMPLE_FILE, SampleSpec, sample_dataset, sample_name
from heta_eval.models.records import BenchmarkCase, Document, ExpectedOutput
from heta_eval.retrieval.metric import beir_default_metrics

__all__ = ["BEIR_ADAPTER_K_VALUES", "BeirBenchmark"]

#: k values of :meth:`BeirBenchmark.evaluators`: BEIR's defaults. The runner retrieves as deep
#: as the largest k, so a BEIR run keeps 1,000 hits per query, as BEIR and Pyserini's 2CR do.
BEIR_ADAPTER_K_VALUES = (1, 3, 5, 10, 100, 1000)


class BeirBenchmark:
    """A BEIR dataset: documents (streamed), cases (one per judged query) and evaluators.

    ``name`` is a registry name (``scifact``, ``cqadupstack/android``) or a folder in the
    BEIR layout (``./my_dataset``: the benchmark is named after the folder). A registered
    dataset is looked up in ``data_dir``, else ``$HETA_EVAL_DATA``, else the cache, and
    downloaded (verified) when missing and ``download`` is True. ``split`` defaults to the
    registry's evaluation split (``dev`` for msmarco; ``test`` for a folder of your own).

    A folder that differs from the registry entry of the dataset it is read as (other
    counts or checksums) is reported in :attr:`warnings`, and :attr:`data_record` says so:
    its scores are not checked against that dataset's published numbers.

    Scoring policy: ``ignore_identical_ids`` (self-hits removed, as BEIR does for every
    dataset) and ``aggregate`` (``"mean"`` for cqadupstack: the reported number is the
    unweighted mean of :meth:`sub_benchmarks`, each scored on its own).

    ``sample`` (a :class:`~heta_eval.data.sample.SampleSpec`) runs a quick subset instead:
    the dataset's sample, written once as a BEIR folder under the cache
    (:mod:`heta_eval.data.sample`) and named ``<name>-sample-<N>-seed-<S>``; its
    :attr:`data_record` says what it is a sample of, and no published number applies to it.
    """

    def __init__(
        self,
        name: str,
        *,
        data_dir: str | os.PathLike[str] | None = None,
        split: str | None = None,
        download: bool = True,
        sample: SampleSpec | None = None,
    ) -> None:
        if is_folder_argument(name):
            data_dir = Path(name).expanduser().resolve()  # a dataset folder is its own data dir
            self.info: DatasetInfo = folder_info(data_dir, split)
            name, download = self.info.name, False
        else:
            self.info = get_dataset(name)
        #: The dataset sampled (or the dataset itself, without ``sample``).
        self.source_name = name
        self.sample = sample
        self.name = sample_name(name, sample) if sample is not None else name
        self.data_dir = data_dir
        self.split = split or self.info.split
        self.download = download
        self.ignore_identical_ids = self.info.ignore_identical_ids
        self.aggregate = self.info.aggregate

    def __repr__(self) -> str:
        return f"BeirBenchmark({self.name!r}, split={self.split!r})"

    # ------------------------------------------------------------------ data
    def sub_benchmarks(self) -> list[BeirBenchmark]:
        """One benchmark per sub-forum (cqadupstack); empty for ordinary datasets."""
        return [
            BeirBenchmark(
                f"{self.source_name}/{sub}",
                data_dir=self.data_dir,
                split=self.split,
                download=self.download,
                sample=self.sample,
            )
            for sub in self.info.subsets
        ]

    @cached_property
    def folder(self) -> Path:
        """The dataset folder on disk (downloaded first if needed and allowed); with
        ``sample``, the sample's folder (written on first use)."""
        if self.sample is None:
            return self.source_folder
        target = sample_dataset(
            self.source_folder,
            self.split,
            self.sample,
            name=self.source_name,
            cache_root=cache_dir("samples"),
        )
        return target

    @cached_property
    def source_folder(self) -> Path:
        """The dataset's own folder (the one a sample is drawn from)."""
        if self.info.subsets:
            raise ValueError(
                f"{self.name} is scored as the mean of its sub-forums; use sub_benchmarks() "
                f"({', '.join(f'{self.name}/{s}' for s in self.info.subsets[:3])}, ...)"
            )
        try:
            return find_dataset(self.source_name, self.data_dir)
        except DatasetNotFoundError:
            if not self.download:
                raise
        try:
            return download_dataset(self.source_name, data_dir=self.data_dir)
        except DownloadError as error:
            # download_dataset's message already says how to get the data by hand.
            raise DatasetNotFoundError(str(error)) from error

    @cached_property
    def resolved(self) -> ResolvedDataset:
        """The folder compared with the registry entry (counts, checksums); a sample's
        source folder, for a sample."""
        return compare_folder(self.info, self.source_folder, self.split)

    @property
    def warnings(self) -> list[str]:
        """Loud warnings about the data: a folder that is not the registered dataset."""
        line = self.resolved.warning()
        return [line] if line else []

    @property
    def data_record(self) -> dict:
        """Where the data came from, for ``summary.json``: name, folder, split, whether it
        is registered, and how it differs from the registry; a sample is not registered,
        and says what it is a sample of (``sample``: :data:`~heta_eval.data.sample.SAMPLE_FILE`'s
        record, with the source's own differences from the registry)."""
        record = self.resolved.record()
        if self.sample is None:
            return record
        found = json.loads((self.folder / SAMPLE_FILE).read_text(encoding="utf-8"))
        found["source_registered"] = record["registered"]
        found["source_differences"] = record["differences"]
        return {
            "name": self.name,
            "folder": str(self.folder),
            "split": self.split,
            "registered": False,
            "differences": [],
            "sample": found,
        }

    @cached_property
    def dataset(self) -> BeirDataset:
        """Queries and qrels of the split (BEIR loader semantics)."""
        return load_beir(self.folder, self.split)

    @property
    def qrels(self) -> dict[str, dict[str, int]]:
        return self.dataset.qrels

    def documents(self) -> Iterator[Document]:
        """Stream the corpus: one :class:`Document` per line, ``id`` = the BEIR ``_id``."""
        return self.dataset.corpus()

    def corpus_store(self, *, cache: bool = True, progress: bool = False) -> CorpusStore:
        """The corpus as columns on disk, read once (and cached) from corpus.jsonl: what a run
        builds its knowledge base from, so no step holds the corpus as Python objects."""
        return CorpusStore.from_jsonl(self.folder / "corpus.jsonl", cache=cache, progress=progress)

    def query_rows(self) -> QueryRows:
        """Where each query's vector is in a file of one vector per line of queries.jsonl."""
        return query_rows(self.folder / "queries.jsonl")

    def cases(self) -> list[BenchmarkCase]:
        """One case per judged query, in qrels order; ``expected.relevance`` = its qrels."""
        dataset = self.dataset
        return [
            BenchmarkCase(
                id=qid,
                query=text,
                expected=ExpectedOutput(relevance=dict(dataset.qrels[qid])),
            )
            for qid, text in dataset.queries.items()
        ]

    def query_metadata(self) -> dict[str, dict]:
        """``{query id: metadata}`` of the judged queries that carry a ``metadata`` object in
        ``queries.jsonl`` (what ``--slice-by FIELD`` may group by)."""
        return load_query_metadata(self.folder / "queries.jsonl", self.dataset.queries)

    @property
    def subset(self) -> str | None:
        """The sub-benchmark's name (``android`` of ``cqadupstack/android``), else None."""
        return self.source_name.split("/", 1)[1] if "/" in self.source_name else None

    def recipe(self, modes):  # (Sequence[str]) -> heta_eval.reference.Recipe
        """The reference knowledge base as BEIR's protocol has it: whole documents are the
        retrieval unit (never chunked), BM25 as Pyserini's BEIR flat index (Lucene's analyzer
        and scoring), the dense model over the same title + text."""
        from heta_eval.reference import Recipe

        return Recipe(modes=list(modes), chunking={"size": None})

    def evaluators(self):  # -> tuple[BeirRetrievalMetric, ...]
        """``beir_default_metrics`` at k = 1, 3, 5, 10, 100, 1000 with this dataset's policy."""
        return beir_default_metrics(
            k_values=BEIR_ADAPTER_K_VALUES, ignore_identical_ids=self.ignore_identical_ids
        )
