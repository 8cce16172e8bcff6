"""``heta-eval trec_eval`` against pytrec_eval on random files: every all_trec value per query,
every summary line, with ties, float32-equal scores, graded, zero and negative labels down to
-3, queries missing on either side, -c, -J, -l and -M."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pytrec_eval
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from heta_eval.trec_eval import trec_eval_lines

QIDS = ["1", "10", "2", "q1", "Q1", "é"]
DOCS = ["d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "D1", "é1"]
# Ties, float32-equal neighbours (1.0 / 1.0000000001), negatives, a large and a tiny score.
SCORES = [0.0, 0.5, 0.50000001, 1.0, 1.0000000001, 2.0, -1.5, 3.25e-3, 1e10]
NOT_PER_QUERY = {"runid", "num_q", "gm_map", "gm_bpref", "relstring"}


def docs_of(values):
    return st.dictionaries(st.sampled_from(DOCS), values, min_size=1, max_size=len(DOCS))


@st.composite
def cases(draw):
    qrels = draw(st.dictionaries(st.sampled_from(QIDS), docs_of(st.integers(-3, 3)), min_size=1))
    score = st.sampled_from(SCORES) | st.floats(-10, 10, allow_nan=False, width=32)
    run = draw(st.dictionaries(st.sampled_from(QIDS), docs_of(score), min_size=1))
    evaluated = sorted(set(run) & set(qrels))
    assume(evaluated)
    # Where trec_eval 9.0.8 fails (test_trec_eval_cli): a first query with no label >= 0,
    # a query with every label <= -2.
    assume(max(qrels[evaluated[0]].values()) >= 0)
    assume(all(max(qrels[q].values()) >= -1 for q in evaluated))
    return qrels, run


def write(folder: Path, qrels, run) -> tuple[str, str]:
    qrels_path, run_path = folder / "qrels", folder / "run"
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {label}\n" for q, docs in qrels.items() for d, label in docs.items())
    )
    run_path.write_text(
        "".join(
            f"{q} Q0 {d} {rank} {score!r} tag-{q}\n"
            for q, docs in run.items()
            for rank, (d, score) in enumerate(docs.items(), start=1)
        )
    )
    return str(qrels_path), str(run_path)


def ours(argv: list[str]) -> list[tuple[str, str, str]]:
    return [tuple(line.split("\t")) for line in trec_eval_lines(argv)]  # type: ignore[misc]


def text(key: str, value: float) -> str:
    if math.isnan(value):  # trec_eval's NaNs are x86's default NaN, printed "-nan"
        return "  -nan"
    return str(int(value)) if key.startswith("num_") else f"{value:6.4f}"


def documented_labels(docs: dict[str, int]) -> dict[str, int]:
    """The documented reading of negative labels: below -1 as -1, and a query with no label
    >= 0 as if it also had a judged non-relevant document that no run retrieves."""
    out = {d: max(label, -1) for d, label in docs.items()}
    return out if max(out.values()) >= 0 else {**out, "never-retrieved": 0}


def expected_lines(qrels, run, *, complete: bool, level: int, judged: bool, last_tag: str):
    """trec_eval's -q output from pytrec_eval's public API, line by line."""
    clamped = {q: documented_labels(docs) for q, docs in qrels.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(
        clamped, {"all_trec"}, relevance_level=level, judged_docs_only_flag=judged
    )
    values = evaluator.evaluate(run)
    qids = sorted(values)
    lines = []
    for qid in qids:
        for key, value in values[qid].items():
            if key not in NOT_PER_QUERY:
                lines.append((f"{key:<22}", qid, text(key, value)))
    count = len(qrels) if complete else len(qids)
    keys = [k for k in values[qids[0]] if k != "relstring"]
    for key in keys:
        total = 0.0
        for qid in qids:
            total += values[qid][key]
        if key == "runid":
            shown = last_tag
        elif key == "num_q":
            shown = str(count)
        elif key == "num_rel" and complete:
            shown = str(sum(label > 0 for docs in qrels.values() for label in docs.values()))
        elif key.startswith("num_"):
            shown = text(key, total)
        elif key.startswith("gm_"):
            total += (count - len(qids)) * math.log(1e-5)
            shown = text(key, math.exp(total / count))
        else:
            shown = text(key, total / count)
        lines.append((f"{key:<22}", "all", shown))
    return lines


@settings(max_examples=150, deadline=None)
@given(case=cases(), complete=st.booleans(), judged=st.booleans(), level=st.sampled_from([1, 2]))
def test_all_trec_per_query_and_summary_lines_equal_pytrec_eval(case, complete, judged, level):
    qrels, run = case
    with tempfile.TemporaryDirectory() as folder:
        qrels_path, run_path = write(Path(folder), qrels, run)
        argv = ["-q", "-m", "all_trec", "-l", str(level)]
        argv += ["-c"] * complete + ["-J"] * judged
        got = [line for line in ours([*argv, qrels_path, run_path]) if "relstring" not in line[0]]
    last_tag = f"tag-{list(run)[-1]}"
    expected = expected_lines(
        qrels, run, complete=complete, level=level, judged=judged, last_tag=last_tag
    )
    assert got == expected


def trec_eval_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's ranking: the score as a C float, descending, then the doc id descending."""
    return sorted(docs, key=lambda d: (np.float32(docs[d]), d), reverse=True)


@settings(max_examples=60, deadline=None)
@given(case=cases(), limit=st.integers(0, 6))
def test_M_equals_evaluating_each_querys_top_documents(case, limit):
    qrels, run = case
    top = {q: {d: docs[d] for d in trec_eval_order(docs)[:limit]} for q, docs in run.items()}
    argv = ["-q", "-m", "all_trec"]
    with tempfile.TemporaryDirectory() as folder:
        limited = ours([*argv, "-M", str(limit), *write(Path(folder), qrels, run)])
    kept = {q: docs for q, docs in top.items() if docs}
    assume(set(kept) & set(qrels))
    assume(max(qrels[min(set(kept) & set(qrels))].values()) >= 0)
    with tempfile.TemporaryDirectory() as folder:
        by_hand = ours([*argv, *write(Path(folder), qrels, kept)])
    # Queries left empty by -M 0 still count in trec_eval; compare the queries both keep.
    both = {qid for _, qid, _ in by_hand}
    assert [line for line in limited if line[1] in both and line[1] != "all"] == [
        line for line in by_hand if line[1] != "all"
    ]
