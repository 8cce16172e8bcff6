"""CI's oracle: ``.ci/build-trec-eval`` (which ``.ci/run`` calls) builds trec_eval 9.0.8 from
``../shared/reference/trec_eval-9.0.8`` in a clean checkout with ``shared/`` beside it, as CI
has it, and the binary it prints answers as the pinned outputs say trec_eval does. Skipped
without the source, or without make and a C compiler (CI has both)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.paths import REPO, shared_path
from support.trec_eval_levels_corpus import REFERENCE


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A folder holding only the repository's ``.ci/``, with ``../shared`` beside it."""
    source = shared_path("reference", "trec_eval-9.0.8")
    if not (shutil.which("make") and (shutil.which("cc") or shutil.which("gcc"))):
        pytest.skip("no make or C compiler here to build trec_eval with")
    clone = tmp_path / "clone"
    shutil.copytree(REPO / ".ci", clone / ".ci")
    (tmp_path / "shared").symlink_to(source.parents[1])
    return clone


def test_ci_builds_trec_eval_from_the_shared_source_on_a_clean_checkout(checkout, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("TREC_EVAL", "TREC_EVAL_SRC")}
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [checkout / ".ci" / "build-trec-eval"], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    binary = Path(done.stdout.strip())
    assert binary.is_file() and binary.parent.parent == tmp_path
    # trec_eval's own test files, its default measures: the bytes pinned from the binary.
    pinned = json.loads(gzip.decompress(REFERENCE.read_bytes()))
    case = next(c for c in pinned if c["argv"] == ["qrels.test", "results.test"])
    tests = shared_path("reference", "trec_eval-9.0.8", "test")
    out = subprocess.run([binary, *case["argv"]], cwd=tests, capture_output=True, timeout=60)
    assert (out.returncode, out.stdout.decode("latin-1")) == (0, case["c_stdout"])


def test_without_the_source_it_says_so_in_one_line(checkout, tmp_path):
    done = subprocess.run(
        [checkout / ".ci" / "build-trec-eval", str(tmp_path / "nothing")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"build-trec-eval: no trec_eval source (trec_eval.c, Makefile) in {tmp_path / 'nothing'}"
    ]
