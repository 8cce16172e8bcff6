"""What the docs' example transcripts show is what the commands print.

A ``text`` block of a docs page whose lines start with ``$ `` is a transcript: commands, each
followed by what it printed. tests/project/test_readme_commands.py runs every such command on a fresh
clone (exit status only); here each transcript is run as shown, in a temporary folder with
``../shared`` beside it, and its shown output compared with what the commands print: line
for line, or, where a line holds a measured time, the lines that do not (``TABLES_ONLY``).
A transcript that cannot run here is listed in ``NOT_COMPARED`` with the reason, and a new
transcript must be put in one of the two.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO, shared_path

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
#: Transcripts whose output lines hold a measured time: only the lines that are the same on
#: every machine (the dataset, the tables, the reference list) are compared.
TABLES_ONLY = {"$ make eval DATASET=scifact MODES=keyword_search"}
#: The command ``make eval`` runs (make's echo, the transcript's second line): run instead of
#: make, which would install first.
INSTEAD = {
    "make eval DATASET=scifact MODES=keyword_search": (
        "heta-eval run --dataset scifact --modes keyword_search --output results/scifact"
    )
}
NOT_COMPARED = {
    "$ heta-eval run --dataset scifact --data-dir ./my_dataset": "datasets.md: my_dataset/ is "
    "the reader's own edit of SciFact; tests/data/test_own_dataset.py pins that warning on "
    "an edited copy",
    **dict.fromkeys(
        (
            "$ heta-eval fuse results/scifact-1000",
            "$ heta-eval evaluate --dataset scifact --run results/scifact-1000",
            "$ heta-eval compare results/rrf.trec",
            "$ heta-eval fuse results/bm25-both.trec",
        ),
        "fusion.md: fusions of the whole SciFact's 1,000-deep dense run, whose numbers depend "
        "on the encoding route auto takes on the machine (bfloat16 there); "
        "tests/fusion/test_fusion_parity.py and tests/fusion/test_fusion.py check what the commands compute",
    ),
}


def transcripts() -> list[tuple[str, str]]:
    """``(page, block)`` for every text block holding a ``$ `` command."""
    found = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for language, body in FENCE.findall(page.read_text(encoding="utf-8")):
            if language in ("text", "console") and any(
                line.startswith("$ ") for line in body.splitlines()
            ):
                found.append((page.relative_to(REPO).as_posix(), body))
    return found


def split(block: str) -> tuple[list[str], list[str]]:
    """The commands (continuations joined) and the lines shown after the last of them."""
    commands: list[str] = []
    shown: list[str] = []
    pending = None
    for line in block.splitlines():
        if pending is not None:
            pending += " " + line.strip()
            if not line.rstrip().endswith("\\"):
                commands.append(pending.replace("\\ ", ""))
                pending = None
            continue
        if line.startswith("$ "):
            shown = []
            if line.rstrip().endswith("\\"):
                pending = line[2:].rstrip()
            else:
                commands.append(line[2:])
        else:
            shown.append(line)
    return commands, shown


def _key(block: str) -> str:
    return block.splitlines()[0].split(" \\")[0]


def _not_compared(block: str) -> str | None:
    first = _key(block)
    return next((why for start, why in NOT_COMPARED.items() if first.startswith(start)), None)


def test_every_transcript_is_compared_or_says_why_not():
    blocks = transcripts()
    assert len(blocks) >= 4
    compared = [b for _, b in blocks if _not_compared(b) is None]
    assert len(compared) >= 3
    # Each exception names a transcript that exists.
    for start in NOT_COMPARED:
        assert any(_key(b).startswith(start) for _, b in blocks), start


def _run(commands: list[str], tmp_path: Path) -> str:
    work = tmp_path / "checkout"
    work.mkdir()
    (tmp_path / "shared").symlink_to(shared_path())
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HETA_EVAL_CACHE_DIR": str(tmp_path / "cache"),
        "HETA_EVAL_DATA": str(shared_path("datasets", "beir")),
        "COLUMNS": "100",
    }
    script = "set -e\n" + "\n".join(INSTEAD.get(c, c) for c in commands)
    done = subprocess.run(
        ["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize(
    ("page", "block"),
    [(p, b) for p, b in transcripts() if _not_compared(b) is None],
    ids=lambda value: value if value.endswith(".md") else _key(value)[:50],
)
def test_a_transcript_prints_what_it_shows(page, block, tmp_path):
    commands, shown = split(block)
    # The Makefile passes the shared data's absolute path; the page shows it as /path/to/shared.
    printed = _run(commands, tmp_path).replace(str(shared_path()), "/path/to/shared").splitlines()
    if _key(block) in TABLES_ONLY:
        # make's echo of its command, then the report: compare its tables and reference list.
        stable = re.compile(r"^(\||- (Pyserini|MTEB|dataset: scifact|system)|Published)")
        shown = [line for line in shown[1:] if stable.match(line)]
        printed = [line for line in printed if stable.match(line)]
        assert len(shown) >= 5, page
    strip = [line.rstrip() for line in shown]
    while strip and not strip[-1]:
        strip.pop()
    assert [line.rstrip() for line in printed] == strip, f"{page}: {_key(block)}"
