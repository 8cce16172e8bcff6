"""Lucene's Porter stemmer (``org.apache.lucene.analysis.en.PorterStemmer``).

Martin Porter's reference implementation (Release 3), which departs from the 1980 paper in
two rules Lucene keeps: ``-bli`` becomes ``-ble`` (not ``-abli`` to ``-able``) and ``-logi``
becomes ``-log``. Snowball's ``porter`` and NLTK's stemmers differ from it on such words, so
this is a separate implementation written from the algorithm's description.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["porter_stem"]

_VOWELS = frozenset("aeiou")

# Step 3 (the paper's step 2): suffix -> replacement, tried in this order per penultimate letter.
_STEP3: dict[str, tuple[tuple[str, str], ...]] = {
    "a": (("ational", "ate"), ("tional", "tion")),
    "c": (("enci", "ence"), ("anci", "ance")),
    "e": (("izer", "ize"),),
    "l": (("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")),
    "o": (("ization", "ize"), ("ation", "ate"), ("ator", "ate")),
    "s": (("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")),
    "t": (("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")),
    "g": (("logi", "log"),),
}
# Step 4 (the paper's step 3), keyed by the last letter.
_STEP4: dict[str, tuple[tuple[str, str], ...]] = {
    "e": (("icate", "ic"), ("ative", ""), ("alize", "al")),
    "i": (("iciti", "ic"),),
    "l": (("ical", "ic"), ("ful", "")),
    "s": (("ness", ""),),
}
# Step 5 (the paper's step 4): suffixes removed when m > 1, keyed by the penultimate letter.
_STEP5: dict[str, tuple[str, ...]] = {
    "a": ("al",),
    "c": ("ance", "ence"),
    "e": ("er",),
    "i": ("ic",),
    "l": ("able", "ible"),
    "n": ("ant", "ement", "ment", "ent"),
    "o": ("ion", "ou"),
    "s": ("ism",),
    "t": ("ate", "iti"),
    "u": ("ous",),
    "v": ("ive",),
    "z": ("ize",),
}


class _Word:
    """The word being stemmed: ``b[:k + 1]`` is the current stem, ``j`` a suffix cut."""

    __slots__ = ("b", "j", "k")

    def __init__(self, word: str) -> None:
        self.b = list(word)
        self.k = len(word) - 1
        self.j = 0

    def cons(self, i: int) -> bool:
        c = self.b[i]
        if c in _VOWELS:
            return False
        if c == "y":
            return True if i == 0 else not self.cons(i - 1)
        return True

    def m(self) -> int:
        """The number of vowel-consonant sequences in ``b[:j + 1]``."""
        n, i, j = 0, 0, self.j
        while i <= j and self.cons(i):
            i += 1
        while True:
            while i <= j and not self.cons(i):
                i += 1
            if i > j:
                return n
            while i <= j and self.cons(i):
                i += 1
            n += 1
            if i > j:
                return n

    def vowel_in_stem(self) -> bool:
        return any(not self.cons(i) for i in range(self.j + 1))

    def double_consonant(self, i: int) -> bool:
        return i >= 1 and self.b[i] == self.b[i - 1] and self.cons(i)

    def cvc(self, i: int) -> bool:
        if i < 2 or not self.cons(i) or self.cons(i - 1) or not self.cons(i - 2):
            return False
        return self.b[i] not in "wxy"

    def ends(self, suffix: str) -> bool:
        start = self.k - len(suffix) + 1
        if start < 0 or "".join(self.b[start : self.k + 1]) != suffix:
            return False
        self.j = self.k - len(suffix)
        return True

    def set_to(self, s: str) -> None:
        del self.b[self.j + 1 :]
        self.b.extend(s)
        self.k = self.j + len(s)

    def replace_if_measured(self, s: str) -> None:
        if self.m() > 0:
            self.set_to(s)


def _step1(w: _Word) -> None:
    b = w.b
    if b[w.k] == "s":
        if w.ends("sses"):
            w.k -= 2
        elif w.ends("ies"):
            w.set_to("i")
        elif b[w.k - 1] != "s":
            w.k -= 1
    if w.ends("eed"):
        if w.m() > 0:
            w.k -= 1
    elif (w.ends("ed") or w.ends("ing")) and w.vowel_in_stem():
        w.k = w.j
        if w.ends("at"):
            w.set_to("ate")
        elif w.ends("bl"):
            w.set_to("ble")
        elif w.ends("iz"):
            w.set_to("ize")
        elif w.double_consonant(w.k):
            if w.b[w.k] not in "lsz":
                w.k -= 1
        else:
            w.j = w.k  # m() and cvc() look at the whole stem here
            if w.m() == 1 and w.cvc(w.k):
                w.set_to("e")


def _step2(w: _Word) -> None:
    if w.ends("y") and w.vowel_in_stem():
        w.b[w.k] = "i"


def _step3(w: _Word) -> None:
    if w.k == 0:
        return
    for suffix, replacement in _STEP3.get(w.b[w.k - 1], ()):
        if w.ends(suffix):
            w.replace_if_measured(replacement)
            return


def _step4(w: _Word) -> None:
    for suffix, replacement in _STEP4.get(w.b[w.k], ()):
        if w.ends(suffix):
            w.replace_if_measured(replacement)
            return


def _step5(w: _Word) -> None:
    if w.k == 0:
        return
    for suffix in _STEP5.get(w.b[w.k - 1], ()):
        if w.ends(suffix):
            # -ion goes only after s or t.
            if suffix == "ion" and not (w.j >= 0 and w.b[w.j] in "st"):
                continue
            if w.m() > 1:
                w.k = w.j
            return


def _step6(w: _Word) -> None:
    w.j = w.k
    if w.b[w.k] == "e":
        a = w.m()
        if a > 1 or (a == 1 and not w.cvc(w.k - 1)):
            w.k -= 1
    if w.b[w.k] == "l" and w.double_consonant(w.k) and w.m() > 1:
        w.k -= 1


@lru_cache(maxsize=1 << 18)
def porter_stem(word: str) -> str:
    """The stem Lucene's ``PorterStemFilter`` gives ``word`` (lower case expected).

    >>> [porter_stem(w) for w in ["caresses", "ponies", "relational", "sensibility", "biology"]]
    ['caress', 'poni', 'relat', 'sensibl', 'biologi']
    """
    if not word.isascii() and max(word) > "\uffff":
        # Java counts a character outside the BMP as two (a surrogate pair), both consonants
        # to the stemmer: a filler consonant after each gives the same lengths and measures.
        # No suffix rule holds the filler, so a stem never ends between a pair.
        return _stem("".join(c + "\0" if c > "\uffff" else c for c in word)).replace("\0", "")
    return _stem(word)


def _stem(word: str) -> str:
    if len(word) <= 2:
        return word
    w = _Word(word)
    for step in (_step1, _step2, _step3, _step4, _step5, _step6):
        step(w)
    return "".join(w.b[: w.k + 1])
