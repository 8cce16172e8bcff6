"""The dataset registry: ``registry.json``, data shipped in this package beside this module.

Each entry names a downloadable dataset, its URL and checksum, its evaluation split, its
expected size and its scoring policy. ``"md5": null`` means the checksum is unknown; see
:func:`heta_eval.data.download.download_dataset` for how such a download is pinned.

>>> info = get_dataset("cqadupstack/android")
>>> info.name, info.parent, info.queries, info.ignore_identical_ids
('cqadupstack/android', 'cqadupstack', 699, True)
>>> get_dataset("cqadupstack").aggregate
'mean'
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from heta_eval import config

__all__ = [
    "REGISTRY_PATH",
    "DatasetInfo",
    "RegistryError",
    "file_sha256",
    "get_dataset",
    "list_datasets",
    "load_registry",
]

#: The registry shipped in the package (a checkout or an installed wheel alike);
#: ``HETA_EVAL_REGISTRY`` points elsewhere (a private registry, tests).
REGISTRY_PATH = Path(__file__).with_name("registry.json")

_MD5 = re.compile(r"^[0-9a-f]{32}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_KINDS = {"beir", "custom"}
_AGGREGATES = {None, "mean"}


class RegistryError(ValueError):
    """The registry file is malformed, or a dataset name is not in it."""


@dataclass(frozen=True)
class DatasetInfo:
    """One registry entry. Sub-forums of CQADupStack are entries too (``cqadupstack/tex``):
    they share the parent's archive and carry their own counts."""

    name: str
    kind: str
    url: str | None
    md5: str | None
    archive: str
    split: str
    queries: int | None
    corpus: int | None
    ignore_identical_ids: bool = True
    aggregate: str | None = None
    subsets: tuple[str, ...] = ()
    parent: str | None = None
    notes: str = ""
    known_defects: dict[str, list[str]] = field(default_factory=dict)
    #: sha256 of files the archive unpacks to (``{"corpus.jsonl": hex}``), where known: a
    #: folder holding other files is not this dataset (``heta_eval.data.folders``).
    files_sha256: dict[str, str] = field(default_factory=dict)
    #: The benchmark adapter that reads it (``heta_eval.adapters.load_benchmark``): ``beir`` or e.g.
    #: ``scifact-claims`` for a dataset in another layout.
    adapter: str = "beir"

    @property
    def archive_name(self) -> str:
        """The downloaded file's name (``scifact.zip``)."""
        root = self.parent or self.name
        return f"{root}.{self.archive}"


def _registry_path() -> Path:
    return config.registry_path() or REGISTRY_PATH


def _entry(name: str, raw: dict[str, Any], where: str) -> DatasetInfo:
    def need(key: str, kind: type | tuple[type, ...]) -> Any:
        if key not in raw:
            raise RegistryError(f"{where}: dataset {name!r} lacks {key!r}")
        value = raw[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise RegistryError(f"{where}: dataset {name!r}: {key!r} has the wrong type: {value!r}")
        return value

    kind = need("kind", str)
    if kind not in _KINDS:
        raise RegistryError(f"{where}: dataset {name!r}: kind {kind!r} not in {sorted(_KINDS)}")
    md5 = need("md5", (str, type(None)))
    if md5 is not None and not _MD5.match(md5):
        raise RegistryError(
            f"{where}: dataset {name!r}: md5 {md5!r} is not 32 lowercase hex digits"
        )
    policy = raw.get("policy", {})
    aggregate = policy.get("aggregate")
    if aggregate not in _AGGREGATES:
        raise RegistryError(f"{where}: dataset {name!r}: unknown aggregate {aggregate!r}")
    subsets = raw.get("subsets", {})
    adapter = raw.get("adapter", "beir")
    if not isinstance(adapter, str) or not adapter:
        raise RegistryError(f"{where}: dataset {name!r}: 'adapter' must be a non-empty string")
    files = raw.get("files_sha256", {})
    if not isinstance(files, dict) or not all(
        isinstance(v, str) and _SHA256.match(v) for v in files.values()
    ):
        raise RegistryError(f"{where}: dataset {name!r}: 'files_sha256' maps files to sha256 hex")
    if aggregate == "mean" and not subsets:
        raise RegistryError(f"{where}: dataset {name!r}: aggregate 'mean' needs 'subsets'")
    return DatasetInfo(
        name=name,
        kind=kind,
        url=need("url", (str, type(None))),
        md5=md5,
        archive=raw.get("archive", "zip"),
        split=need("split", str),
        queries=raw.get("queries"),
        corpus=raw.get("corpus"),
        ignore_identical_ids=bool(policy.get("ignore_identical_ids", True)),
        aggregate=aggregate,
        subsets=tuple(subsets),
        notes=raw.get("notes", ""),
        known_defects=raw.get("known_defects", {}),
        files_sha256=dict(files),
        adapter=adapter,
    )


@lru_cache(maxsize=4)
def _load(path: Path, mtime: float) -> dict[str, DatasetInfo]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise RegistryError(f"dataset registry not found: {path}") from error
    except json.JSONDecodeError as error:
        raise RegistryError(f"{path}: invalid JSON: {error}") from error
    if not isinstance(data, dict) or not isinstance(data.get("datasets"), dict):
        raise RegistryError(f"{path}: expected an object with a 'datasets' object")
    entries: dict[str, DatasetInfo] = {}
    for name, raw in data["datasets"].items():
        if not isinstance(raw, dict):
            raise RegistryError(f"{path}: dataset {name!r} is not an object")
        info = _entry(name, raw, str(path))
        entries[name] = info
        for sub, counts in raw.get("subsets", {}).items():
            # A sub-forum is scored as a dataset of its own, inside the parent's archive.
            entries[f"{name}/{sub}"] = DatasetInfo(
                name=f"{name}/{sub}",
                kind=info.kind,
                url=info.url,
                md5=info.md5,
                archive=info.archive,
                split=info.split,
                queries=counts.get("queries"),
                corpus=counts.get("corpus"),
                ignore_identical_ids=info.ignore_identical_ids,
                parent=name,
                notes=f"sub-forum of {name}",
                adapter=info.adapter,
            )
    return entries


def load_registry(path: str | Path | None = None) -> dict[str, DatasetInfo]:
    """Every registry entry by name, sub-forums included (validated; cached per file version)."""
    registry = Path(path) if path is not None else _registry_path()
    mtime = registry.stat().st_mtime if registry.exists() else 0.0
    return _load(registry, mtime)


def get_dataset(name: str) -> DatasetInfo:
    """The registry entry for ``name``; an unknown name raises :class:`RegistryError`
    listing the known ones."""
    entries = load_registry()
    try:
        return entries[name]
    except KeyError:
        known = ", ".join(n for n, e in entries.items() if e.parent is None)
        raise RegistryError(
            f"unknown dataset {name!r}; known datasets: {known} (or a folder of your own in "
            f"the BEIR layout, written as a path: ./{name})"
        ) from None


def list_datasets(*, include_subsets: bool = False) -> list[DatasetInfo]:
    """Registry entries in file order (sub-forums only with ``include_subsets=True``).

    >>> "scifact" in [info.name for info in list_datasets()]
    True
    """
    return [e for e in load_registry().values() if include_subsets or e.parent is None]


def file_sha256(path: Path) -> str:
    """The sha256 of a file (hex), read in blocks: what the registry's checksums pin.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as handle:
    ...     file_sha256(Path(handle.name))[:12]
    'e3b0c44298fc'
    """
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
