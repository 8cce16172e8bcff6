"""A BM25 index that scores exactly as Lucene's ``BM25Similarity`` over ``EnglishAnalyzer`` terms.

Queries are built as Anserini's ``BagOfWordsQueryGenerator`` builds them: the query's terms
(same analyzer), each once, boosted by how often it occurs, in every field, scores summed.
Hits are ranked by score, ties by document id (Anserini sorts ties by its ``id`` field).

Documents are indexed as Anserini's ``DefaultLuceneDocumentGenerator`` indexes a BEIR
collection: one whose ``contents`` is blank is skipped, so none of its fields (a multifield
title included) enters the index or the field statistics. ``skipped`` says how many.

The index lives in a folder of ``.npy`` arrays, memory-mapped (:mod:`.build` lists them):
built in blocks in bounded memory, loaded in no time.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import warnings
import weakref
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval._runtime import release_pages
from heta_eval.lucene.analyzer import analyze
from heta_eval.lucene.build import DEFAULT_BLOCK_SIZE, META, build_index
from heta_eval.lucene.search import Workspace, run_kernel
from heta_eval.lucene.search import search_kernel as _numba_kernel
from heta_eval.lucene.similarity import idf, norm_factors
from heta_eval.lucene.terms import TermTable, open_array

__all__ = ["LUCENE_INDEX_VERSION", "LuceneBM25Index"]

#: Bumped when analysis or the stored arrays change, so cached indexes are rebuilt.
LUCENE_INDEX_VERSION = "lucene-bm25-3"

_ARRAYS = ("indptr", "docs", "freqs", "norms", "tie_ranks")
_FILES = (
    *(f"{name}.npy" for name in _ARRAYS),
    "terms.npy",
    "term_offsets.npy",
    "term_fields.json",
    META,
)


class LuceneBM25Index:
    """Lucene BM25 over one field (``contents``, flat) or several (multifield).

    ``fields`` maps a field name to one text per document. ``tie_keys`` (one string per
    document, e.g. its id) orders equal scores, as Anserini's sort by document id does; by
    default documents tie in index order. A document whose ``contents`` text is blank is
    skipped as Anserini skips it (it never matches, and no field of it is counted); the build
    warns how many, and ``skipped`` keeps the number.

    >>> index = LuceneBM25Index.build({"contents": ["The cat sat.", "Dogs bark at cats."]})
    >>> index.analyze("Cats barking!")
    ['cat', 'bark']
    >>> idx, scores = index.search(["barking cat"], k=2)
    >>> idx.tolist(), [round(float(s), 4) for s in scores[0]]
    ([[1, 0]], [0.4439, 0.0997])
    """

    def __init__(self, directory: Path, *, temporary: bool = False) -> None:
        """Open the index in ``directory`` (memory-mapped); ``temporary``: remove the folder
        when the index is closed or collected. Use :meth:`build` or :meth:`load`."""
        self.directory = Path(directory)
        meta = json.loads((self.directory / META).read_text(encoding="utf-8"))
        self.fields = tuple(meta["fields"])
        #: Documents left out because their ``contents`` is blank (Anserini's rule).
        self.skipped = int(meta["skipped"])
        self.k1, self.b = float(meta["k1"]), float(meta["b"])
        self.indptr: np.ndarray = open_array(self.directory / "indptr.npy")
        self.docs: np.ndarray = open_array(self.directory / "docs.npy")
        self.freqs: np.ndarray = open_array(self.directory / "freqs.npy")
        self.norms: np.ndarray = open_array(self.directory / "norms.npy")  # (fields, docs)
        self.tie_ranks: np.ndarray = open_array(self.directory / "tie_ranks.npy")
        self.terms = TermTable.open(self.directory)
        self.doc_counts = np.asarray(meta["doc_counts"], dtype=np.int64)  # docs with the field
        self.sums = np.asarray(meta["sums"], dtype=np.int64)  # total terms per field
        self.num_docs = int(meta["num_docs"])
        # Per field: avgdl as Lucene computes it (float64 division, stored as float32), and the
        # per-norm-byte factor 1 / (k1 * (1 - b + b * length / avgdl)).
        self.factors = np.stack(
            [
                norm_factors(self.k1, self.b, np.float32(s / c if c else 0.0))
                for s, c in zip(self.sums.tolist(), self.doc_counts.tolist(), strict=True)
            ]
        )
        self._cleanup = (
            weakref.finalize(self, shutil.rmtree, str(self.directory), True) if temporary else None
        )
        self._workspace: Workspace | None = None  # the search kernel's, made on first use

    @classmethod
    def build(
        cls,
        fields: Mapping[str, Sequence[str]],
        *,
        k1: float = 0.9,
        b: float = 0.4,
        tie_keys: Any = None,
        tie_ranks: Any = None,
        directory: str | Path | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        workers: int | None = None,
        progress: bool = False,
    ) -> LuceneBM25Index:
        """Analyze and index ``fields`` (name -> one text per document: anything with
        ``len()`` that iterates strings, read once, a block at a time).

        ``tie_keys``: one string per document (a list, a numpy or pyarrow string array);
        equal scores rank by it in byte order. ``tie_ranks``: those ranks, precomputed.
        ``directory``: where the index's files go (created; the caller keeps it); without it,
        a temporary folder removed with the index. ``block_size`` documents are analyzed at a
        time, by ``workers`` processes (default: one per usable CPU; the calling process when
        there is one block). ``progress``: a bar on stderr.
        """
        temporary = directory is None
        folder = Path(tempfile.mkdtemp(prefix="heta-bm25-")) if temporary else Path(directory)
        try:
            meta = build_index(
                fields,
                folder,
                k1=k1,
                b=b,
                tie_keys=tie_keys,
                tie_ranks=tie_ranks,
                block_size=block_size,
                workers=workers,
                progress=progress,
                version=LUCENE_INDEX_VERSION,
            )
        except BaseException:
            if temporary:
                shutil.rmtree(folder, ignore_errors=True)
            raise
        if meta["skipped"]:
            warnings.warn(
                f"{meta['skipped']} of {meta['num_docs']} documents skipped: their text is "
                "blank, and Anserini indexes no document without contents (none of their "
                "fields is searched or counted)",
                stacklevel=2,
            )
        return cls(folder, temporary=temporary)

    def close(self) -> None:
        """Remove a temporary index's folder now (the arrays already mapped stay readable
        where the system allows it); a no-op for an index in a folder of yours."""
        if self._cleanup is not None:
            self._cleanup()

    # -- queries ---------------------------------------------------------------------------
    @staticmethod
    def analyze(text: str) -> list[str]:
        """The terms of ``text`` (Lucene's ``EnglishAnalyzer``)."""
        return analyze(text)

    def clauses(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """The query's ``(term ids, float32 weights)``: per field, each distinct query term
        found in it, weighted ``count * idf`` (Anserini's boosted bag of words)."""
        counts = Counter(analyze(query))
        term_ids, weights = [], []
        for f in range(len(self.fields)):
            for term, count in counts.items():
                t = self.terms.lookup(f, term)
                if t is not None:
                    df = int(self.indptr[t + 1] - self.indptr[t])
                    term_ids.append(t)
                    weights.append(np.float32(count) * idf(df, int(self.doc_counts[f])))
        return np.asarray(term_ids, dtype=np.int64), np.asarray(weights, dtype=np.float32)

    def term_fields(self, term_ids: np.ndarray) -> np.ndarray:
        """The field of each term id."""
        starts = np.asarray(self.terms.field_starts[1:-1], dtype=np.int64)
        return np.searchsorted(starts, term_ids, side="right").astype(np.int64)

    def scores(self, query: str) -> np.ndarray:
        """Lucene's score of ``query`` for every document (float32; 0 where nothing matches)."""
        term_ids, weights = self.clauses(query)
        total = np.zeros(self.num_docs, dtype=np.float64)
        one = np.float32(1)
        for t, f, w in zip(
            term_ids.tolist(), self.term_fields(term_ids).tolist(), weights, strict=True
        ):
            start, end = self.indptr[t], self.indptr[t + 1]
            docs = self.docs[start:end]
            inverse = self.factors[f][self.norms[f][docs]]
            freqs = self.freqs[start:end].astype(np.float32)
            # BM25Scorer.score: weight - weight / (1 + freq * normInverse), in float32.
            total[docs] += w - w / (one + freqs * inverse)
        return total.astype(np.float32)

    def search(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` matching documents of each query: ``(indices, scores)``, ``(n, k)``.

        Best first, ties by ``tie_keys``; a query with fewer than ``k`` matches is padded with
        index -1 and score 0. Row ``i`` holds the same documents and scores as ranking
        ``self.scores(queries[i])``. Compiled with numba (parallel over queries; work per
        query in its postings, not the collection) when it is installed, else numpy query by
        query.
        """
        n, k = len(queries), max(0, min(k, self.num_docs))
        out_idx = np.full((n, k), -1, dtype=np.int64)
        out_scores = np.zeros((n, k), dtype=np.float32)
        if n == 0 or k == 0:
            return out_idx, out_scores
        clauses = [self.clauses(q) for q in queries]
        pointers = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(t) for t, _ in clauses], out=pointers[1:])
        terms = np.concatenate([t for t, _ in clauses])
        weights = np.concatenate([w for _, w in clauses])
        kernel = _numba_kernel()
        if kernel is not None:
            fields = self.term_fields(terms)
            run_kernel(kernel, self, terms, fields, weights, pointers, out_idx, out_scores)
            self.release_pages()
            return out_idx, out_scores
        for i, q in enumerate(queries):
            s = self.scores(q)
            hits = np.flatnonzero(s > 0)
            hits = hits[np.lexsort((self.tie_ranks[hits], -s[hits]))][:k]
            out_idx[i, : len(hits)], out_scores[i, : len(hits)] = hits, s[hits]
        return out_idx, out_scores

    def release_pages(self) -> None:
        """Give back the index's pages read by a search: they stay in the file cache for the
        next batch, while this process's memory stays the size of one batch's postings, not
        the whole index's."""
        for array in (self.indptr, self.docs, self.freqs, self.norms, self.tie_ranks):
            release_pages(array)

    # -- persistence -----------------------------------------------------------------------
    def save(self, directory: str | Path) -> None:
        """Copy the index's files into ``directory`` (nothing to do where it already is)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        if directory.resolve() == self.directory.resolve():
            return
        for name in _FILES:  # the meta file last: a folder without it is no index
            shutil.copyfile(self.directory / name, directory / name)

    @classmethod
    def load(cls, directory: str | Path) -> LuceneBM25Index:
        """The index saved in ``directory``, memory-mapped (it must stay there)."""
        directory = Path(directory)
        meta = directory / META
        found = json.loads(meta.read_text(encoding="utf-8")) if meta.is_file() else {}
        if found.get("format") != LUCENE_INDEX_VERSION:
            raise ValueError(
                f"{directory} holds no BM25 index of this version ({LUCENE_INDEX_VERSION}; "
                f"found {found.get('format', 'none')}): build it again"
            )
        return cls(directory)
