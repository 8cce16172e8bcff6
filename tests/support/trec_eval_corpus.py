"""Seeded random trec_eval cases (small qrels, run and option set) and their C outputs.

``python tests/support/trec_eval_corpus.py TREC_EVAL [N]`` runs the trec_eval 9.0.8 binary on N
generated cases and writes them, with its exit status and standard output, to
``tests/support/data/trec_eval_fuzz.json``; ``tests/trec_eval/test_trec_eval_fuzz.py`` replays them against
``heta-eval trec_eval`` without the binary. The option space: every parameterised family
with integer, fractional, negative and huge parameters, ``-M``, ``-l``, ``-c``, ``-q``,
``-n``, ``-J``, ``-m all_trec`` and ``-m official``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

CORPUS = Path(__file__).parent / "data" / "trec_eval_fuzz.json"

QIDS = ["1", "10", "2", "q1", "no_query", "Q9"]
DOCS = ["d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7"]
SCORES = ["0", "0.5", "0.50000001", "1", "1.0000000001", "2", "-1.5", "3.25e-3", "1e10", "7"]
HUGE = ["1000000", "2147483647", "2147483648", "3000000000", "99999999999999999999"]
INTS = ["1", "2", "3", "5", "10", "20"]
FRACTIONS = ["0.5", "1.5", "23.4", "2.99", "0.1", ".3"]
NEGATIVE = ["-1", "-0.5", "0", "-3"]


def _number(rng: random.Random) -> str:
    pool = rng.choice([INTS, INTS, FRACTIONS, HUGE, NEGATIVE])
    return rng.choice(pool)


def _measure(rng: random.Random) -> str:
    name = rng.choice(
        [
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
            "gm_map",
            "bpref",
            "ndcg",
            "Rndcg",
            "G",
            "ndcg_rel",
            "all_trec",
            "official",
            "set",
            "num_ret",
            "infAP",
            "recip_rank",
            "gm_bpref",
            "Rprec",
        ]
    )
    if name in ("ndcg", "Rndcg", "G", "ndcg_rel") and rng.random() < 0.5:
        pairs = rng.sample(["0=0", "1=1", "2=3", "3=7.5", "-1=2", "4=1e6"], rng.randint(1, 3))
        return f"{name}.{','.join(pairs)}"
    if name == "utility" and rng.random() < 0.7:
        return "utility." + ",".join(_number(rng) for _ in range(4))
    takes = {
        "P",
        "recall",
        "ndcg_cut",
        "map_cut",
        "relative_P",
        "success",
        "iprec_at_recall",
        "Rprec_mult",
        "11pt_avg",
        "set_F",
        "relstring",
    }
    if name in takes and rng.random() < 0.7:
        count = rng.randint(1, 3)
        return f"{name}.{','.join(_number(rng) for _ in range(count))}"
    return name


def make_case(rng: random.Random) -> dict:
    """One case: qrels and run texts and an argument list (files last)."""
    qrels_lines = []
    for qid in rng.sample(QIDS, rng.randint(1, 4)):
        for doc in rng.sample(DOCS, rng.randint(1, 5)):
            label = rng.choice([0, 0, 1, 1, 2, 3, -1, 4])
            qrels_lines.append(f"{qid} 0 {doc} {label}\n")
    run_lines = []
    for qid in rng.sample(QIDS, rng.randint(1, 4)):
        for rank, doc in enumerate(rng.sample(DOCS, rng.randint(1, 6)), start=1):
            run_lines.append(f"{qid} Q0 {doc} {rank} {rng.choice(SCORES)} tag{qid}\n")
    argv: list[str] = []
    for flag in ("-q", "-c", "-n", "-J"):
        if rng.random() < 0.3:
            argv.append(flag)
    if rng.random() < 0.3:
        argv += ["-M", rng.choice(["0", "1", "2", "3", "100", *HUGE, "-1", "2.7"])]
    if rng.random() < 0.3:
        argv += ["-l", rng.choice(["1", "2", "3", "5", "0", "-1", *HUGE, "1.9"])]
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        argv += ["-m", _measure(rng)]
    return {"qrels": "".join(qrels_lines), "run": "".join(run_lines), "argv": argv}


def run_case(binary: str, case: dict, folder: Path) -> subprocess.CompletedProcess:
    """Run ``binary`` (trec_eval, or a command list ending in it) on ``case`` in ``folder``:
    its qrels, run and, where it has one, its z-score file (``-Z zscores``)."""
    (folder / "qrels").write_text(case["qrels"])
    (folder / "run").write_text(case["run"])
    if "zscores" in case:
        (folder / "zscores").write_bytes(case["zscores"].encode())
    command = [binary] if isinstance(binary, str) else list(binary)
    return subprocess.run(
        [*command, *case["argv"], "qrels", "run"], cwd=folder, capture_output=True, timeout=600
    )


def main() -> None:
    binary, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 400
    rng = random.Random(9_0_8)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(count):
            case = make_case(rng)
            proc = run_case(binary, case, Path(tmp))
            case["c_status"] = proc.returncode
            case["c_stdout"] = proc.stdout.decode("latin-1") if proc.returncode == 0 else None
            cases.append(case)
    CORPUS.parent.mkdir(exist_ok=True)
    CORPUS.write_text(json.dumps(cases, indent=0) + "\n")
    refused = sum(case["c_stdout"] is None for case in cases)
    print(f"{len(cases)} cases, {refused} refused or crashed by trec_eval -> {CORPUS}")


if __name__ == "__main__":
    main()
