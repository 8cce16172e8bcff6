"""What an id and a mode name may hold: the rules for names that enter from outside.

An id (a corpus document, a case, a judged or retrieved document, a service's reply) is one
word: :func:`id_problem`. An id that reaches C code (pytrec_eval) must not hold what it cannot
take: :func:`unscorable_id`. A mode names files, so it is a plain name:
:func:`mode_name_problem`. Light: the command line checks with them before anything heavy
loads.
"""

from __future__ import annotations

import re

__all__ = [
    "MODE_NAME",
    "MODE_NAME_LIMIT",
    "RERANK_SUFFIX",
    "first_stage_mode",
    "holds_surrogate",
    "id_problem",
    "mode_name_problem",
    "rerank_mode",
    "unscorable_id",
]

#: What no id may hold (:func:`id_problem`): whitespace and line breaks of every kind
#: (Python's ``\\s``: ASCII whitespace, U+001C-U+001F, U+0085, U+00A0, U+1680,
#: U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000), control characters (C0, DEL,
#: C1) and surrogates (a lone one is not text: no UTF-8 file can hold it). Format characters
#: (Cf: bidi controls, zero-width joiners) are allowed: they split no field and no line.
_NOT_IN_ID = re.compile(r"[\s\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def id_problem(text: object) -> str | None:
    """Why ``text`` cannot be an id, or ``None``: THE rule for ids that enter from outside
    (corpus, cases, a service's replies) and that the project writes (runs, qrels). An id
    is a non-empty ``str`` without whitespace, control characters or surrogates.

    >>> id_problem("doc-7/ä#2"), id_problem("d1 0 x 1 9.9 t\\nq1"), id_problem("")
    (None, "holds a space (' ')", 'is empty')
    """
    if type(text) is not str:
        return f"is a {type(text).__name__}, not a string"
    if not text:
        return "is empty"
    found = _NOT_IN_ID.search(text)
    if found is None:
        return None
    char = found.group()
    return f"holds {_CHAR_NAMES.get(char) or _kind(char)} ({char!r})"


_CHAR_NAMES = {
    " ": "a space",
    "\t": "a tab",
    "\n": "a newline",
    "\r": "a carriage return",
    "\x00": "a NUL character",
    "\u2028": "a line separator",
    "\u2029": "a paragraph separator",
}


def _kind(char: str) -> str:
    if "\ud800" <= char <= "\udfff":
        return "a lone surrogate"
    return "whitespace" if char.isspace() else "a control character"


def unscorable_id(text: str) -> bool:
    """Whether ``text`` holds what C code cannot take as an id: NUL, a lone surrogate.

    >>> unscorable_id("d\\x00"), unscorable_id("d\\ud800"), unscorable_id("d\\x1c\\u2028")
    (True, True, False)
    """
    if "\x00" in text:
        return True
    if text.isascii():  # O(1) in CPython: the common case costs nothing more than NUL's test
        return False
    # C-speed passes over millions of joined ids (a regex search is several times slower):
    # Latin-1 encodes every string whose characters are below U+0100, which holds no
    # surrogate; UTF-16 refuses a surrogate code point.
    for encoding in ("latin-1", "utf-16-le"):
        try:
            text.encode(encoding)
            return False
        except UnicodeEncodeError:
            pass
    return True


def holds_surrogate(value: object) -> bool:
    """Whether a string, or any key or string inside JSON lists and objects, holds a
    surrogate: JSON's ``"\\ud800"`` escape reads as one, and no UTF-8 file can hold it.

    >>> holds_surrogate({"a": ["ok", "x\\udc80"]}), holds_surrogate({"é": 1})
    (True, False)
    """
    if isinstance(value, str):
        return not value.isascii() and _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(holds_surrogate(k) or holds_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(map(holds_surrogate, value))
    return False


#: A mode names files (``runs/<mode>.trec``), a TREC run's tag and a report's columns: a plain
#: name of ASCII letters, digits, ``.``, ``_``, ``+`` and ``-``, starting with a letter or a
#: digit, without ``..``, at most :data:`MODE_NAME_LIMIT` characters.
MODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
MODE_NAME_LIMIT = 100


def mode_name_problem(mode: object) -> str | None:
    """Why ``mode`` is not a plain name (:data:`MODE_NAME`), or None. Light: the command line
    checks ``--modes`` with it before anything heavy loads.

    >>> mode_name_problem("bm25+rerank") is None, mode_name_problem("v1.2") is None
    (True, True)
    >>> mode_name_problem("../../x")[:40]
    "mode '../../x' is not a plain name: a mo"
    """
    if not isinstance(mode, str):
        return f"mode {mode!r} is not a string"
    plain = MODE_NAME.fullmatch(mode) is not None and ".." not in mode
    if plain and len(mode) <= MODE_NAME_LIMIT:
        return None
    shown = mode if len(mode) <= 120 else mode[:100] + f"... ({len(mode):,} characters)"
    return (
        f"mode {shown!r} is not a plain name: a mode names files (runs/<mode>.trec), "
        "so it starts with a letter or digit and holds only ASCII letters, digits, "
        f"'.', '_', '+' and '-' (no '..'), at most {MODE_NAME_LIMIT} characters"
    )


#: What a reranked mode's name adds to its first stage's (:mod:`heta_eval.rerank.stage`).
RERANK_SUFFIX = "+rerank"


def rerank_mode(mode: str) -> str:
    """The name of ``mode`` reranked.

    >>> rerank_mode("keyword_search")
    'keyword_search+rerank'
    """
    return mode + RERANK_SUFFIX


def first_stage_mode(mode: str) -> str | None:
    """The mode a reranked ``mode`` reranked, or None for a mode that is no second stage.

    >>> first_stage_mode("keyword_search+rerank"), first_stage_mode("keyword_search")
    ('keyword_search', None)
    """
    return mode[: -len(RERANK_SUFFIX)] if mode.endswith(RERANK_SUFFIX) else None
