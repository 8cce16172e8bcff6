"""Compiled kernels are cached under the cache root (``numba/``, see
:func:`heta_eval.config.numba_cache_dir`), never beside the package's source: the first
``evaluate_run`` of a new process loads them instead of compiling, also when the package is
installed where nothing may be written.

Real processes: a copy of the package (nothing cached beside it), a fresh cache root, and
numba's own counts of what each kernel compiled (cache misses) and loaded (cache hits)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.system  # a real multi-process system: `make test-system`

pytest.importorskip("numba")

REPO = Path(__file__).resolve().parents[2]

FIRST_CALL = """
import importlib, json, pkgutil
import numpy as np
import heta_eval
import heta_eval.providers.kernels as kernels
from heta_eval import evaluate_run


rng = np.random.default_rng(0)
qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(20)} for i in range(50)}
run = {f"q{i}": {f"d{j}": float(rng.random()) for j in range(100)} for i in range(50)}
evaluate_run(qrels, run, engine="fast")
hits = misses = 0
for found in pkgutil.iter_modules(kernels.__path__):
    module = importlib.import_module(f"{kernels.__name__}.{found.name}")
    for value in vars(module).values():
        stats = getattr(value, "stats", None)
        if stats is not None and hasattr(stats, "cache_misses"):
            hits += sum(stats.cache_hits.values())
            misses += sum(stats.cache_misses.values())
print(json.dumps({"package": heta_eval.__file__, "hits": hits, "misses": misses}))
"""


def first_call(site: Path, cache: Path, **env: str) -> dict:
    environment = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    environment.update(PYTHONPATH=str(site), HETA_EVAL_CACHE_DIR=str(cache), **env)
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALL],
        env=environment,
        cwd=site,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The package copied as an installer would lay it out, with no cache of any kind."""
    root = tmp_path_factory.mktemp("site-packages")
    skip = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc")
    shutil.copytree(REPO / "heta_eval", root / "heta_eval", symlinks=True, ignore=skip)
    shutil.copytree(REPO / "adapters", root / "adapters", ignore=skip)
    return root


def cached_beside(folder: Path) -> list[Path]:
    return [*folder.rglob("*.nbi"), *folder.rglob("*.nbc")]


def test_a_new_process_loads_the_kernels_the_first_one_compiled(site, tmp_path) -> None:
    cache = tmp_path / "cache"
    first = first_call(site, cache)
    assert first["package"] == str(site / "heta_eval" / "__init__.py")
    assert first["misses"] > 0  # compiled: nothing was cached yet
    assert list((cache / "numba").rglob("*.nbi")), "no kernel cached under the cache root"

    second = first_call(site, cache)
    assert second["misses"] == 0, second  # nothing compiled
    assert second["hits"] > 0, second  # loaded from the cache
    assert cached_beside(site) == []  # a read-only install would do the same


def test_numba_cache_dir_chooses_another_folder(site, tmp_path) -> None:
    chosen = tmp_path / "kernels"
    first_call(site, tmp_path / "cache", NUMBA_CACHE_DIR=str(chosen))
    assert list(chosen.rglob("*.nbi"))
    assert not (tmp_path / "cache" / "numba").exists()
