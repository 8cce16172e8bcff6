"""Datasets: the registry, verified downloads, data-dir resolution, the BEIR loader and validation.

Names load on first use (PEP 562): reading the registry does not import the downloader.

>>> from heta_eval.data import get_dataset
>>> get_dataset("scifact").split
'test'
"""

from __future__ import annotations

from heta_eval._lazy import attach

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

__all__ = sorted(_LAZY)
__getattr__, __dir__ = attach(__name__, _LAZY)
