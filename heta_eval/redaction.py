"""Configured secrets, and every form of them a service may echo, replaced by ``***``.

A secret is a value the project sends but must never write: each ``--kb-header`` value, the
bearer token of ``HETA_EVAL_KB_TOKEN``, the LLM's API key. A service may echo it back in a
refusal, an answer, a chunk or an id, and not only as it was sent. :class:`Secrets` expands
each value, once, into the forms it may take:

* the value itself, and, for ``Scheme credential`` (``Bearer S``, ``Basic ...``), the bare
  credential ``S``; a credential that is base64 of UTF-8 text (``Basic``'s ``user:password``)
  also as that text and as the part after its first ``:`` (the password);
* each of those URL-encoded (``quote``, ``quote_plus``; ``/`` kept or encoded; upper or lower
  case hex; encoded twice), JSON-escaped (as ``json.dumps`` writes it with and without
  ``ensure_ascii``, ``\\uXXXX`` in upper case too, with ``<``, ``>``, ``&``, ``'`` escaped as
  Go does, with ``/`` as ``\\/`` as PHP does), HTML-escaped, hex-encoded, and
  base64-encoded (standard and URL-safe alphabet, with and without padding, and the
  characters that stay the same wherever the value sits inside a longer encoded text);
* each of those JSON-escaped once more (a JSON text inside a JSON string, as an LLM's verdict
  is inside its reply);
* inside base64 broken into lines (MIME's 76 columns, PEM's and ``openssl base64``'s 64, any
  width; the breaks raw or JSON-escaped): each run of such lines is read without its
  breaks, and what a form covers is replaced, breaks included.

A form shorter than :data:`MIN_LENGTH` characters is not redacted: it would blank ordinary
words; nor is a base64 fragment shorter than :data:`MIN_FRAGMENT`. Every character covered
by any form is replaced, overlapping forms become one ``***``.

Replies are redacted where they enter (:func:`heta_eval.remote.post_json`), every scalar of
the JSON: strings (keys and values), and numbers and ``true``/``false``/``null`` by their
JSON text (a numeric token echoed as a number becomes the text ``***``), so nothing after
that point (failure reasons, answers, chunk texts, ids, the results folder, the report, the
console) can hold a secret.

>>> secrets = Secrets(["Bearer tok-1234"])
>>> secrets.redact("token tok-1234 expired; dG9rLTEyMzQ= is its base64")
'token *** expired; *** is its base64'
>>> secrets.scrub({"answer": "tok%2D1234", "ids": ["a", "tok-1234"]})
{'answer': 'tok%2D1234', 'ids': ['a', '***']}
>>> long = Secrets(["Bearer tok-" + "x7" * 30])
>>> mime = base64.encodebytes(b"note: Bearer tok-" + b"x7" * 30 + b" expired").decode()
>>> mime.count("\\n"), long.redact(mime)  # lines of 76 columns: the secret spans two
(2, 'bm90ZTog***gZXhwaXJlZA==\\n')
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote, quote_plus, unquote, urlsplit

from heta_eval.base64_lines import BREAK, unwrapped, wrapped_runs

__all__ = [
    "MARK",
    "MIN_FRAGMENT",
    "MIN_LENGTH",
    "Secrets",
    "secret_forms",
    "shown_command",
    "split_credentials",
]

#: What a redacted secret becomes.
MARK = "***"
#: Forms shorter than this are not redacted (they would blank ordinary text).
MIN_LENGTH = 4
#: Nor are base64 fragments (a value inside a longer encoded text) shorter than this.
MIN_FRAGMENT = 8

# ``Scheme credential``: an RFC 9110 token, whitespace, then the credential.
_SCHEME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\s+(\S.*)", re.DOTALL)
_PERCENT = re.compile(r"%[0-9A-F]{2}")
_UNICODE_ESCAPE = re.compile(r"\\u[0-9a-f]{4}")
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "'": "\\u0027"}


def _decoded_base64(text: str) -> str | None:
    """The UTF-8 text ``text`` encodes in base64 (either alphabet), or None."""
    standard = text.replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeError):
        return None
    return decoded if decoded.isprintable() else None


def _bases(value: str) -> list[str]:
    """The value, its bare credential, and a base64 credential's text and password."""
    bases = [value]
    scheme = _SCHEME.fullmatch(value)
    if scheme:
        credential = scheme.group(1).strip()
        bases.append(credential)
        decoded = _decoded_base64(credential)
        if decoded:
            bases.append(decoded)
            if ":" in decoded:
                bases.append(decoded.partition(":")[2])
    return bases


def _base64_forms(raw: bytes) -> set[str]:
    """``raw`` base64-encoded in both alphabets, padded and not, and, for each of the three
    positions it may take inside a longer encoded text, the characters that depend only on
    it."""
    forms: set[str] = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        if shift == 0:
            forms |= {encoded, encoded.rstrip("=")}
        # Character i holds bits [6i, 6i + 6): keep those inside ``raw``'s bits. A short one
        # would match ordinary base64 by chance.
        start, end = -(-8 * shift // 6), 8 * (shift + len(raw)) // 6
        if end - start >= MIN_FRAGMENT:
            forms.add(encoded[start:end])
    return forms | {form.replace("+", "-").replace("/", "_") for form in forms}


def _escaped_forms(text: str) -> set[str]:
    """``text`` URL-encoded, JSON-escaped and HTML-escaped as common encoders write it."""
    forms = {text, html.escape(text), html.escape(text, quote=False)}
    for safe in ("/", ""):
        forms |= {quote(text, safe=safe), quote_plus(text, safe=safe)}
    forms.add(quote(quote(text, safe=""), safe=""))  # encoded twice (a URL inside a URL)
    forms |= {_PERCENT.sub(lambda m: m.group().lower(), form) for form in list(forms)}
    ascii_json = json.dumps(text)[1:-1]
    forms |= {ascii_json, json.dumps(text, ensure_ascii=False)[1:-1]}
    forms.add(_UNICODE_ESCAPE.sub(lambda m: "\\u" + m.group()[2:].upper(), ascii_json))
    forms.add("".join(_GO_ESCAPES.get(c, c) for c in ascii_json))
    forms.add(ascii_json.replace("/", "\\/"))  # PHP's json_encode escapes "/"
    raw = text.encode("utf-8")
    forms |= {raw.hex(), raw.hex().upper()}
    return forms


def secret_forms(value: str) -> set[str]:
    """Every form of ``value`` that :class:`Secrets` redacts (those of at least
    :data:`MIN_LENGTH` characters).

    >>> forms = secret_forms("Basic dXNlcjpwYXNzd29yZA==")
    >>> {"dXNlcjpwYXNzd29yZA%3D%3D", "user:password", "password", "cGFzc3dvcmQ"} <= forms
    True
    """
    forms: set[str] = set()
    for base in _bases(value):
        forms |= _escaped_forms(base)
        forms |= _base64_forms(base.encode("utf-8"))
    # A JSON text inside a JSON string (an LLM's verdict in its reply): each form escaped again.
    for ensure_ascii in (True, False):
        forms |= {json.dumps(form, ensure_ascii=ensure_ascii)[1:-1] for form in list(forms)}
    return {form for form in forms if len(form) >= MIN_LENGTH}


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None, str | None]:
    """``url`` without its ``user:password@``, the pair (decoded), and the ``Authorization``
    value they make (a secret), so that no message or record that shows the URL shows them.

    >>> split_credentials("http://me:pa%2Fss@127.0.0.1:8000/q")
    ('http://127.0.0.1:8000/q', ('me', 'pa/ss'), 'Basic bWU6cGEvc3M=')
    >>> split_credentials("http://127.0.0.1:8000/q")
    ('http://127.0.0.1:8000/q', None, None)
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, None, None  # not a URL: sending it will say so
    if "@" not in parts.netloc:
        return url, None, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    pair = (unquote(user), unquote(password))
    basic = base64.b64encode(f"{pair[0]}:{pair[1]}".encode()).decode("ascii")
    return parts._replace(netloc=host).geturl(), pair, f"Basic {basic}"


def shown_command(argv: Sequence[str] | None = None) -> str:
    """This process's command line as it may be shown to another process or written to a
    file (a lock's holder): every ``--kb-header`` value and every URL's ``user:password``
    replaced by ``<hidden>``; ``python -m heta_eval`` for the module's path.

    >>> shown_command(["heta-eval", "run", "--kb-header", "Authorization: Bearer S",
    ...                "--kb-h=X-Key: k", "--kb-url", "http://me:pw@host:8000/q"])
    'heta-eval run --kb-header <hidden> --kb-h=<hidden> --kb-url http://<hidden>@host:8000/q'
    """
    argv = list(sys.argv if argv is None else argv) or [""]
    first, rest = argv[0], argv[1:]
    if first.endswith(os.path.join("heta_eval", "__main__.py")):
        first = "python -m heta_eval"
    elif first == "-c":
        first, rest = "python -c ...", []
    shown, secret_next = [os.path.basename(first) if os.sep in first else first], False
    for argument in rest:
        name, equals, _ = argument.partition("=")
        # argparse takes any unambiguous prefix: --kb-h, --kb-head, ...
        header = len(name) >= len("--kb-h") and "--kb-header".startswith(name)
        if secret_next:
            shown.append("<hidden>")
        elif header and equals:
            shown.append(f"{name}=<hidden>")
        else:
            shown.append(re.sub(r"(://)[^/@\s]*@", r"\1<hidden>@", argument))
        secret_next = header and not equals
    return " ".join(shown)


class Secrets:
    """A set of secret values, expanded once into every form :func:`secret_forms` lists;
    :meth:`redact` and :meth:`scrub` replace them by ``***``. Empty and ``None`` values are
    skipped; an empty ``Secrets`` changes nothing.

    >>> Secrets([None, ""]).redact("nothing to hide"), bool(Secrets([]))
    ('nothing to hide', False)
    >>> Secrets(["k3y-abcd"]).redact("k3y-abcd, k3y-abcd")
    '***, ***'
    """

    def __init__(self, values: Iterable[str | None] = ()) -> None:
        self.values = frozenset(v for v in values if v)
        forms: set[str] = set()
        for value in self.values:
            forms |= secret_forms(value)
        self.forms = frozenset(forms)
        self._ordered = sorted(self.forms, key=lambda form: (-len(form), form))
        self._patterns: dict[tuple[str, ...], re.Pattern[str]] = {}
        # Whether a form could be inside a number's JSON text, or inside true/false/null:
        # only then are numbers and words checked (a token of letters never is).
        self._numeric = any(set(form) <= _NUMERIC for form in self.forms)
        self._words = any(form in word for form in self.forms for word in _WORDS)

    def __bool__(self) -> bool:
        return bool(self.values)

    def __repr__(self) -> str:
        return f"Secrets({len(self.values)} values)"  # never the values

    def _present(self, text: str) -> tuple[re.Pattern[str], tuple[str, ...]] | None:
        """A pattern of the forms ``text`` holds, and those forms; None when it holds none.
        ``in`` scans far faster than a regular expression of every form, and most texts
        hold none."""
        present = tuple(form for form in self._ordered if form in text)
        if not present:
            return None
        if present not in self._patterns:
            if len(self._patterns) > 256:  # bounded: each distinct set of forms found
                self._patterns.clear()
            # A lookahead finds every start of every form, overlapping ones too; at each
            # start the longest form is tried first.
            self._patterns[present] = re.compile(f"(?=({'|'.join(map(re.escape, present))}))")
        return self._patterns[present], present

    def _holds(self, text: str) -> bool:
        """Whether ``text`` holds a form, as it is or in a base64 run broken into lines."""
        if any(form in text for form in self._ordered):
            return True
        unwrapped = "\0".join(BREAK.sub("", run.group()) for run in wrapped_runs(text))
        return bool(unwrapped) and any(form in unwrapped for form in self._ordered)

    def _spans(self, text: str) -> list[tuple[int, int]]:
        """Where ``text`` holds a form: as it is, and inside each base64 run broken into
        lines (MIME's 76 columns, PEM's 64, any width), mapped back over the breaks."""
        found = self._present(text)
        spans = _match_spans(found[0], text) if found else []
        for run in wrapped_runs(text):
            joined, where = unwrapped(run.group(), run.start())
            inside = self._present(joined)
            if inside:
                spans += [(where[s], where[e - 1] + 1) for s, e in _match_spans(inside[0], joined)]
        return spans

    def redact(self, text: str) -> str:
        """``text`` with every character that belongs to a secret's form replaced; each run
        of such characters becomes one ``***``."""
        if not self._ordered or not text or not self._holds(text):
            return text
        return _marked(text, self._spans(text))

    def scrub(self, data: Any) -> Any:
        """``data`` (decoded JSON) with every scalar in it checked: each string, keys and
        values, redacted; a number, ``true``, ``false`` or ``null`` whose JSON text holds a
        form (a numeric token echoed as a number) becomes that text, redacted."""
        if not self._ordered:
            return data
        texts: list[str] = []
        _scalars(data, texts, numbers=self._numeric, words=self._words)
        # One scan of all the reply's text; only a reply that holds a form is rebuilt.
        if not self._holds("\0".join(texts)):
            return data
        return _rebuild(data, self, numbers=self._numeric, words=self._words)

    def loads(self, raw: str | bytes) -> Any:
        """A reply's JSON, decoded, then :meth:`scrub`-bed; a number is checked as it was
        written (``1.50E+7`` as those characters), not only as Python prints it.

        >>> Secrets(["X-Key 86753090"]).loads(b'{"id": 86753090, "score": 0.5}')
        {'id': '***', 'score': 0.5}
        """
        if not self._numeric:
            return self.scrub(json.loads(raw))

        def number(convert: Any) -> Any:
            return lambda text: self.redact(text) if self._holds(text) else convert(text)

        decoded = json.loads(raw, parse_int=number(int), parse_float=number(float))
        return self.scrub(decoded)


# What a number's JSON text may hold, and the texts of JSON's three words.
_NUMERIC = frozenset("0123456789+-.eE")
_WORDS = ("true", "false", "null")


def _scalar_text(value: Any, numbers: bool, words: bool) -> str | None:
    """A number's or a word's JSON text, where a form could be in it (else None)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value) if words else None
    if isinstance(value, int | float):
        return json.dumps(value) if numbers else None
    return None


def _scalars(data: Any, into: list[str], *, numbers: bool, words: bool) -> None:
    if isinstance(data, str):
        into.append(data)
    elif isinstance(data, dict):
        into += [key for key in data if isinstance(key, str)]
        for value in data.values():
            _scalars(value, into, numbers=numbers, words=words)
    elif isinstance(data, list):
        for item in data:
            _scalars(item, into, numbers=numbers, words=words)
    elif (text := _scalar_text(data, numbers, words)) is not None:
        into.append(text)


def _rebuild(data: Any, secrets: Secrets, *, numbers: bool, words: bool) -> Any:
    if isinstance(data, str):
        return secrets.redact(data)
    if isinstance(data, dict):
        return {
            _rebuild(key, secrets, numbers=numbers, words=words): _rebuild(
                value, secrets, numbers=numbers, words=words
            )
            for key, value in data.items()
        }
    if isinstance(data, list):
        return [_rebuild(item, secrets, numbers=numbers, words=words) for item in data]
    text = _scalar_text(data, numbers, words)
    if text is not None and secrets._holds(text):
        return secrets.redact(text)
    return data


def _match_spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.start() + len(m.group(1))) for m in pattern.finditer(text)]


def _marked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each run of characters covered by ``spans`` as one ``***``."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    if not merged:
        return text
    parts, last = [], 0
    for start, end in merged:
        parts += [text[last:start], MARK]
        last = end
    return "".join(parts) + text[last:]
