"""Library code carries no measured figures in its comments and docstrings.

A comment says why the code is as it is; a timing, a speed ratio, a machine or a date goes
stale there unseen. Measured figures live in the docs (docs/benchmarks.md, docs/encoding.md,
docs/install.md, docs/scale.md, ...), with the date and CPU they came from. This reads every
comment and docstring of ``heta_eval/`` and ``adapters/`` (doctest examples and their outputs
left out: they are checked by running them) and fails on a date or on the phrasing of a
measurement.
"""

from __future__ import annotations

import ast
import doctest
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ("heta_eval", "adapters")

#: What a measured figure looks like in prose, each with an example of what it caught.
PATTERNS = {
    # "measured 2026-12-05 on ..."
    "a date": r"\b20\d\d-[01]\d-[0-3]\d\b",
    # "about 6 µs a model", "30 ms to import"
    "a sub-second timing": r"\d\s?(µs|us|ms)\b",
    # "about 0.16 s", "costs ~0.1 s", "took 20 s and 820 MB", "(0.24 s for 7M rows)"
    "a timing": r"(\babout|~|\btook|\btakes|\bcosts?|\bran|\()\s?~?\d[\d.,]*(-\d[\d.,]*)?\s?"
    r"(s|seconds?|minutes?|hours?)\b",
    # "0.07-0.09 s of CPU"
    "CPU time": r"\d\s?(s|seconds?) of CPU\b",
    # "a third of a second", "tens of seconds", "about a second each"
    "a time in words": r"\b(a (third|quarter|half|tenth) of a second|tens of seconds"
    r"|about a second)\b",
    # "12x slower", "3x closer", "measured 0.85x float32", "(8x faster than ...)"
    "a speed ratio": r"\d(\.\d+)?\s?[x×]\s+(faster|slower|closer|quicker)\b|measured\s+\d[\d.]*\s?[x×]",
    # "five times slower", "three times faster", "twice as fast"
    "a ratio in words": r"\b(twice|two|three|four|five|six|ten|\d+) times (faster|slower)\b"
    r"|\btwice as (fast|slow)\b",
    # "10% faster", "20% longer", "~7% less speed", "took 45% of the time"
    "a percentage of time": r"\d\s?% (faster|slower|longer|shorter|less speed|more speed)\b"
    r"|\b(took|takes|spends?) (about |~)?\d+\s?% of the time\b",
    # "a third of its time", "a quarter of what ... does", "a third of the time"
    "a share of time": r"\ba (third|quarter|fifth|tenth) of (its|the) time\b"
    r"|\bcosts a (third|quarter|half) of what\b",
    # "SciFact nDCG@10 +0.0017 against float32", "one text at a time, −0.0012"
    "a measured score change": r"(?<![\w.])[+−]\d\.\d{3,}\b",
    # "min cosine to float32 0.985"
    "a measured cosine": r"\b(min|mean|least) cosine( to \w+)? \d\.\d+",
    # "on a two-core machine", "on 2 cores shared with other jobs"
    "a machine": r"\bon (a |this )?(\d+|two|four)[- ]cores?\b|\b(two|four|\d+)-core machine\b",
}
COMPILED = {name: re.compile(pattern, re.IGNORECASE) for name, pattern in PATTERNS.items()}

#: ``file: phrases`` allowed on purpose, each with its reason. None is needed now: what the
#: patterns leave alone on purpose (arithmetic on a constant, a behaviour, a shape, a version,
#: a fact of the data, route_defaults.py's record, which is data in strings) is in
#: ``test_the_patterns_catch_what_they_are_for``'s ``kept``.
ALLOWED: dict[str, tuple[str, ...]] = {}


def prose(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of each comment and docstring line of ``path``, doctests left out."""
    source = path.read_text(encoding="utf-8")
    lines = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    parser = doctest.DocTestParser()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not (node.body and isinstance(node.body[0], ast.Expr)):
            continue
        string = node.body[0].value
        if not (isinstance(string, ast.Constant) and isinstance(string.value, str)):
            continue
        offset = 0
        for part in parser.parse(string.value):
            if isinstance(part, str):
                for number, line in enumerate(part.split("\n")):
                    lines.append((string.lineno + offset + number, line))
                offset += part.count("\n")
            else:
                offset += part.source.count("\n") + part.want.count("\n")
    return lines


def library_files() -> list[Path]:
    return sorted(path for folder in LIBRARY for path in (ROOT / folder).rglob("*.py"))


def findings(files: list[Path]) -> list[str]:
    found = []
    for path in files:
        relative = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
        allowed = ALLOWED.get(relative, ())
        lines = sorted(prose(path))
        for index, (line, text) in enumerate(lines):
            # with the next line, so that a figure broken over two lines is read whole
            following = lines[index + 1][1] if index + 1 < len(lines) else ""
            following = following.strip().removeprefix("#:").removeprefix("#").strip()
            joined = f"{text} {following}"
            if any(phrase in joined for phrase in allowed):
                continue
            for name, pattern in COMPILED.items():
                for match in pattern.finditer(joined):
                    if match.start() < len(text):
                        found.append(
                            f"{relative}:{line}: {name}: {match.group(0)!r} in {text.strip()!r}"
                        )
    return found


def test_library_comments_hold_no_measured_figures() -> None:
    found = findings(library_files())
    assert not found, (
        "measured figures in library comments or docstrings: keep the reason, move the figure "
        "to the docs with its date and CPU\n" + "\n".join(found)
    )


def test_the_patterns_catch_what_they_are_for(tmp_path: Path) -> None:
    caught = {
        "# measured 2026-12-05 on a 2-core Xeon",
        "# about 6 µs a model",
        "# 30 ms to import: only here",
        "# costs ~0.1 s, too much for import time",
        "# (0.07-0.09 s of CPU after import numpy)",
        "# that takes a third of a second",
        "# 12x slower at 1M rows",
        "# bfloat16 measured 0.85x float32",
        "# IR inlining made the sort five times slower",
        "# twice as fast on 7,000 x 1,000",
        "# 128 ran 10% faster",
        "# these products took 45% of the time",
        "# spends a third of its time in Python",
        "# on 2 cores shared with other jobs",
        "# SciFact nDCG@10 +0.0017 against float32 with them",
        "# every layer static: min cosine to float32 0.985",
        "# every full collection walks them (about a second each)",
    }
    kept = {
        "# 65,536 x 384 float32 is 96 MB",  # arithmetic on a constant
        "# every 2 s at first, then every 2% of the time",  # behaviour
        "# the GELU outputs, 4x wider",  # a shape
        "# Ray (2.5x on) turns token authentication on",  # a version
        "# 71% of SciFact abstracts are truncated",  # a fact of the data
    }
    for number, text in enumerate(sorted(caught | kept)):
        module = tmp_path / f"probe{number}.py"
        module.write_text(f"{text}\nX = 1\n", encoding="utf-8")
        assert bool(findings([module])) == (text in caught), text


def test_a_figure_broken_over_two_lines_is_caught(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text("# the sort five\n# times slower\nX = 1\n", encoding="utf-8")
    assert findings([module]) == [
        f"{module}:1: a ratio in words: 'five times slower' in '# the sort five'"
    ]


def test_doctest_outputs_are_not_read(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text('"""Timing.\n\n>>> print("1.31 s")\n1.31 s\n"""\n', encoding="utf-8")
    assert [text for _, text in prose(module) if "1.31" in text] == []
