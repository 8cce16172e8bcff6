"""Why each pinned trec_eval case is refused: the binary's message and ours.

Every corpus case where trec_eval 9.0.8 refuses or crashes (``c_stdout`` is None) is replayed
with its reason asserted, not only "exit 2 and one line": ``tests/support/data/trec_eval_refusals.json``
holds, per case (keyed by its files and arguments), the first line the binary wrote on standard
error (or the signal that ended it) and the refusal heta-eval gives. The replays compare ours
(``trec_eval_pinned.refusal_problem``); ``tests/trec_eval/test_trec_eval_refusals.py`` checks each pair
against :data:`REASONS`, the documented relation between the binary's message classes and ours.

Regenerate (the binary built from usnistgov/trec_eval v9.0.8; docs/trec_eval.md)::

    python tests/support/trec_eval_refusals.py /tmp/trec_eval-src/trec_eval
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
PINNED = DATA / "trec_eval_refusals.json"
CORPORA = ("fuzz", "engine", "levels", "options", "prefs", "qrels_jg")
FILES = ("qrels", "run", "zscores")

#: (our message class, the binary's message classes it may stand for, why). A class is a
#: regular expression searched in the message. Where one case has several faults, trec_eval
#: and heta-eval may name a different one first (we check options and every query before
#: reading on; trec_eval stops at the first fault it meets): those pairs are listed too.
REASONS: list[tuple[str, tuple[str, ...], str]] = [
    (r"cutoffs must be positive", (r"Negative cutoff detected",), "a cutoff below 1"),
    (r"duplicate cutoffs", (r"duplicate cutoffs detected",), "two cutoffs read alike"),
    (
        r"must be \d+ or more",
        (r"signal 11", r"Negative cutoff detected", r"No queries with both results"),
        "-M or -N below their minimum: trec_eval crashes, or stops on the first fault it meets",
    ),
    (
        r"with bpref: trec_eval 9\.0\.8 reads a counter for every level below",
        (r"signal 11",),
        "-l below 1 with bpref: trec_eval reads past an array and crashes",
    ),
    (
        r"every label is negative",
        (r"Can't", r"signal 11", r"Malformed line"),
        "a judged query whose labels are all negative: trec_eval stops or crashes",
    ),
    (
        r"no query has both results and relevance judgments",
        (r"No queries with both results and relevance info", r"Malformed line"),
        "nothing to score",
    ),
    (r"duplicate", (r"duplicate docs",), "a document twice where trec_eval refuses it"),
    (r"looking up query", (r"signal 11",), "-Z: a query the zscore file lacks (trec_eval crashes)"),
    (r"malformed, expected|expected \d+ fields", (r"Malformed line",), "a malformed line"),
    (r"judged twice in group", (r"duplicate docs",), "a document judged twice in one group"),
    (
        r"preferences form a cycle",
        (r"Pref inconsistency found", r"signal 6"),
        "inconsistent preferences: trec_eval stops, or aborts",
    ),
    (r"has both \S+ and non-\S+ rel", (r"has both",), "a document in two preference classes"),
    (
        r"is not computed from (preference judgments|judgment groups)|-m official",
        (
            r"rel_info format not",
            r"Malformed line",
            r"duplicate docs",
            r"No queries with both results",
        ),
        "a measure the -R format does not compute (refused before reading the files)",
    ),
    (
        r"needs judgment groups",
        (
            r"rel_info format not qrels_jg",
            r"Malformed line",
            r"duplicate docs",
            r"No queries with both results",
        ),
        "an avgjg measure without -R qrels_jg (refused before reading the files)",
    ),
]


def documented(ours: str) -> bool:
    """Whether ``ours`` is one of the refusals :data:`REASONS` documents."""
    return any(re.search(row[0], ours) for row in REASONS)


def explained(binary: str, ours: str) -> bool:
    """Whether refusing with ``ours`` is a documented reading of the binary's ``binary``."""
    row = next((row for row in REASONS if re.search(row[0], ours)), None)
    return row is not None and any(re.search(pattern, binary) for pattern in row[1])


def binary_message(status: int, stderr: bytes) -> str:
    """How the binary refused: the signal that ended it, or its first line on stderr."""
    if status < 0:
        return f"signal {-status}"
    lines = stderr.decode("latin-1").strip().splitlines()
    return reason(lines[0]) if lines else f"status {status}, nothing on stderr"


#: Measures trec_eval 9.0.8 prints in its summary only, and only per query (``-q``).
SUMMARY_ONLY = frozenset({"num_q", "runid", "gm_map", "gm_bpref"})
PER_QUERY_ONLY = frozenset({"relstring"})


def why_empty(argv: list[str]) -> str | None:
    """Why trec_eval prints nothing for ``argv`` (exit 0), or None where it should print."""
    measures = {argv[i + 1].split(".")[0] for i, a in enumerate(argv[:-1]) if a == "-m"}
    per_query, no_summary = "-q" in argv, "-n" in argv
    if no_summary and not per_query:
        return "-n drops the summary and no -q asks for per-query lines"
    if no_summary and measures and measures <= SUMMARY_ONLY:
        return f"-q -n: {', '.join(sorted(measures))} print in the summary only"
    if not per_query and measures and measures <= PER_QUERY_ONLY:
        return f"{', '.join(sorted(measures))} prints per query only, and there is no -q"
    return None


def case_key(case: dict) -> str:
    """A case's identity: its files and arguments."""
    blob = json.dumps([case.get(name) for name in FILES] + [case["argv"]], ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def reason(message: str) -> str:
    """A refusal message without the program's prefix and with the case's folder left out."""
    message = message.strip().removeprefix("heta-eval trec_eval: ").removeprefix("error: ")
    return re.sub(r"\S*/(qrels|run|zscores)\b", r"\1", message)


def pinned() -> dict[str, dict[str, str]]:
    return json.loads(PINNED.read_text(encoding="utf-8")) if PINNED.exists() else {}


def write_case(case: dict, folder: Path) -> list[str]:
    """``case``'s files written into ``folder``; its argv with the zscore file's path."""
    for name in FILES:
        if name in case:
            (folder / name).write_text(case[name], encoding="utf-8")
    return [str(folder / w) if w == "zscores" else w for w in case["argv"]]


def binary_reason(binary: str, case: dict, folder: Path) -> str:
    argv = write_case(case, folder)
    done = subprocess.run(
        [binary, *argv, str(folder / "qrels"), str(folder / "run")], capture_output=True, timeout=60
    )
    return binary_message(done.returncode, done.stderr)


def our_reason(case: dict, folder: Path, *, arrays: bool = False) -> str:
    """Our refusal of ``case``: through the line reader (small runs), or with every run read
    into arrays (``arrays``), which may name another of a case's faults first."""
    from heta_eval.cli import main
    from heta_eval.providers import backends

    threshold = backends.COMPILED_MIN_BYTES
    backends.COMPILED_MIN_BYTES = 0 if arrays else threshold
    try:
        return _our_reason(main, case, folder)
    finally:
        backends.COMPILED_MIN_BYTES = threshold


def _our_reason(main, case: dict, folder: Path) -> str:

    argv = write_case(case, folder)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["trec_eval", *argv, str(folder / "qrels"), str(folder / "run")])
    lines = [line for line in err.getvalue().splitlines() if ": note: " not in line]
    return reason(lines[0]) if code == 2 and lines else f"exit {code}"


def regenerate(binary: str) -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for corpus in CORPORA:
            for case in json.loads((DATA / f"trec_eval_{corpus}.json").read_text()):
                if case["c_stdout"] is None:
                    table[case_key(case)] = {
                        "corpus": corpus,
                        "binary": binary_reason(binary, case, folder),
                        "ours": our_reason(case, folder),
                        "ours_arrays": our_reason(case, folder, arrays=True),
                    }
    return table


if __name__ == "__main__":
    table = regenerate(sys.argv[1] if len(sys.argv) > 1 else "/tmp/trec_eval-src/trec_eval")
    PINNED.write_text(json.dumps(table, indent=0, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"{len(table)} refusals pinned in {PINNED}")
