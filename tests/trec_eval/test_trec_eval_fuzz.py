"""``heta-eval trec_eval`` against trec_eval 9.0.8's own outputs on seeded random cases
(``tests/support/data/trec_eval_fuzz.json``, made by ``tests/support/trec_eval_corpus.py`` with the C
binary): where trec_eval prints, the same bytes; where it refuses or crashes, one line on
stderr and exit status 2. All cases run in one process, as a library user would call it
repeatedly (pytrec_eval keeps state between calls)."""

from __future__ import annotations

import json

import pytest
from support.trec_eval_corpus import CORPUS, make_case, run_case
from support.trec_eval_pinned import (
    BINARY,
    REFUSALS,
    live_seed,
    needs_binary,
    refusal_problem,
    reported_seed,
)
from support.trec_eval_refusals import binary_message, case_key

from heta_eval.cli import main

#: How a refusal on purpose begins where trec_eval 9.0.8 reads another query's memory (a gain
#: for a negative label on a query whose labels are all negative): its output is undefined.
UNDEFINED = b"from the previous query's label counts"
CASES = json.loads(CORPUS.read_text())


def ours(case: dict, folder, capsysbinary) -> tuple[int, bytes, bytes]:
    (folder / "qrels").write_text(case["qrels"])
    (folder / "run").write_text(case["run"])
    code = main(["trec_eval", *case["argv"], str(folder / "qrels"), str(folder / "run")])
    out, err = capsysbinary.readouterr()
    return code, out, err


def check(case: dict, code: int, out: bytes, err: bytes) -> None:
    argv = " ".join(case["argv"])
    if case["c_stdout"] is None:
        assert code == 2, f"trec_eval {argv} fails (status {case['c_status']}); we printed"
        errors = [text for text in err.splitlines() if b": note: " not in text]
        assert len(errors) == 1 and b"error: " in errors[0], err
        # A corpus case (or a live one) has its reason pinned; a hand-made case asserts its own.
        if case_key(case) in REFUSALS or "c_reason" in case:
            problem = refusal_problem(case, errors[0].decode())
            assert problem is None, problem
        return
    assert code == 0, f"trec_eval {argv}: we refused: {err.decode()}"
    assert out.decode("latin-1") == case["c_stdout"], f"trec_eval {argv}"


@pytest.mark.parametrize("index", range(len(CASES)))
def test_replays_trec_eval_outputs(index, tmp_path, capsysbinary):
    case = CASES[index]
    check(case, *ours(case, tmp_path, capsysbinary))


@needs_binary
def test_live_against_the_binary(tmp_path, capsysbinary):
    import random

    seed = live_seed()
    rng = random.Random(seed)
    for _ in range(50):
        case = make_case(rng)
        proc = run_case(BINARY, case, tmp_path)
        case["c_status"] = proc.returncode
        case["c_stdout"] = proc.stdout.decode("latin-1") if proc.returncode == 0 else None
        case["c_reason"] = binary_message(proc.returncode, proc.stderr)
        code, out, err = ours(case, tmp_path, capsysbinary)
        if case["c_stdout"] is not None and code == 2 and UNDEFINED in err:
            continue  # refused on purpose: trec_eval reads another query's memory (docs/trec_eval.md)
        with reported_seed(seed):
            check(case, code, out, err)
