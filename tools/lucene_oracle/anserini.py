"""The Java oracle: Anserini 0.22.1 (Lucene 9), the engine behind Pyserini's BEIR numbers.

Tests and benchmarks compare :mod:`heta_eval.lucene` with the real thing. The jar comes
from the ``pyserini==0.22.1`` wheel on PyPI (``pip download --no-deps``, never installed),
which carries ``anserini-0.22.1-fatjar.jar``; it runs on Java 11+. Everything lives in a cache
outside the repository (``$HETA_EVAL_ANSERINI_CACHE``, default ``~/.cache/heta-eval/anserini``),
and outputs (token streams, indexes, runs) are kept there keyed by their inputs, so a rerun
costs nothing. Nothing outside tests and benchmarks needs Java.

The small programs it compiles against the jar are Java files in ``java/``:
``AnalyzeTexts`` runs Anserini's default analyzer (``DefaultEnglishAnalyzer``, what its BM25
indexes use) over NUL-separated texts, one line of space-separated terms per text;
``TokenizeTexts`` runs Lucene's ``StandardTokenizer`` (the analyzer's first step), one line of
tab-separated tokens per text; ``ProbeCodePoints`` tokenizes every code point in each probe
context and writes, run-length encoded, which behaviour each code point shows.

>>> reason = unavailable()  # doctest: +SKIP
>>> reason or "java and the jar are here"  # doctest: +SKIP
'java and the jar are here'
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from heta_eval import config

__all__ = [
    "ANSERINI_VERSION",
    "AnseriniRun",
    "OracleUnavailable",
    "analyze_texts",
    "bm25_run",
    "cache_dir",
    "fatjar",
    "probe_code_points",
    "tokenize_texts",
    "unavailable",
]

ANSERINI_VERSION = "0.22.1"
_JAR = f"anserini-{ANSERINI_VERSION}-fatjar.jar"


class OracleUnavailable(RuntimeError):
    """Java, javac or the pyserini wheel is missing; the message says which, in one line."""


def cache_dir() -> Path:
    """Where the wheel, the jar and the oracle's outputs are kept."""
    return config.anserini_dir()


def unavailable() -> str | None:
    """Why the oracle cannot run here (one line), or None when it can."""
    try:
        fatjar()
        _java("javac")
    except OracleUnavailable as error:
        return str(error)
    return None


def _java(tool: str = "java") -> str:
    path = shutil.which(tool)
    if path is None:
        raise OracleUnavailable(f"{tool} not found on PATH (the Anserini oracle needs Java 11+)")
    return path


@lru_cache(maxsize=1)
def fatjar() -> Path:
    """The Anserini fat jar, fetched from the pyserini wheel on first use."""
    _java()
    folder = cache_dir()
    jar = folder / _JAR
    if jar.exists():
        return jar
    folder.mkdir(parents=True, exist_ok=True)
    wheels = sorted(folder.glob(f"pyserini-{ANSERINI_VERSION}-*.whl"))
    if not wheels:
        done = subprocess.run(
            # Bounded: without a reachable registry this must fail fast, not retry for minutes.
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--quiet",
                "--timeout",
                "30",
                "--retries",
                "1",
                f"pyserini=={ANSERINI_VERSION}",
                "-d",
                str(folder),
            ],
            capture_output=True,
            text=True,
        )
        wheels = sorted(folder.glob(f"pyserini-{ANSERINI_VERSION}-*.whl"))
        if not wheels:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise OracleUnavailable(f"cannot download pyserini=={ANSERINI_VERSION}: {last}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        member = next((n for n in wheel.namelist() if n.endswith("/" + _JAR)), None)
        if member is None:
            raise OracleUnavailable(f"{wheels[0].name} holds no {_JAR}")
        partial = jar.with_suffix(f".{os.getpid()}.part")
        with wheel.open(member) as source, partial.open("wb") as target:
            shutil.copyfileobj(source, target)
        partial.replace(jar)
    wheels[0].unlink()  # 135 MB, no longer needed once the jar is out
    return jar


def _digest(*parts: object) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else json.dumps(part).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _run(args: Sequence[str], log: Path) -> float:
    started = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(list(args), stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        raise RuntimeError(f"{' '.join(args[:4])} ... failed: {' | '.join(tail)}")
    return time.perf_counter() - started


def analyze_texts(texts: Sequence[str], *, fresh: bool = False) -> list[list[str]]:
    """Lucene's terms for each text, from Anserini's default English analyzer (cached)."""
    return _per_text("AnalyzeTexts", texts, " ", fresh=fresh)


def tokenize_texts(texts: Sequence[str], *, fresh: bool = False) -> list[list[str]]:
    """The tokens of Lucene's ``StandardTokenizer`` for each text, case kept (cached)."""
    return _per_text("TokenizeTexts", texts, "\t", fresh=fresh)


def probe_code_points(contexts: Sequence[Sequence[int]]) -> tuple[list[int], list[str]]:
    """Tokenize every code point in each context (0xE000 marks where it goes): the behaviour id
    of each code point (surrogates get -1) and each behaviour's token spans. About 30 s of Java
    for 50 contexts on 2 cores; cached."""
    if not all(0xE000 in context for context in contexts):
        raise ValueError("every context needs the placeholder 0xE000")
    lines = "".join(" ".join(f"{c:x}" for c in context) + "\n" for context in contexts)
    out = _java_output("ProbeCodePoints", lines.encode(), ".txt", fresh=False)
    text = out.read_text(encoding="utf-8").split("\n")
    split = text.index("#")
    ids = [-1] * 0x110000
    runs = [line.split() for line in text[:split]]
    bounds = [int(start, 16) for start, _ in runs] + [0x110000]
    for (start, behaviour), end in zip(runs, bounds[1:], strict=True):
        for c in range(int(start, 16), end):
            ids[c] = int(behaviour)
    for c in range(0xD800, 0xE000):
        ids[c] = -1
    behaviours = [line.split(" ", 1)[1] for line in text[split + 1 :] if line]
    return ids, behaviours


def _per_text(program: str, texts: Sequence[str], sep: str, *, fresh: bool) -> list[list[str]]:
    if any("\0" in t for t in texts):
        raise ValueError("texts must not contain NUL (it separates them for the Java side)")
    payload = "\0".join(texts).encode("utf-8")
    out = _java_output(program, payload, ".txt", fresh=fresh)
    lines = out.read_bytes().decode("utf-8").split("\n")[: len(texts)]
    return [line.split(sep) if line else [] for line in lines]


def _java_output(program: str, payload: bytes, suffix: str, *, fresh: bool) -> Path:
    """Run ``program`` (compiled from ``java/<program>.java`` against the jar) on ``payload``;
    its output file, cached by program, source and payload."""
    source = (Path(__file__).with_name("java") / f"{program}.java").read_text(encoding="utf-8")
    jar = fatjar()
    folder = cache_dir() / "analyze"
    out = folder / f"{program}-{_digest(ANSERINI_VERSION, source, payload)}{suffix}"
    if fresh or not out.exists():
        classes = folder / f"classes-{_digest(source)}"
        if not (classes / f"{program}.class").exists():
            classes.mkdir(parents=True, exist_ok=True)
            (classes / f"{program}.java").write_text(source, encoding="utf-8")
            _run(
                [
                    _java("javac"),
                    "-cp",
                    str(jar),
                    "-d",
                    str(classes),
                    str(classes / f"{program}.java"),
                ],
                folder / "javac.log",
            )
        # Per-process names: two test runs may ask for the same texts at once.
        given = folder / f"input-{os.getpid()}.bin"
        given.write_bytes(payload)
        partial = out.with_suffix(f".{os.getpid()}.part")
        _run(
            [_java(), "-cp", f"{jar}{os.pathsep}{classes}", program, str(given), str(partial)],
            folder / "java.log",
        )
        partial.replace(out)
        given.unlink()
    return out


@dataclass(frozen=True)
class AnseriniRun:
    """An Anserini BM25 run: ``hits[qid]`` = ``[(docid, score), ...]`` best first, and the
    wall seconds of indexing and searching (None when they came from the cache)."""

    hits: dict[str, list[tuple[str, float]]]
    index_seconds: float | None
    search_seconds: float | None


def bm25_run(
    corpus: Path,
    topics: Mapping[str, str],
    *,
    multifield: bool = False,
    k1: float = 0.9,
    b: float = 0.4,
    hits: int = 1000,
    threads: int = 2,
    fresh: bool = False,
) -> AnseriniRun:
    """Index a BEIR ``corpus.jsonl`` and search ``topics`` with Anserini, as Pyserini's 2CR
    BEIR rows do (``-bm25 -removeQuery``; flat: title + text in ``contents``; multifield:
    ``contents`` = text and ``title``, searched with ``-fields contents=1.0 title=1.0``).

    Indexes and runs are cached by the corpus's content and the settings; ``fresh`` redoes
    both in a scratch folder (benchmarks time it that way).
    """
    jar = str(fatjar())
    corpus = Path(corpus)
    flavor = "multifield" if multifield else "flat"
    corpus_key = _digest(ANSERINI_VERSION, flavor, _file_digest(corpus))
    root = cache_dir() / "bm25" / corpus_key
    if fresh:
        root = root.with_name(f"{corpus_key}-fresh")
        shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    index = root / "index"
    index_seconds = search_seconds = None
    if not (index / "done").exists():
        shutil.rmtree(index, ignore_errors=True)
        source = root / "input"
        source.mkdir(exist_ok=True)
        link = source / "corpus.jsonl"
        if not link.exists():
            link.symlink_to(corpus.resolve())
        collection = "BeirMultifieldCollection" if multifield else "BeirFlatCollection"
        extra = ["-fields", "title"] if multifield else []
        index_seconds = _run(
            [
                _java(),
                "-cp",
                jar,
                "io.anserini.index.IndexCollection",
                "-collection",
                collection,
                "-input",
                str(source),
                "-index",
                str(index),
                "-generator",
                "DefaultLuceneDocumentGenerator",
                "-threads",
                str(threads),
                *extra,
            ],
            root / "index.log",
        )
        (index / "done").write_text("")
    topic_lines = "".join(f"{q}\t{_one_line(t)}\n" for q, t in topics.items())
    run = root / f"run-{_digest(topic_lines, k1, b, hits)}.trec"
    if not run.exists():
        topic_file = root / "topics.tsv"
        topic_file.write_text(topic_lines, encoding="utf-8")
        extra = ["-fields", "contents=1.0", "title=1.0"] if multifield else []
        partial = run.with_suffix(f".{os.getpid()}.part")
        search_seconds = _run(
            [
                _java(),
                "-cp",
                jar,
                "io.anserini.search.SearchCollection",
                "-index",
                str(index),
                "-topics",
                str(topic_file),
                "-topicreader",
                "TsvString",
                "-output",
                str(partial),
                "-bm25",
                "-bm25.k1",
                str(k1),
                "-bm25.b",
                str(b),
                "-hits",
                str(hits),
                "-removeQuery",
                "-threads",
                str(threads),
                *extra,
            ],
            root / "search.log",
        )
        partial.replace(run)
    parsed: dict[str, list[tuple[str, float]]] = {q: [] for q in topics}
    with run.open(encoding="utf-8") as lines:
        for line in lines:
            qid, _, docid, _, score, _ = line.split()
            parsed[qid].append((docid, float(score)))
    return AnseriniRun(parsed, index_seconds, search_seconds)


def _one_line(text: str) -> str:
    # TsvString topics are one line each; whitespace never changes the analyzed terms.
    return " ".join(text.split())


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
