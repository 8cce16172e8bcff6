"""Lucene's ``BM25Similarity`` arithmetic: byte-encoded lengths, idf, and per-norm factors.

Lucene stores each document's length (its number of terms) in one byte with
``SmallFloat.intToByte4``: exact up to 23, then 3 significant bits and an exponent, so a
document of 100 terms is scored as if it had 96. Scores are float32 operations in Lucene's
order; a document's score is the float64 sum of its terms' float32 scores, cast to float32.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "byte4_to_int",
    "encode_lengths",
    "idf",
    "int_to_byte4",
    "length_table",
    "norm_factors",
]

# Byte values below this store the length itself; above, a 4-bit float (Lucene's constant).
_FREE_VALUES = 24


def _long_to_int4(i: int) -> int:
    bits = i.bit_length()
    if bits < 4:
        return i
    shift = bits - 4
    return ((i >> shift) & 0x07) | ((shift + 1) << 3)


def _int4_to_long(i: int) -> int:
    bits, shift = i & 0x07, (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


def int_to_byte4(length: int) -> int:
    """The byte (0-255) Lucene stores for a field of ``length`` terms.

    >>> [int_to_byte4(n) for n in (0, 23, 24, 100, 1000)]
    [0, 23, 24, 57, 87]
    """
    if length < _FREE_VALUES:
        return length
    return _FREE_VALUES + _long_to_int4(length - _FREE_VALUES)


def byte4_to_int(byte: int) -> int:
    """The length Lucene scores for a stored byte (a lower bound of the true length).

    >>> [byte4_to_int(int_to_byte4(n)) for n in (23, 100, 1000)]
    [23, 96, 984]
    """
    if byte < _FREE_VALUES:
        return byte
    return _FREE_VALUES + _int4_to_long(byte - _FREE_VALUES)


def length_table() -> np.ndarray:
    """``byte4_to_int`` of every byte value (256 int64)."""
    return np.array([byte4_to_int(b) for b in range(256)], dtype=np.int64)


def encode_lengths(lengths: np.ndarray) -> np.ndarray:
    """``int_to_byte4`` of each length (uint8)."""
    table = {int(n): int_to_byte4(int(n)) for n in np.unique(lengths)}
    return np.array([table[int(n)] for n in lengths], dtype=np.uint8).reshape(lengths.shape)


def idf(doc_freq: int, doc_count: int) -> np.float32:
    """Lucene's BM25 idf, ``log(1 + (N - n + 0.5) / (n + 0.5))`` in float64, as float32."""
    return np.float32(math.log(1 + (doc_count - doc_freq + 0.5) / (doc_freq + 0.5)))


def norm_factors(k1: float, b: float, avgdl: np.float32) -> np.ndarray:
    """``1 / (k1 * ((1 - b) + b * length / avgdl))`` per byte value, in float32 steps."""
    k1_, b_ = np.float32(k1), np.float32(b)
    lengths = length_table().astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):  # an empty field: nothing matches
        return (np.float32(1) / (k1_ * ((np.float32(1) - b_) + b_ * lengths / avgdl))).astype(
            np.float32
        )
