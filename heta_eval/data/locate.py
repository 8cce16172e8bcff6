"""Where dataset files live.

Resolution order for the *data root* (a folder holding ``<name>/``):

1. an explicit ``data_dir`` (``--data-dir``); it may also be the dataset folder itself;
2. the ``HETA_EVAL_DATA`` environment variable;
3. in a checkout, the cache ``datasets/cache/`` in the repository; installed (or when the
   checkout is not writable), ``~/.cache/heta-eval``.

>>> import os
>>> resolve_data_root("/data/beir")
PosixPath('/data/beir')
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "ENV_VAR",
    "DatasetNotFoundError",
    "dataset_dir",
    "default_cache_dir",
    "find_dataset",
    "looks_like_beir",
    "resolve_data_root",
]

ENV_VAR = "HETA_EVAL_DATA"
_ROOT = Path(__file__).resolve().parents[2]
_REPO_CACHE = _ROOT / "datasets" / "cache"
_HOME_CACHE = Path.home() / ".cache" / "heta-eval"


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
    return (_ROOT / "pyproject.toml").is_file() and (_ROOT / "heta_eval").is_dir()


def default_cache_dir() -> Path:
    """``<repo>/datasets/cache`` in a writable checkout, else ``~/.cache/heta-eval``."""
    return _REPO_CACHE if _in_checkout() and _writable(_REPO_CACHE) else _HOME_CACHE


def resolve_data_root(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder that holds (or will hold) ``<name>/``: explicit, then env, then cache."""
    if data_dir is not None:
        return Path(data_dir).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
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


def how_to_get(name: str, target: Path) -> str:
    """The instructions printed when ``name`` is missing."""
    from .registry import RegistryError, get_dataset

    try:
        url = get_dataset(name).url
    except RegistryError:
        url = None
    lines = [
        f"dataset {name!r} not found at {target}.",
        "Get it in one of these ways:",
        f"  * heta-eval datasets download {name.split('/')[0]}   (needs network)",
    ]
    if url:
        lines.append(f"  * download {url} elsewhere and unzip it into {target.parent}")
    lines.append(f"  * point {ENV_VAR} (or --data-dir) at a folder that holds {name}/")
    return "\n".join(lines)


def find_dataset(name: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder of an existing dataset, or :class:`DatasetNotFoundError` saying how to get it."""
    folder = dataset_dir(name, data_dir)
    if looks_like_beir(folder):
        return folder
    raise DatasetNotFoundError(how_to_get(name, folder))
