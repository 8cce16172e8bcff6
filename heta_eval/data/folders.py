"""Datasets as folders: ``--dataset ./my_dataset``, and whether a folder is the dataset its
name claims.

Any folder in the BEIR layout (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``)
is a dataset, named after the folder. A folder named after a registered dataset, or a
registered name read from ``--data-dir``, is compared with the registry entry: its document
and query counts, and the checksums of its files where the registry has them. A folder that
differs is not the published dataset: a run on it says so loudly and makes no reference
check against that dataset's published numbers.

>>> is_folder_argument("scifact"), is_folder_argument("./my_dataset")
(False, True)
>>> is_folder_argument("cqadupstack/android"), is_folder_argument("/data/beir/scifact")
(False, True)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heta_eval.data.beir_loader import count_lines, load_qrels
from heta_eval.data.locate import DatasetNotFoundError, find_dataset, looks_like_beir
from heta_eval.data.registry import DatasetInfo, RegistryError, file_sha256, get_dataset

__all__ = [
    "ResolvedDataset",
    "compare_folder",
    "dataset_label",
    "folder_info",
    "is_folder_argument",
    "registry_differences",
    "resolve_dataset",
]


def is_folder_argument(value: str | os.PathLike[str]) -> bool:
    """Whether a ``--dataset`` value names a folder rather than a registered dataset.

    A registered name always means the registered dataset; anything written as a path
    (``./x``, ``../x``, ``/x``, ``~/x``, ``x/``) or naming an existing folder that is not a
    registered name is a folder.
    """
    text = os.fspath(value)
    try:
        get_dataset(text)
        return False
    except RegistryError:
        pass
    written_as_path = text.startswith((".", "/", "~")) or text.endswith(("/", os.sep))
    return written_as_path or Path(text).is_dir()


def dataset_label(value: str | os.PathLike[str]) -> str:
    """The name results are filed under: the folder's name for a folder, else the name.

    >>> dataset_label("/data/my_dataset/"), dataset_label("cqadupstack/android")
    ('my_dataset', 'cqadupstack/android')
    """
    text = os.fspath(value)
    return Path(text).expanduser().resolve().name if is_folder_argument(text) else text


def _default_split(folder: Path) -> str:
    qrels = sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))
    if "test" in qrels or not qrels:
        return "test"
    if len(qrels) == 1:
        return qrels[0]
    raise DatasetNotFoundError(
        f"{folder}/qrels holds {', '.join(qrels)} and no test.tsv: choose one with --split"
    )


def folder_info(folder: Path, split: str | None = None) -> DatasetInfo:
    """The registry entry of a BEIR-layout folder: the registered dataset's when the
    folder bears a registered BEIR dataset's name, else an entry of its own (named after
    the folder; split ``test``, or the only split it has)."""
    if not looks_like_beir(folder):
        why = "no such folder" if not folder.is_dir() else "it lacks corpus.jsonl or queries.jsonl"
        raise DatasetNotFoundError(
            f"{folder} is not a dataset in the BEIR layout ({why}); a dataset folder holds "
            "corpus.jsonl, queries.jsonl and qrels/<split>.tsv"
        )
    try:
        info = get_dataset(folder.name)
        if info.adapter == "beir" and not info.subsets:
            return info
    except RegistryError:
        pass
    return DatasetInfo(
        name=folder.name,
        kind="beir",
        url=None,
        md5=None,
        archive="zip",
        split=split or _default_split(folder),
        queries=None,
        corpus=None,
    )


def registry_differences(
    info: DatasetInfo, folder: Path, split: str, *, qrels_only: bool = False
) -> list[str]:
    """What differs between ``folder`` and the registry entry ``info`` (empty: nothing).

    Compared: the documents in ``corpus.jsonl``, the judged queries of the registry's split,
    and the sha256 of each file the entry lists that the folder holds; with ``qrels_only``
    (scoring a run file needs nothing else) the judged queries and the split's qrels file.
    """
    found: list[str] = []
    if info.corpus is not None and not qrels_only:
        documents = count_lines(folder / "corpus.jsonl")
        if documents != info.corpus:
            found.append(f"{documents:,} documents, not {info.corpus:,}")
    qrels = folder / "qrels" / f"{split}.tsv"
    if info.queries is not None and split == info.split and qrels.is_file():
        queries = len(load_qrels(qrels))
        if queries != info.queries:
            found.append(f"{queries:,} judged {split} queries, not {info.queries:,}")
    for name, expected in info.files_sha256.items():
        if qrels_only and name != f"qrels/{split}.tsv":
            continue
        path = folder / name
        if path.is_file() and file_sha256(path) != expected:
            found.append(f"{name} is not the published file (sha256 differs)")
    return found


def _is_registered(info: DatasetInfo) -> bool:
    try:
        return get_dataset(info.name) == info
    except RegistryError:
        return False


@dataclass
class ResolvedDataset:
    """A dataset found on disk: its registry entry, folder, split, and how it differs
    from the registry (``registered`` is False for a folder of your own)."""

    info: DatasetInfo
    folder: Path
    split: str
    registered: bool
    differences: list[str] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        """Registered and identical to the registry entry: its published numbers apply."""
        return self.registered and not self.differences

    def warning(self) -> str | None:
        """The loud line a run prints when the folder is not the registered dataset."""
        if not self.differences:
            return None
        name = self.info.name
        return (
            f"{self.folder} is not the registered {name}: {'; '.join(self.differences)}. "
            f"Its scores are not {name}'s, and no reference check is made against {name}'s "
            "published numbers"
        )

    def record(self) -> dict[str, Any]:
        """What a results folder's ``summary.json`` keeps under ``data``."""
        return {
            "name": self.info.name,
            "folder": str(self.folder),
            "split": self.split,
            "registered": self.registered,
            "differences": list(self.differences),
        }


def resolve_dataset(
    value: str,
    data_dir: str | os.PathLike[str] | None = None,
    split: str | None = None,
    *,
    qrels_only: bool = False,
) -> ResolvedDataset:
    """Find the dataset a ``--dataset`` value names (a registered name, or a folder) and
    compare it with its registry entry (see :func:`registry_differences`). Raises
    :class:`DatasetNotFoundError` when it is not on disk."""
    if is_folder_argument(value):
        folder = Path(value).expanduser().resolve()
        info = folder_info(folder, split)
    else:
        info = get_dataset(value)
        folder = find_dataset(info.name, data_dir)
    return compare_folder(info, folder, split or info.split, qrels_only=qrels_only)


def compare_folder(
    info: DatasetInfo, folder: Path, split: str, *, qrels_only: bool = False
) -> ResolvedDataset:
    """``folder`` (read as ``info``'s dataset) compared with the registry."""
    registered = _is_registered(info)
    differences = (
        registry_differences(info, folder, split, qrels_only=qrels_only) if registered else []
    )
    return ResolvedDataset(info, folder, split, registered, differences)
