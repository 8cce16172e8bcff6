"""The baselines ``make bench`` reads from elsewhere are found where the scripts look: the
Lucene tokenizer bench loads its regex baseline from git history at its default revision
(from before the rooms of issue 50 moved the module: the move once turned that row into an
error), and gives the tokens today's tokenizer gives, as the row's ``identical`` claims. Skipped where the checkout has no history."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from support.paths import REPO


def _bench_module(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


def test_the_tokenizer_bench_loads_its_baseline_from_history():
    bench = _bench_module("bench_lucene_tokenizer")
    revision = "62740e8"
    known = subprocess.run(
        ["git", "-C", str(REPO), "cat-file", "-e", f"{revision}^{{commit}}"], capture_output=True
    )
    if known.returncode != 0:
        pytest.skip(f"this checkout does not hold {revision} (a shallow clone)")
    old = bench.baseline_tokenizer(revision)
    text = "BM25 ranks 5,183 documents; U.S.A. e-mail x@y.org"
    expected = ["BM25", "ranks", "5,183", "documents", "U.S.A", "e", "mail", "x", "y.org"]
    assert list(old(text)) == expected
    assert list(bench.standard_tokens(text)) == expected


def test_an_unknown_revision_is_one_line_naming_it():
    bench = _bench_module("bench_lucene_tokenizer")
    with pytest.raises(SystemExit, match="no tokenizer module at 0000000"):
        bench.baseline_tokenizer("0000000")


def test_the_trec_eval_bench_says_why_it_has_no_binary(tmp_path, monkeypatch):
    """Without ``TREC_EVAL`` the bench builds the oracle as CI does; with no source to build
    from, its rows name what the build script said instead of a path that never existed."""
    monkeypatch.setenv("TREC_EVAL_SRC", str(tmp_path))
    bench = _bench_module("bench_trec_eval")
    found = bench.built_trec_eval()
    assert found.startswith("(none: .ci/build-trec-eval said ")
    assert str(tmp_path) in found
