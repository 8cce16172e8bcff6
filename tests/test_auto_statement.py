"""One statement of what ``precision="auto"`` does: ``heta-eval run --help`` prints
``heta_eval.config.AUTO_PRECISION``, and the README and the docs that describe ``auto``
repeat it word for word; the statement matches what the code does by default."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from heta_eval.config import AUTO_PRECISION
from heta_eval.kb.precision import choose_precision, resolve_precision
from heta_eval.kb.routes import resolve_route

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["README.md", "docs/encoding.md", "docs/knowledge-bases.md"]


def _words(text: str) -> str:
    """Text as a reader sees it: no markdown backticks, runs of whitespace as one space."""
    return " ".join(text.replace("`", "").split())


def test_run_help_prints_the_statement():
    done = subprocess.run([sys.executable, "-m", "heta_eval", "run", "--help"],
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    assert _words(AUTO_PRECISION) in _words(done.stdout)


@pytest.mark.parametrize("page", PAGES)
def test_the_docs_repeat_the_statement(page):
    assert _words(AUTO_PRECISION) in _words((ROOT / page).read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES)
def test_no_page_says_auto_measures_by_default(page):
    text = _words((ROOT / page).read_text(encoding="utf-8"))
    for claim in ("auto on the CPU measures its routes", '"auto" **measures**',
                  "fastest route measured on this machine"):  # fmt: skip
        assert claim not in text, (page, claim)


def test_the_statement_is_what_the_code_does_by_default(monkeypatch, tmp_path):
    monkeypatch.delenv("HETA_EVAL_ENCODE_ROUTE", raising=False)
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path))
    amd, intel = "AuthenticAMD", "GenuineIntel"
    assert choose_precision("cuda") == "float16"
    assert choose_precision("cpu", {"amx_bf16", "avx512_bf16", "avx2"}, intel) == "bfloat16"
    assert choose_precision("cpu", {"avx512_bf16", "avx512f", "avx2"}, amd) == "bfloat16"
    assert choose_precision("cpu", {"avx512_bf16", "avx512f", "avx2"}, intel) == "int8"
    assert choose_precision("cpu", {"avx2"}, amd) == "int8"
    assert choose_precision("cpu", set(), "ARM") == "float32"
    # Unset, auto on this CPU takes the flag rule's route: nothing is timed or written.
    route = resolve_route("auto", "cpu", "all-MiniLM-L6-v2", encoder=None)
    routes = {"float32": "torch-float32", "bfloat16": "torch-bfloat16", "int8": "onnxruntime-int8"}
    assert route == routes[resolve_precision("auto", "cpu")]
    assert list(tmp_path.rglob("routes-*.json")) == []
