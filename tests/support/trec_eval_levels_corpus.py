"""trec_eval 9.0.8's outputs at relevance levels below 1 (``-l 0``, ``-l -1``, ...), pinned.

``python tests/support/trec_eval_levels_corpus.py TREC_EVAL [N]`` runs the C binary on

* N seeded random cases (labels -2..3, ties, documents outside the qrels, queries in only
  one file, queries whose labels are all negative; ``-l`` 0, -1, -2, -7, 2 or the default;
  ``-q``, ``-c``, ``-J``, ``-M``, ``-n``; ``-m all_trec``, the default set, or one or more
  families with parameters), written to ``tests/support/data/trec_eval_levels.json``;
* trec_eval's own test inputs (``qrels.test``, ``qrels.rel_level``, ``results.test``,
  ``results.trunc`` of the reference folder) with ``-m all_trec -q`` and the default set, at
  the same levels, with and without ``-c``, ``-J``, ``-M``, written gzip-compressed to
  ``tests/support/data/trec_eval_levels_reference.json.gz``;

each with the binary's exit status and standard output. ``tests/trec_eval/test_trec_eval_levels.py``
replays them against ``heta-eval trec_eval`` without the binary.
``python tests/support/trec_eval_levels_corpus.py TREC_EVAL N --live`` instead compares N fresh
random cases (another seed each run) with the binary and prints the mismatches. With
``--options`` (``-N``, ``-Z``, ``-D``, ``-o``: ``tests/support/data/trec_eval_options.json``) or
``--qrels-jg`` (``-R qrels_jg``: ``tests/support/data/trec_eval_qrels_jg.json``) or ``--prefs``
(``-R prefs``, ``qrels_prefs``: ``tests/support/data/trec_eval_prefs.json``) the same for those.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

if __name__ == "__main__":  # run as a script: ``support`` is a package of tests/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.trec_eval_corpus import run_case
from support.trec_eval_refusals import binary_message

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "trec_eval_levels.json"
REFERENCE = DATA / "trec_eval_levels_reference.json.gz"
REFERENCE_FILES = ("qrels.test", "qrels.rel_level", "results.test", "results.trunc")

QIDS = ["1", "10", "2", "q1", "Q9", "7"]
DOCS = [f"d{i}" for i in range(12)]
SCORES = ["0", "0.5", "1", "1", "2", "-1.5", "3.25e-3", "7", "0.50000001"]
LEVELS = ["0", "0", "-1", "-1", "-2", "-7", "2", None]
FAMILIES = [
    "P",
    "recall",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "iprec_at_recall",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "set_F",
    "relstring",
    "map",
    "num_rel",
    "num_rel_ret",
    "gm_map",
    "bpref",
    "ndcg",
    "Rndcg",
    "G",
    "ndcg_rel",
    "num_ret",
    "infAP",
    "recip_rank",
    "gm_bpref",
    "Rprec",
    "binG",
    "set_P",
    "set_recall",
    "set_map",
    "set_relative_P",
    "num_nonrel_judged_ret",
    "runid",
    "num_q",
    "all_trec",
    "official",
    "set",
]
PARAMS = {
    "P": ["1,2,3", "5", "2,10"],
    "recall": ["1,3", "4"],
    "ndcg_cut": ["2,5"],
    "map_cut": ["1,4", "3"],
    "relative_P": ["1,2,5"],
    "success": ["1,2,3"],
    "iprec_at_recall": ["0.25,0.5,1", "0"],
    "Rprec_mult": ["0.5,1,1.5", "3"],
    "utility": ["1,-1,0,0", "2,-0.5,-1,0"],
    "11pt_avg": ["0.5,0.2", "1,0"],
    "set_F": ["0.5", "2"],
    "relstring": ["5"],
    "ndcg": ["0=1,1=2", "-1=2"],
    "Rndcg": ["0=1,2=3", "0=2", "-1=1,1=1"],
    "G": ["0=1", "2=3,3=1"],
    "ndcg_rel": ["0=1,1=1"],
}


def draw_run(rng: random.Random, pool: list[str], judged: list[str]) -> list[str]:
    """A run's lines: 1-4 of ``QIDS`` and the first ``judged`` query, each ranking some of
    ``pool`` with scores from ``SCORES`` (ties among them)."""
    run_lines = []
    run_queries = rng.sample(QIDS, rng.randint(1, 4))
    run_queries += [q for q in judged[:1] if q not in run_queries]
    for qid in run_queries:
        for rank, doc in enumerate(rng.sample(pool, rng.randint(1, len(pool) - 2)), start=1):
            run_lines.append(f"{qid} Q0 {doc} {rank} {rng.choice(SCORES)} tag{qid}\n")
    return run_lines


def draw_flags(rng: random.Random) -> list[str]:
    """Some of ``-q``, ``-c``, ``-J``, ``-n`` and now and then ``-M``."""
    argv = []
    for flag in ("-q", "-c", "-J", "-n"):
        if rng.random() < (0.1 if flag == "-n" else 0.35):
            argv.append(flag)
    if rng.random() < 0.2:
        argv += ["-M", rng.choice(["0", "1", "2", "5"])]
    return argv


def _measure(rng: random.Random) -> str:
    name = rng.choice(FAMILIES)
    if name in PARAMS and rng.random() < 0.5:
        return f"{name}.{rng.choice(PARAMS[name])}"
    return name


def make_case(rng: random.Random) -> dict:
    """One case: qrels and run texts and an argument list (files last)."""
    pool = DOCS if rng.random() < 0.8 else [f"d{i}" for i in range(60)]  # past P_30's cutoff
    qrels_lines = []
    qrels_queries = rng.sample(QIDS, rng.randint(1, 4))
    any_negative_only = False
    for position, qid in enumerate(qrels_queries):
        # A query of negative labels only, not first: trec_eval evaluates it (first: stops).
        negative_only = position > 0 and rng.random() < 0.1
        labels = [-1, -2] if negative_only else [-2, -1, 0, 0, 0, 1, 1, 2, 3]
        drawn = [rng.choice(labels) for _ in range(rng.randint(1, len(pool) // 2 + 1))]
        any_negative_only |= max(drawn) < 0
        for doc, label in zip(rng.sample(pool, len(drawn)), drawn, strict=True):
            qrels_lines.append(f"{qid} 0 {doc} {label}\n")
    run_lines = draw_run(rng, pool, qrels_queries)
    argv: list[str] = []
    argv += draw_flags(rng)
    level = rng.choice(LEVELS)
    if level is not None:
        argv += ["-l", level]
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        measure = _measure(rng)
        if any_negative_only and "-1=" in measure:
            # Refused on purpose: trec_eval takes such a query's gains from stale memory.
            measure = measure.partition(".")[0]
        argv += ["-m", measure]
    return {"qrels": "".join(qrels_lines), "run": "".join(run_lines), "argv": argv}


# Cases chosen by hand: Rndcg's gains on a query with no label above 0 (its R is 0 at level
# 1, not at 0), levels read by atol past a C long, a query of -1 labels after another.
_Q = "a 0 d1 1\na 0 d2 0\nb 0 d1 0\nb 0 d2 0\nb 0 d3 -1\nc 0 d1 -1\nc 0 d4 -1\n"
_R = "".join(f"{q} Q0 d{d} {d} {9 - d}.5 t\n" for q in "abc" for d in range(1, 7))
FIXED = [
    {"qrels": _Q, "run": _R, "argv": ["-q", "-l", level, "-m", measure]}
    for level in ("0", "-1", "-2", "-99999999999999999999", "-2147483649", "1")
    for measure in ("Rndcg.0=2", "Rndcg.0=1,1=3", "Rndcg", "all_trec", "G.0=1")
]


def reference_commands() -> list[list[str]]:
    """The argument lists run on trec_eval's own test inputs (files last)."""
    pairs = [
        ["qrels.test", "results.test"],
        ["qrels.rel_level", "results.test"],
        ["qrels.test", "results.trunc"],
    ]
    commands = []
    for files in pairs:
        for level in (["-l", "0"], ["-l", "-1"], ["-l", "-2"], ["-l", "2"], []):
            commands.append([*level, *files])
            commands.append(["-m", "all_trec", "-q", *level, *files])
            commands.append(["-m", "all_trec", "-c", "-J", *level, *files])
            commands.append(["-m", "all_trec", "-c", "-M", "20", *level, *files])
    return commands


def _outcome(proc: subprocess.CompletedProcess) -> dict:
    ok = proc.returncode == 0
    return {"c_status": proc.returncode, "c_stdout": proc.stdout.decode("latin-1") if ok else None}


def live(binary: str, count: int) -> int:
    """Compare ``count`` fresh random cases with the binary; the number of mismatches."""
    from support.trec_eval_pinned import mismatch

    seed = int(os.environ.get("HETA_EVAL_LIVE_SEED") or random.randrange(2**32))
    rng = random.Random(seed)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(count):
            case = make_case(rng)
            case.update(_outcome(proc := run_case(binary, case, Path(tmp))))
            case["c_reason"] = binary_message(proc.returncode, proc.stderr)
            problem = mismatch(case, Path(tmp))
            if problem:
                bad += 1
                print(json.dumps(case), problem, sep="\n")
    print(f"seed {seed}: {count} cases, {bad} mismatches")
    return bad


def pin_or_compare(
    binary: str,
    count: int,
    fresh: bool,
    *,
    seed: int,
    make: Callable[[random.Random], dict],
    fixed: list[dict],
    corpus: Path,
    mismatch: Callable[[dict, Path], str | None],
) -> int:
    """Pin ``count`` cases drawn by ``make`` (with ``seed``) and ``fixed`` to ``corpus`` or,
    ``fresh``, compare as many new ones (another seed) with the binary through ``mismatch``:
    the exit status (1: a mismatch). A problem ``mismatch`` marks "undefined" (a refusal on
    purpose where the binary reads outside its memory and did not crash) is counted apart."""
    # A live draw: HETA_EVAL_LIVE_SEED replays the one a failure printed.
    seed = int(os.environ.get("HETA_EVAL_LIVE_SEED") or random.randrange(2**32)) if fresh else seed
    rng = random.Random(seed)
    cases, bad, undefined = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        drawn = [make(rng) for _ in range(count)]
        for case in drawn + ([] if fresh else [dict(c) for c in fixed]):
            case.update(_outcome(proc := run_case(binary, case, Path(tmp))))
            cases.append(case)
            if fresh:  # a live case: the refusal's reason is checked against the binary's
                case["c_reason"] = binary_message(proc.returncode, proc.stderr)
            problem = mismatch(case, Path(tmp)) if fresh else None
            if problem and problem.startswith("undefined"):
                undefined += 1
            elif problem:
                bad += 1
                print(json.dumps(case), problem, sep="\n")
    refused = sum(case["c_stdout"] is None for case in cases)
    if fresh:
        print(
            f"seed {seed}: {count} cases ({refused} refused by trec_eval), {bad} mismatches, "
            f"{undefined} refused on purpose where trec_eval reads outside its memory"
        )
        return 1 if bad else 0
    corpus.write_text(json.dumps(cases, indent=0) + "\n")
    print(f"{len(cases)} cases ({refused} refused by trec_eval) -> {corpus}")
    return 0


OPTIONS_CORPUS = DATA / "trec_eval_options.json"
UTILITY_4TH = ["1,-1,0,0.25", "0,0,0,1", "-1,2,3,-4", "0.5,-0.5,1e-3,-0.001", "1,-1,0,0"]
NUM_DOCS = ["0", "12", "1000", "-5", "7", "99999999999999999999", "1e3", "3000000000"]
# Measures that print debugging lines at -D 1 or more (refused: see the options module).
_DEBUG_PRINTS = ("ndcg", "Rndcg", "G", "gm_bpref", "all_trec")
Z_NAMES = [
    "map",
    "P_5",
    "P_10",
    "P_1",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "num_q",
    "utility",
    "utility_1,-1,0,0.25",
    "gm_map",
    "bpref",
    "recip_rank",
    "Rprec",
    "relstring",
    "recall_5",
    "set_F",
    "11pt_avg",
    "infAP",
    "success_1",
    "zzz",
    "A",
    "ndcg_cut_5",
]
Z_MEANS = ["0.5", "0", "0.25", "-1", "1e-2", "abc", "2", "7"]
Z_SDS = ["0.1", "0.25", "0", "1", "0", "-0.5", "3", "2e-1x"]


def make_zscores(rng: random.Random, qids: list[str]) -> str:
    """A zscore file for ``qids``: random entries, odd separators, sometimes a malformed
    line; usually a last query and measure (``~``) that keep trec_eval's lookups in bounds."""
    lines = []
    bounded = rng.random() < 0.7
    for qid in [*qids, "A", "zz"] if bounded else [*qids, "A"]:
        if rng.random() < 0.85:
            for name in rng.sample(Z_NAMES, rng.randint(1, len(Z_NAMES))):
                sep = rng.choice([" ", "\t", "  ", " \x0b"])
                end = rng.choice(["", "", " ", "\r", "\t "])
                lines.append(
                    f"{qid}{sep}{name}{sep}{rng.choice(Z_MEANS)} {rng.choice(Z_SDS)}{end}\n"
                )
    if bounded:
        lines.append("~ ~ 0 1\n")
    rng.shuffle(lines)
    if rng.random() < 0.05:
        lines.insert(
            rng.randrange(len(lines) + 1), rng.choice(["\n", "q1 map 0.5\n", "a b c d e\n"])
        )
    return "".join(lines)


def make_options_case(rng: random.Random) -> dict:
    """A :func:`make_case` case with -N, -o, -Z (and its file) and -D options added."""
    case = make_case(rng)
    argv = case["argv"]
    if rng.random() < 0.5:
        argv += ["-m", f"utility.{rng.choice(UTILITY_4TH)}"]
    if rng.random() < 0.6:
        argv += ["-N", rng.choice(NUM_DOCS)]
    if rng.random() < 0.2:
        argv += rng.choice([["-o"], ["--Output_old_results_format=x"], ["--Out", "y"]])
    if rng.random() < 0.4:
        qids = sorted({line.split()[0] for line in (case["qrels"] + case["run"]).splitlines()})
        case["zscores"] = make_zscores(rng, qids)
        argv += ["-Z", "zscores"]
    if rng.random() < 0.25:
        printing = any(name in word for word in argv for name in _DEBUG_PRINTS)
        level = rng.choice(["0", "-1"] if printing else ["0", "1", "3", "-1"])
        query = rng.choice(["", "", "." + rng.choice(QIDS), ".", ".nope"])
        argv += ["-D", level + query]
    return case


def main() -> None:
    binary, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300
    if "--qrels-jg" in sys.argv:
        sys.exit(jg_corpus(binary, count, "--live" in sys.argv))
    if "--prefs" in sys.argv:  # -R prefs and qrels_prefs: tests/support/trec_eval_prefs_corpus.py
        from support.trec_eval_prefs_corpus import prefs_corpus

        sys.exit(prefs_corpus(binary, count, "--live" in sys.argv))
    if "--options" in sys.argv:
        sys.exit(options_corpus(binary, count, "--live" in sys.argv))
    if "--live" in sys.argv:
        sys.exit(1 if live(binary, count) else 0)
    rng = random.Random(-1)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in [make_case(rng) for _ in range(count)] + [dict(c) for c in FIXED]:
            case.update(_outcome(run_case(binary, case, Path(tmp))))
            cases.append(case)
    CORPUS.write_text(json.dumps(cases, indent=0) + "\n")
    reference = Path(sys.argv[3] if len(sys.argv) > 3 else "../shared/reference/trec_eval-9.0.8")
    pinned = []
    for argv in reference_commands():
        proc = subprocess.run([binary, *argv], cwd=reference, capture_output=True, timeout=60)
        pinned.append({"argv": argv, **_outcome(proc)})
    REFERENCE.write_bytes(gzip.compress(json.dumps(pinned).encode(), mtime=0))
    refused = sum(case["c_stdout"] is None for case in cases)
    print(
        f"{len(cases)} cases ({refused} refused by trec_eval) -> {CORPUS}; "
        f"{len(pinned)} on its test inputs -> {REFERENCE}"
    )


def options_corpus(binary: str, count: int, fresh: bool) -> int:
    """Pin ``count`` option cases (seed -2) or, ``fresh``, compare new ones with the binary."""
    from support.trec_eval_pinned import options_mismatch as mismatch

    return pin_or_compare(
        binary,
        count,
        fresh,
        seed=-2,
        make=make_options_case,
        fixed=[],
        corpus=OPTIONS_CORPUS,
        mismatch=mismatch,
    )


JG_CORPUS = DATA / "trec_eval_qrels_jg.json"
JG_GROUPS = ["a", "b", "u1", "U2", "jg10", "0"]
JG_MEASURES = [
    "qrels_jg",
    "map_avgjg",
    "P_avgjg",
    "P_avgjg.1,2,3",
    "P_avgjg.5",
    "P_avgjg.20,2",
    "Rprec_mult_avgjg",
    "Rprec_mult_avgjg.0.5,1,1.5",
    "Rprec_mult_avgjg.3",
    "runid",
    "num_q",
]
JG_Z_NAMES = [
    "map_avgjg",
    "P_avgjg_5",
    "P_avgjg_1",
    "Rprec_mult_avgjg_1.00",
    "num_q",
    "Rprec_mult_avgjg_0.20",
    "P_avgjg_2",
]
# Lines trec_eval refuses in a qrels_jg file: too few or too many fields, an empty line.
JG_BAD_LINES = ["q1 a d1\n", "q1 a d1 1 x\n", "\n", "   \n", "q1\n"]


def make_jg_case(rng: random.Random) -> dict:
    """A ``-R qrels_jg`` case: 1-3 judgment groups per query (some with negative labels
    only), queries in one file only, ties, -q/-c/-J/-n/-M/-l/-D, sometimes a bad line."""
    pool = DOCS if rng.random() < 0.8 else [f"d{i}" for i in range(60)]
    lines = []
    qrels_queries = rng.sample(QIDS, rng.randint(1, 4))
    for qid in qrels_queries:
        for group in rng.sample(JG_GROUPS, rng.randint(1, 3)):
            labels = [-1, -2, 0] if rng.random() < 0.15 else [-2, -1, 0, 0, 1, 1, 2, 3]
            drawn = rng.randint(1, len(pool) // 2 + 1)
            for doc in rng.sample(pool, drawn):
                sep = rng.choice([" ", "\t", "  "])
                lines.append(f"{qid}{sep}{group} {doc} {rng.choice(labels)}\n")
    rng.shuffle(lines)
    if rng.random() < 0.05:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(JG_BAD_LINES))
    if rng.random() < 0.03:
        lines.append(lines[0])  # judged twice in one group
    run_lines = draw_run(rng, pool, qrels_queries)
    argv = ["-R", "qrels_jg"]
    argv += draw_flags(rng)
    level = rng.choice(LEVELS)
    if level is not None:
        argv += ["-l", level]
    if rng.random() < 0.1:
        argv += ["-D", "0." + rng.choice([qrels_queries[0], qrels_queries[0], *QIDS])]
    for _ in range(rng.choice([1, 1, 2, 3]) if rng.random() < 0.92 else 0):
        argv += ["-m", rng.choice(JG_MEASURES) if rng.random() < 0.95 else _measure(rng)]
    case = {"qrels": "".join(lines), "run": "".join(run_lines), "argv": argv}
    if rng.random() < 0.15:  # entries for some of the printed names; "~ ~" bounds lookups
        entries = [
            f"{qid} {name} {rng.choice(Z_MEANS)} {rng.choice(Z_SDS)}\n"
            for qid in [*qrels_queries, "A"]
            for name in rng.sample(JG_Z_NAMES, 4)
        ]
        case["zscores"] = "".join(rng.sample(entries, len(entries))) + "~ ~ 0 1\n"
        argv += ["-Z", "zscores"]
    return case


# Cases chosen by hand: a BOM kept in the first query id, a non-ASCII id, a label read by
# atol, a group of one label 500000, cutoffs in trec_eval's order (past a C long), negative
# and huge multiples, levels past a C long.
_JQ = "\ufeffq1 a d1 1\nq1 b d2 500000\nq\u00e9 a d1 3\nq\u00e9 a d2 abc\nq1 a d3 1\n"
_JR = (
    "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq\u00e9 Q0 d2 1 1 r\nq\u00e9 Q0 d1 1 1 r\n"
    "\ufeffq1 Q0 d3 1 5 r\nq1 Q0 d9 1 0.1 r\n"
)
JG_FIXED = [
    {"qrels": _JQ, "run": _JR, "argv": ["-R", "qrels_jg", "-q", *extra]}
    for extra in (
        ["-m", "P_avgjg.99999999999999999999,3"],
        ["-m", "Rprec_mult_avgjg.-1,1e300,0.5"],
        ["-m", "Rprec_mult_avgjg.1000000"],
        ["-l", "99999999999999999999", "-m", "qrels_jg"],
        ["-l", "-99999999999999999999", "-m", "qrels_jg"],
        ["-l", "500000", "-m", "qrels_jg"],
        ["-J", "-l", "0", "-M", "1", "-m", "qrels_jg"],
        ["-m", "qrels_jg", "-m", "P_avgjg.1"],
    )
]


def jg_corpus(binary: str, count: int, fresh: bool) -> int:
    """Pin ``count`` qrels_jg cases (seed -3) or, ``fresh``, compare new ones with the binary."""
    from support.trec_eval_pinned import mismatch

    return pin_or_compare(
        binary,
        count,
        fresh,
        seed=-3,
        make=make_jg_case,
        fixed=JG_FIXED,
        corpus=JG_CORPUS,
        mismatch=mismatch,
    )


if __name__ == "__main__":
    main()
