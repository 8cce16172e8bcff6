"""Building a Lucene BM25 index in blocks, in memory bounded by the index itself.

As Lucene writes segments and merges them: the documents are read a block at a time (the
fields in lockstep, never all texts at once), each block is analyzed in a worker process
(:mod:`.blocks`; one per usable CPU) into postings on disk, and the main process keeps only
the vocabulary, each term's document frequency and the documents' one-byte norms. Once every
block is in, each field's terms are sorted (a term's id is its rank, :mod:`.terms`), and the
blocks' postings are merged into the final arrays, written straight to disk:

===================  ==========================================================
``indptr.npy``       int64, terms + 1: term ``t``'s postings are ``[indptr[t], indptr[t+1])``
``docs.npy``         uint32 (int64 past 2**32 documents): the postings' documents, ascending
``freqs.npy``        uint8, uint16 where a term occurs 256+ times in one document, else uint32
``norms.npy``        uint8, (fields, documents): Lucene's one-byte lengths
``tie_ranks.npy``    uint32 (int64 past 2**32): each document's rank among the tie keys
``terms.npy`` ...    the term table (:mod:`.terms`)
``lucene_bm25.json`` fields, k1, b, counts, field statistics: written last
===================  ==========================================================
"""

from __future__ import annotations

import json
import mmap
import shutil
import sys
from collections.abc import Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tqdm.auto import tqdm

from heta_eval._runtime import return_free_memory, usable_cpus
from heta_eval.lucene.blocks import BlockAnalyzers, BlockPostings, block_files
from heta_eval.lucene.similarity import encode_lengths
from heta_eval.lucene.terms import TermTableWriter

__all__ = ["DEFAULT_BLOCK_SIZE", "META", "build_index", "tie_ranks_of"]

#: Documents analyzed per block: a block's postings and transient analysis are held at once,
#: so the size bounds memory; smaller blocks built slower on 2 processes (more hand-overs
#: between them; docs/scale.md).
DEFAULT_BLOCK_SIZE = 10_000
META = "lucene_bm25.json"
_BLOCKS = "blocks"


def build_index(
    fields: Mapping[str, Sequence[str]],
    directory: Path,
    *,
    k1: float,
    b: float,
    tie_keys: Any = None,
    tie_ranks: Any = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    workers: int | None = None,
    progress: bool = False,
    version: str,
) -> dict[str, Any]:
    """Index ``fields`` into ``directory`` (the files above); returns what the meta file holds."""
    names = list(fields)
    if not names:
        raise ValueError("LuceneBM25Index needs at least one field")
    n = len(fields[names[0]])
    if any(len(fields[name]) != n for name in names):
        raise ValueError("every field needs one text per document")
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, not {block_size}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ranks = tie_ranks_of(n, tie_keys, tie_ranks)
    np.save(directory / "tie_ranks.npy", ranks, allow_pickle=False)
    del ranks
    folder = directory / _BLOCKS
    folder.mkdir(exist_ok=True)
    try:
        state = _Blocks(names, n, directory, folder)
        blocks = -(-n // block_size)
        workers = 1 if blocks <= 1 else min(blocks, workers or usable_cpus())
        with (
            BlockAnalyzers(workers) as analyzers,
            tqdm(
                total=n,
                desc="indexing BM25",
                unit="doc",
                file=sys.stderr,
                disable=not progress,
                dynamic_ncols=True,
                smoothing=0.1,
            ) as bar,
        ):
            contents = names.index("contents") if "contents" in names else None
            for number, (start, texts) in enumerate(_lockstep(fields, names, n, block_size)):
                done = analyzers.take() if analyzers.busy else None
                # The freed process gets its next block before this one takes the result in.
                analyzers.submit((number, start, texts, contents, str(folder)))
                if done is not None:
                    bar.update(state.absorb(done))
            for result in analyzers.results():
                bar.update(state.absorb(result))
            bar.set_postfix_str("merging the blocks")
            analyzers.close()  # the workers' memory is not the merge's
            meta = state.merge()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    meta.update({"format": version, "fields": names, "k1": k1, "b": b})
    (directory / META).write_text(json.dumps(meta), encoding="utf-8")
    if n >= 100_000:  # the vocabulary and the blocks' analyses: the searches reuse none
        return_free_memory()
    return meta


def _lockstep(
    fields: Mapping[str, Sequence[str]], names: list[str], n: int, size: int
) -> Iterator[tuple[int, list[list[str]]]]:
    """``(first document, texts per field)`` per block: each field iterated once, together."""
    columns = [iter(fields[name]) for name in names]
    for start in range(0, n, size):
        texts = [list(islice(column, min(size, n - start))) for column in columns]
        for name, got in zip(names, texts, strict=True):
            if len(got) != min(size, n - start):
                raise ValueError(
                    f"field {name!r} ended after {start + len(got):,} texts; its len() said {n:,}"
                )
        yield start, texts
    for name, column in zip(names, columns, strict=True):
        if next(column, None) is not None:
            raise ValueError(f"field {name!r} holds more texts than its len() said ({n:,})")


class _Blocks:
    """What the main process keeps while blocks come in, and the final merge."""

    def __init__(self, names: list[str], n: int, directory: Path, folder: Path) -> None:
        self.n, self.directory, self.folder = n, directory, folder
        self.vocab: list[dict[str, int]] = [{} for _ in names]
        self.df = [np.zeros(1024, dtype=np.int64) for _ in names]  # by first-seen id
        self.sums = [0] * len(names)
        self.doc_counts = [0] * len(names)
        self.max_freq = self.skipped = 0
        self.blocks: list[tuple[int, int]] = []  # (number, start)
        self.norms = np.lib.format.open_memmap(
            directory / "norms.npy", "w+", np.uint8, (len(names), n)
        )

    def absorb(self, block: BlockPostings) -> int:
        """Take one analyzed block in; returns its number of documents."""
        for f, (terms, counts, lengths) in enumerate(
            zip(block.terms, block.counts, block.lengths, strict=True)
        ):
            vocab = self.vocab[f]
            ids = np.fromiter(
                (vocab.setdefault(t, len(vocab)) for t in terms), np.int64, len(terms)
            )
            if len(vocab) > len(self.df[f]):
                grown = np.zeros(max(len(vocab), 2 * len(self.df[f])), dtype=np.int64)
                grown[: len(self.df[f])] = self.df[f]
                self.df[f] = grown
            self.df[f][ids] += counts
            np.save(self.folder / f"{block.number}-{f}-ids.npy", ids)
            np.save(self.folder / f"{block.number}-{f}-counts.npy", counts)
            self.norms[f, block.start : block.start + block.size] = encode_lengths(lengths)
            self.sums[f] += int(lengths.sum())
            self.doc_counts[f] += int(np.count_nonzero(lengths))
        self.max_freq = max(self.max_freq, block.max_freq)
        self.skipped += block.skipped
        self.blocks.append((block.number, block.start))
        return block.size

    def merge(self) -> dict[str, Any]:
        """Sort the terms, then write every block's postings to their final places."""
        self.norms.flush()
        del self.norms
        finals = []
        with TermTableWriter(self.directory) as writer:
            for f, vocab in enumerate(self.vocab):
                ordered = writer.add_field(vocab)
                first_seen = np.fromiter(map(vocab.__getitem__, ordered), np.int64, len(ordered))
                final = np.empty(len(ordered), dtype=np.int64)
                final[first_seen] = writer.field_starts[f] + np.arange(len(ordered))
                finals.append(final)
                self.vocab[f] = {}
                del ordered, first_seen
            terms = writer.field_starts[-1]
        df = np.zeros(terms, dtype=np.int64)
        for f, final in enumerate(finals):
            df[final] = self.df[f][: len(final)]
        indptr = np.zeros(terms + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        np.save(self.directory / "indptr.npy", indptr, allow_pickle=False)
        del df
        self._scatter(finals, indptr)
        return {
            "num_docs": self.n,
            "skipped": self.skipped,
            "sums": self.sums,
            "doc_counts": self.doc_counts,
        }

    def _scatter(self, finals: list[np.ndarray], indptr: np.ndarray) -> None:
        """Each block's postings, term by term, after the earlier blocks' (so every term's
        documents ascend), into ``docs.npy`` and ``freqs.npy``."""
        total = int(indptr[-1])
        doc_type = np.uint32 if self.n <= 1 << 32 else np.int64
        freq_type = np.uint8 if self.max_freq < 1 << 8 else np.uint16
        freq_type = freq_type if self.max_freq < 1 << 16 else np.uint32
        out_docs = _Output(self.directory / "docs.npy", doc_type, total)
        out_freqs = _Output(self.directory / "freqs.npy", freq_type, total)
        cursor = indptr[:-1].copy()
        for number, start in sorted(self.blocks, key=lambda block: block[1]):
            for f, final in enumerate(finals):
                ids = final[np.load(self.folder / f"{number}-{f}-ids.npy")]
                counts = np.load(self.folder / f"{number}-{f}-counts.npy")
                docs_path, freqs_path = block_files(self.folder, number, f)
                docs, freqs = np.load(docs_path), np.load(freqs_path)
                # Posting i of the block's run for term t goes to cursor[t] + (i - run start).
                run_starts = np.cumsum(counts) - counts
                at = np.repeat(cursor[ids] - run_starts, counts) + np.arange(len(docs))
                out_docs.array[at] = docs.astype(doc_type) + doc_type(start)
                out_freqs.array[at] = freqs
                cursor[ids] += counts
                for path in (docs_path, freqs_path):
                    path.unlink()
            out_docs.release()
            out_freqs.release()
        out_docs.close()
        out_freqs.close()


# Linux drops a shared file mapping's pages from the process on MADV_DONTNEED and keeps them,
# written, in the page cache; elsewhere the advice may discard writes, so it is not given.
_RELEASE = getattr(mmap, "MADV_DONTNEED", None) if sys.platform.startswith("linux") else None


class _Output:
    """An ``.npy`` array of ``size`` written in place through a shared mapping of its file;
    ``release()`` takes its pages out of this process's resident memory (they stay in the
    page cache), so that writing an index never holds all of it in the process."""

    def __init__(self, path: Path, dtype: Any, size: int) -> None:
        offset = np.lib.format.open_memmap(path, "w+", dtype, (size,)).offset  # the header
        self._file = open(path, "r+b")  # noqa: SIM115 (closed in close)
        self._map = mmap.mmap(self._file.fileno(), 0)
        self.array = np.frombuffer(self._map, dtype=dtype, count=size, offset=offset)

    def release(self) -> None:
        if _RELEASE is not None:
            self._map.madvise(_RELEASE)

    def close(self) -> None:
        del self.array
        self._map.flush()
        self._map.close()
        self._file.close()


def tie_ranks_of(n: int, tie_keys: Any = None, tie_ranks: Any = None) -> np.ndarray:
    """Each document's rank among ``tie_keys`` (by UTF-8 bytes, i.e. code points, equal keys
    by position), as Anserini orders equal scores by its id field; or ``tie_ranks`` checked
    (a permutation of ``0..n-1``); or positions when neither is given.

    >>> tie_ranks_of(3, ["b", "a", "c"]).tolist()
    [1, 0, 2]
    """
    dtype = np.uint32 if n <= 1 << 32 else np.int64
    if tie_keys is not None and tie_ranks is not None:
        raise ValueError("give tie_keys or tie_ranks, not both")
    if tie_ranks is not None:
        ranks = np.asarray(tie_ranks)
        if ranks.shape != (n,) or (n and not np.issubdtype(ranks.dtype, np.integer)):
            raise ValueError(f"tie_ranks needs one integer per document ({n:,})")
        if n and (ranks.min() < 0 or ranks.max() >= n or np.bincount(ranks, minlength=n).max() > 1):
            raise ValueError("tie_ranks must hold each of 0 .. documents - 1 once")
        return ranks.astype(dtype)
    if tie_keys is None:
        return np.arange(n, dtype=dtype)
    if len(tie_keys) != n:
        raise ValueError("tie_keys needs one key per document")
    order = _key_order(tie_keys)
    ranks = np.empty(n, dtype=dtype)
    ranks[order] = np.arange(n, dtype=dtype)
    return ranks


def _key_order(keys: Any) -> np.ndarray:
    """Positions of ``keys`` in byte order, equal keys by position (a stable sort)."""
    try:
        if isinstance(keys, pa.ChunkedArray | pa.Array):
            array = keys
        else:
            array = pa.array(keys, type=pa.large_string())
        if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
            raise TypeError(f"tie_keys must be strings, not {array.type}")
        if array.null_count:
            raise ValueError("tie_keys holds a missing key (null)")
        return pc.sort_indices(array).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):
        # Keys Arrow cannot hold as UTF-8 (a lone surrogate): Python compares code points too.
        return np.asarray(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
