"""Regenerate trec_eval_reading.json: trec_eval 9.0.8's output on inputs that test how each
byte is read (run from the repository root with the C binary built):
python tests/support/data/make_trec_eval_reading.py /path/to/trec_eval"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ODD_SPACES = ["\u00a0", "\u0085", "\u2028", "\x1c", "\x1d", "\x1e", "\x1f"]
CASES: dict[str, tuple[str, str]] = {
    **{
        f"id holding {ch.encode('unicode_escape').decode()} with a 7th column": (
            f"q1 0 d{ch}x 1\nq1 0 e 0\n",
            f"q1 Q0 d{ch}x 1 2.0 tag extra\nq1 Q0 e 2 1.0 tag\n",
        )
        for ch in ODD_SPACES
    },
    "id holding U+00A0 after a blank line": (
        "q1 0 d\u00a0x 1\nq1 0 e 0\n",
        "q1 Q0 e 2 1.0 tag\n\nq1 Q0 d\u00a0x 1 2.0 tag\n",
    ),
    "Arabic-Indic and full-width digits as scores": (
        "q1 0 a 1\nq1 0 b 0\n",
        "q1 Q0 b 1 \u0662 t\nq1 Q0 a 2 \uff11 t\nq1 Q0 c 3 0.5 t\n",
    ),
    "Arabic-Indic and full-width digits as labels": (
        "q1 0 a \u0661\nq1 0 b \uff12\nq1 0 c 1\n",
        "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 1 t\n",
    ),
    "atof and atol prefixes": (
        "q1 0 a 1.9\nq1 0 b x\nq1 0 c 2e1\n",
        "q1 Q0 a 1 abc t\nq1 Q0 b 2 1e t\nq1 Q0 c 3 0x1p3 t\n",
    ),
    "a query id starting with #": ("#1 0 d1 1\n# 0 d2 1\n", "#1 Q0 d1 1 1 t\n# Q0 d2 1 1 t\n"),
    "qrels mixing tabs and spaces": (
        "q1 0\td1\t1\nq1\t0 d2 1\n",
        "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n",
    ),
    "a run tag holding a carriage return on the last line": (
        "q1 0 d1 1\n",
        "q1 Q0 d1 1 2 t1\nq1 Q0 d2 2 1 ta\rg",
    ),
    "a byte-order mark at the start of both files": (
        "\ufeffq1 0 d1 1\nq2 0 d1 1\n",
        "\ufeffq1 Q0 d1 1 2 t\nq2 Q0 d1 1 1 t\n",
    ),
    "a qrels header line": ("qid iter docno rel\nq1 0 d1 1\n", "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n"),
}
ARGS = [
    "-q",
    "-c",
    "-m",
    "num_q",
    "-m",
    "num_rel",
    "-m",
    "num_ret",
    "-m",
    "P.1,2",
    "-m",
    "map",
    "-m",
    "runid",
]


def main(binary: str) -> None:
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, (qrels_text, run_text) in CASES.items():
            qrels, run = Path(folder, "qrels"), Path(folder, "run")
            qrels.write_bytes(qrels_text.encode())
            run.write_bytes(run_text.encode())
            done = subprocess.run([binary, *ARGS, qrels, run], capture_output=True, check=True)
            out[name] = {
                "qrels": qrels_text,
                "run": run_text,
                "args": ARGS,
                "stdout": done.stdout.decode("utf-8"),
            }
    target = Path(__file__).with_name("trec_eval_reading.json")
    target.write_text(json.dumps(out, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
