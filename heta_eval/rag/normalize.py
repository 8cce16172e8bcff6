"""Text normalization, documented in one place: answers (SQuAD v1.1) and evidence matching.

``normalize_answer`` is the official SQuAD v1.1 normalization extended to Unicode. In order:

1. Unicode NFKC (full-width ``Ａ`` becomes ``A``, ``ﬁ`` becomes ``fi``);
2. casefold (``Straße`` becomes ``strasse``);
3. punctuation *deleted*: every ASCII punctuation character (Python's
   ``string.punctuation``, symbols such as ``$+<=>^`|~`` included, as in SQuAD) and every
   Unicode punctuation character (categories ``P*``: ``。，「」«»—``), the set MLQA uses;
4. the English articles ``a``, ``an``, ``the`` dropped as whole words;
5. whitespace collapsed to single spaces and stripped.

On ASCII text steps 1 and 2 are SQuAD's ``lower()`` and step 3 deletes exactly SQuAD's set, so
the result equals the official script's byte for byte (``Eiffel-Tower`` becomes
``eiffeltower``, ``don't`` becomes ``dont``, ``U.S.`` becomes ``us``; a test compares the two
on thousands of random strings). ``answer_tokens`` splits on whitespace, as SQuAD does, and
makes every CJK character (Han, Hiragana, Katakana, Hangul) a token of its own, since those
scripts put no spaces between words.

Evidence matching uses ``evidence_tokens``, which differs in one point: Unicode punctuation
(``P*``) *separates* words instead of being deleted (ASCII symbols such as ``+`` or ``=`` are
kept), so a sentence glued to the next one (``cells.The``) or a chunk cut after a hyphen still
lines up with the gold sentence's words. Evidence recall, citations and context precision all
match this way.
"""

from __future__ import annotations

import functools
import re
import string
import sys
import unicodedata

__all__ = [
    "answer_tokens",
    "contains_tokens",
    "evidence_tokens",
    "normalize_answer",
]


@functools.cache
def _unicode_punctuation() -> frozenset[int]:
    # Built on first use: scanning every code point is too slow for import time.
    return frozenset(
        c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)).startswith("P")
    )


@functools.cache
def _delete_table() -> dict[int, None]:
    return dict.fromkeys((*_unicode_punctuation(), *map(ord, string.punctuation)))


@functools.cache
def _space_table() -> dict[int, str]:
    return dict.fromkeys(_unicode_punctuation(), " ")


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_CJK = re.compile(
    r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff"
    r"\U00020000-\U0002ffff])"
)


def _normalize(text: str, table: dict[int, str] | dict[int, None]) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().translate(table)
    return " ".join(_ARTICLES.sub(" ", text).split())


def normalize_answer(text: str) -> str:
    """Normalize an answer the SQuAD v1.1 way (extended to Unicode, see the module docstring).

    >>> normalize_answer("  The Eiffel-Tower!! ")
    'eiffeltower'
    >>> normalize_answer("U.S. Army"), normalize_answer("don't know")
    ('us army', 'dont know')
    >>> normalize_answer("北京。") == normalize_answer("北京")
    True
    """
    return _normalize(text, _delete_table())


def answer_tokens(text: str) -> list[str]:
    """Tokens of a normalized answer for F1 and containment; CJK characters are single tokens.

    >>> answer_tokens("The capital is 北京")
    ['capital', 'is', '北', '京']
    """
    return _CJK.sub(r" \1 ", normalize_answer(text)).split()


def evidence_tokens(text: str) -> list[str]:
    """Tokens for matching gold evidence text in chunks: as ``answer_tokens``, except that
    punctuation separates words instead of being deleted.

    >>> evidence_tokens("p53-dependent cells.The end")
    ['p53', 'dependent', 'cells', 'end']
    """
    return _CJK.sub(r" \1 ", _normalize(text, _space_table())).split()


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
