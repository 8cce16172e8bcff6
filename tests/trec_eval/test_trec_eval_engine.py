"""``heta-eval trec_eval`` on the compiled engine: the same bytes as trec_eval 9.0.8.

The seeded cases of ``tests/support/data/trec_eval_engine.json`` (made by
``tests/support/trec_eval_engine_corpus.py`` with the C binary) are replayed twice: with the engine's
size threshold at 0, so that every eligible case is read by the compiled parser and scored by
the compiled engine, and with the threshold as shipped (pytrec_eval). One seeded run larger
than the real threshold is replayed as shipped and below it. Without the binary the pinned
outputs are the oracle; with it, fresh cases are drawn too."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from support.trec_eval_corpus import run_case
from support.trec_eval_engine_corpus import CORPUS, large_case, make_case
from support.trec_eval_pinned import BINARY, REFUSALS, live_seed, needs_binary, reported_seed
from support.trec_eval_refusals import binary_message, case_key
from test_trec_eval_fuzz import CASES as FUZZ
from test_trec_eval_fuzz import check, ours

import heta_eval.trec_eval.drop_in as drop_in
from heta_eval.providers import backends
from heta_eval.trec_eval.fast import RunView

CASES = json.loads(CORPUS.read_text())
SMALL = [case for case in CASES if "seed" not in case]


LARGE = [case for case in CASES if "seed" in case]


def large(index: int) -> dict:
    """A pinned case of a run above the threshold, its files regenerated from its seed."""
    return {**large_case(LARGE[index]["seed"], LARGE[index]["argv"]), **LARGE[index]}


@pytest.fixture
def engine_answers(monkeypatch) -> list[bool]:
    """Records, for each run read, whether the compiled engine answered it."""
    answers: list[bool] = []
    original = drop_in.engine_values

    def spy(*args, **kwargs):
        values = original(*args, **kwargs)
        answers.append(values is not None)
        return values

    monkeypatch.setattr(drop_in, "engine_values", spy)
    return answers


def engine_can_read(case: dict) -> bool:
    """No option the engine leaves to pytrec_eval, each query in one block, and no repeated
    document in a query trec_eval ranks (a judged one, when a measure ranks)."""
    argv = case["argv"]
    if any(flag in argv for flag in ("-J", "-M", "-l")):
        return False
    rows = [tuple(line.split()[:3:2]) for line in case["run"].splitlines()]
    blocks = [qid for i, (qid, _) in enumerate(rows) if i == 0 or rows[i - 1][0] != qid]
    ranking = any(m not in ("runid", "num_q") for a, m in itertools.pairwise(argv) if a == "-m")
    judged = {line.split()[0] for line in case["qrels"].splitlines()}
    repeated = {qid for qid, _ in (r for r in rows if rows.count(r) > 1)}
    return len(set(blocks)) == len(blocks) and not (ranking and repeated & judged)


@pytest.mark.parametrize("index", range(len(SMALL)))
def test_engine_prints_trec_eval_bytes(index, tmp_path, capsysbinary, monkeypatch, engine_answers):
    monkeypatch.setattr(backends, "COMPILED_MIN_BYTES", 0)
    case = SMALL[index]
    check(case, *ours(case, tmp_path, capsysbinary))
    assert any(engine_answers) == engine_can_read(case)


@pytest.mark.parametrize("index", range(len(SMALL)))
def test_small_runs_stay_on_pytrec_eval(index, tmp_path, capsysbinary, engine_answers):
    case = SMALL[index]
    check(case, *ours(case, tmp_path, capsysbinary))
    assert not engine_answers  # below the threshold the engine is not even tried


def arrays_reason(case: dict) -> str | None:
    """The refusal pinned for ``case`` with the run read into arrays (None: it prints)."""
    pinned = REFUSALS.get(case_key(case)) if case["c_stdout"] is None else None
    return None if pinned is None else pinned["ours_arrays"]


# The arrays replay leaves to the line reader's replay (test_trec_eval_fuzz.py) the refusals
# decided from the options alone (before any file is read, so the read path cannot matter),
# and all but every tenth of those for having no query with both results and judgments (one
# check of the query ids read, 167 cases of it).
OPTION_REFUSAL = ("-m ", "-M ", "-N ", "-l ")
NO_QUERY = [i for i, c in enumerate(FUZZ) if (arrays_reason(c) or "").startswith("no query has")]
ARRAYS = [
    i
    for i, c in enumerate(FUZZ)
    if not (arrays_reason(c) or "").startswith(OPTION_REFUSAL)
    and (i not in NO_QUERY or NO_QUERY.index(i) % 10 == 0)
]


@pytest.mark.parametrize("index", ARRAYS)
def test_every_family_from_arrays_prints_trec_eval_bytes(
    index, tmp_path, capsysbinary, monkeypatch
):
    """The general fuzz corpus with the threshold at 0: runs read into arrays, the families
    the engine lacks handed to pytrec_eval a query at a time."""
    monkeypatch.setattr(backends, "COMPILED_MIN_BYTES", 0)
    case = FUZZ[index]
    check(case, *ours(case, tmp_path, capsysbinary))


def test_a_run_above_the_threshold_takes_the_engine(tmp_path, capsysbinary, engine_answers):
    case = large(0)
    assert len(case["run"].encode()) >= backends.COMPILED_MIN_BYTES
    check(case, *ours(case, tmp_path, capsysbinary))
    assert engine_answers == [True]


def test_all_trec_above_the_threshold_reads_arrays(tmp_path, capsysbinary, monkeypatch):
    views = []

    def counted(*args):
        views.append(RunView(*args))
        return views[-1]

    monkeypatch.setattr(drop_in, "RunView", counted)
    case = large(1)
    check(case, *ours(case, tmp_path, capsysbinary))
    assert len(views) == 1


@pytest.mark.parametrize("index", [0, 1])
def test_a_run_above_the_threshold_on_pytrec_eval(index, tmp_path, capsysbinary, monkeypatch):
    monkeypatch.setattr(backends, "COMPILED_MIN_BYTES", 1 << 40)
    case = large(index)
    check(case, *ours(case, tmp_path, capsysbinary))


@needs_binary
def test_engine_live_against_the_binary(tmp_path, capsysbinary, monkeypatch):
    monkeypatch.setattr(backends, "COMPILED_MIN_BYTES", 0)
    seed = live_seed()
    rng = random.Random(seed)
    for _ in range(40):
        case = make_case(rng)
        proc = run_case(BINARY, case, tmp_path)
        case["c_status"] = proc.returncode
        case["c_stdout"] = proc.stdout.decode("latin-1") if proc.returncode == 0 else None
        case["c_reason"] = binary_message(proc.returncode, proc.stderr)
        with reported_seed(seed):
            check(case, *ours(case, tmp_path, capsysbinary))


# A repeated document, as trec_eval 9.0.8 treats it (outputs of its binary): refused only in a
# judged query, when a measure ranks, among the documents -M keeps.
QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
REPEAT_IN_JUDGED = "q1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq1 Q0 d2 3 1 t\nq9 Q0 d5 1 5 t\n"
REPEAT_IN_UNJUDGED = "q1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq9 Q0 d5 1 5 t\nq9 Q0 d5 2 4 t\n"
P_5 = "P_5                   \tall\t0.2000\n"


@pytest.mark.parametrize("threshold", [0, 1 << 40], ids=["arrays", "line reader"])
@pytest.mark.parametrize(
    ("run", "argv", "c_stdout"),
    [
        (REPEAT_IN_UNJUDGED, ["-m", "P.5"], P_5),
        (REPEAT_IN_JUDGED, ["-m", "P.5"], None),
        (
            REPEAT_IN_JUDGED,
            ["-m", "runid", "-m", "num_q"],
            "runid                 \tall\tt\nnum_q                 \tall\t1\n",
        ),
        (REPEAT_IN_JUDGED, ["-M", "2", "-m", "P.5"], P_5),
        (REPEAT_IN_JUDGED, ["-M", "3", "-m", "P.5"], None),
    ],
    ids=["unjudged query", "judged query", "no ranking measure", "outside -M", "inside -M"],
)
def test_a_repeated_document_is_refused_only_where_trec_eval_refuses_it(
    run, argv, c_stdout, threshold, tmp_path, capsysbinary, monkeypatch
):
    monkeypatch.setattr(backends, "COMPILED_MIN_BYTES", threshold)
    case = {"qrels": QRELS, "run": run, "argv": argv, "c_stdout": c_stdout, "c_status": 4}
    code, out, err = ours(case, tmp_path, capsysbinary)
    check(case, code, out, err)
    if c_stdout is None:
        assert b"duplicate (query, doc) pair ('q1', 'd2')" in err and b"run:3:" in err
