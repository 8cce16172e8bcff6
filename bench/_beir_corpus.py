"""Seeded synthetic BEIR folders at any size, shaped like MS MARCO passages or NQ.

``write_beir_corpus(folder, docs=1_000_000, queries=2_000, shape="msmarco")`` writes
``corpus.jsonl``, ``queries.jsonl`` and ``qrels/test.tsv`` (BEIR's layout) and returns the
folder; the same arguments always write the same bytes, and a folder already written with them
is reused (a ``SHAPE.json`` beside the files records them). Generated at benchmark time into a
scratch folder, never committed. For the BM25 rows of ``bench_scale.py``; dense rows can reuse
it (the texts are words, not vectors).

* ``msmarco``: no titles, ~56 words a passage (MS MARCO's mean), ids ``"0"``, ``"1"``, ...
* ``nq``: a title per article (2-4 capitalised words, 3-30 consecutive passages per article),
  ~78 words a passage (BEIR NQ's mean), ids ``"doc0"``, ``"doc1"``, ...

Words: a quarter of the tokens are English stop words (Lucene's 33 among them), the rest a
Zipf-Mandelbrot draw (``(rank + 50) ** -1.5``) over an open vocabulary of made-up words with
suffixes the stemmer folds, so distinct terms keep growing with the corpus as in real
collections (Heaps' law: about 160k made-up words at 100k passages, 750k at 1M, some 3M at
8.8M, where MS MARCO's index holds 2.7M terms). Sentences start capitalised and end with
a period, some carry commas, numbers (``1998``, ``3.5``, ``12,000``) and abbreviations
(``e.g.``, ``U.S.``): those passages take the tokenizer's full automaton, the others its
plain-word path. Each query (~6 words: a question word and content words of one passage) has
one relevant passage, the one it came from.

>>> import tempfile
>>> folder = write_beir_corpus(Path(tempfile.mkdtemp()) / "tiny", docs=20, queries=3)
>>> sorted(p.name for p in folder.iterdir())
['SHAPE.json', 'corpus.jsonl', 'qrels', 'queries.jsonl']
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

SHAPES = {
    # mean words per passage, titles
    "msmarco": (56, False),
    "nq": (78, True),
}

_STOP = (
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "for",
    "that",
    "with",
    "as",
    "on",
    "are",
    "it",
    "by",
    "be",
    "or",
    "was",
    "at",
    "an",
    "this",
    "from",
    "can",
    "which",
    "not",
    "have",
    "you",
    "your",
    "their",
    "also",
    "its",
    "there",
    "they",
    "will",
    "if",
    "but",
    "into",
    "such",
    "these",
    "then",
    "no",
)
_SYLLABLES = (
    "ka",
    "to",
    "ri",
    "men",
    "sal",
    "por",
    "tin",
    "ve",
    "lo",
    "dra",
    "qu",
    "an",
    "est",
    "ion",
    "ber",
    "cul",
    "mo",
    "fi",
    "ne",
    "gar",
    "pel",
    "su",
    "ho",
    "bre",
)
_SUFFIXES = ("", "", "", "", "s", "ing", "ed", "ation", "ly", "es", "ness", "al")
_ODD = ("e.g.", "U.S.", "i.e.", "3.5", "12,000", "1998", "2.4", "100", "Dr.", "ca.")
_QUESTION = ("what", "how", "why", "when", "where", "who", "define", "does")
_BLOCK = 50_000  # passages generated at a time


def _word(rank: int) -> str:
    """The made-up word of a content rank: distinct syllable strings, a suffix by rank."""
    syllables, n = [], rank + 1
    while n:
        n, digit = divmod(n - 1, len(_SYLLABLES))
        syllables.append(_SYLLABLES[digit])
    return "".join(syllables) + _SUFFIXES[(rank * 7919) % len(_SUFFIXES)]


class _Words:
    """Token strings of ranks (content ranks >= 0; stop words -1 - i), memoised."""

    def __init__(self) -> None:
        self.cache: dict[int, str] = {}

    def __call__(self, ranks: np.ndarray) -> list[str]:
        unique, inverse = np.unique(ranks, return_inverse=True)
        cache = self.cache
        table = []
        for r in unique.tolist():
            word = cache.get(r)
            if word is None:
                word = _STOP[-1 - r] if r < 0 else _word(r)
                if len(cache) < 2_000_000:
                    cache[r] = word
            table.append(word)
        return [table[i] for i in inverse.tolist()]


def _ranks(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` token ranks: a quarter stop words (Zipf over the stop list), else Zipf-Mandelbrot."""
    # Zipf-Mandelbrot: (rank + 50) ** -1.5, so that no content word takes over (the most
    # frequent is about 1% of the tokens), by rejection from numpy's Zipf.
    content = rng.zipf(1.5, n)
    while (low := content < 50).any():
        content[low] = rng.zipf(1.5, int(low.sum()))
    content -= 50
    content[content > 50_000_000] %= 50_000_000  # the far tail: still rare, bounded length
    stop = np.minimum(rng.zipf(1.5, n), len(_STOP)) - 1
    return np.where(rng.random(n) < 0.25, -1 - stop, content)


def _texts(rng: np.random.Generator, words: _Words, lengths: np.ndarray) -> list[str]:
    """One passage per length: sentences of ~15 words, some commas and odd tokens."""
    tokens = words(_ranks(rng, int(lengths.sum())))
    odd = rng.random(len(tokens)) < 0.01
    for i in np.flatnonzero(odd).tolist():
        tokens[i] = _ODD[i % len(_ODD)]
    marks = rng.random(len(tokens))
    out, start = [], 0
    for length in lengths.tolist():
        words_ = tokens[start : start + length]
        sentence_starts = marks[start : start + length]
        start += length
        parts = []
        new_sentence = True
        for j, word in enumerate(words_):
            if new_sentence:
                word = word[:1].upper() + word[1:]
            end = j == length - 1 or sentence_starts[j] < 1 / 15
            comma = not end and sentence_starts[j] > 0.95
            parts.append(word + ("." if end else "," if comma else ""))
            new_sentence = end
        out.append(" ".join(parts))
    return out


def _titles(rng: np.random.Generator, words: _Words, n: int, first: int) -> list[str]:
    """NQ-like titles: articles of 3-30 consecutive passages share one (seeded by article)."""
    titles = []
    article, left, title = first, 0, ""
    for _ in range(n):
        if left == 0:
            article_rng = np.random.default_rng([article, 7])
            left = int(article_rng.integers(3, 31))
            ranks = article_rng.zipf(1.3, int(article_rng.integers(2, 5))) - 1 + 20
            title = " ".join(w[:1].upper() + w[1:] for w in words(ranks % 50_000_000))
            article += 1
        titles.append(title)
        left -= 1
    return titles


def write_beir_corpus(
    folder: Path, *, docs: int, queries: int, shape: str = "msmarco", seed: int = 0
) -> Path:
    """Write (or reuse) the seeded synthetic BEIR folder ``folder``; returns its path."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {sorted(SHAPES)}, not {shape!r}")
    folder = Path(folder)
    wanted = {"docs": docs, "queries": queries, "shape": shape, "seed": seed, "version": 1}
    stamp = folder / "SHAPE.json"
    if stamp.is_file() and json.loads(stamp.read_text()) == wanted:
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "qrels").mkdir(parents=True)
    mean, titled = SHAPES[shape]
    rng = np.random.default_rng([seed, docs])
    # The passages queries come from, and the question words they start with.
    sources = np.sort(rng.choice(docs, size=min(queries, docs), replace=False))
    picked: dict[int, str] = {}
    words = _Words()
    ids = (lambda i: str(i)) if shape == "msmarco" else (lambda i: f"doc{i}")
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as corpus:
        for start in range(0, docs, _BLOCK):
            n = min(_BLOCK, docs - start)
            block_rng = np.random.default_rng([seed, docs, start])
            lengths = np.clip(block_rng.lognormal(np.log(mean) - 0.08, 0.4, n), 4, 400)
            texts = _texts(block_rng, words, lengths.astype(np.int64))
            titles = _titles(block_rng, words, n, start // 10) if titled else [""] * n
            lines = []
            for i, (title, text) in enumerate(zip(titles, texts, strict=True)):
                lines.append(json.dumps({"_id": ids(start + i), "title": title, "text": text}))
            corpus.write("\n".join(lines) + "\n")
            lo, hi = np.searchsorted(sources, [start, start + n])
            for d in sources[lo:hi].tolist():
                picked[d] = texts[d - start]
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as out:
        qrels = ["query-id\tcorpus-id\tscore"]
        for q, d in enumerate(sources.tolist()):
            terms = [w.strip(".,").lower() for w in picked[d].split()]
            terms = [w for w in terms if w not in _STOP] or terms
            take = rng.choice(
                len(terms), size=min(len(terms), int(rng.integers(3, 7))), replace=False
            )
            text = " ".join([_QUESTION[q % len(_QUESTION)], *(terms[i] for i in sorted(take))])
            out.write(json.dumps({"_id": f"q{q}", "text": text}) + "\n")
            qrels.append(f"q{q}\t{ids(d)}\t1")
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    stamp.write_text(json.dumps(wanted), encoding="utf-8")
    return folder
