"""Datasets: the registry, verified downloads, data-dir resolution, the BEIR loader and validation.

Names load on first use (PEP 562): reading the registry does not import the downloader.

>>> from heta_eval.data import get_dataset
>>> get_dataset("scifact").split
'test'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_eval._lazy import attach

if TYPE_CHECKING:  # what editors and type checkers read; _LAZY is what runs
    from heta_eval.data.beir_loader import (
        BeirDataset,
        iter_corpus,
        load_beir,
        load_qrels,
        load_queries,
    )
    from heta_eval.data.download import (
        ChecksumMismatchError,
        DownloadError,
        UnsafeArchiveError,
        download_dataset,
    )
    from heta_eval.data.locate import (
        DatasetNotFoundError,
        default_cache_dir,
        find_dataset,
        resolve_data_root,
    )
    from heta_eval.data.registry import (
        DatasetInfo,
        RegistryError,
        get_dataset,
        list_datasets,
        load_registry,
    )
    from heta_eval.data.validate import Issue, ValidationReport, validate_dataset


#: Public name -> the submodule that defines it.
_LAZY = {
    "BeirDataset": "beir_loader",
    "ChecksumMismatchError": "download",
    "DatasetInfo": "registry",
    "DatasetNotFoundError": "locate",
    "DownloadError": "download",
    "Issue": "validate",
    "RegistryError": "registry",
    "UnsafeArchiveError": "download",
    "ValidationReport": "validate",
    "default_cache_dir": "locate",
    "download_dataset": "download",
    "find_dataset": "locate",
    "get_dataset": "registry",
    "iter_corpus": "beir_loader",
    "list_datasets": "registry",
    "load_beir": "beir_loader",
    "load_qrels": "beir_loader",
    "load_queries": "beir_loader",
    "load_registry": "registry",
    "resolve_data_root": "locate",
    "validate_dataset": "validate",
}

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
__getattr__, __dir__ = attach(__name__, _LAZY)
