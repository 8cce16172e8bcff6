"""evaluate_run on pandas DataFrames and ranx objects gives the numbers of the same dicts."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ranx import Qrels, Run

from heta_eval.evaluation import evaluate_run
from heta_eval.io.interop import FrameFormatError, as_qrels, as_run

IDS = st.sampled_from(["q1", "q2", "q3", "d1", "d2", "d3", "d4", "d5"])
# Few distinct scores: ties are common; labels include zero and negative ones.
SCORES = st.sampled_from([0.0, 0.25, 0.5, 1.0, -1.5])
LABELS = st.integers(min_value=-1, max_value=3)
QUERIES = st.sampled_from(["q1", "q2", "q3"])


def _numbers(result) -> tuple:
    return result.beir_dict(), result.strict_dict(), dict(result.counts)


def _frame(nested, query_column: str, value_column: str) -> pd.DataFrame:
    rows = [(q, d, v) for q, docs in nested.items() for d, v in docs.items()]
    return pd.DataFrame(rows, columns=[query_column, "doc_id", value_column])


@settings(max_examples=60, deadline=None)
@given(
    qrels=st.dictionaries(QUERIES, st.dictionaries(IDS, LABELS, min_size=1), min_size=1),
    # A row-based frame has no empty ranking: every run query has a result.
    run=st.dictionaries(QUERIES, st.dictionaries(IDS, SCORES, min_size=1)),
)
def test_dataframes_give_the_numbers_of_dicts(qrels, run):
    expected = _numbers(evaluate_run(qrels, run, k_values=(1, 3, 10)))
    # ir_datasets' column names (qrels carry an iteration column too) ...
    ir_qrels = _frame(qrels, "query_id", "relevance").assign(iteration="0")
    ir_run = _frame(run, "query_id", "score")
    assert _numbers(evaluate_run(ir_qrels, ir_run, k_values=(1, 3, 10))) == expected
    # ... ranx's DataFrame names ...
    ranx_qrels, ranx_run = _frame(qrels, "q_id", "score"), _frame(run, "q_id", "score")
    assert _numbers(evaluate_run(ranx_qrels, ranx_run, k_values=(1, 3, 10))) == expected


def test_ranx_objects_give_the_numbers_of_dicts():
    # Ties, zero and negative labels, a self-hit, an unjudged query, a query without results.
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": -1}, "q2": {"d4": 2, "d5": 1}, "q3": {"d1": 1}}
    run = {
        "q1": {"d1": 0.5, "d2": 0.5, "d3": 0.9, "q1": 2.0},
        "q2": {"d5": 1.0, "d4": 1.0, "d9": 1.0},
        "q4": {"d1": 0.1},
    }
    expected = _numbers(evaluate_run(qrels, run, k_values=(1, 3, 10)))
    ranked, judged = Run(run), Qrels(qrels)
    assert _numbers(evaluate_run(judged, ranked, k_values=(1, 3, 10))) == expected
    assert _numbers(evaluate_run(judged, run, k_values=(1, 3, 10))) == expected
    assert expected[2]["self_hits_removed"] == 1


def test_real_scifact_run_as_dataframes_scores_as_its_files(scifact_dir, scifact_run_file):
    from heta_eval.data.beir_loader import load_qrels
    from heta_eval.io.trec import read_run

    qrels = load_qrels(scifact_dir / "qrels" / "test.tsv")
    run = read_run(scifact_run_file)
    frame = pd.read_csv(
        scifact_run_file,
        sep=r"\s+",
        names=["query_id", "Q0", "doc_id", "rank", "score", "tag"],
        dtype={"query_id": str, "doc_id": str},
    )
    labels = pd.read_csv(
        scifact_dir / "qrels" / "test.tsv", sep="\t", dtype={"query-id": str, "corpus-id": str}
    ).rename(columns={"query-id": "query_id", "corpus-id": "doc_id", "score": "relevance"})
    from_files = evaluate_run(qrels, run)
    from_frames = evaluate_run(labels, frame)
    assert _numbers(from_frames) == _numbers(from_files)
    assert from_frames.counts["self_hits_removed"] == from_files.counts["self_hits_removed"]


def test_numeric_ids_become_strings_and_whole_float_labels_ints():
    frame = pd.DataFrame({"query_id": [7, 7], "doc_id": [1, 2], "relevance": [1.0, 0.0]})
    assert as_qrels(frame) == {"7": {"1": 1, "2": 0}}


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (pd.DataFrame({"qid": ["q"], "doc_id": ["d"], "score": [1.0]}), "no query id column"),
        (pd.DataFrame({"query_id": ["q"], "docno": ["d"], "score": [1.0]}), "no document id"),
        (pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "rel": [1.0]}), "no value column"),
        (
            pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["d", "d"], "score": [1.0, 2.0]}),
            r"row 1: \(q, d\) repeats an earlier row",
        ),
        (
            pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, None]}),
            "row 1: score nan is not finite",
        ),
        (
            pd.DataFrame({"query_id": ["q", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]}),
            "row 1: a missing query or doc id",
        ),
    ],
)
def test_bad_run_frames_are_refused_naming_column_or_row(frame, message):
    with pytest.raises(FrameFormatError, match=message):
        as_run(frame)


def test_fractional_labels_are_refused_naming_the_row():
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, 0.5]})
    with pytest.raises(FrameFormatError, match=r"row 1: relevance 0.5 is not a whole number"):
        evaluate_run(frame, {"q": {"a": 1.0}})


def test_other_objects_are_refused_with_the_accepted_forms():
    with pytest.raises(TypeError, match="pandas DataFrame or a ranx Run"):
        as_run([("q", "d", 1.0)])


def test_the_install_docs_dataframe_example_runs(capsys):
    docs = (Path(__file__).resolve().parents[2] / "docs" / "install.md").read_text("utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", docs, re.S)
    exec(compile(block, "docs/install.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "{'NDCG@1': 1.0, 'NDCG@10': 1.0}"
