"""Base64 broken into lines, found in a text: MIME wraps at 76 columns, PEM and ``openssl
base64`` at 64, others elsewhere, with LF or CRLF, raw or JSON-escaped (``\\n``). A secret's
encoding may straddle a break, so :class:`heta_eval.redaction.Secrets` reads each such run
without its breaks (:func:`unwrapped`) and maps what it finds back onto the text.

>>> text = "echo: " + "QUJD" * 5 + "\\n" + "REVG" + " done"
>>> [run.group() for run in wrapped_runs(text)]
['QUJDQUJDQUJDQUJDQUJD\\nREVG']
>>> unwrapped("QUJDQUJDQUJDQUJDQUJD\\nREVG", 6)[0]
'QUJDQUJDQUJDQUJDQUJDREVG'
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["BREAK", "unwrapped", "wrapped_runs"]

# Runs of base64 broken into lines, the breaks raw or JSON-escaped: an encoded secret may
# straddle one (MIME wraps at 76 columns, PEM and `openssl base64` at 64).
_BASE64 = "A-Za-z0-9+/=_-"
BREAK = re.compile(r"\r\n|[\r\n]|\\r\\n|\\n")
# Every line but the last is a whole line of at least 16 characters (encoders wrap at 64
# or 76): a line of prose seldom is one.
_WRAPPED = re.compile(rf"(?:[{_BASE64}]{{16,}}(?:{BREAK.pattern}))+[{_BASE64}]+")
# A break after a whole line: where a run may be (the scan looks at break characters only).
_AFTER_LINE = re.compile(rf"(?<=[{_BASE64}]{{16}})(?:{BREAK.pattern})")
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")


# Bytes mapped to what the quick look below needs: "A" for base64's characters, the break
# characters as they are, anything else a space.
_CLASSES = bytes(
    ord("A") if chr(b) in _BASE64_CHARS else b if chr(b) in "\r\n\\" else ord(" ")
    for b in range(256)
)
_WHOLE_LINE_THEN = tuple(b"A" * 16 + end for end in (b"\r", b"\n", b"\\"))


def wrapped_runs(text: str) -> Iterator[re.Match[str]]:
    """Each run of base64 broken into lines in ``text``. Most texts hold no line of 16
    base64 characters before a break: a byte-level look (C speed) says so first, and only
    a text that does is searched."""
    classes = text.encode("utf-8", "surrogatepass").translate(_CLASSES)
    if not any(mark in classes for mark in _WHOLE_LINE_THEN):
        return
    end = 0
    for brk in _AFTER_LINE.finditer(text):
        at = brk.start()
        if at < end:
            continue
        start = at - 16
        while start and text[start - 1] in _BASE64_CHARS:
            start -= 1
        run = _WRAPPED.match(text, start)
        if run is not None:
            end = run.end()
            yield run


def unwrapped(run: str, offset: int) -> tuple[str, list[int]]:
    """``run`` without its line breaks, and where each of its characters is in the text."""
    parts: list[str] = []
    where: list[int] = []
    last = 0
    for brk in [*BREAK.finditer(run), None]:
        stop = len(run) if brk is None else brk.start()
        parts.append(run[last:stop])
        where.extend(range(offset + last, offset + stop))
        last = 0 if brk is None else brk.end()
    return "".join(parts), where
