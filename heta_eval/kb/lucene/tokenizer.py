"""Lucene's ``StandardTokenizer``: Unicode (UAX#29) word segmentation, as Lucene's grammar does it.

Lucene generates its tokenizer from a JFlex grammar that follows UAX#29's word-break rules and
emits only the segments that hold a word: letters and digits joined by the rules (``e.g``,
``3.14``, ``can't``, ``snake_case``), runs of Katakana, Hangul or South-East-Asian script,
single Han or Hiragana characters, and emoji sequences. Everything else (spaces, punctuation,
symbols) separates tokens. A token longer than 255 characters is cut into pieces of at most
255, as Lucene's default ``maxTokenLength`` does.

The grammar below mirrors Lucene's rules with the ``regex`` module's Unicode properties
(``Word_Break``, ``Line_Break``, ``Script``). Its Unicode tables are newer than Lucene's
(Unicode 9); the two differ only on characters assigned since, which the parity tests against
the real Lucene would show.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import regex

__all__ = ["MAX_TOKEN_LENGTH", "standard_tokens"]

MAX_TOKEN_LENGTH = 255

# UAX#29 WB4: Extend, Format and ZWJ attach to the character before them.
_X = r"[\p{WB=Extend}\p{WB=Format}\p{WB=ZWJ}]*"
_X_SANS_SELECTORS = r"[[\p{WB=Extend}\p{WB=Format}\p{WB=ZWJ}]--[\uFE0E\uFE0F]]*"

_ENL = rf"\p{{WB=ExtendNumLet}}{_X}"
_KATAKANA = rf"\p{{WB=Katakana}}{_X}"
_HEBREW = rf"\p{{WB=Hebrew_Letter}}{_X}"
_LETTER = rf"[\p{{WB=ALetter}}\p{{WB=Hebrew_Letter}}]{_X}"
# Lucene adds the full-width digits to Numeric.
_NUMERIC = rf"[\p{{WB=Numeric}}\uFF10-\uFF19]{_X}"
_MID_LETTER = rf"[\p{{WB=MidLetter}}\p{{WB=MidNumLet}}\p{{WB=Single_Quote}}]{_X}"
_MID_NUMERIC = rf"[\p{{WB=MidNum}}\p{{WB=MidNumLet}}\p{{WB=Single_Quote}}]{_X}"
_SINGLE_QUOTE = rf"\p{{WB=Single_Quote}}{_X}"
_DOUBLE_QUOTE = rf"\p{{WB=Double_Quote}}{_X}"

# WB5-WB13b: letters and digits joined directly, through mid-word punctuation or by connectors.
_WORD_UNIT = (
    rf"(?:{_KATAKANA}(?:(?:{_ENL})*{_KATAKANA})*"
    rf"|(?:{_HEBREW}(?:{_SINGLE_QUOTE}|{_DOUBLE_QUOTE}{_HEBREW})"
    rf"|{_NUMERIC}(?:(?:(?:{_ENL})*|{_MID_NUMERIC}){_NUMERIC})*"
    rf"|{_LETTER}(?:(?:(?:{_ENL})*|{_MID_LETTER}){_LETTER})*)+)"
)
_WORD = rf"(?:{_ENL})*{_WORD_UNIT}(?:(?:{_ENL})+{_WORD_UNIT})*(?:{_ENL})*"

# Emoji sequences (UTS#51 emoji_sequence, as Lucene's grammar writes them).
_EMOJI_CHAR = (
    r"(?:\p{Extended_Pictographic}"
    r"|[\p{Emoji}--[\p{WB=Regional_Indicator}0-9#*\u00A9\u00AE\u2122\u3030\u303D"
    r"\p{Emoji_Modifier}]])"
)
_EMOJI_UNIT = (
    rf"(?:\p{{WB=ZWJ}}*{_EMOJI_CHAR}{_X_SANS_SELECTORS}\uFE0F?"
    rf"|(?:\p{{WB=ZWJ}}*\p{{Emoji_Modifier_Base}}{_X_SANS_SELECTORS})?"
    rf"\p{{Emoji_Modifier}}{_X_SANS_SELECTORS})"
)
_EMOJI = (
    rf"{_EMOJI_UNIT}(?:[\U000E0020-\U000E007E]+\U000E007F|(?:\p{{WB=ZWJ}}{_EMOJI_UNIT})*)"
    rf"|[0-9#*]{_X_SANS_SELECTORS}\uFE0F?\u20E3{_X_SANS_SELECTORS}"
    rf"|(?:\p{{WB=Regional_Indicator}}{_X}){{2}}"
)

_GRAMMAR = (
    rf"{_WORD}|{_EMOJI}"
    rf"|(?:\p{{Line_Break=Complex_Context}}{_X})+"
    rf"|\p{{Script=Han}}{_X}|\p{{Script=Hiragana}}{_X}"
)
_TOKEN = regex.compile(_GRAMMAR, regex.VERSION1)
# JFlex takes the longest match; Python's regex takes the first alternative that matches. The
# two differ only where alternatives overlap: a Hebrew letter is both a letter and the start of
# WB7a/b's Hebrew_Letter × quote, so "xא'" would stop at "xא". Text holding Hebrew letters
# goes through the POSIX (longest-match) engine, which is several times slower.
_TOKEN_LONGEST = regex.compile(_GRAMMAR, regex.VERSION1 | regex.POSIX)
_HEBREW_LETTER = regex.compile(r"\p{WB=Hebrew_Letter}")


# ASCII text holds none of the Katakana, Hebrew, Extend/Format or emoji classes, so the grammar
# reduces to letters, digits, "_" (ExtendNumLet), ":" (MidLetter), "." and "'" (MidNumLet or
# Single_Quote) and "," ";" (MidNum). A coarse scan finds the candidate runs; only runs holding
# one of those joiners go through the exact rules (most English words hold none).
_ASCII_UNIT = r"(?:[0-9](?:(?:_*|[,.;'])[0-9])*|[A-Za-z](?:(?:_*|[:.'])[A-Za-z])*)+"
_ASCII_WORD = re.compile(rf"_*{_ASCII_UNIT}(?:_+{_ASCII_UNIT})*_*")
_ASCII_RUN = re.compile(r"[A-Za-z0-9_]+(?:[:.,;'][A-Za-z0-9_]+)*")
_ASCII_JOINER = re.compile(r"[:.,;'_]")


def standard_tokens(text: str) -> Iterator[str]:
    """The tokens Lucene's ``StandardTokenizer`` finds in ``text``, in order (case kept).

    >>> list(standard_tokens("The p53 protein's role, e.g. in IL-6 (3.5 mg/kg)."))
    ['The', 'p53', "protein's", 'role', 'e.g', 'in', 'IL', '6', '3.5', 'mg', 'kg']
    """
    if text.isascii():
        tokens = []
        for run in _ASCII_RUN.findall(text):
            if _ASCII_JOINER.search(run):
                tokens += _ASCII_WORD.findall(run)
            else:
                tokens.append(run)
        if all(len(token) <= MAX_TOKEN_LENGTH for token in tokens):
            yield from tokens
            return
    pattern = _TOKEN_LONGEST if _HEBREW_LETTER.search(text) else _TOKEN
    pos = 0
    while (match := pattern.search(text, pos)) is not None:
        start, end = match.span()
        if end - start > MAX_TOKEN_LENGTH:
            # Lucene's scanner sees at most maxTokenLength characters at once: a longer token
            # becomes the longest match inside that window, and scanning resumes after it.
            match = pattern.match(text, start, start + MAX_TOKEN_LENGTH) or match
        yield match.group()
        pos = match.end()
