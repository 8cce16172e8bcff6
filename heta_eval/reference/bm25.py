"""BM25 keyword index (``bm25s``, Lucene scoring, English stemming and stopwords).

The reference knowledge base's default is :class:`~heta_eval.lucene.LuceneBM25Index`
(Lucene's analyzer and byte-encoded lengths); this ``bm25s`` index is the ``bm25s`` analyzer.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval._runtime import compile_parallel

__all__ = ["BM25Index", "top_indices"]

# bm25s's default token pattern (scikit-learn's CountVectorizer): words of 2+ characters.
_TOKEN_RE = re.compile(r"(?u)\b\w\w+\b")


def top_indices(scores: np.ndarray, k: int, ties: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``k`` highest scores, best first, ties by lower index (exact), or by
    lower ``ties[i]`` when given (a rank per index, e.g. of the document ids).

    >>> top_indices(np.array([0.1, 0.9, 0.5, 0.9]), 3).tolist()
    [1, 3, 2]
    >>> top_indices(np.array([0.1, 0.9, 0.5, 0.9]), 3, ties=np.array([0, 3, 2, 1])).tolist()
    [3, 1, 2]
    """
    n = len(scores)
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k == n:
        part = np.arange(n)
        return part[np.lexsort((part if ties is None else ties, -scores))]
    # BM25 scores most texts 0: when the positive scores hold the top k, select among them
    # only (argpartition is slow on long runs of equal values).
    candidates = np.flatnonzero(scores > 0)
    if not k <= len(candidates) < n // 2:
        candidates = np.arange(n)
    values = scores[candidates]
    m = len(candidates)
    if k < m:
        # argpartition finds the k-th best score; which of several equal scores it keeps at
        # the cut is arbitrary, so the tied ones are re-chosen by lowest index.
        part = np.argpartition(values, m - k)[m - k :]
        kth = values[part].min()
        above = candidates[part[values[part] > kth]]
        tied = candidates[values == kth]
        if ties is not None:
            tied = tied[np.argsort(ties[tied], kind="stable")]
        part = np.concatenate([above, tied[: k - len(above)]])
    else:
        part = candidates
    return part[np.lexsort((part if ties is None else ties[part], -scores[part]))]


class BM25Index:
    """A ``bm25s`` index over texts, scoring queries against every text.

    Lucene BM25 (``k1=0.9, b=0.4`` as in Pyserini), Snowball English stemming (PyStemmer)
    and the English stopword list of ``bm25s``.

    >>> index = BM25Index.build(["the cat sat", "dogs bark loudly"], progress=False)
    >>> int(index.scores("barking dog").argmax())
    1
    >>> idx, scores = index.search(["barking dog", "cat"], k=1)
    >>> idx.tolist()
    [[1], [0]]
    """

    def __init__(self, retriever: object, *, language: str = "english") -> None:
        import Stemmer

        self.retriever = retriever
        self.language = language
        self._stemmer = Stemmer.Stemmer(language)
        self._stopwords = frozenset(_stopword_list(language))
        r: Any = retriever
        self.num_docs = int(r.scores["num_docs"])
        self._vocab: dict[str, int] = r.vocab_dict
        self._data: np.ndarray = r.scores["data"]
        self._indices: np.ndarray = r.scores["indices"]
        self._indptr: np.ndarray = r.scores["indptr"]
        self._dtype = np.dtype(r.dtype)
        self._nonoccurrence: np.ndarray | None = getattr(r, "nonoccurrence_array", None)

    @classmethod
    def build(
        cls,
        texts: list[str],
        *,
        k1: float = 0.9,
        b: float = 0.4,
        method: str = "lucene",
        language: str = "english",
        progress: bool = True,
    ) -> BM25Index:
        import bm25s
        import Stemmer

        stemmer = Stemmer.Stemmer(language)
        tokens = bm25s.tokenize(
            texts, stopwords=_stopwords(language), stemmer=stemmer, show_progress=progress
        )
        retriever = bm25s.BM25(method=method, k1=k1, b=b)
        retriever.index(tokens, show_progress=progress)
        return cls(retriever, language=language)

    def tokenize(self, query: str) -> list[str]:
        """Stemmed query terms, exactly as ``bm25s.tokenize`` makes them (stopwords out)."""
        # Same steps as bm25s.tokenize (lowercase, regex split, stopwords, stem), without its
        # per-call setup and progress bars, which cost more than scoring a short query.
        words = [w for w in _TOKEN_RE.findall(query.lower()) if w not in self._stopwords]
        return self._stemmer.stemWords(words) if words else []

    def _token_ids(self, query: str) -> list[int]:
        vocab = self._vocab
        return [vocab[t] for t in self.tokenize(query) if t in vocab]

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of ``query`` against every indexed text (float32 array)."""
        ids = self._token_ids(query)
        scores = np.zeros(self.num_docs, dtype=self._dtype)
        # bm25s adds each term's postings with np.add.at; a term's postings never repeat a
        # document, so a fancy-index add gives the same float32 sums, several times faster.
        for t in ids:
            start, end = self._indptr[t], self._indptr[t + 1]
            scores[self._indices[start:end]] += self._data[start:end]
        if ids and self._nonoccurrence is not None:
            scores += self._nonoccurrence[np.asarray(ids)].sum()
        return scores

    def search(self, queries: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` texts of each query: ``(indices, scores)``, both ``(len(queries), k)``.

        Row ``i`` equals ``top_indices(self.scores(queries[i]), k)`` and its scores (best
        first, ties by index); ``k`` is capped at the number of texts. Queries are scored in
        parallel by a compiled kernel when ``numba`` is installed (its JIT cache lives on
        disk, so only the first use on a machine compiles), else one by one with numpy.
        """
        k = min(k, self.num_docs)
        n = len(queries)
        if k <= 0 or n == 0:
            return np.zeros((n, max(k, 0)), dtype=np.int64), np.zeros((n, max(k, 0)), self._dtype)
        kernel = _numba_kernel() if self._nonoccurrence is None else None
        if kernel is None or self._dtype != np.float32:
            rows = [self.scores(q) for q in queries]
            idx = np.stack([top_indices(s, k) for s in rows])
            return idx, np.stack([s[i] for s, i in zip(rows, idx, strict=True)])
        token_ids = [self._token_ids(q) for q in queries]
        pointers = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(t) for t in token_ids], out=pointers[1:])
        flat = np.fromiter((t for ids in token_ids for t in ids), np.int64, int(pointers[-1]))
        out_idx = np.empty((n, k), dtype=np.int64)
        out_scores = np.empty((n, k), dtype=np.float32)
        # numba's default (workqueue) threading layer aborts on concurrent parallel launches.
        with _KERNEL_LOCK:
            kernel(
                self._data,
                self._indices,
                self._indptr,
                self.num_docs,
                flat,
                pointers,
                out_idx,
                out_scores,
            )
        return out_idx, out_scores

    def save(self, directory: Path) -> None:
        # bm25s writes plain .npy arrays (allow_pickle=False) and JSON vocab/params.
        self.retriever.save(str(directory), allow_pickle=False)  # type: ignore[attr-defined]

    @classmethod
    def load(cls, directory: Path, *, language: str = "english") -> BM25Index:
        import bm25s

        return cls(bm25s.BM25.load(str(directory), allow_pickle=False), language=language)


def _stopwords(language: str) -> str | list[str]:
    return "en" if language == "english" else []


def _stopword_list(language: str) -> tuple[str, ...]:
    from bm25s.stopwords import STOPWORDS_EN

    return STOPWORDS_EN if language == "english" else ()


_KERNEL_LOCK = threading.Lock()
# range until numba compiles the kernel, which swaps in numba.prange (parallel loop).
prange = range


def _search_kernel(data, indices, indptr, num_docs, flat, pointers, out_idx, out_scores):  # type: ignore[no-untyped-def]
    # Plain loops: compiled by numba (parallel over queries). Scores are accumulated term by
    # term in float32, like bm25s, so they are bit-identical to BM25Index.scores.
    k = out_idx.shape[1]
    for q in prange(len(pointers) - 1):
        scores = np.zeros(num_docs, dtype=np.float32)
        for t in range(pointers[q], pointers[q + 1]):
            term = flat[t]
            for j in range(indptr[term], indptr[term + 1]):
                scores[indices[j]] += data[j]
        # Min-heap of the best k by (score, -index). Documents arrive in index order, so a
        # strict ">" keeps the lower index among equal scores, as top_indices does.
        heap_s = np.empty(k, dtype=np.float32)
        heap_i = np.empty(k, dtype=np.int64)
        for d in range(num_docs):
            s = scores[d]
            if d < k:
                pos = d  # sift up
                while pos > 0:
                    parent = (pos - 1) >> 1
                    ps, pi = heap_s[parent], heap_i[parent]
                    if s < ps or (s == ps and d > pi):
                        heap_s[pos], heap_i[pos] = ps, pi
                        pos = parent
                    else:
                        break
                heap_s[pos], heap_i[pos] = s, d
            elif s > heap_s[0]:
                pos = 0  # replace the worst and sift down
                while True:
                    child = 2 * pos + 1
                    if child >= k:
                        break
                    right = child + 1
                    if right < k and (
                        heap_s[right] < heap_s[child]
                        or (heap_s[right] == heap_s[child] and heap_i[right] > heap_i[child])
                    ):
                        child = right
                    cs, ci = heap_s[child], heap_i[child]
                    if cs < s or (cs == s and ci > d):
                        heap_s[pos], heap_i[pos] = cs, ci
                        pos = child
                    else:
                        break
                heap_s[pos], heap_i[pos] = s, d
        # Best first, ties by index, in one sort of unique int64 keys: the float32 bits made
        # order-preserving as an integer (negatives flipped), then the complemented index.
        bits = heap_s.view(np.int32).astype(np.int64)
        bits = np.where(bits < 0, bits ^ 0x7FFFFFFF, bits)
        order = np.argsort(-((bits << 31) | (0x7FFFFFFF - heap_i)))
        for r in range(k):
            out_idx[q, r] = heap_i[order[r]]
            out_scores[q, r] = heap_s[order[r]]


@lru_cache(maxsize=1)
def _numba_kernel() -> Any:
    return compile_parallel(_search_kernel)
