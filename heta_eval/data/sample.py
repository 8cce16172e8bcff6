"""Quick subsets of a BEIR dataset (``heta-eval run --sample N``), written once as a BEIR
folder of their own under the cache, so everything that reads a dataset folder (the runner,
the corpus store, the report, ``datasets validate``) reads a sample unchanged.

A sample of ``N`` queries, seed ``S``:

* **queries**: the ``N`` judged queries of the split whose keys are smallest, a query's key
  being the first 8 bytes of BLAKE2b(``S:query id``): seeded, independent of the file's
  order, and nested (the sample of 50 is inside the sample of 100 of the same seed);
* **judged documents**: every document a sampled query's judgments name (labels 0 too) stays
  in the corpus, so no judged document is missing from the sample (stratified by query);
* **distractors**: unjudged documents (judged by no sampled query) chosen by the same kind of
  key, as many as keep the corpus's documents-per-query ratio (``--sample-documents M``:
  ``M`` documents in all instead).

Lines are copied byte for byte, in the source's order; ``qrels/<split>.tsv`` keeps its header
line. ``sample.json`` records what the sample is, and the dataset is named
``<name>-sample-<N>-seed-<S>`` (``-docs-<M>`` with ``M``), so a results folder of a sample is
never compared with the full dataset's as an equal (another name, corpus and cases:
:mod:`heta_eval.compare.comparability`), nor checked against its published numbers.

>>> sample_name("scifact", SampleSpec(100, seed=0))
'scifact-sample-100-seed-0'
>>> key(0, "q1") == key(0, "q1") != key(1, "q1")
True
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from heta_eval.data.beir_loader import (
    DatasetFormatError,
    count_lines,
    jsonl_line_problem,
    load_qrels,
)

__all__ = ["SAMPLE_FILE", "SampleError", "SampleSpec", "key", "sample_dataset", "sample_name"]

#: What a sample folder records about itself.
SAMPLE_FILE = "sample.json"
#: The sampling rule's version: a folder made by another rule is another cache entry.
_VERSION = 1


class SampleError(ValueError):
    """A sample that cannot be drawn (too many queries, too few documents); one line."""


@dataclass(frozen=True)
class SampleSpec:
    """``queries`` judged queries, drawn with ``seed``; ``documents``: the corpus's size in
    all (None: the full corpus's documents per query, times ``queries``)."""

    queries: int
    seed: int = 0
    documents: int | None = None

    def __post_init__(self) -> None:
        if self.queries < 1:
            raise ValueError(f"a sample needs at least 1 query, got {self.queries}")
        if self.seed < 0:
            raise ValueError(f"a sample's seed is at least 0, got {self.seed}")
        if self.documents is not None and self.documents < 1:
            raise ValueError(f"a sample needs at least 1 document, got {self.documents}")


def sample_name(name: str, spec: SampleSpec) -> str:
    """The sampled dataset's name: ``scifact-sample-100-seed-0`` (``-docs-2000`` with a size)."""
    docs = f"-docs-{spec.documents}" if spec.documents is not None else ""
    return f"{name}-sample-{spec.queries}-seed-{spec.seed}{docs}"


def key(seed: int, identifier: str) -> int:
    """The draw's key of one id: smaller keys are drawn first."""
    digest = hashlib.blake2b(f"{seed}:{identifier}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def _lines(path: Path) -> Iterator[tuple[int, bytes, str]]:
    """``(line number, raw line, _id)`` of every non-empty line of a BEIR jsonl file."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            found, why = jsonl_line_problem(raw)
            if why is not None:
                raise DatasetFormatError(why, path, number)
            yield number, raw if raw.endswith(b"\n") else raw + b"\n", str(found["_id"])


def _source_key(folder: Path, split: str, spec: SampleSpec) -> str:
    """The cache key: the source files (path, size, modification time), split, spec."""
    parts: list[Any] = [_VERSION, str(folder.resolve()), split, asdict(spec)]
    for name in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        try:
            stat = (folder / name).stat()
        except OSError as error:
            raise SampleError(f"{folder / name}: {error.strerror or error}") from None
        parts.append([name, stat.st_size, stat.st_mtime_ns])
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


def sample_dataset(
    folder: Path, split: str, spec: SampleSpec, *, name: str, cache_root: Path
) -> Path:
    """The sample of the BEIR folder ``folder`` (its ``split``), written once under
    ``cache_root/<key>/<sample name>`` and found there afterwards; its path. A
    :class:`SampleError` when the dataset has too few queries or ``spec.documents`` is below
    the judged documents of the sampled queries."""
    target = cache_root / _source_key(folder, split, spec) / sample_name(name, spec)
    if (target / SAMPLE_FILE).is_file():
        return target
    staging: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".sample-", dir=target.parent))
        record = _write_sample(folder, split, spec, name, staging)
        (staging / SAMPLE_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        try:
            os.rename(staging, target)  # whole, or not at all
        except OSError:
            if not (target / SAMPLE_FILE).is_file():  # not another process's finished one
                raise
    except OSError as error:  # a cache that cannot be written, a full disk
        raise SampleError(f"cannot sample {folder} into {cache_root}: {error}") from None
    finally:
        if staging is not None and staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _write_sample(
    folder: Path, split: str, spec: SampleSpec, name: str, out: Path
) -> dict[str, Any]:
    qrels_path = folder / "qrels" / f"{split}.tsv"
    qrels = load_qrels(qrels_path)
    if spec.queries > len(qrels):
        raise SampleError(
            f"--sample {spec.queries}: {name} has {len(qrels):,} judged {split} queries; "
            "sample fewer (or run the whole dataset)"
        )
    chosen = set(heapq.nsmallest(spec.queries, qrels, key=lambda qid: key(spec.seed, qid)))
    judged = {doc for qid in chosen for doc in qrels[qid]}
    total = count_lines(folder / "corpus.jsonl")
    wanted = spec.documents or max(round(total * spec.queries / len(qrels)), 1)
    present, distractors = _draw(folder / "corpus.jsonl", judged, wanted, spec.seed)
    if wanted < len(present):
        raise SampleError(
            f"--sample-documents {wanted}: the {spec.queries} sampled queries judge "
            f"{len(present):,} documents, which all stay; ask for at least that many"
        )
    (out / "qrels").mkdir()
    with (out / "corpus.jsonl").open("wb") as corpus:
        for index, (_, raw, doc_id) in enumerate(_lines(folder / "corpus.jsonl")):
            if index in distractors or doc_id in present:
                corpus.write(raw)
    with (out / "queries.jsonl").open("wb") as queries:
        for _, raw, qid in _lines(folder / "queries.jsonl"):
            if qid in chosen:
                queries.write(raw)
    with qrels_path.open("rb") as source, (out / "qrels" / f"{split}.tsv").open("wb") as target:
        for number, raw in enumerate(source):
            cells = raw.split(b"\t")
            if number == 0 or (len(cells) > 1 and _text(cells[0]) in chosen):
                target.write(raw if raw.endswith(b"\n") else raw + b"\n")
    if load_qrels(out / "qrels" / f"{split}.tsv") != {
        qid: qrels[qid] for qid in qrels if qid in chosen
    }:
        raise DatasetFormatError(f"the sample's qrels differ from the sampled queries' ({name})")
    return {
        "of": name,
        "source": str(folder),
        "split": split,
        "seed": spec.seed,
        "queries": spec.queries,
        "of_queries": len(qrels),
        "documents": len(present) + len(distractors),
        "of_documents": total,
        "judged_documents": len(present),
        "judged_missing_from_corpus": len(judged - present),
        "distractors": len(distractors),
        "documents_asked": spec.documents,
        "rule": f"heta-eval sample v{_VERSION}: queries and distractors by BLAKE2b(seed:id)",
    }


def _draw(corpus: Path, judged: set[str], wanted: int, seed: int) -> tuple[set[str], set[int]]:
    """The judged documents the corpus holds, and the line indexes of the distractors: the
    unjudged documents with the smallest keys, as many as bring the corpus to ``wanted``
    (one pass; memory bounded by the sample, not the corpus)."""
    present: set[str] = set()
    # (-key, index) of the `wanted` smallest keys so far (the judged count is known only at
    # the end): the largest kept key on top, replaced by any smaller one.
    heap: list[tuple[int, int]] = []
    for index, (_, _, doc_id) in enumerate(_lines(corpus)):
        if doc_id in judged:
            present.add(doc_id)
            continue
        item = (-key(seed, doc_id), index)
        if len(heap) < wanted:
            heapq.heappush(heap, item)
        elif heap and item > heap[0]:
            heapq.heapreplace(heap, item)
    keep = max(wanted - len(present), 0)
    best = sorted(heap, reverse=True)[:keep]  # smallest keys first
    return present, {index for _, index in best}


def _text(cell: bytes) -> str:
    # A qrels cell as BEIR's csv reader would give it: quotes removed.
    return cell.decode("utf-8", errors="replace").strip().strip('"')
