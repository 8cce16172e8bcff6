"""Datasets: the registry, verified downloads, data-dir resolution, the BEIR loader and validation.

>>> from heta_eval.data import get_dataset
>>> get_dataset("scifact").split
'test'
"""

from __future__ import annotations

from .beir_loader import BeirDataset, iter_corpus, load_beir, load_qrels, load_queries
from .download import ChecksumMismatchError, DownloadError, UnsafeArchiveError, download_dataset
from .locate import DatasetNotFoundError, default_cache_dir, find_dataset, resolve_data_root
from .registry import DatasetInfo, RegistryError, get_dataset, list_datasets, load_registry
from .validate import Issue, ValidationReport, validate_dataset

__all__ = [
    "BeirDataset",
    "ChecksumMismatchError",
    "DatasetInfo",
    "DatasetNotFoundError",
    "DownloadError",
    "Issue",
    "RegistryError",
    "UnsafeArchiveError",
    "ValidationReport",
    "default_cache_dir",
    "download_dataset",
    "find_dataset",
    "get_dataset",
    "iter_corpus",
    "list_datasets",
    "load_beir",
    "load_qrels",
    "load_queries",
    "load_registry",
    "resolve_data_root",
    "validate_dataset",
]
