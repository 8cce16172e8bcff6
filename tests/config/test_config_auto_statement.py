"""One statement of what ``precision="auto"`` does: ``heta-eval run --help`` prints
``heta_eval.config.AUTO_PRECISION``, and the README and the docs that describe ``auto``
repeat it word for word; the statement matches what the code does by default."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from support.cpu_kinds import KIND_IDS, KINDS

from heta_eval.config import AUTO_PRECISION
from heta_eval.encoding.cpu import simulated_cpu
from heta_eval.encoding.precision import choose_precision, resolve_precision
from heta_eval.encoding.routes import resolve_route

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/encoding.md", "docs/knowledge-bases.md"]


def _words(text: str) -> str:
    """Text as a reader sees it: no markdown backticks, runs of whitespace as one space."""
    return " ".join(text.replace("`", "").split())


def test_run_help_prints_the_statement():
    done = subprocess.run(
        [sys.executable, "-m", "heta_eval", "run", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert _words(AUTO_PRECISION) in _words(done.stdout)


@pytest.mark.parametrize("page", PAGES)
def test_the_docs_repeat_the_statement(page):
    assert _words(AUTO_PRECISION) in _words((ROOT / page).read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES)
def test_no_page_says_auto_measures_by_default(page):
    text = _words((ROOT / page).read_text(encoding="utf-8"))
    for claim in (
        "auto on the CPU measures its routes",
        '"auto" **measures**',
        "fastest route measured on this machine",
    ):
        assert claim not in text, (page, claim)


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_the_statement_is_what_the_code_does_by_default(kind, monkeypatch, tmp_path):
    monkeypatch.delenv("HETA_EVAL_ENCODE_ROUTE", raising=False)
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path))
    assert choose_precision("cuda") == "float16"
    assert resolve_route("auto", "cuda", "all-MiniLM-L6-v2") == "torch-float16"
    # Unset, auto on each kind of CPU takes its default route: nothing is timed (no encoder
    # is given to time with) or written.
    with simulated_cpu(kind.cpu):
        assert resolve_route("auto", "cpu", "all-MiniLM-L6-v2", encoder=None) == kind.route
        assert resolve_precision("auto", "cpu") == kind.precision
    assert list(tmp_path.rglob("routes-*.json")) == []
    # Named in the statement: bfloat16 with AMX or AMD's AVX512-BF16, int8 through ONNX
    # Runtime on other x86 CPUs, float32 without AVX2 or ONNX Runtime.
    named = {"amx": "torch-bfloat16", "avx512-bf16-amd": "torch-bfloat16", "other": "torch-float32"}
    assert kind.route == named.get(kind.kind, "onnxruntime-int8")
    without = replace(kind.cpu, onnxruntime=False)
    with simulated_cpu(without):
        assert resolve_route("auto", "cpu", "all-MiniLM-L6-v2") == (
            "torch-float32" if kind.route == "onnxruntime-int8" else kind.route
        )
