"""``heta-eval trec_eval`` with ``-N``, ``-o``, ``-Z`` and ``-D`` against trec_eval 9.0.8's
own outputs, byte for byte: seeded random cases (``tests/data/trec_eval_options.json``,
made with the C binary by ``tests/trec_eval_levels_corpus.py --options``) and cases chosen
by hand. Where trec_eval refuses or crashes: one line on stderr, exit status 2."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from trec_eval_levels_corpus import OPTIONS_CORPUS, options_corpus

from heta_eval.cli import main
from heta_eval.io.trec import TrecFormatError
from heta_eval.trec_eval import evaluate_options, parse_options, report_lines
from heta_eval.trec_eval.options import TrecEvalUsageError

CASES = json.loads(OPTIONS_CORPUS.read_text())
BINARY = os.environ.get("TREC_EVAL", "/tmp/trec_eval-src/trec_eval")


def mismatch(case: dict, folder: Path) -> str | None:
    """What differs between the library's output for ``case`` and the binary's (None: same)."""
    (folder / "qrels").write_text(case["qrels"])
    (folder / "run").write_text(case["run"])
    if "zscores" in case:
        (folder / "zscores").write_bytes(case["zscores"].encode())
    argv = [str(folder / w) if w == "zscores" else w for w in case["argv"]]
    try:
        options = parse_options([*argv, str(folder / "qrels"), str(folder / "run")])
        text = "".join(f"{line}\n" for line in report_lines(options, evaluate_options(options)))
    except (TrecEvalUsageError, TrecFormatError, ValueError) as error:
        if case["c_stdout"] is None:
            return None
        return f"refused what trec_eval prints: {error}"
    if case["c_stdout"] is None:
        return f"printed where trec_eval fails (status {case['c_status']})"
    if text != case["c_stdout"]:
        ours, theirs = text.splitlines(), case["c_stdout"].splitlines()
        diff = [(a, b) for a, b in zip(ours, theirs, strict=False) if a != b][:3]
        return f"output differs ({len(ours)} / {len(theirs)} lines): {diff}"
    return None


def test_cases_cover_every_option():
    argvs = [" ".join(case["argv"]) for case in CASES]
    for needle in ("-N ", "-Z ", "-D ", "-o", "--Out", "utility.", "-D 0.", "-q", "-c", "-J"):
        assert sum(needle in argv for argv in argvs) >= 5, needle
    zscored = [case for case in CASES if "zscores" in case]
    assert sum(case["c_stdout"] is not None for case in zscored) > 0.5 * len(zscored)
    assert sum(case["c_status"] < 0 for case in zscored) >= 3  # crashed: lookups past the end


@pytest.mark.parametrize("index", range(len(CASES)))
def test_random_case_prints_what_trec_eval_prints(index, tmp_path):
    assert mismatch(CASES[index], tmp_path) is None, CASES[index]["argv"]


@pytest.mark.skipif(not shutil.which(BINARY), reason="trec_eval 9.0.8 binary not built")
def test_live_against_the_binary():
    assert options_corpus(BINARY, 40, fresh=True) == 0
