"""The chunk collapse's one rule, on integer document codes or a list of ids: the module
behind :mod:`heta_eval.retrieval.collapse` (one response, many responses) and the
reference knowledge base's distinct documents.

Per query, each row (a chunk hit, in rank order) is, in this order of tests:

1. *unmapped* when its code is -1 (id: None; its document could not be resolved): dropped;
2. a *self-hit* when its document is the query's own (``own``): dropped, every one;
3. a *duplicate* when its document already kept a row in this query: dropped;
4. otherwise *kept*: a document keeps its first row, whatever the later rows score.

The rule is written in two forms, side by side here and pinned to each other and to a
plain loop by the tests: on integer codes (:func:`first_chunks`: plain Python, compiled by numba for
arrays once numba is loaded, the same answer run as Python on lists), and on one query's
list of ids (:func:`first_chunks_of_list`: dict passes, for a response of result objects,
whose ids would cost a numbering pass before the codes' kernel could run).
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from functools import cache
from itertools import repeat
from typing import Any

import numpy as np

from heta_eval._runtime import njit

__all__ = ["first_chunks", "first_chunks_of_ids", "first_chunks_of_list", "own_codes"]


def _first_chunks(codes, offsets, own, seen, keep, counts):  # pragma: no cover - compiled
    """The rules of the module docstring on integer document codes (-1: unmapped).

    Query ``q`` owns rows ``offsets[q]:offsets[q + 1]``; ``own[q]`` is the code of its own
    document (-1: none, or self-hits kept). Fills ``keep`` (per row) and ``counts`` (per
    query: kept, unmapped, duplicates, self-hits); ``seen[c]`` is the last query that kept
    code ``c``. Plain Python, compiled by numba for arrays (:func:`first_chunks`).
    """
    for q in range(len(offsets) - 1):
        mine = own[q]
        kept = 0
        unmapped = 0
        duplicates = 0
        self_hits = 0
        start = offsets[q]
        for i, c in enumerate(codes[start : offsets[q + 1]], start):  # as Python: no indexing
            if c < 0:
                unmapped += 1
            elif c == mine:
                self_hits += 1
            elif seen[c] == q:
                duplicates += 1
            else:
                seen[c] = q
                keep[i] = True
                kept += 1
        counts[4 * q] = kept
        counts[4 * q + 1] = unmapped
        counts[4 * q + 2] = duplicates
        counts[4 * q + 3] = self_hits


@cache
def _compiled(function: Callable[..., Any]) -> Callable[..., Any]:
    return njit(cache=True, nogil=True)(function)  # type: ignore[no-any-return]


def first_chunks(
    codes: np.ndarray,
    offsets: np.ndarray,
    own: np.ndarray,
    n_codes: int,
    *,
    compiled: bool | None = None,
    seen: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The collapse on integer document codes ``0..n_codes-1`` (-1: no document): the keep
    mask (per row) and an ``(queries, 4)`` int64 array of kept / unmapped / duplicate /
    self-hit counts. Query ``q`` owns rows ``offsets[q]:offsets[q + 1]``; ``own[q]`` is the
    code of the document whose id equals its query id (-1: none, or self-hits kept).

    ``compiled``: run numba's compilation of the rule (default: when numba is already
    loaded) or the same function as plain Python; the results are identical. ``seen``: a
    compiled run's scratch array of ``n_codes`` int64, all -1, left all -1 again (so a
    caller collapsing one query at a time allocates it once, not per query).

    >>> keep, counts = first_chunks(np.array([0, 1, 0, -1, 2]), np.array([0, 5]),
    ...                             np.array([2]), 3)
    >>> keep.tolist(), counts.tolist()
    ([True, True, False, False, False], [[2, 1, 1, 1]])
    """
    codes = np.asarray(codes, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    own = np.asarray(own, dtype=np.int64)
    if compiled is None:
        compiled = "numba" in sys.modules
    nq = len(offsets) - 1
    if compiled and seen is not None:
        keep = np.zeros(len(codes), dtype=np.bool_)
        counts = np.zeros(4 * nq, dtype=np.int64)
        _compiled(_first_chunks)(codes, offsets, own, seen, keep, counts)
        seen[codes] = -1
        return keep, counts.reshape(nq, 4)
    if n_codes > 2 * len(codes) + 64:  # few rows of many documents: number the ones seen
        codes, own, n_codes = _compact(codes, own)
    if compiled:
        keep = np.zeros(len(codes), dtype=np.bool_)
        counts = np.zeros(4 * nq, dtype=np.int64)
        seen = np.full(n_codes, -1, dtype=np.int64)
        _compiled(_first_chunks)(codes, offsets, own, seen, keep, counts)
        return keep, counts.reshape(nq, 4)
    keep_list = [False] * len(codes)
    count_list = [0] * (4 * nq)
    _first_chunks(
        codes.tolist(), offsets.tolist(), own.tolist(), [-1] * n_codes, keep_list, count_list
    )
    return np.array(keep_list, dtype=np.bool_), np.array(count_list, np.int64).reshape(nq, 4)


def first_chunks_of_list(
    ids: Sequence[Hashable], own: Hashable = None
) -> tuple[dict[Any, int], list[int]]:
    """The rules of the module docstring on one query's list of document ids (None:
    unmapped; ``own``: the query's own document id, None for none): ``{kept id: its first
    row}`` in rank order, and ``[kept, unmapped, duplicates, self-hits]``. Ids need no codes
    first: one C-level dict pass finds each id's first row, in rank order, and unmapped rows
    and self-hits are counted only when there are some (the form for a response of result
    objects, whose ids come as a list).

    >>> first_chunks_of_list(["a", "b", "a", None, "q", "q"], "q")
    ({'a': 0, 'b': 1}, [2, 1, 1, 2])
    """
    first: dict[Any, int] = {}
    deque(map(first.setdefault, ids, range(len(ids))), maxlen=0)
    unmapped = ids.count(None) if first.pop(None, -1) >= 0 else 0
    self_hits = ids.count(own) if own is not None and first.pop(own, -1) >= 0 else 0
    duplicates = len(ids) - len(first) - unmapped - self_hits
    return first, [len(first), unmapped, duplicates, self_hits]


def _compact(codes: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """``codes`` and ``own`` renumbered over the codes present (-1 kept): by a dict for a
    few rows (a response), else ``0..k-1`` by sorting."""
    if len(codes) <= _DICT_ROWS:
        number = {-1: -1}  # each code -> the position where it first occurs
        numbered = list(map(number.setdefault, codes.tolist(), range(len(codes))))
        mine = list(map(number.get, own.tolist(), repeat(-1)))
        return np.array(numbered, dtype=np.int64), np.array(mine, dtype=np.int64), len(codes)
    values, inverse = np.unique(codes, return_inverse=True)
    inverse = inverse.reshape(-1)
    shift = int(len(values) and values[0] < 0)  # -1 sorts first: it stays -1
    inverse -= shift
    at = np.minimum(np.searchsorted(values, own), len(values) - 1) if len(values) else own * 0
    found = (own >= 0) & (values[at] == own) if len(values) else own < -1
    return inverse, np.where(found, at - shift, -1), len(values) - shift


_DICT_ROWS = 4096


def _own_codes(  # pragma: no cover - compiled
    codes, offsets, doc_data, doc_offsets, query_data, query_offsets, own
):
    """``own[q]``: the code among query ``q``'s rows whose id (UTF-8 buffers) equals its
    query id, left as is when there is none."""
    for q in range(len(offsets) - 1):
        start = query_offsets[q]
        length = query_offsets[q + 1] - start
        for i in range(offsets[q], offsets[q + 1]):
            c = codes[i]
            s = doc_offsets[c]
            if doc_offsets[c + 1] - s == length:
                j = 0
                while j < length and doc_data[s + j] == query_data[start + j]:
                    j += 1
                if j == length:
                    own[q] = c
                    break


def own_codes(
    codes: np.ndarray,
    offsets: np.ndarray,
    documents: tuple[np.ndarray, np.ndarray],
    query_ids: list[str | None],
) -> np.ndarray:
    """Per query, the code among its rows whose document id equals its query id (-1: none
    there, or no query id): :func:`first_chunks`' ``own`` for codes of a table whose ids
    are the UTF-8 ``documents`` buffers (``string_buffers``)."""
    from heta_eval.io.columnar import string_buffers  # heavy (numba): tables have it loaded

    own = np.full(len(query_ids), -1, dtype=np.int64)
    mine = [query_id or "" for query_id in query_ids]  # "" equals no document id
    kernel = _compiled(_own_codes) if "numba" in sys.modules else _own_codes
    kernel(codes, offsets, *documents, *string_buffers(mine), own)
    return own


def first_chunks_of_ids(
    codes: np.ndarray,
    offsets: np.ndarray,
    n_codes: int,
    documents: tuple[np.ndarray, np.ndarray],
    query_ids: list[str | None],
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`first_chunks` with self-hits found by id: ``documents`` holds the ids of the
    codes as UTF-8 buffers. A query's own document, when among its rows, is among the rows
    kept without self-hits, so only those are compared; a second pass runs only when one is
    found."""
    no_own = np.full(len(query_ids), -1, dtype=np.int64)
    keep, counts = first_chunks(codes, offsets, no_own, n_codes, compiled=True)
    kept_offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(counts[:, 0], out=kept_offsets[1:])
    own = own_codes(codes[keep], kept_offsets, documents, query_ids)
    if (own >= 0).any():
        keep, counts = first_chunks(codes, offsets, own, n_codes, compiled=True)
    return keep, counts
