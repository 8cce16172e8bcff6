"""The README's self-contained Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
# The runner example encodes all of SciFact (minutes) and the compare example needs its
# results folder: both are exercised by tests/test_runner_scifact.py and tests/test_compare_*.
NEEDS_DATA = ("BeirBenchmark(", 'load_result_folder("results/')


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize(
    "block",
    [b for b in BLOCKS if not any(marker in b for marker in NEEDS_DATA)],
    ids=lambda b: b.splitlines()[0][:40],
)
def test_readme_example_runs(block, tmp_path, monkeypatch):
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
