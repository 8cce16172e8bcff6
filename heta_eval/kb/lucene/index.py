"""A BM25 index that scores exactly as Lucene's ``BM25Similarity`` over ``EnglishAnalyzer`` terms.

Queries are built as Anserini's ``BagOfWordsQueryGenerator`` builds them: the query's terms
(same analyzer), each once, boosted by how often it occurs, in every field, scores summed.
Hits are ranked by score, ties by document id (Anserini sorts ties by its ``id`` field).

Documents are indexed as Anserini's ``DefaultLuceneDocumentGenerator`` indexes a BEIR
collection: one whose ``contents`` is blank is skipped, so none of its fields (a multifield
title included) enters the index or the field statistics. ``skipped`` says how many.
"""

from __future__ import annotations

import json
import threading
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval._runtime import compile_parallel
from heta_eval.kb.lucene.analyzer import analyze
from heta_eval.kb.lucene.similarity import encode_lengths, idf, norm_factors

__all__ = ["LUCENE_INDEX_VERSION", "LuceneBM25Index"]

#: Bumped when analysis or the stored arrays change, so cached indexes are rebuilt.
LUCENE_INDEX_VERSION = "lucene-bm25-2"

# Java's String.trim() strips every character up to U+0020 (and only those): Anserini skips a
# document whose contents is nothing else.
_JAVA_TRIM = "".join(map(chr, range(0x21)))

_ARRAYS = ("term_field", "indptr", "docs", "freqs", "norms", "tie_ranks", "doc_counts", "sums")


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

    def __init__(
        self,
        *,
        fields: Sequence[str],
        vocab: Sequence[Mapping[str, int]],
        arrays: Mapping[str, np.ndarray],
        k1: float,
        b: float,
        skipped: int = 0,
    ) -> None:
        self.fields = tuple(fields)
        #: Documents left out because their ``contents`` is blank (Anserini's rule).
        self.skipped = int(skipped)
        self.k1, self.b = float(k1), float(b)
        self._vocab = [dict(v) for v in vocab]
        self.term_field: np.ndarray = arrays["term_field"]
        self.indptr: np.ndarray = arrays["indptr"]
        self.docs: np.ndarray = arrays["docs"]
        self.freqs: np.ndarray = arrays["freqs"]
        self.norms: np.ndarray = arrays["norms"]  # (fields, documents) uint8
        self.tie_ranks: np.ndarray = arrays["tie_ranks"]
        self.doc_counts: np.ndarray = arrays["doc_counts"]  # documents with the field, per field
        self.sums: np.ndarray = arrays["sums"]  # total terms per field
        self.num_docs = int(self.norms.shape[1])
        # Per field: avgdl as Lucene computes it (float64 division, stored as float32), and the
        # per-norm-byte factor 1 / (k1 * (1 - b + b * length / avgdl)).
        self._factors = np.stack([
            norm_factors(self.k1, self.b, np.float32(s / c if c else 0.0))
            for s, c in zip(self.sums.tolist(), self.doc_counts.tolist(), strict=True)
        ])  # fmt: skip

    @classmethod
    def build(
        cls,
        fields: Mapping[str, Sequence[str]],
        *,
        k1: float = 0.9,
        b: float = 0.4,
        tie_keys: Sequence[str] | None = None,
    ) -> LuceneBM25Index:
        """Analyze and index ``fields`` (name -> one text per document)."""
        names = list(fields)
        if not names:
            raise ValueError("LuceneBM25Index needs at least one field")
        n = len(fields[names[0]])
        if any(len(fields[name]) != n for name in names):
            raise ValueError("every field needs one text per document")
        # Anserini indexes a document only when its contents is more than characters up to
        # U+0020 (DefaultLuceneDocumentGenerator throws EmptyDocumentException otherwise).
        contents = fields.get("contents")
        keep = [True] * n if contents is None else [bool(t.strip(_JAVA_TRIM)) for t in contents]
        skipped = n - sum(keep)
        if skipped:
            warnings.warn(
                f"{skipped} of {n} documents skipped: their text is blank, and Anserini indexes "
                "no document without contents (none of their fields is searched or counted)",
                stacklevel=2,
            )
        vocab: list[dict[str, int]] = []
        term_field: list[int] = []
        blocks: list[tuple[np.ndarray, np.ndarray]] = []  # per field: (term ids, doc ids)
        norms = np.zeros((len(names), n), dtype=np.uint8)
        doc_counts, sums = [], []
        for f, name in enumerate(names):
            ids: dict[str, int] = {}
            offset = len(term_field)
            token_ids: list[int] = []
            lengths = np.zeros(n, dtype=np.int64)
            for d, text in enumerate(fields[name]):
                terms = analyze(text) if keep[d] else []
                lengths[d] = len(terms)
                token_ids.extend(ids.setdefault(t, offset + len(ids)) for t in terms)
            term_field.extend([f] * len(ids))
            vocab.append({t: i for t, i in ids.items()})
            blocks.append((np.asarray(token_ids, np.int64), np.repeat(np.arange(n), lengths)))
            norms[f] = encode_lengths(lengths)
            doc_counts.append(int((lengths > 0).sum()))
            sums.append(int(lengths.sum()))
        terms = np.concatenate([t for t, _ in blocks])
        docs = np.concatenate([d for _, d in blocks])
        # One posting per (term, document) with its frequency, sorted by term then document.
        keys, freqs = np.unique(terms * max(n, 1) + docs, return_counts=True)
        posting_terms, posting_docs = np.divmod(keys, max(n, 1))
        indptr = np.zeros(len(term_field) + 1, dtype=np.int64)
        np.cumsum(np.bincount(posting_terms, minlength=len(term_field)), out=indptr[1:])
        if tie_keys is None:
            tie_ranks = np.arange(n, dtype=np.int64)
        else:
            if len(tie_keys) != n:
                raise ValueError("tie_keys needs one key per document")
            order = sorted(range(n), key=lambda i: (tie_keys[i], i))
            tie_ranks = np.empty(n, dtype=np.int64)
            tie_ranks[order] = np.arange(n)
        arrays = {
            "term_field": np.asarray(term_field, dtype=np.int32),
            "indptr": indptr,
            "docs": posting_docs.astype(np.int32),
            "freqs": freqs.astype(np.float32),
            "norms": norms,
            "tie_ranks": tie_ranks,
            "doc_counts": np.asarray(doc_counts, dtype=np.int64),
            "sums": np.asarray(sums, dtype=np.int64),
        }
        return cls(fields=names, vocab=vocab, arrays=arrays, k1=k1, b=b, skipped=skipped)

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
        for f, vocab in enumerate(self._vocab):
            for term, count in counts.items():
                t = vocab.get(term)
                if t is not None:
                    df = int(self.indptr[t + 1] - self.indptr[t])
                    term_ids.append(t)
                    weights.append(np.float32(count) * idf(df, int(self.doc_counts[f])))
        return np.asarray(term_ids, dtype=np.int64), np.asarray(weights, dtype=np.float32)

    def scores(self, query: str) -> np.ndarray:
        """Lucene's score of ``query`` for every document (float32; 0 where nothing matches)."""
        term_ids, weights = self.clauses(query)
        total = np.zeros(self.num_docs, dtype=np.float64)
        one = np.float32(1)
        for t, w in zip(term_ids.tolist(), weights, strict=True):
            start, end = self.indptr[t], self.indptr[t + 1]
            docs = self.docs[start:end]
            f = self.term_field[t]
            inverse = self._factors[f][self.norms[f][docs]]
            # BM25Scorer.score: weight - weight / (1 + freq * normInverse), in float32.
            total[docs] += w - w / (one + self.freqs[start:end] * inverse)
        return total.astype(np.float32)

    def search(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` matching documents of each query: ``(indices, scores)``, ``(n, k)``.

        Best first, ties by ``tie_keys``; a query with fewer than ``k`` matches is padded with
        index -1 and score 0. Row ``i`` holds the same documents and scores as ranking
        ``self.scores(queries[i])``. Compiled with numba (parallel over queries) when it is
        installed, else numpy query by query.
        """
        n, k = len(queries), max(0, min(k, self.num_docs))
        out_idx = np.full((n, k), -1, dtype=np.int64)
        out_scores = np.zeros((n, k), dtype=np.float32)
        if n == 0 or k == 0:
            return out_idx, out_scores
        clauses = [self.clauses(q) for q in queries]
        kernel = _numba_kernel()
        if kernel is None:
            for i, q in enumerate(queries):
                s = self.scores(q)
                hits = np.flatnonzero(s > 0)
                hits = hits[np.lexsort((self.tie_ranks[hits], -s[hits]))][:k]
                out_idx[i, : len(hits)], out_scores[i, : len(hits)] = hits, s[hits]
            return out_idx, out_scores
        pointers = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(t) for t, _ in clauses], out=pointers[1:])
        flat_terms = np.concatenate([t for t, _ in clauses]) if pointers[-1] else np.zeros(0, int)
        flat_weights = (
            np.concatenate([w for _, w in clauses]) if pointers[-1] else np.zeros(0, np.float32)
        )
        with _KERNEL_LOCK:
            kernel(self.indptr, self.docs, self.freqs, self.term_field, self.norms,
                   self._factors, self.tie_ranks, flat_terms.astype(np.int64),
                   flat_weights.astype(np.float32), pointers, out_idx, out_scores)  # fmt: skip
        return out_idx, out_scores

    # -- persistence -----------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for name in _ARRAYS:
            np.save(directory / f"{name}.npy", getattr(self, name), allow_pickle=False)
        meta = {"fields": self.fields, "k1": self.k1, "b": self.b, "vocab": self._vocab,
                "skipped": self.skipped}  # fmt: skip
        (directory / "lucene_bm25.json").write_text(json.dumps(meta), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> LuceneBM25Index:
        directory = Path(directory)
        meta = json.loads((directory / "lucene_bm25.json").read_text(encoding="utf-8"))
        arrays = {name: np.load(directory / f"{name}.npy") for name in _ARRAYS}
        return cls(fields=meta["fields"], vocab=meta["vocab"], arrays=arrays, k1=meta["k1"],
                   b=meta["b"], skipped=meta.get("skipped", 0))  # fmt: skip


_KERNEL_LOCK = threading.Lock()
prange = range  # numba.prange once the kernel is compiled


def _search_kernel(indptr, docs, freqs, term_field, norms, factors, tie_ranks, terms, weights,  # type: ignore[no-untyped-def]
                   pointers, out_idx, out_scores):  # fmt: skip
    # The same float32 steps as LuceneBM25Index.scores, summed per document in float64.
    k = out_idx.shape[1]
    num_docs = norms.shape[1]
    one = np.float32(1.0)
    for q in prange(len(pointers) - 1):
        total = np.zeros(num_docs, dtype=np.float64)
        for c in range(pointers[q], pointers[q + 1]):
            t = terms[c]
            w = weights[c]
            f = term_field[t]
            for j in range(indptr[t], indptr[t + 1]):
                d = docs[j]
                inverse = factors[f, norms[f, d]]
                total[d] += w - w / (one + freqs[j] * inverse)
        # Matching documents (every match scores > 0), best first, ties by rank.
        hits = np.flatnonzero(total > 0)
        scores = total[hits].astype(np.float32)
        keys = np.empty(len(hits), dtype=np.int64)
        for i in range(len(hits)):
            keys[i] = tie_ranks[hits[i]]
        # Sort by score descending, then tie rank: scores to order-preserving int bits.
        bits = scores.view(np.int32).astype(np.int64)
        order = np.argsort(-(bits << 32) + keys)
        for r in range(min(k, len(hits))):
            out_idx[q, r] = hits[order[r]]
            out_scores[q, r] = scores[order[r]]


@lru_cache(maxsize=1)
def _numba_kernel() -> Any:
    return compile_parallel(_search_kernel)
