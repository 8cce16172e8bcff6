"""Answer normalization, documented in one place and shared by every answer evaluator.

``normalize_answer`` applies, in order:

1. Unicode NFKC (full-width ``Ａ`` becomes ``A``, ``ﬁ`` becomes ``fi``);
2. casefold (``Straße`` becomes ``strasse``);
3. every Unicode punctuation character (categories ``P*``: ``.,!?"'`` but also ``。，「」``)
   replaced by a space;
4. the English articles ``a``, ``an``, ``the`` dropped as whole words;
5. whitespace collapsed to single spaces and stripped.

``answer_tokens`` splits a normalized answer into tokens for F1: on whitespace, and every
CJK character (Han, Hiragana, Katakana, Hangul) is a token of its own, since those scripts
do not put spaces between words.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

__all__ = ["answer_tokens", "contains_tokens", "normalize_answer"]


@functools.cache
def _punctuation_table() -> dict[int, str]:
    # Built on first use: scanning every code point costs ~0.1 s, too much for import time.
    return {
        c: " " for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)).startswith("P")
    }


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_CJK = re.compile(
    r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff"
    r"\U00020000-\U0002ffff])"
)


def normalize_answer(text: str) -> str:
    """Normalize an answer for comparison.

    >>> normalize_answer("  The Eiffel-Tower!! ")
    'eiffel tower'
    >>> normalize_answer("北京。") == normalize_answer("北京")
    True
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.translate(_punctuation_table())
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_tokens(text: str) -> list[str]:
    """Tokens of a normalized answer; CJK characters are single tokens.

    >>> answer_tokens("The capital is 北京")
    ['capital', 'is', '北', '京']
    """
    return _CJK.sub(r" \1 ", normalize_answer(text)).split()


def contains_tokens(haystack: list[str], needle: list[str]) -> bool:
    """True when ``needle`` occurs as a contiguous run of tokens in ``haystack``.

    Token-level, so "cat" is not in "concatenate", while 北京 is in 首都是北京 because CJK
    characters are tokens of their own.

    >>> contains_tokens(answer_tokens("首都是北京"), answer_tokens("北京"))
    True
    >>> contains_tokens(answer_tokens("concatenate"), answer_tokens("cat"))
    False
    """
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))
