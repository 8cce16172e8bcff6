"""``heta-eval trec_eval`` where it once differed from trec_eval 9.0.8: ``-M 0``, huge and
fractional parameters, ``-l`` beyond a C int, ``-J``'s ``-nan``, and a query named
``no_query`` in a second evaluation. Outputs pinned from the C binary
(``tests/support/trec_eval_findings.py``)."""

from __future__ import annotations

import json

import pytest
from support.trec_eval_findings import ARGVS, FINDINGS, QRELS, RUN, files_of

from heta_eval.cli import main
from heta_eval.trec_eval import per_query_values, trec_eval_lines

PINNED = json.loads(FINDINGS.read_text())


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


@pytest.mark.parametrize("name", sorted(ARGVS))
def test_prints_what_trec_eval_prints_or_refuses_in_one_line(name, tmp_path, capsysbinary):
    qrels, run = files_of(name)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    code = main(["trec_eval", *ARGVS[name], str(tmp_path / "qrels"), str(tmp_path / "run")])
    out, err = capsysbinary.readouterr()
    if PINNED[name] is None:  # trec_eval crashes
        errors = [text for text in err.splitlines() if b": note: " not in text]
        assert code == 2 and out == b"" and len(errors) == 1, err
    else:
        assert code == 0, err
        assert out.decode("latin-1") == PINNED[name]


def test_M_0_gives_trec_eval_s_values_for_no_documents(files, capsysbinary):
    main(["trec_eval", *ARGVS["M0_single"], *files])
    out = capsysbinary.readouterr().out.decode()
    assert "num_rel               \tall\t4\n" in out
    assert "gm_map                \tall\t0.0000\n" in out
    assert "iprec_at_recall_0.00  \tall\t  -nan\n" in out


def test_fractional_and_huge_parameters_are_read_as_trec_eval_reads_them(files):
    lines = list(trec_eval_lines(["-m", "ndcg_cut.23.4", "-m", "Rprec_mult.1000000", *files]))
    assert [text.split("\t")[0].rstrip() for text in lines] == [
        "Rprec_mult_1000000.",
        "ndcg_cut_23",
    ]


def test_a_query_named_no_query_is_right_in_a_second_evaluation(files):
    argv = [*ARGVS["no_query_all_trec"], *files]
    first = list(trec_eval_lines(argv))
    second = list(trec_eval_lines(argv))
    assert first == second == PINNED["no_query_all_trec"].splitlines()


def test_per_query_values_twice_in_one_process():
    qrels = {"no_query": {"d1": 1, "d2": 0}, "z": {"d3": 1}}
    run = {"no_query": {"d2": 2.0, "d1": 1.0}, "z": {"d3": 1.0}}
    first = per_query_values(qrels, run, ["map", "num_rel_ret"])
    second = per_query_values(qrels, run, ["map", "num_rel_ret"])
    assert first == second
    assert second["no_query"] == {"map": 0.5, "num_rel_ret": 1.0}


def test_many_queries_in_batches_give_one_pytrec_eval_call_s_values():
    from pytrec_eval_ext import RelevanceEvaluator

    qrels = {f"q{i}": {f"d{i % 7}": 1, f"d{i % 5}": 0} for i in range(700)}
    run = {f"q{i}": {f"d{j}": float((i * j) % 11) for j in range(9)} for i in range(700)}
    measures = {"map", "P.5", "ndcg_cut.10", "bpref"}
    whole = RelevanceEvaluator(qrels, measures, 1, False).evaluate(run)
    assert per_query_values(qrels, run, measures) == whole
