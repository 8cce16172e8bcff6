"""The self-contained Python examples of the README and the docs/ pages run as written, each
in a fresh namespace, one test per block (tests/test_readme_commands.py runs them all again,
with the shell commands, on a fresh clone)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCKS = [
    (page.relative_to(REPO).as_posix(), block)
    for page in PAGES
    for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
]
# The runner example encodes all of SciFact (minutes) and the compare example needs its
# results folder: both are exercised by tests/test_runner_scifact.py and tests/test_compare_*.
NEEDS_DATA = ("BeirBenchmark(", 'load_result_folder("results/')


def test_the_readme_and_docs_have_python_examples():
    assert sum(page == "README.md" for page, _ in BLOCKS) >= 1
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize(
    ("page", "block"),
    [(page, b) for page, b in BLOCKS if not any(marker in b for marker in NEEDS_DATA)],
    ids=lambda value: value if value.endswith(".md") else value.splitlines()[0][:40],
)
def test_example_runs(page, block, tmp_path, monkeypatch):
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    namespace: dict = {}
    exec(compile(block, page, "exec"), namespace)
