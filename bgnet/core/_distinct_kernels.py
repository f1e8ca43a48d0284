"""Numba kernel of ``bgnet.core.distinct``: the distinct rows of a batch of boards, by an exact hash table."""

from __future__ import annotations

import numpy as np
from numba import njit

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@njit(cache=True, nogil=True)
def distinct_rows(boards):  # type: ignore[no-untyped-def]
    """``(first, inverse)`` of boards (N, W) int8: the index of each distinct row's first occurrence, in order of
    appearance, and for every row the position of its row in ``first``. Rows are hashed (FNV-1a) into an
    open-addressing table and compared in full on a hash match, so the result is exact."""
    n, width = boards.shape
    size = 16
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, np.int64)
    first = np.empty(n, np.int64)
    inverse = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        h = _FNV_OFFSET
        for j in range(width):
            h = (h ^ np.uint64(np.int64(boards[i, j]) & 0xFF)) * _FNV_PRIME
        slot = np.int64(h & mask)
        while True:
            t = table[slot]
            if t < 0:
                table[slot] = k
                first[k] = i
                inverse[i] = k
                k += 1
                break
            r = first[t]
            same = True
            for j in range(width):
                if boards[r, j] != boards[i, j]:
                    same = False
                    break
            if same:
                inverse[i] = t
                break
            slot = (slot + 1) & np.int64(size - 1)
    return first[:k].copy(), inverse
