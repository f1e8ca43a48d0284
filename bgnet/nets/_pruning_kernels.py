"""Numba kernel of ``bgnet.nets.pruning``: which rows of each segment a pruning net keeps."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def keep_top(values, offsets, k, keep):  # type: ignore[no-untyped-def]
    """Mark in ``keep`` (bool, set in place) the ``k`` largest ``values`` of each segment ``offsets[i]:offsets[i+1]``
    (all of a segment of ``k`` rows or fewer; ties go to the earlier row). Rows already marked stay marked and do
    not count towards ``k``."""
    for i in range(offsets.shape[0] - 1):
        a, b = offsets[i], offsets[i + 1]
        if b - a <= k:
            for j in range(a, b):
                keep[j] = True
            continue
        chosen = 0
        taken = keep[a:b].copy()
        while chosen < k:
            best = -1
            for j in range(a, b):
                if not taken[j - a] and (best < 0 or values[j] > values[best]):
                    best = j
            if best < 0:
                break
            taken[best - a] = True
            keep[best] = True
            chosen += 1
