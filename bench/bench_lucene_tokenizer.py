"""Lucene's StandardTokenizer without Java: the DFA tokenizer vs the regex one it replaced.

Row ``Lucene tokenizer SciFact vs regex tokenizer``: seconds to tokenize the 5,183 SciFact
documents (title + text) and its 1,109 queries, ours against the ``regex``-module tokenizer of
git revision ``--baseline`` (the one before the DFA; loaded with ``git show``), median of
``--repeats`` alternated runs in one process. ``identical``: both give the same tokens.

Row ``Lucene tokenizer hostile 1 MB``: the slowest of several hostile one-megabyte documents
(a letter run, an underscore run, joiners, a Hebrew letter before Latin letters, extends after
a joiner, mixed scripts); goal: under a second each. The baseline is not run on these: it is
super-linear (one Hebrew letter and 800 Latin letters took it 20 s or more).

    python bench/bench_lucene_tokenizer.py [--baseline REV] [--repeats N] [--output FILE]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _rows import emit, interleaved, log, row  # noqa: E402

from heta_eval.lucene.tokenizer import standard_tokens  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "datasets" / "beir" / "scifact"


def baseline_tokenizer(revision: str):  # type: ignore[no-untyped-def]
    """``standard_tokens`` of the tokenizer module at ``revision``: in heta_eval/lucene/ since
    the rooms of issue 50, in heta_eval/kb/lucene/ before."""
    for path in ("heta_eval/lucene/tokenizer.py", "heta_eval/kb/lucene/tokenizer.py"):
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{revision}:{path}"], capture_output=True, text=True
        )
        if shown.returncode == 0:
            source = shown.stdout
            break
    else:
        raise SystemExit(f"no tokenizer module at {revision}: {shown.stderr.strip()}")
    folder = Path(tempfile.mkdtemp())
    (folder / "baseline_tokenizer.py").write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(
        "baseline_tokenizer", folder / "baseline_tokenizer.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.standard_tokens


def hostile(size: int) -> dict[str, str]:
    rng = random.Random(0)
    mixed = "a\u05d0\u30a2\u0e01_1.'\"\u4e00\U0001d400\U0001f600\u200d\u0301"
    return {
        "letters": "a" * size,
        "underscores": "x" + "_" * (size - 2) + "y",
        "joiners": "\u200d" * size,
        "hebrew + latin": "\u05d0" + "a" * (size - 1),
        "extends after a joiner": "a." + "\u0301" * (size - 2),
        "mixed scripts": "".join(rng.choice(mixed) for _ in range(size)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="62740e8")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data", type=Path, default=SCIFACT)
    parser.add_argument("--output")
    # run_all.py passes --quick to every script; this one is already short.
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)

    with (args.data / "corpus.jsonl").open(encoding="utf-8") as lines:
        docs = [json.loads(line) for line in lines]
    with (args.data / "queries.jsonl").open(encoding="utf-8") as lines:
        queries = [json.loads(line)["text"] for line in lines]
    texts = [f"{d['title']} {d['text']}" for d in docs] + queries
    old = baseline_tokenizer(args.baseline)
    list(standard_tokens("warm up the compiled scan"))

    def ours() -> list[list[str]]:
        return [list(standard_tokens(t)) for t in texts]

    def peer() -> list[list[str]]:
        return [list(old(t)) for t in texts]

    log(f"tokenizing {len(texts)} SciFact texts, {args.repeats} alternated runs each")
    ours_s, ours_tokens, peer_s, peer_tokens = interleaved(ours, peer, args.repeats)
    rows = [
        row(
            "Lucene tokenizer SciFact vs regex tokenizer",
            peer=f"regex tokenizer at {args.baseline}",
            goal=">= 1",
            ours_s=ours_s,
            peer_s=peer_s,
            units=len(texts),
            identical=ours_tokens == peer_tokens,
            notes=f"{len(docs)} documents + {len(queries)} queries, median of {args.repeats}",
        )
    ]
    worst, times = 0.0, []
    for name, text in hostile(1_000_000).items():
        started = time.perf_counter()
        list(standard_tokens(text))
        seconds = time.perf_counter() - started
        worst = max(worst, seconds)
        times.append(f"{name} {seconds:.2f} s")
        log(f"hostile {name}: {seconds:.3f} s")
    rows.append(
        row(
            "Lucene tokenizer hostile 1 MB",
            peer=None,
            goal="< 1 s each",
            ours_s=worst,
            met=worst < 1,
            notes="; ".join(times),
        )
    )
    emit(rows, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
