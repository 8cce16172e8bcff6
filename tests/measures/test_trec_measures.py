"""The trec_eval measure catalogue agrees with pytrec_eval and with trec_eval's own output."""

from __future__ import annotations

import pytest
import pytrec_eval
import pytrec_eval_ext
from support.paths import shared_path

from heta_eval.measures.trec_catalogue import ALL_TREC, FAMILIES, NICKNAMES, OFFICIAL, family

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 1}}
RUN = {"q1": {"d1": 0.5, "d2": 0.7, "d4": 0.1}, "q2": {"d9": 1.0}}


def test_catalogue_names_the_measures_pytrec_eval_supports():
    assert set(ALL_TREC) == set(pytrec_eval.supported_measures)
    assert set(ALL_TREC) == set(pytrec_eval.supported_nicknames["all_trec"])
    assert set(OFFICIAL) == set(pytrec_eval.supported_nicknames["official"])
    assert set(NICKNAMES["set"]) == set(pytrec_eval.supported_nicknames["set"])


def test_default_keys_are_the_keys_pytrec_eval_returns_in_print_order():
    evaluator = pytrec_eval_ext.RelevanceEvaluator(QRELS, set(ALL_TREC), 1, False)
    keys = list(evaluator.evaluate(RUN)["q1"])
    expected = [key for f in FAMILIES for key in f.pytrec_eval_keys()]
    assert keys == expected


def test_parameterised_keys_match_pytrec_eval():
    for name, cutoffs in [("P", (100, 5)), ("iprec_at_recall", (0.25, 0.05)), ("success", (3,))]:
        spec = f"{name}.{','.join(str(c) for c in cutoffs)}"
        evaluator = pytrec_eval_ext.RelevanceEvaluator(QRELS, {spec}, 1, False)
        assert tuple(evaluator.evaluate(RUN)["q1"]) == family(name).pytrec_eval_keys(cutoffs)


def test_summary_lines_of_all_trec_follow_the_catalogue_order():
    reference = shared_path("reference", "trec_eval-9.0.8", "out.test.a").read_text()
    printed = [line.split("\t")[0].rstrip() for line in reference.splitlines()]
    expected = [key for f in FAMILIES if f.summary != "none" for key in f.pytrec_eval_keys()]
    assert printed == expected


def test_unknown_family_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown trec_eval measure 'ndcg@10'.*ndcg_cut"):
        family("ndcg@10")
