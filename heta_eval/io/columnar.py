"""Runs and responses as arrays: the input side of the compiled engine.

A :class:`ColumnarRun` holds a document-level run as flat arrays (see
:mod:`heta_eval.providers.engine`); :func:`columnar_run_from_dict` flattens a run dict, and
:func:`gather_strings` lays out the doc ids a chunk collapse keeps
(:mod:`heta_eval.retrieval.collapse`) without building Python objects.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from heta_eval._runtime import njit

__all__ = [
    "ColumnarRun",
    "columnar_run_from_dict",
    "gather_strings",
    "string_buffers",
]


@dataclass
class ColumnarRun:
    """A document-level run as arrays (see the module docstring).

    ``query_ids[q]`` owns rows ``offsets[q]:offsets[q + 1]``; ``doc_data`` / ``doc_offsets``
    hold row i's doc id as ``doc_data[doc_offsets[i]:doc_offsets[i + 1]]`` (UTF-8).
    """

    query_ids: list[str]
    offsets: np.ndarray  # int64, len(query_ids) + 1
    doc_data: np.ndarray  # uint8
    doc_offsets: np.ndarray  # int64, rows + 1
    scores: np.ndarray  # float64, rows
    valid: np.ndarray | None = None  # bool, rows: False = no score (rank-derived query)
    skip: np.ndarray | None = None  # bool, rows: True = removed (self-hit)

    @property
    def rows(self) -> int:
        return int(self.offsets[-1])


def string_buffers(values: Sequence[str] | object) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes and int64 offsets of a sequence of str (or an Arrow string array).

    >>> data, offsets = string_buffers(["ab", "é"])
    >>> bytes(data).decode(), offsets.tolist()
    ('abé', [0, 2, 4])
    """
    # A str sequence never needs pyarrow (a one-shot command skips its import); an Arrow
    # array can only exist once pyarrow is imported.
    arrow = sys.modules.get("pyarrow")
    if arrow is None or not isinstance(values, (arrow.Array, arrow.ChunkedArray)):
        laid_out = _joined_buffers(list(values))  # type: ignore[call-overload]
        if laid_out is not None:
            return laid_out
    import pyarrow as pa

    array = values if isinstance(values, pa.Array) else pa.array(values, type=pa.large_string())
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.null_count:
        raise ValueError("doc ids must not be null")
    wide = pa.types.is_large_string(array.type)
    if not (wide or pa.types.is_string(array.type)):
        raise TypeError(f"expected a string array, got {array.type}")
    _, offsets_buffer, data_buffer = array.buffers()
    n = len(array)
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64 if wide else np.int32)
    offsets = offsets[array.offset : array.offset + n + 1].astype(np.int64, copy=False)
    data = (
        np.frombuffer(data_buffer, dtype=np.uint8)
        if data_buffer is not None
        else np.zeros(0, np.uint8)
    )
    return data, offsets


def _joined_buffers(values: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`string_buffers` of a list by one join and one encode (``pa.array`` on a list
    imports pandas: a quarter second of a one-shot command). None when an id holds the
    NUL separator (then Arrow lays the strings out)."""
    n = len(values)
    if n == 0:
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    joined = np.frombuffer("\x00".join(values).encode("utf-8"), dtype=np.uint8)
    separators = joined == 0
    ends = np.flatnonzero(separators)
    if len(ends) != n - 1:
        return None
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:n] = ends - np.arange(n - 1)  # separators before string i: i
    offsets[n] = len(joined) - (n - 1)
    return (joined[~separators] if n > 1 else joined.copy()), offsets


def columnar_run_from_dict(
    run: Mapping[str, Mapping[str, float]], *, ignore_identical_ids: bool = True
) -> ColumnarRun:
    """Flatten ``{qid: {docid: score}}`` (not modified); self-hits are masked, not removed.

    >>> columnar_run_from_dict({"q": {"a": 1.0, "q": 2.0}}).skip.tolist()
    [False, True]
    """
    query_ids = list(run)
    lengths = np.fromiter((len(run[q]) for q in query_ids), dtype=np.int64, count=len(query_ids))
    offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    docs = list(chain.from_iterable(run[q].keys() for q in query_ids))
    scores = np.fromiter(
        chain.from_iterable(run[q].values() for q in query_ids), dtype=np.float64, count=total
    )
    data, doc_offsets = string_buffers(docs)
    skip = None
    if ignore_identical_ids:
        for i, qid in enumerate(query_ids):
            docs_q = run[qid]
            if qid in docs_q:
                if skip is None:
                    skip = np.zeros(total, dtype=np.bool_)
                skip[offsets[i] + list(docs_q).index(qid)] = True
    return ColumnarRun(query_ids, offsets, data, doc_offsets, scores, None, skip)


@njit(cache=True)
def gather_strings(data, offsets, picks):  # pragma: no cover - compiled
    """The UTF-8 buffers of strings ``picks`` of a (data, offsets) string column."""
    n = len(picks)
    out_offsets = np.empty(n + 1, dtype=np.int64)
    out_offsets[0] = 0
    for i in range(n):
        p = picks[i]
        out_offsets[i + 1] = out_offsets[i] + offsets[p + 1] - offsets[p]
    out = np.empty(out_offsets[n], dtype=np.uint8)
    for i in range(n):
        start = offsets[picks[i]]
        o = out_offsets[i]
        for j in range(out_offsets[i + 1] - o):
            out[o + j] = data[start + j]
    return out, out_offsets
