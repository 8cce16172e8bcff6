"""Each refusal of the pinned trec_eval corpora has its reason pinned, and the reasons agree
with trec_eval 9.0.8's (``tests/support/trec_eval_refusals.py``: how, and :data:`REASONS`)."""

from __future__ import annotations

import json
import re

import pytest
from support.trec_eval_refusals import (
    CORPORA,
    DATA,
    REASONS,
    case_key,
    explained,
    pinned,
    why_empty,
)

PINNED = pinned()


@pytest.mark.parametrize("corpus", CORPORA)
def test_every_refused_case_of_the_corpus_has_its_reasons_pinned(corpus):
    cases = json.loads((DATA / f"trec_eval_{corpus}.json").read_text())
    missing = [c["argv"] for c in cases if c["c_stdout"] is None and case_key(c) not in PINNED]
    assert not missing, f"run tests/support/trec_eval_refusals.py: {missing[:3]}"


def reason_row(ours: str) -> tuple[str, tuple[str, ...], str] | None:
    return next((row for row in REASONS if re.search(row[0], ours)), None)


def test_each_refusal_gives_a_documented_reason_for_what_the_binary_said():
    unexplained = [
        (e["corpus"], e["binary"], e["ours"])
        for e in PINNED.values()
        if not explained(e["binary"], e["ours"])
    ]
    assert not unexplained, unexplained[:5]


def test_the_reasons_table_has_no_row_that_no_refusal_uses():
    used = {reason_row(entry["ours"])[0] for entry in PINNED.values() if reason_row(entry["ours"])}
    assert used == {row[0] for row in REASONS}


@pytest.mark.parametrize("corpus", CORPORA)
def test_every_case_where_trec_eval_prints_nothing_has_a_reason(corpus):
    # The replays compare bytes; an empty output is right only for a reason like these.
    cases = json.loads((DATA / f"trec_eval_{corpus}.json").read_text())
    empty = [c["argv"] for c in cases if c["c_stdout"] == ""]
    assert empty
    assert not [argv for argv in empty if why_empty(argv) is None]


def test_an_output_that_should_print_has_no_reason_to_be_empty():
    assert why_empty(["-m", "map"]) is None and why_empty(["-q", "-m", "relstring"]) is None
    assert why_empty(["-q", "-n", "-m", "map"]) is None
