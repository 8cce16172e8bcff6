"""trec_eval's ranking: float32 scores descending, ties by doc id bytes descending (its qsort
comparator, a total order)."""

from __future__ import annotations

import numpy as np

from heta_eval._runtime import njit
from heta_eval.io._kernels import compare_bytes


@njit(cache=True, nogil=True)
def trec_ranking(sc, data, d_off, rows):  # pragma: no cover - compiled
    """The local indices of the kept rows in trec_eval's order (float32 of ``sc``)."""
    m = len(sc)
    f32 = np.empty(m, dtype=np.float32)
    local = np.empty(m, dtype=np.int64)
    for j in range(m):
        local[j] = j
        f32[j] = np.float32(sc[j])
    if _in_trec_order(f32, data, d_off, rows):
        return local
    if _scores_descending(f32):
        return _order_ties(local, f32, data, d_off, rows)
    return _trec_order(local, f32, data, d_off, rows)


@njit(cache=True)
def _scores_descending(f32):  # pragma: no cover - compiled
    # True when the float32 scores never rise and none is NaN: only groups of equal scores
    # are then out of order (a run written in score order, ties in another id order).
    for j in range(len(f32) - 1):
        if not f32[j] >= f32[j + 1]:  # also False for a NaN
            return False
    return len(f32) == 0 or f32[len(f32) - 1] == f32[len(f32) - 1]


#: Equal-score groups up to this size are insertion-sorted in place (no allocation).
_SMALL_GROUP = 16


@njit(cache=True)
def _order_ties(local, f32, data, d_off, rows):  # pragma: no cover - compiled
    # Scores already descending: sort each group of equal scores by doc id bytes descending.
    # The order is total (no NaN, doc ids unique), so this is the full sort's one result.
    out = local.copy()
    n = len(out)
    a = 0
    while a < n:
        b = a + 1
        while b < n and f32[b] == f32[a]:
            b += 1
        if b - a > _SMALL_GROUP:
            out[a:b] = _trec_order(local[a:b], f32, data, d_off, rows)
        else:
            for i in range(a + 1, b):
                x = out[i]
                gx = rows[x]
                j = i - 1
                while j >= a:
                    gy = rows[out[j]]
                    if (
                        compare_bytes(
                            data, d_off[gx], d_off[gx + 1], data, d_off[gy], d_off[gy + 1]
                        )
                        <= 0
                    ):
                        break
                    out[j + 1] = out[j]
                    j -= 1
                out[j + 1] = x
        a = b
    return out


@njit(cache=True)
def _in_trec_order(f32, data, d_off, rows):  # pragma: no cover - compiled
    # True when rows are already in _trec_order's order (runs are usually written so): that
    # order is total, so the sort would return them as they are.
    for j in range(len(f32) - 1):
        if f32[j] < f32[j + 1]:
            return False
        if f32[j] == f32[j + 1]:
            x = rows[j]
            y = rows[j + 1]
            if compare_bytes(data, d_off[x], d_off[x + 1], data, d_off[y], d_off[y + 1]) < 0:
                return False
    return True


@njit(cache=True)
def _trec_order(local, f32, data, d_off, rows):  # pragma: no cover - compiled
    # Bottom-up merge sort of local indices: float32 score descending, then doc id bytes
    # (of global row rows[x]) descending.
    n = len(local)
    a = local.copy()
    b = np.empty_like(a)
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                x = a[i]
                y = a[j]
                if f32[x] > f32[y]:
                    take_left = True
                elif f32[x] < f32[y]:
                    take_left = False
                else:
                    gx = rows[x]
                    gy = rows[y]
                    take_left = (
                        compare_bytes(
                            data, d_off[gx], d_off[gx + 1], data, d_off[gy], d_off[gy + 1]
                        )
                        > 0
                    )
                if take_left:
                    b[o] = x
                    i += 1
                else:
                    b[o] = y
                    j += 1
                o += 1
            while i < mid:
                b[o] = a[i]
                i += 1
                o += 1
            while j < hi:
                b[o] = a[j]
                j += 1
                o += 1
            lo += 2 * width
        a, b = b, a
        width *= 2
    return a
