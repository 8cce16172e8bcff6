"""Seeded random trec_eval cases for the measures the compiled engine computes, and the C
binary's outputs for them.

``python tests/support/trec_eval_engine_corpus.py TREC_EVAL [N]`` runs the trec_eval 9.0.8 binary on
N generated cases (and on one run file larger than the engine's size threshold) and writes
them, with its exit status and standard output, to ``tests/support/data/trec_eval_engine.json``;
``tests/trec_eval/test_trec_eval_engine.py`` replays them without the binary. The cases stress what
the engine must rank and count exactly as trec_eval does: exact score ties and scores equal
only as float32, doc ids that are prefixes of each other, negative, zero and graded labels,
queries whose labels are all negative, repeated documents, queries split over several
blocks, tab-separated files, cutoffs beyond the ranking; with ``-q``, ``-c``, ``-n``, and
sometimes ``-J``, ``-M`` or ``-l`` (which the engine leaves to pytrec_eval).
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path

if __name__ == "__main__":  # run as a script: ``support`` is a package of tests/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.trec_eval_corpus import run_case

CORPUS = Path(__file__).parent / "data" / "trec_eval_engine.json"

QIDS = ["1", "10", "2", "q1", "Q9", "q10", "301"]
DOCS = [f"{p}{n}" for p in ("d", "D", "doc-") for n in (1, 2, 10, 11, 100, 101, 3, 30, 7)]
SCORES = [
    "0",
    "0.5",
    "0.50000001",
    "1",
    "1.00000001",
    "2",
    "-1.5",
    "3.25e-3",
    "1e10",
    "7",
    "12.125",
    "-0",
    "0.3333333333333333",
]
LABELS = [0, 0, 0, 1, 1, 2, 3, -1, -2, 4]
CUTOFFS = ["1", "2", "3", "5", "10", "20", "100", "1000"]
FAMILIES = ["P", "recall", "ndcg_cut", "map_cut", "map", "runid", "num_q"]
#: The seeded run larger than the engine's threshold (8 MiB): queries x documents.
LARGE = (700, 300)


def _measure(rng: random.Random) -> str:
    name = rng.choice(FAMILIES)
    if name in ("map", "runid", "num_q") or rng.random() < 0.2:
        return name
    return f"{name}.{','.join(rng.sample(CUTOFFS, rng.randint(1, 3)))}"


def _qrels(rng: random.Random, qids: list[str]) -> str:
    lines = []
    for qid in dict.fromkeys(qids):
        negative_only = rng.random() < 0.05
        for doc in rng.sample(DOCS, rng.randint(1, 12)):
            label = rng.choice([-1, -1, -2] if negative_only else LABELS)
            lines.append(f"{qid} 0 {doc} {label}\n")
    return "".join(lines)


def _run(rng: random.Random, qids: list[str]) -> str:
    delimiter = "\t" if rng.random() < 0.2 else " "
    lines = []
    for qid in qids:
        docs = rng.sample(DOCS, rng.randint(1, len(DOCS)))
        if rng.random() < 0.03:
            docs.append(docs[0])  # a repeated document: trec_eval refuses the run
        for rank, doc in enumerate(docs, start=1):
            fields = [qid, "Q0", doc, str(rank), rng.choice(SCORES), f"tag{qid}"]
            lines.append(delimiter.join(fields) + "\n")
    if rng.random() < 0.05 and len(lines) > 2:
        lines.append(lines.pop(0))  # the first query's first line last: two blocks
    return "".join(lines)


def make_case(rng: random.Random) -> dict:
    """One case: qrels and run texts and an argument list (files last)."""
    qids = rng.sample(QIDS, rng.randint(2, 6))
    argv: list[str] = []
    for flag in ("-q", "-c", "-n"):
        if rng.random() < 0.4:
            argv.append(flag)
    fallback = rng.random()
    if fallback < 0.05:
        argv.append("-J")
    elif fallback < 0.1:
        argv += ["-M", rng.choice(["1", "3", "10"])]
    elif fallback < 0.15:
        argv += ["-l", rng.choice(["2", "3"])]
    for _ in range(rng.randint(1, 4)):
        argv += ["-m", _measure(rng)]
    return {
        # Most run queries judged, and a judged query missing from the run (for -c).
        "qrels": _qrels(rng, rng.sample(qids, max(1, len(qids) - 1)) + rng.sample(QIDS, 1)),
        "run": _run(rng, qids),
        "argv": argv,
    }


#: Command lines for the large run: the engine's (2CR with -q) and pytrec_eval's families.
LARGE_COMMANDS = (
    ["-q", "-c", "-m", "ndcg_cut.10", "-m", "recall.100,1000", "-m", "map", "-m", "P.5"],
    ["-c", "-m", "all_trec"],
)


def large_case(seed: int = 24, argv: list[str] = LARGE_COMMANDS[0]) -> dict:
    """A run of ``LARGE`` queries x documents (about 9 MiB: above the engine's threshold),
    with float32 ties and graded labels, and ``argv``."""
    rng = random.Random(seed)
    queries, depth = LARGE
    qrels, run = [], []
    for q in range(queries):
        qid = f"q{q}"
        docs = [f"doc{rng.randrange(10**6)}" for _ in range(depth)]
        for doc in rng.sample(docs, 6):
            qrels.append(f"{qid} 0 {doc} {rng.choice(LABELS)}\n")
        qrels.append(f"{qid} 0 unretrieved{q} 1\n")
        for rank, doc in enumerate(dict.fromkeys(docs), start=1):
            score = rng.choice(SCORES) if rng.random() < 0.3 else f"{rng.random() * 30:.6f}"
            run.append(f"{qid} Q0 {doc} {rank} {score} large-run-tag\n")
    return {"qrels": "".join(qrels), "run": "".join(run), "argv": argv, "seed": seed}


def main() -> None:
    binary, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300
    rng = random.Random(2024)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        large = [large_case(argv=argv) for argv in LARGE_COMMANDS]
        for case in [make_case(rng) for _ in range(count)] + large:
            proc = run_case(binary, case, Path(tmp))
            case["c_status"] = proc.returncode
            case["c_stdout"] = proc.stdout.decode("latin-1") if proc.returncode == 0 else None
            if "seed" in case:  # the large case is regenerated from its seed
                del case["qrels"], case["run"]
            cases.append(case)
    CORPUS.write_text(json.dumps(cases, indent=0) + "\n")
    refused = sum(case["c_stdout"] is None for case in cases)
    print(f"{len(cases)} cases, {refused} refused or crashed by trec_eval -> {CORPUS}")


if __name__ == "__main__":
    main()
