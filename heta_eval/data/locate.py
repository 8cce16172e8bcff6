"""Where dataset files live.

Resolution order for the *data root* (a folder holding ``<name>/``):

1. an explicit ``data_dir`` (``--data-dir``); it may also be the dataset folder itself;
2. the ``HETA_EVAL_DATA`` environment variable;
3. in a checkout, the cache ``datasets/cache/`` in the repository; installed (or when the
   checkout is not writable), ``~/.cache/heta-eval``.

Without ``--data-dir``, an existing dataset is also found, in a checkout, in the shared
data beside it, ``../shared/datasets/beir/<name>`` (what ``make eval`` uses), after
``$HETA_EVAL_DATA`` and before the cache; when none holds it the error lists every place
looked at (all of them places you can put data in).

>>> import os
>>> resolve_data_root("/data/beir")
PosixPath('/data/beir')
"""

from __future__ import annotations

import os
from pathlib import Path

from heta_eval import config
from heta_eval.data.registry import RegistryError, get_dataset

__all__ = [
    "ENV_VAR",
    "SHARED_DATA",
    "DatasetNotFoundError",
    "candidate_dirs",
    "dataset_dir",
    "default_cache_dir",
    "find_dataset",
    "looks_like_beir",
    "resolve_data_root",
]

ENV_VAR = "HETA_EVAL_DATA"
_CHECKOUT = Path(__file__).resolve().parents[2]
_REPO_CACHE = _CHECKOUT / "datasets" / "cache"
#: The shared real data beside a checkout (``../shared/datasets``), as ``make eval`` uses it.
SHARED_DATA = _CHECKOUT.parent / "shared" / "datasets"


class DatasetNotFoundError(FileNotFoundError):
    """The dataset is not on disk (and could not be downloaded); the message says how to get it."""


def _writable(path: Path) -> bool:
    # The cache may not exist yet: check the nearest existing ancestor.
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            return False
        probe = probe.parent
    return os.access(probe, os.W_OK)


def _in_checkout() -> bool:
    # Installed, parents[2] is a lib/ folder of the environment: never write datasets there.
    return (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "heta_eval").is_dir()


def default_cache_dir() -> Path:
    """``<repo>/datasets/cache`` in a writable checkout, else the cache root's ``datasets/``
    (``~/.cache/heta-eval/datasets``)."""
    if _in_checkout() and _writable(_REPO_CACHE):
        return _REPO_CACHE
    return config.cache_dir("datasets")


def resolve_data_root(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder that holds (or will hold) ``<name>/``: explicit, then env, then cache."""
    if data_dir is not None:
        return Path(data_dir).expanduser()
    env = config.data_dir()
    if env:
        return env.expanduser()
    return default_cache_dir()


def looks_like_beir(folder: Path) -> bool:
    """True if ``folder`` holds a BEIR layout (``corpus.jsonl`` and ``queries.jsonl``)."""
    return (folder / "corpus.jsonl").is_file() and (folder / "queries.jsonl").is_file()


def dataset_dir(name: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where ``name`` is (or would be) stored; no existence check.

    An explicit ``data_dir`` that is itself a dataset folder (it holds ``corpus.jsonl``) is
    returned as is, so ``--data-dir ../shared/datasets/beir/scifact`` works as well as
    ``--data-dir ../shared/datasets/beir``.
    """
    if data_dir is not None and looks_like_beir(Path(data_dir).expanduser()):
        return Path(data_dir).expanduser()
    return resolve_data_root(data_dir) / name


def candidate_dirs(name: str, data_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Every folder where ``name`` is looked for, in order (see the module docstring).

    >>> candidate_dirs("scifact", "/data/beir")
    [PosixPath('/data/beir/scifact')]
    """
    if data_dir is not None:
        return [dataset_dir(name, data_dir)]
    env = config.data_dir()
    found = [env.expanduser() / name] if env else []
    if _in_checkout():  # installed, the folder beside the package is no place of yours
        found.append(SHARED_DATA / "beir" / name)
    found.append(default_cache_dir() / name)
    return list(dict.fromkeys(found))


def how_to_get(
    name: str, target: Path, looked: list[Path] | None = None, archive: Path | None = None
) -> str:
    """The instructions printed when ``name`` is missing (``archive``: where a download that
    just failed would have put the file; the advice is then what to do without network)."""
    try:
        url = get_dataset(name).url
    except RegistryError:
        url = None
    where = ", ".join(str(p) for p in looked) if looked and len(looked) > 1 else str(target)
    top = name.split("/")[0]
    if archive is not None:
        lines = [
            f"dataset {name!r} could not be downloaded here (no network?). Instead:",
            f"  * on a machine with network, download {url or 'the archive'}; copy it to "
            f"{archive}, then rerun this download (it verifies the copied file against the "
            "registry's checksum and extracts it); or unzip it into "
            f"{target.parent}",
        ]
    else:
        lines = [
            f"dataset {name!r} not found (looked in {where}).",
            "Get it in one of these ways:",
            f"  * heta-eval datasets download {top}   (needs network)",
        ]
        if url:
            lines.append(f"  * download {url} elsewhere and unzip it into {target.parent}")
    lines.append(f"  * point {ENV_VAR} (or --data-dir) at a folder that holds {name}/")
    return "\n".join(lines)


def find_dataset(name: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder of an existing dataset, or :class:`DatasetNotFoundError` saying how to get it."""
    looked = candidate_dirs(name, data_dir)
    for folder in looked:
        if looks_like_beir(folder):
            return folder
    raise DatasetNotFoundError(how_to_get(name, dataset_dir(name, data_dir), looked))
