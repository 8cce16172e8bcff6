"""Small trec_eval cases, each pinning one behaviour, and their trec_eval 9.0.8 outputs.

``python tests/support/trec_eval_findings.py TREC_EVAL`` writes ``tests/support/data/trec_eval_findings.json``
(``c_stdout`` is None where trec_eval fails: it refuses, or crashes).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

if __name__ == "__main__":  # run as a script: ``support`` is a package of tests/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.trec_eval_corpus import run_case

FINDINGS = Path(__file__).parent / "data" / "trec_eval_findings.json"

QRELS = (
    "no_query 0 d1 1\nno_query 0 d4 0\n"
    "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq1 0 d6 -1\n"
    "q2 0 d5 1\nq2 0 d6 0\n"
)
RUN = (
    "no_query Q0 d4 1 2.0 t\nno_query Q0 d1 2 1.0 t\n"
    "q1 Q0 d1 1 4 t\nq1 Q0 d2 2 3 t\nq1 Q0 d9 3 2 t\nq1 Q0 d3 4 1 t\n"
    "q2 Q0 d7 1 2 t\nq2 Q0 d8 2 1 t\n"
)
ARGVS = {
    "M0_official": ["-M", "0"],
    "M0_single": ["-q", "-M", "0", "-m", "num_rel", "-m", "gm_map", "-m", "iprec_at_recall"],
    "M0_all_trec": ["-q", "-c", "-M", "0", "-m", "all_trec"],
    "Rprec_mult_huge": ["-q", "-m", "Rprec_mult.1000000,3"],
    "P_huge_order": ["-m", "P.99999999999999999999,3,2147483648"],
    "l_huge_no_bpref": ["-l", "3000000000", "-m", "num_rel", "-m", "P.2"],
    "l_huge_official": ["-l", "3000000000"],
    "l_fraction": ["-q", "-l", "1.9", "-m", "num_rel_ret"],
    "M_fraction": ["-M", "1.9", "-m", "num_ret"],
    "M_negative": ["-M", "-1", "-m", "num_ret"],
    "ndcg_cut_fraction": ["-q", "-m", "ndcg_cut.10,20,23.4"],
    "J_nan": ["-q", "-J", "-m", "iprec_at_recall.0", "-m", "11pt_avg"],
    "no_query_all_trec": ["-q", "-m", "all_trec"],
    "G_inf": ["-q", "-m", "G.-1=2"],
    "G_nan": ["-q", "-m", "G.-1=2"],
}
# Cases on files of their own: (qrels, run).
OWN_FILES = {
    "G_nan": (
        "Q9 0 d3 2\nQ9 0 d2 2\n",
        "Q9 Q0 d4 1 2 t\nQ9 Q0 d3 2 7 t\nQ9 Q0 d2 3 2 t\nQ9 Q0 d5 4 7 t\nQ9 Q0 d7 5 0.5 t\n",
    ),
}


def files_of(name: str) -> tuple[str, str]:
    """The qrels and run texts of case ``name``."""
    return OWN_FILES.get(name, (QRELS, RUN))


def main() -> None:
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, argv in ARGVS.items():
            qrels, run = files_of(name)
            proc = run_case(sys.argv[1], {"qrels": qrels, "run": run, "argv": argv}, Path(tmp))
            found[name] = proc.stdout.decode("latin-1") if proc.returncode == 0 else None
    FINDINGS.write_text(json.dumps(found, indent=1) + "\n")


if __name__ == "__main__":
    main()
