"""Regenerate ``trec_measure_oracle.json``: trec_eval 9.0.8's own per-query and ``all`` lines
(with and without ``-c``) for parameterised measures on seeded random runs.

Usage: ``python tests/support/data/make_trec_measure_oracle.py /path/to/trec_eval`` (the C binary).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

# One trec_eval call per spec (trec_eval keeps the first parameter set of a family).
SPECS = [
    "utility.1,-1,0,0",
    "utility.2,-1,-0.5,0",
    "utility",
    "set_F.0.5",
    "set_F.2",
    "set_F",
    "set_F.0.25,3",
    "Rprec_mult.0.5,1.5",
    "Rprec_mult",
    "Rprec_mult.0.333",
    "iprec_at_recall.0.15,0.5,0.95",
    "iprec_at_recall.0.1",
    "iprec_at_recall.0.101",
    "ndcg.1=0,2=3",
    "ndcg.0=0,1=1,2=5",
    "ndcg.1=2.5",
    "ndcg",
    "G.1=2",
    "G",
    "ndcg_rel.2=4",
    "ndcg_rel",
    "Rndcg.1=3",
    "Rndcg",
    "success.1,3,10",
    "success",
    "P.3,7",
    "P",
    "recall.4,20",
    "ndcg_cut.10,20,23.4",
    "map_cut.5,1000",
    "relative_P.5",
    "11pt_avg",
    "11pt_avg.0.2,0.8",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "gm_bpref",
    "recip_rank",
    "infAP",
    "set_P",
    "set_recall",
    "set_map",
    "set_relative_P",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "num_nonrel_judged_ret",
    "binG",
    "num_q",
]


def random_case(seed: int) -> tuple[dict, dict]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    docs = [f"d{i}" for i in range(40)]
    for q in range(12):
        qid = f"q{q}"
        judged = rng.sample(docs, rng.randint(1, 15))
        qrels[qid] = {d: rng.choice([0, 0, 1, 1, 2, 3]) for d in judged}
        if q % 6 == 5:
            continue  # judged but not in the run: -c scores it on an empty ranking
        ranked = rng.sample(docs, rng.randint(1, 30))
        run[qid] = {d: float(rng.choice([rng.randint(0, 9), rng.random()])) for d in ranked}
    run["unjudged"] = {"d1": 1.0}
    return qrels, run


def trec_eval(binary: str, qrels: dict, run: dict, spec: str, complete: bool) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        qpath, rpath = Path(folder, "qrels"), Path(folder, "run")
        qpath.write_text(
            "".join(f"{q} 0 {d} {lab}\n" for q, ds in qrels.items() for d, lab in ds.items())
        )
        rpath.write_text(
            "".join(
                f"{q} Q0 {d} {r} {s!r} t\n"
                for q, ds in run.items()
                for r, (d, s) in enumerate(ds.items(), 1)
            )
        )
        argv = [binary, "-q", *(["-c"] if complete else []), "-m", spec, str(qpath), str(rpath)]
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    lines: dict[str, dict[str, str]] = {}
    for line in out.splitlines():
        key, qid, value = line.split("\t")
        lines.setdefault(key.strip(), {})[qid] = value
    return lines


def main(binary: str) -> None:
    cases = []
    for seed in (1, 2, 3):
        qrels, run = random_case(seed)
        outputs = {
            spec: {
                "plain": trec_eval(binary, qrels, run, spec, False),
                "complete": trec_eval(binary, qrels, run, spec, True),
            }
            for spec in SPECS
        }
        cases.append({"seed": seed, "qrels": qrels, "run": run, "trec_eval": outputs})
    path = Path(__file__).with_name("trec_measure_oracle.json")
    path.write_text(json.dumps({"specs": SPECS, "cases": cases}, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
