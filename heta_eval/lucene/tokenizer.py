"""Lucene's ``StandardTokenizer`` (Lucene 9.5, as in Anserini 0.22.1), token for token.

Lucene generates its tokenizer from a JFlex grammar of Unicode's word-break rules (UAX#29) and
emoji sequences (UTS#51), and emits only the segments that hold a word: letters and digits
joined by the rules (``e.g``, ``3.14``, ``can't``, ``snake_case``), runs of Katakana, Hangul or
South-East-Asian script, single Han or Hiragana characters, and emoji sequences (a ZWJ family,
a flag, a keycap, a skin-toned gesture). Everything else separates tokens.

Here the same grammar, written over the character classes of :mod:`.word_break` (measured on
the jar), is compiled into a minimal DFA and run with JFlex's rule: at each position the longest
match wins; where nothing matches, one code point is skipped. Lucene's scanner sees at most 255
UTF-16 units (``maxTokenLength``) from where a token starts: a longer token is cut at the
longest match inside that window (200 mathematical bold letters, two units each, become 127 and
73), and the next token starts right after it.

Time is linear in the text: the DFA never backtracks, and where it loops without accepting
(a run of underscores, of joiners) it jumps to the run's end instead of rescanning the run from
every start. With numba the scan is compiled; without it the same code runs as Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import chain
from typing import Any

import numpy as np

from heta_eval._runtime import import_numba
from heta_eval.lucene.dfa import DFA, alt, cat, compile_dfa, opt, plus, star, sym
from heta_eval.lucene.word_break import CLASS_NAMES, class_table

__all__ = ["MAX_TOKEN_LENGTH", "block_tokens", "standard_tokens"]

#: Lucene's default ``maxTokenLength``, in UTF-16 code units.
MAX_TOKEN_LENGTH = 255

_C = {name: i for i, name in enumerate(CLASS_NAMES)}


def _grammar() -> tuple:
    """Lucene's StandardTokenizer rules (emoji, words and numbers, South-East-Asian runs, Han
    and Hiragana characters) as one expression over class ids."""
    c = _C
    extend_names = (
        "extend",
        "complex_extend",
        "zwj",
        "keycap",
        "text_selector",
        "emoji_selector",
        "emoji_modifier",
        "tag_spec",
        "tag_term",
    )
    extend = {c[n] for n in extend_names}
    # UAX#29 WB4: Extend, Format and ZWJ attach to what precedes them; the emoji rules leave
    # out the presentation selectors, which they place themselves.
    ext = star(sym(extend))
    ext_sans_selectors = star(sym(extend - {c["text_selector"], c["emoji_selector"]}))

    def x(*names: str) -> tuple:
        return cat(sym(c[n] for n in names), ext)

    letter = x("letter", "hebrew_letter", "letter_emoji")
    hebrew = x("hebrew_letter")
    numeric = x("numeric")
    katakana = x("katakana")
    enl = x("extend_num_let")
    mid_letter = x("mid_letter", "mid_num_let", "single_quote")
    mid_num = x("mid_num", "mid_num_let", "single_quote")

    # Words and numbers (WB5-WB13b): the Numeric, Hangul and Katakana rules match subsets of it.
    part = alt(
        cat(katakana, star(cat(star(enl), katakana))),
        plus(
            alt(
                cat(hebrew, alt(x("single_quote"), cat(x("double_quote"), hebrew))),
                cat(numeric, star(cat(alt(star(enl), mid_num), numeric))),
                cat(letter, star(cat(alt(star(enl), mid_letter), letter))),
            )
        ),
    )
    word = cat(star(enl), part, star(cat(plus(enl), part)), star(enl))

    # Emoji sequences (UTS#51 emoji_sequence as Lucene writes it). A modifier base needs no
    # rule of its own: every base is an emoji character, and modifiers are Extend characters,
    # so a base, joiners before it and its modifier are the first branch; a modifier alone
    # (no joiners before it) is the second.
    emoji_char = sym(c["emoji"], c["letter_emoji"])
    zwj = sym(c["zwj"])
    element = alt(
        cat(star(zwj), emoji_char, ext_sans_selectors, opt(sym(c["emoji_selector"]))),
        cat(sym(c["emoji_modifier"]), ext_sans_selectors),
    )
    tag = cat(plus(sym(c["tag_spec"])), sym(c["tag_term"]))
    keycap_base = sym(c["keycap_symbol"], c["numeric"])
    keycap = cat(sym(c["keycap"]), ext_sans_selectors)
    presentation = opt(sym(c["emoji_selector"]))
    emoji = alt(
        cat(element, alt(star(cat(zwj, element)), tag)),
        cat(keycap_base, ext_sans_selectors, presentation, keycap),
        cat(x("regional_indicator"), x("regional_indicator")),
    )
    complex_run = plus(x("complex", "complex_extend"))
    ideograph = x("ideograph")
    return alt(emoji, word, complex_run, ideograph)


@lru_cache(maxsize=1)
def _automaton() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The DFA's table, its accepting states, and per state the loop it jumps through: the id
    of a class set (row of the last array) the state stays in without accepting, or -1."""
    dfa: DFA = compile_dfa(_grammar(), len(CLASS_NAMES))
    loops = np.full(len(dfa.accept), -1, dtype=np.int16)
    sets: list[tuple[int, ...]] = []
    for state in range(len(dfa.accept)):
        if dfa.accept[state]:
            continue
        members = tuple(int(k) for k in np.flatnonzero(dfa.trans[state] == state))
        if members:
            if members not in sets:
                sets.append(members)
            loops[state] = sets.index(members)
    in_set = np.zeros((max(1, len(sets)), len(CLASS_NAMES)), dtype=np.bool_)
    for i, members in enumerate(sets):
        in_set[i, list(members)] = True
    return dfa.trans, dfa.accept, loops, in_set


def _scan(codes, table, trans, accept, loops, in_set, limit_units, out):  # type: ignore[no-untyped-def]
    """Token spans of a text given as code points: writes ``start, end`` pairs (code point
    offsets) into ``out`` and returns how many tokens there are."""
    n = len(codes)
    # Per loop set, the last run found: positions [run_from, run_to) are all in the set, so a
    # scan entering the loop anywhere in it jumps to run_to without reading the run again.
    sets = in_set.shape[0]
    run_from = np.full(sets, -1, dtype=np.int64)
    run_to = np.full(sets, -1, dtype=np.int64)
    count = 0
    pos = 0
    window_end = 0  # the scanner's window: whole code points within limit_units of pos
    window_units = 0
    while pos < n:
        while window_end < n:
            width = 2 if codes[window_end] > 0xFFFF else 1
            if window_units + width > limit_units:
                break
            window_units += width
            window_end += 1
        state = 0
        best = pos
        i = pos
        while i < window_end:
            state = trans[state, table[codes[i]]]
            if state < 0:
                break
            i += 1
            if accept[state]:
                best = i
            elif loops[state] >= 0:
                # A loop that accepts nothing: jump to the end of its run.
                s = loops[state]
                if not (run_from[s] <= i < run_to[s]):
                    j = i
                    while j < n and in_set[s, table[codes[j]]]:
                        j += 1
                    run_from[s] = i
                    run_to[s] = j
                i = run_to[s] if run_to[s] < window_end else window_end
        step = best - pos if best > pos else 1
        if best > pos:
            out[count, 0] = pos
            out[count, 1] = best
            count += 1
        for k in range(pos, pos + step):
            window_units -= 2 if codes[k] > 0xFFFF else 1
        pos += step
    return count


@lru_cache(maxsize=1)
def _compiled_scan() -> Any:
    try:
        numba = import_numba()
    except ImportError:  # numba is optional for this module: the Python scan is the same code
        return _scan
    return numba.njit(cache=True, nogil=True)(_scan)


def standard_tokens(text: str) -> Iterator[str]:
    """The tokens Lucene's ``StandardTokenizer`` finds in ``text``, in order (case kept).

    >>> list(standard_tokens("The p53 protein's role, e.g. in IL-6 (3.5 mg/kg)."))
    ['The', 'p53', "protein's", 'role', 'e.g', 'in', 'IL', '6', '3.5', 'mg', 'kg']
    >>> list(standard_tokens("C\u266f \U0001f468\u200d\U0001f469\u200d\U0001f467 x_y"))
    ['C', '\u266f', '\U0001f468\u200d\U0001f469\u200d\U0001f467', 'x_y']
    """
    return iter(_tokens(text))


# ASCII text in which no "_" occurs and no ":.,;'" stands between two letters or digits is
# plain words: its tokens are its runs of letters and digits (cut every 255). Both patterns
# scan in linear time; everything else goes through the automaton. (_JOINED looks for the
# punctuation first, then at its neighbours: rarer than letters, so far fewer tries.)
_JOINED = re.compile(r"[_:.,;'](?:(?<=_)|(?<=[A-Za-z0-9].)(?=[A-Za-z0-9]))")
_ALNUM = re.compile(r"[A-Za-z0-9]{1,255}")
# Plain text's bytes with everything but letters and digits made a space: its tokens are then
# what split() finds, where none is longer than 255.
_SPACES = bytes(c if chr(c).isascii() and chr(c).isalnum() else 0x20 for c in range(256))
_SEPARATOR = "\x01"  # between texts split together: never a token of plain text


def _plain(text: str) -> bool:
    return text.isascii() and _JOINED.search(text) is None


def block_tokens(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Every token of ``texts`` and the position in ``texts`` of the text it came from: the
    tokens ``standard_tokens`` finds text by text, grouped (plain texts' first), for an index
    that counts them. Plain texts are split together, in a few C calls for all of them.

    >>> block_tokens(["Cats sat.", "e.g. dogs", "", "x"])
    (['Cats', 'sat', 'x', 'e.g', 'dogs'], array([0, 0, 3, 1, 1]))
    """
    flags = [_plain(text) for text in texts]
    plain = [i for i, flag in enumerate(flags) if flag]
    tokens, owners = _plain_tokens([texts[i] for i in plain], plain)
    for i, flag in enumerate(flags):
        if not flag:
            found = _tokens(texts[i])
            tokens.extend(found)
            owners.append(np.full(len(found), i, dtype=np.int64))
    return tokens, np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)


def _plain_tokens(texts: list[str], positions: list[int]) -> tuple[list[str], list[np.ndarray]]:
    """The tokens of plain texts, split in one pass, and their owners (as a list of arrays)."""
    if not texts:
        return [], []
    spaced = [text.encode("ascii").translate(_SPACES) for text in texts]
    split = (" " + _SEPARATOR + " ").encode("ascii").join(spaced).decode("ascii").split()
    if max(map(len, split), default=0) > MAX_TOKEN_LENGTH:  # a run Lucene cuts: text by text
        found = [_ALNUM.findall(text) for text in texts]
        counts = [len(tokens) for tokens in found]
        split = list(chain.from_iterable(found))
    else:
        # Cut at the separators (each at a known place: list.index runs in C).
        counts, tokens, start = [], [], 0
        for _ in range(len(texts) - 1):
            end = split.index(_SEPARATOR, start)
            counts.append(end - start)
            tokens.append(split[start:end])
            start = end + 1
        counts.append(len(split) - start)
        tokens.append(split[start:])
        split = list(chain.from_iterable(tokens))
    return split, [np.repeat(np.asarray(positions, dtype=np.int64), counts)]


def _tokens(text: str) -> list[str]:
    if _plain(text):
        return _ALNUM.findall(text)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    trans, accept, loops, in_set = _automaton()
    out = np.empty((len(codes), 2), dtype=np.int64)
    scan = _compiled_scan()
    count = scan(codes, class_table(), trans, accept, loops, in_set, MAX_TOKEN_LENGTH, out)
    # Two flat lists, not one list of pairs: far fewer objects for the garbage collector.
    starts, ends = out[:count, 0].tolist(), out[:count, 1].tolist()
    return list(map(text.__getitem__, map(slice, starts, ends)))
