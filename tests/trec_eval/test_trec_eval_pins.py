"""Every trec_eval output pinned under ``tests/support/data`` is what trec_eval 9.0.8's binary prints
today: the replays that run without the binary (``test_trec_eval_*``, ``test_reader_grammar``,
``test_measure_trec_eval_binary``) are only as good as their pins, so with the binary at hand
(CI builds it from ``../shared/reference/trec_eval-9.0.8``) each pinned case is run again on it
and must give the same exit status and the same bytes. Live comparisons: skipped without the
binary (tests/conftest.py)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess

import pytest
from support.paths import DATA, shared_path
from support.trec_eval_corpus import run_case
from support.trec_eval_engine_corpus import large_case
from support.trec_eval_findings import ARGVS, FINDINGS, files_of
from support.trec_eval_levels_corpus import REFERENCE
from support.trec_eval_pinned import BINARY, needs_binary
from support.trec_eval_refusals import binary_reason, case_key, pinned

CORPORA = ["engine", "fuzz", "levels", "options", "prefs", "qrels_jg"]


def _differences(cases: list[dict], run) -> list[str]:
    """Each case whose status or output on the binary is not the pinned one (``run(case)``
    gives the binary's ``CompletedProcess``)."""
    found = []
    for case in cases:
        done = run(case)
        stdout = done.stdout.decode("latin-1") if done.returncode == 0 else None
        if (done.returncode, stdout) != (int(case["c_status"]), case["c_stdout"]):
            found.append(f"{case['argv']}: exit {done.returncode}, pinned {case['c_status']}")
    return found


@needs_binary
@pytest.mark.parametrize("corpus", CORPORA)
def test_each_pinned_case_is_what_the_binary_prints(corpus, tmp_path):
    cases = json.loads((DATA / f"trec_eval_{corpus}.json").read_text())
    # The engine's large runs are pinned by their seed: their files are made again.
    cases = [{**large_case(c["seed"], c["argv"]), **c} if "seed" in c else c for c in cases]
    wrong = _differences(cases, lambda case: run_case(BINARY, case, tmp_path))
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, e.g. {wrong[:3]}"


@needs_binary
def test_the_outputs_on_trec_eval_s_own_test_files_are_the_binarys():
    folder = shared_path("reference", "trec_eval-9.0.8", "test")
    cases = json.loads(gzip.decompress(REFERENCE.read_bytes()))

    def run(case: dict) -> subprocess.CompletedProcess:
        argv = case["argv"]
        return subprocess.run([BINARY, *argv], cwd=folder, capture_output=True, timeout=60)

    wrong = _differences(cases, run)
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, e.g. {wrong[:3]}"


@needs_binary
def test_the_findings_are_the_binarys(tmp_path):
    pinned = json.loads(FINDINGS.read_text())
    assert set(pinned) == set(ARGVS)
    for name, argv in ARGVS.items():
        qrels, run = files_of(name)
        (tmp_path / "qrels").write_text(qrels)
        (tmp_path / "run").write_text(run)
        done = subprocess.run([BINARY, *argv, "qrels", "run"], cwd=tmp_path, capture_output=True)
        printed = done.stdout.decode("latin-1") if done.returncode == 0 else None
        assert printed == pinned[name], name


@needs_binary
def test_the_refusal_reasons_are_the_binarys(tmp_path):
    reasons = pinned()
    by_key = {}
    for corpus in CORPORA:
        for case in json.loads((DATA / f"trec_eval_{corpus}.json").read_text()):
            by_key.setdefault(case_key(case), case)
    wrong = [
        key
        for key, entry in reasons.items()
        if binary_reason(BINARY, by_key[key], tmp_path) != entry["binary"]
    ]
    assert not wrong, f"{len(wrong)} of {len(reasons)} differ, e.g. {wrong[:3]}"


@needs_binary
def test_the_measure_oracle_is_the_binarys():
    spec = importlib.util.spec_from_file_location("oracle", DATA / "make_trec_measure_oracle.py")
    oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracle)
    pinned = json.loads((DATA / "trec_measure_oracle.json").read_text())
    for case in pinned["cases"]:
        qrels, run = oracle.random_case(case["seed"])
        assert (qrels, run) == (case["qrels"], case["run"]), case["seed"]
        for measure in pinned["specs"]:
            for form, complete in (("plain", False), ("complete", True)):
                printed = oracle.trec_eval(BINARY, qrels, run, measure, complete)
                assert printed == case["trec_eval"][measure][form], (case["seed"], measure, form)
