"""How the report shows text it did not write (ids, queries, titles, snippets, answers,
errors, reasons): cut to a bounded length, and with the characters that would hide or
reorder text shown as ``⟨U+XXXX⟩``. The one display rule of the page; the page's script only
places what these functions return (and isolates each piece's direction).

* :func:`cut`: at most ``limit`` characters, saying how many were left out.
* :func:`shown`: a text body. Control characters (C0 but tab and newline, DEL, C1), bidi
  controls (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069) and lone surrogates become
  visible; line breaks and other layout stay.
* :func:`shown_id`: an id. Every character that shows as nothing, as a space or as a
  line break (controls, format characters, spaces other than U+0020, line and paragraph
  separators, lone surrogates) becomes visible, and so does ``⟨`` itself: two different ids
  never look the same.

>>> cut("abc", 10), cut("abcdef", 4)
('abc', 'abcd… (2 more characters)')
>>> shown("line one\\nrtl \\u202eoverride\\x00")
'line one\\nrtl ⟨U+202E⟩override⟨U+0000⟩'
>>> shown_id("a\\nb"), shown_id("a b"), shown_id("a⟨U+000A⟩b")
('a⟨U+000A⟩b', 'a b', 'a⟨U+27E8⟩U+000A⟩b')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "ID_LIMIT",
    "TEXT_LIMIT",
    "cut",
    "plain_ids",
    "plural",
    "shown",
    "shown_id",
    "whole_id",
]

#: Characters of an id a cell shows (query, document and chunk ids; the whole id is in the
#: cell's title, shown on hover).
ID_LIMIT = 300
#: Characters of a text body (query, answer, error, reason) the report keeps.
TEXT_LIMIT = 4_000

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_SURROGATES = "\ud800-\udfff"
_BODY = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}{_SURROGATES}]")
# Unicode's Cc, Cf, Zl, Zp and Zs but U+0020 (tests/report/test_report_text.py holds this list to
# unicodedata), lone surrogates, and the opening bracket of the notation itself.
_ID = re.compile(
    "[\x00-\x1f\x7f-\xa0\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u1680\u180e"
    "\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u206f\u3000\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    f"\U000e0001\U000e0020-\U000e007f\u27e8{_SURROGATES}]"
)


def _code(match: re.Match[str]) -> str:
    return f"⟨U+{ord(match.group()):04X}⟩"


def cut(text: str | None, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if text is None:
        return ""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def shown(text: str | None, limit: int | None = None) -> str:
    """A text body as the report shows it: cut to ``limit`` (None: whole), its control and
    bidi characters visible."""
    text = (text or "") if limit is None else cut(text, limit)
    return _BODY.sub(_code, text) if _BODY.search(text) else text


def shown_id(text: str, limit: int = ID_LIMIT) -> str:
    """An id as a cell shows it: cut to ``limit`` characters, every invisible, space-like or
    reordering character visible."""
    return whole_id(cut(text, limit))


def whole_id(text: str) -> str:
    """An id whole (a cell's title, shown on hover), its characters visible as in a cell."""
    return _ID.sub(_code, text) if _ID.search(text) else text


def plain_ids(ids: Sequence[str]) -> bool:
    """True when a cell shows every one of ``ids`` as it is (one pass over them all: the
    usual case, checked before any id is looked at alone)."""
    if max(map(len, ids), default=0) > ID_LIMIT:
        return False
    joined = "".join(ids)
    # str.isprintable is False on exactly Unicode's Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs but the
    # space: this module's set and two more, so a printable text needs no regex search.
    return "⟨" not in joined and (joined.isprintable() or not _ID.search(joined))


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and the noun, singular for one.

    >>> plural(1, "system"), plural(3, "system"), plural(2, "query", "queries")
    ('1 system', '3 systems', '2 queries')
    """
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"
