"""Every command of the README and of the docs/ pages runs as written, in order, on a fresh clone.

The repository's committed HEAD is cloned into a temporary folder with ``../shared`` beside it
(as CI has it), and one bash session runs the README and then each page of ``docs/`` (in
``PAGES`` order, then the others alphabetically), each in its own order: each line of every
``bash`` block, each ``$ `` command of the example transcripts, and each ``python`` block (in
a fresh interpreter in the clone). Each command runs once, wherever it is shown; the README
goes first, so a page may use what its quick start made. Any non-zero exit fails the test
with the page, the step and its output.

To fit CI's budget, ``HETA_EVAL_DATA`` points at a small SciFact made from the real one (all
300 test queries and their judgments, the judged documents and 200 others), so encoding it
takes seconds; the clone's ``.venv/bin`` holds wrappers around this interpreter instead of
``make install``; ``my_run.trec``, ``my_cases.jsonl``, ``my_docs/``, ``my_corpus.npy`` and ``my_dataset/`` (the
docs' names for your own files) are made in the clone first. ``NOT_RUN`` and ``NOT_RUN_IF`` list the lines
left out, and why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO, shared_path
from support.scifact_data import small_scifact

# The README first (its quick start makes results/scifact and puts heta-eval on PATH), then
# the pages in this order. A page may use what the README made, never what another page made
# (a reader may open any page first). Pages not named here run after these, alphabetically.
PAGES = (
    "README.md",
    "docs/install.md",
    "docs/evaluators.md",
    "docs/retrieval-core.md",
    "docs/answers.md",
    "docs/datasets.md",
    "docs/trec_eval.md",
    "docs/cli.md",
    "docs/knowledge-bases.md",
    "docs/bm25.md",
    "docs/encoding.md",
    "docs/running.md",
    "docs/scifact-claims.md",
    "docs/compare.md",
    "docs/ray.md",
)
NOT_RUN = {
    "make test": "it is this test suite: running it here would recurse",
    "make bench": "timed benchmarks, minutes, not part of make test (it has its own target)",
    "make repro": "checks the numbers of the full SciFact corpus against the references, and this "
    "test runs on a slice of it (tests/runner/test_runner_scifact.py pins the full BM25 numbers)",
}
NOT_RUN_IF = {
    r"--ray (auto|ray://|\d)|RAY=auto": "needs a running Ray cluster; tests/scale/test_scale_ray.py "
    "starts a real two-node one (the --ray local lines run here)",
    r"--judge\b": "calls an OpenAI-compatible chat server; tests/rag/test_judge_spending.py runs "
    "--judge, its options and --dry-run against one on loopback",
    r"--kb-url http://localhost": "needs your own service; tests/systems/test_kb_service_auth.py runs "
    "--kb-url with --kb-header, HETA_EVAL_KB_TOKEN and --rate against a loopback server that "
    "requires the headers and measures the rate",
    r"^export (RAG_API_KEY|HETA_EVAL_KB_TOKEN)=\.\.\.": "placeholders for your secrets, used "
    "only by the --kb-url example below them",
    r"scifact-train|-both\.trec": "fusion.md's tuning on SciFact's training split: the slice of "
    "SciFact this test runs on holds only the test split; tests/fusion/test_fusion.py tunes on one "
    "split and reports on another (tune_on_split, heta-eval fuse --optimize)",
    r"--rerank cross-encoder/": "downloads the public cross-encoder (no network in CI); "
    "tests/rerank/test_rerank.py runs the same path on a cross-encoder built offline",
    r"bench/gpu_": "needs a CUDA GPU and the model folder it names (no test depends on a GPU; "
    "tests/encoding/test_dense_tokenization.py pins the tokenization it measures)",
}
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# Command lines shown in blocks that are not run (`text` without `$ `, untagged): each must be
# listed here with the reason it is an illustration, not an example to run.
ILLUSTRATIONS = {
    "heta-eval trec_eval [-q] [-c] [-n] [-J] [-m MEASURE[.PARAMS]]... [-l LEVEL] [-M N] "
    "[-N N]": "trec_eval.md's usage synopsis (options in brackets), not a command; "
    "the page's examples below it run",
    ".venv/bin/heta-eval run --dataset scifact --modes keyword_search --output results/scifact": (
        "running.md: make's echo of what `$ make eval` (run just above it) runs: output"
    ),
    "make lucene-oracle                                   # all three below, on SciFact": (
        "bm25.md: the Lucene oracle needs Java and the Anserini jar (developer tooling, not part of make test); its pinned cases run in tests/lucene/test_lucene_analysis.py"
    ),
    "python -m tools.lucene_oracle.oracle tokens PATH...  # text files, folders, BEIR corpus/queries .jsonl": (
        "bm25.md: the Lucene oracle needs Java and the Anserini jar (developer tooling, not part of make test); its pinned cases run in tests/lucene/test_lucene_analysis.py"
    ),
    "python -m tools.lucene_oracle.oracle codepoints      # every code point in 7 contexts, 200,000": (
        "bm25.md: the Lucene oracle needs Java and the Anserini jar (developer tooling, not part of make test); its pinned cases run in tests/lucene/test_lucene_analysis.py"
    ),
    "python -m tools.lucene_oracle.oracle bm25 BEIR_DIR   # Anserini's flat and multifield runs vs": (
        "bm25.md: the Lucene oracle needs Java and the Anserini jar (developer tooling, not part of make test); its pinned cases run in tests/lucene/test_lucene_analysis.py"
    ),
    "python -m tools.lucene_oracle.oracle classes         # regenerate the class table from the jar": (
        "bm25.md: the Lucene oracle needs Java and the Anserini jar (developer tooling, not part of make test); its pinned cases run in tests/lucene/test_lucene_analysis.py"
    ),
    "python -m tools.lucene_oracle.oracle pins            # regenerate tests/support/data/lucene_tokens.json": (
        "bm25.md: the Lucene oracle needs Java and the Anserini jar (developer tooling, not part of make test); its pinned cases run in tests/lucene/test_lucene_analysis.py"
    ),
}
COMMAND_LINE = re.compile(r"^(heta-eval|make|python|\.venv/bin/\S+) (?!\S*: (error|warning|note))")


def logical_lines(block: str) -> list[str]:
    """Lines with ``\\`` continuations joined."""
    lines: list[str] = []
    pending = ""
    for line in block.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    return lines


def page_steps(text: str) -> list[tuple[str, str]]:
    """``(kind, code)`` in page order: ``shell`` commands and ``python`` blocks."""
    steps: list[tuple[str, str]] = []
    for language, body in FENCE.findall(text):
        if language == "python":
            steps.append(("python", body))
        elif language in ("bash", "sh", "shell"):
            steps += [("shell", line) for line in logical_lines(body) if line.strip()]
        elif language in ("text", "console"):
            steps += [("shell", line[2:]) for line in logical_lines(body) if line.startswith("$ ")]
    return steps


def illustrations(text: str) -> list[str]:
    """Command lines in blocks that are not run: untagged blocks and ``text`` blocks' lines
    without ``$ `` (error messages a command prints are output, not commands)."""
    found = []
    for language, body in FENCE.findall(text):
        if language in ("", "text", "console"):
            found += [line for line in logical_lines(body) if COMMAND_LINE.match(line)]
    return found


def pages(root: Path) -> list[str]:
    """The README and every docs page, in the order they run."""
    others = sorted(f"docs/{p.name}" for p in (root / "docs").glob("*.md"))
    return [*PAGES, *(page for page in others if page not in PAGES)]


def all_steps(root: Path) -> list[tuple[str, str, str]]:
    """``(page, kind, code)`` for every page, in running order."""
    return [
        (page, kind, code)
        for page in pages(root)
        for kind, code in page_steps((root / page).read_text(encoding="utf-8"))
    ]


def command_of(line: str) -> str:
    return line.split(" #")[0].strip()


def not_run(command: str) -> str | None:
    """Why ``command`` is left out, or None."""
    if command in NOT_RUN:
        return NOT_RUN[command]
    return next((why for pattern, why in NOT_RUN_IF.items() if re.search(pattern, command)), None)


def test_every_command_shown_but_not_run_is_listed_with_why():
    shown = {
        line: page
        for page in pages(REPO)
        for line in illustrations((REPO / page).read_text(encoding="utf-8"))
    }
    unlisted = {line: page for line, page in shown.items() if line not in ILLUSTRATIONS}
    assert not unlisted, (
        "commands shown in blocks the docs test does not run: make them runnable (a bash "
        f"block or a `$ ` line) or list them in ILLUSTRATIONS with why: {unlisted}"
    )
    assert set(ILLUSTRATIONS) <= set(shown), "ILLUSTRATIONS lists a line the pages lost"


def test_the_documented_commands_are_found():
    assert all((REPO / page).exists() for page in PAGES), "PAGES names a page that is gone"
    steps = all_steps(REPO)
    commands = [command_of(code) for _, kind, code in steps if kind == "shell"]
    assert "make eval DATASET=scifact" in commands
    assert "make eval DATASET=scifact MODES=keyword_search" in commands
    assert any(c.startswith("heta-eval leaderboard") for c in commands)
    assert any(c.startswith("heta-eval trec_eval") for c in commands)
    assert sum(kind == "python" for _, kind, _ in steps) >= 10
    assert set(NOT_RUN) <= set(commands)  # nothing listed here that the pages lost
    for pattern in NOT_RUN_IF:
        assert any(re.search(pattern, c) for c in commands), f"nothing matches {pattern!r}"
    readme = [command_of(code) for page, kind, code in steps if page == "README.md"]
    # The README's quick start: the main job, then the tests; nothing before them.
    assert readme[:2] == ["make eval DATASET=scifact", "make test"]


def fresh_clone(tmp_path: Path) -> Path:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    clone = tmp_path / "heta-eval"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(REPO), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", head], check=True)
    (tmp_path / "shared").symlink_to(shared_path("datasets").parent)
    # make install's result, without the install: this interpreter, the clone's code.
    bin_dir = clone / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, tail in (("python", ""), ("heta-eval", " -m heta_eval")):
        (bin_dir / name).write_text(f'#!/bin/sh\nexec "{sys.executable}"{tail} "$@"\n')
        (bin_dir / name).chmod(0o755)
    return clone


def own_dataset(source: Path, target: Path, queries: int = 30, others: int = 300) -> None:
    """A dataset of your own in the BEIR layout: SciFact's first ``queries`` judged test
    queries, the documents they judge and ``others`` more."""
    (target / "qrels").mkdir(parents=True)
    lines = (source / "qrels" / "test.tsv").read_text().splitlines(keepends=True)
    kept = [
        line
        for line in lines[1:]
        if line.split("\t")[0] in dict.fromkeys(row.split("\t")[0] for row in lines[1:][:queries])
    ]
    (target / "qrels" / "test.tsv").write_text(lines[0] + "".join(kept))
    shutil.copy(source / "queries.jsonl", target / "queries.jsonl")
    judged = {line.split("\t")[1] for line in kept}
    with (source / "corpus.jsonl").open() as corpus, (target / "corpus.jsonl").open("w") as out:
        for line in corpus:
            if json.loads(line)["_id"] in judged or others > 0:
                others -= json.loads(line)["_id"] not in judged
                out.write(line)


def your_own_files(clone: Path, run_file: Path, scifact: Path, small: Path) -> None:
    """What the README calls my_run.trec, my_cases.jsonl, my_docs/ and my_corpus.npy (vectors
    of the small SciFact's documents, as MiniLM's queries are: 384 dimensions, unit length),
    and what docs/datasets.md calls my_dataset/."""
    import numpy as np

    own_dataset(scifact, clone / "my_dataset")
    rows = sum(1 for _ in (small / "scifact" / "corpus.jsonl").open())
    vectors = np.random.default_rng(0).normal(size=(rows, 384)).astype(np.float32)
    np.save(clone / "my_corpus.npy", vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    shutil.copy(run_file, clone / "my_run.trec")
    (clone / "my_docs").mkdir()
    (clone / "my_docs" / "paris.md").write_text("# Paris\n\nParis is the capital of France.\n")
    (clone / "my_docs" / "rome.txt").write_text("Rome is the capital of Italy.\n")
    cases = [
        {"id": "q1", "query": "capital of France", "expected": {"relevance": {"paris": 1}}},
        {"id": "q2", "query": "capital of Italy", "expected": {"relevance": {"rome": 1}}},
    ]
    (clone / "my_cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))


def session_script(steps: list[tuple[str, str, str]]) -> tuple[str, list[str]]:
    """One bash script running every step, echoing a marker before each; and the steps."""
    parts = ["set -e"]
    labels: list[str] = []
    for page, kind, code in steps:
        if kind == "shell" and not_run(command_of(code)):
            continue
        step = code if kind == "shell" else "python: " + code.strip().splitlines()[0]
        labels.append(f"{page}: {step}")
        parts.append(f"echo '@@step {len(labels) - 1}' >&2")
        if kind == "shell":
            parts.append(code)
        else:
            parts.append(f".venv/bin/python - <<'HETA_README_EOF'\n{code}HETA_README_EOF")
    return "\n".join(parts) + "\n", labels


@pytest.mark.system
def test_every_command_of_the_readme_and_docs_runs_as_written_on_a_fresh_clone(
    tmp_path, scifact_dir, scifact_run_file
):
    clone = fresh_clone(tmp_path)
    small_scifact(scifact_dir, tmp_path / "small-beir")
    your_own_files(clone, scifact_run_file, scifact_dir, tmp_path / "small-beir")
    script, labels = session_script(all_steps(clone))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("HETA_EVAL", "PYTHON"))},
        "PYTHONPATH": str(clone),
        "HETA_EVAL_DATA": str(tmp_path / "small-beir"),
        "HETA_EVAL_CACHE_DIR": str(tmp_path / "kb-cache"),
        "MPLBACKEND": "Agg",
        # `--ray local` starts its own cluster whatever Ray's environment points at (it
        # once joined the newest cluster on the machine): nothing listens on port 9.
        "RAY_ADDRESS": "127.0.0.1:9",
    }
    done = subprocess.run(
        ["bash", "-c", script], cwd=clone, env=env, capture_output=True, text=True, timeout=1500
    )
    steps_run = re.findall(r"@@step (\d+)", done.stderr)
    last = int(steps_run[-1]) if steps_run else 0
    assert done.returncode == 0, (
        f"step failed: {labels[last]!r}\n--- stdout (tail)\n{done.stdout[-3000:]}"
        f"\n--- stderr (tail)\n{done.stderr[-3000:]}"
    )
    assert len(steps_run) == len(labels)
    assert (clone / "board.png").stat().st_size > 0
    assert (clone / "results" / "scifact-claims" / "summary.json").exists()
    assert (clone / "results" / "sweep" / "leaderboard.md").exists()
