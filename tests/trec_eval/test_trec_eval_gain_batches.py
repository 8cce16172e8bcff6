"""Gains given as ``label=gain`` pairs over more queries than one pytrec_eval call takes.

pytrec_eval rewrites such pairs in place as it reads them, so an evaluator given them can
evaluate once; a second batch of queries through the same one crashed the process
(SIGSEGV, after "malformed pair parameters in '1,2'")."""

from __future__ import annotations

import random
import subprocess
import sys

from heta_eval.trec_eval import compute, trec_eval_lines


def write_inputs(folder) -> tuple[str, str]:
    rng = random.Random(7)
    qrels, run = [], []
    for q in range(compute._BATCH + 44):  # two batches
        for d in range(6):
            qrels.append(f"q{q} 0 d{d} {rng.choice([-1, 0, 1, 2])}\n")
        for d in range(8):
            run.append(f"q{q} Q0 d{d} {d} {rng.random():.6f} t\n")
    (folder / "qrels").write_text("".join(qrels))
    (folder / "run").write_text("".join(run))
    return str(folder / "qrels"), str(folder / "run")


def test_gain_pairs_over_two_batches_print_the_values_of_one_evaluation(tmp_path, monkeypatch):
    qrels, run = write_inputs(tmp_path)
    argv = ["-q", "-m", "ndcg.1=3,2=1", "-m", "Rndcg.0=1", "-m", "G.2=5", "-m", "ndcg_rel.1=2"]
    for level in ("1", "0"):
        proc = subprocess.run(
            [sys.executable, "-m", "heta_eval", "trec_eval", *argv, "-l", level, qrels, run],
            capture_output=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr.decode()
        monkeypatch.setattr(compute, "_BATCH", 10**6)  # every query in one call
        one_call = "".join(
            f"{text}\n" for text in trec_eval_lines([*argv, "-l", level, qrels, run])
        )
        monkeypatch.undo()
        assert proc.stdout.decode() == one_call
        assert proc.stdout.count(b"\tq1\t") == 4
