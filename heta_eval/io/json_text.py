"""JSON from outside, read in one place: a document nested deeper than Python's parser
recurses (``[[[[...]]]]`` 100,000 deep, ``{"q": {"d": {...}}}``) is a
:class:`json.JSONDecodeError` naming the line and column where it passes the limit, like
any other malformed JSON, never a ``RecursionError`` traceback.

Every reader of JSON the project did not write itself in this process uses :func:`loads`:
JSON runs, JSONL benchmarks and corpora, results folders' ``run.json`` / ``hits.jsonl`` /
``summary.json``.

>>> loads('{"q1": {"d1": 1.5}}')
{'q1': {'d1': 1.5}}
>>> loads("[" * 100_000 + "]" * 100_000)
Traceback (most recent call last):
...
json.decoder.JSONDecodeError: nested deeper than 500 levels: line 1 column 501 (char 500)
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_DEPTH", "loads"]

#: The nesting reported: the parser itself stops near Python's recursion limit (1,000).
MAX_DEPTH = 500


def loads(text: str | bytes, **kwargs: Any) -> Any:
    """:func:`json.loads`, with too deep a document a :class:`json.JSONDecodeError`."""
    try:
        return json.loads(text, **kwargs)
    except RecursionError:
        pass
    document = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    raise json.JSONDecodeError(
        f"nested deeper than {MAX_DEPTH} levels", document, _too_deep_at(document)
    ) from None


def _too_deep_at(text: str) -> int:
    """Where the nesting first passes :data:`MAX_DEPTH` (else where it is deepest), strings
    skipped; only read once the parser has given up, so it costs nothing on good input."""
    depth = deepest = deepest_at = 0
    in_string = escaped = False
    for position, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return position
            if depth > deepest:
                deepest, deepest_at = depth, position
        elif char in "]}":
            depth -= 1
    return deepest_at
