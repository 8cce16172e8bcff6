"""BM25 keyword index (``bm25s``, Lucene scoring, English stemming and stopwords)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["BM25Index", "top_indices"]


def top_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest scores, best first (exact, via ``argpartition``).

    >>> top_indices(np.array([0.1, 0.9, 0.5]), 2).tolist()
    [1, 2]
    """
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    # Stable tie-break on index so results are deterministic.
    return part[np.lexsort((part, -scores[part]))]


class BM25Index:
    """A ``bm25s`` index over texts, scoring queries against every text.

    Lucene BM25 (``k1=0.9, b=0.4`` as in Pyserini), Snowball English stemming (PyStemmer)
    and the English stopword list of ``bm25s``.

    >>> index = BM25Index.build(["the cat sat", "dogs bark loudly"], progress=False)
    >>> int(index.scores("barking dog").argmax())
    1
    """

    def __init__(self, retriever: object, *, language: str = "english") -> None:
        import Stemmer

        self.retriever = retriever
        self.language = language
        self._stemmer = Stemmer.Stemmer(language)
        self.num_docs = int(retriever.scores["num_docs"])  # type: ignore[attr-defined]

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
        import bm25s

        tokens = bm25s.tokenize(
            [query],
            stopwords=_stopwords(self.language),
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )
        return list(tokens[0])

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of ``query`` against every indexed text (float32 array)."""
        ids = self.retriever.get_tokens_ids(self.tokenize(query))  # type: ignore[attr-defined]
        if not ids:
            # Nothing from the query is in the vocabulary: every text scores zero.
            return np.zeros(self.num_docs, dtype=np.float32)
        return np.asarray(self.retriever.get_scores_from_ids(ids))  # type: ignore[attr-defined]

    def save(self, directory: Path) -> None:
        # bm25s writes plain .npy arrays (allow_pickle=False) and JSON vocab/params.
        self.retriever.save(str(directory), allow_pickle=False)  # type: ignore[attr-defined]

    @classmethod
    def load(cls, directory: Path, *, language: str = "english") -> BM25Index:
        import bm25s

        return cls(bm25s.BM25.load(str(directory), allow_pickle=False), language=language)


def _stopwords(language: str) -> str | list[str]:
    return "en" if language == "english" else []
