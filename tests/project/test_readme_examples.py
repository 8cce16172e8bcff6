"""The self-contained Python examples of the README and the docs/ pages run as written, each
in a fresh namespace, one test per block (tests/project/test_readme_commands.py runs them all again,
with the shell commands, on a fresh clone).

What a block shows is asserted: a line ``print(...)  # -> TEXT`` must print exactly ``TEXT``, and
an expression line ``expr  # -> VALUE`` must evaluate to something whose ``repr`` is ``VALUE``
(as the interpreter would echo it). A comment that is itself a Python value but not marked
``# ->`` fails the suite, so no shown value goes unchecked.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCKS = [
    (page.relative_to(REPO).as_posix(), block)
    for page in PAGES
    for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
]
# The runner example encodes all of SciFact (minutes) and the compare example needs its
# results folder: both are exercised by tests/runner/test_runner_scifact.py and tests/compare/test_compare_*.
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
    shown = expected_outputs(block)
    namespace: dict = {}
    seen: dict[int, list[str]] = {}
    namespace["print"] = recording_print(seen)
    namespace["__shown__"] = lambda line, value: (
        seen.setdefault(line, []).append(repr(value)) or value
    )
    exec(compile(marked(block, shown), page, "exec"), namespace)
    for line, text in shown.items():
        assert seen.get(line) == [text], (
            f"{page}: line {line} of the block shows {text!r}; it gave {seen.get(line)}"
        )


SHOWN = re.compile(r"#\s*->\s*(.*?)\s*$")


def expected_outputs(block: str) -> dict[int, str]:
    """Line number (1-based, in the block) -> the output its ``# ->`` comment shows."""
    found = {}
    for number, line in enumerate(block.splitlines(), 1):
        match = SHOWN.search(line)
        if match and not line.lstrip().startswith("#"):
            found[number] = match.group(1)
    return found


def recording_print(seen: dict[int, list[str]]):
    """``print`` that also keeps what it printed under the calling line of the block."""

    def record(*args, sep=" ", end="\n", **kwargs) -> None:
        print(*args, sep=sep, end=end, **kwargs)
        seen.setdefault(sys._getframe(1).f_lineno, []).append(sep.join(map(str, args)))

    return record


def marked(block: str, shown: dict[int, str]) -> ast.Module:
    """The block with each expression statement on a ``# ->`` line (other than a ``print``)
    wrapped in ``__shown__(line, ...)``, which keeps its ``repr``."""
    tree = ast.parse(block)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Expr) or node.end_lineno not in shown:
            continue
        call = node.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "print"
        ):
            continue
        line = ast.Constant(node.end_lineno)
        node.value = ast.Call(ast.Name("__shown__", ast.Load()), [line, call], [])
    return ast.fix_missing_locations(tree)


def test_every_value_a_block_shows_in_a_comment_is_marked_and_checked():
    unmarked = []
    for page, block in BLOCKS:
        for line in block.splitlines():
            code, _, comment = line.partition("  #")
            comment = comment.strip()
            if not code.strip() or not comment or comment.startswith("->"):
                continue
            try:
                ast.literal_eval(comment)
            except (ValueError, SyntaxError):
                continue
            unmarked.append(f"{page}: {line.strip()}")
    assert not unmarked, "shown values not marked '# ->' (so never compared):\n" + "\n".join(
        unmarked
    )


def test_the_docs_show_values_that_are_checked():
    shown = sum(len(expected_outputs(block)) for _, block in BLOCKS)
    assert shown >= 8, shown
