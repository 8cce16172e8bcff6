"""Lucene's ``EnglishAnalyzer``, as Anserini's default BM25 indexes use it.

The chain: ``StandardTokenizer`` -> ``EnglishPossessiveFilter`` (a trailing ``'s`` goes) ->
``LowerCaseFilter`` -> ``StopFilter`` (Lucene's 33 English stop words) -> ``PorterStemFilter``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from heta_eval.lucene.porter import porter_stem
from heta_eval.lucene.tokenizer import standard_tokens

__all__ = ["ENGLISH_STOP_WORDS", "analyze", "term_of", "token_term"]

#: Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``.
ENGLISH_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)

_APOSTROPHES = ("'", "\u2019", "\uff07")


def analyze(text: str) -> list[str]:
    """The terms Lucene's ``EnglishAnalyzer`` makes of ``text``, in order.

    >>> analyze("The patients' responses to IL-6 weren't studied in John's 2 trials.")
    ['patient', 'respons', 'il', '6', "weren't", 'studi', 'john', '2', 'trial']
    """
    return [term for term in map(token_term, standard_tokens(text)) if term is not None]


@lru_cache(maxsize=1 << 20)
def token_term(token: str) -> str | None:
    """The term one token becomes (None: a stop word): what ``analyze`` does per token.

    >>> token_term("John's"), token_term("The"), token_term("Studies")
    ('john', None, 'studi')
    """
    return term_of(token, porter_stem)


def term_of(token: str, stem: Callable[[str], str]) -> str | None:
    """``token_term`` without its cache, stemming with ``stem`` (a caller that keeps its own
    cache of tokens passes the stemmer uncached: one cache, not two, per token)."""
    # Possessive filter: before lower-casing, so "JOHN'S" loses its "'S" too.
    if len(token) >= 2 and token[-1] in "sS" and token[-2] in _APOSTROPHES:
        token = token[:-2]
    lower = token.lower() if token.isascii() else "".join(map(_lower_char, token))
    if lower in ENGLISH_STOP_WORDS:
        return None
    return stem(lower)


@lru_cache(maxsize=4096)
def _lower_char(char: str) -> str:
    # Java's Character.toLowerCase is Unicode's simple (one-to-one) mapping; str.lower() is
    # the full one, which maps "İ" to "i" + a combining dot (its first character is the simple
    # mapping) and turns a word-final "Σ" into "ς" in context (never alone, as here).
    return char.lower()[0]
