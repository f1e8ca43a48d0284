"""Whether contact is over (a race): the one owner of the rule, as numba kernels on int8 boards.

A board is seen from the side on roll (mine positive on my points 1..24, my bar at
25, the opponent's checkers negative, his bar at 0). Contact is over when my rearmost
checker (25 while one is on my bar, 0 when I have none left) is ahead of his rearmost
in my numbering (0 while one is on his bar, 25 when he has none left): no checker of
mine can meet one of his again. The encoders, pubeval, the play ranker, the cube
kernels and ``Position.is_race`` all ask this module; the torch encoder
(``bgnet.features.encoding_torch``) is its twin, tested against it.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

__all__ = ["is_race", "race_flags", "race_of_masks", "race_scan"]


@njit(cache=True, nogil=True, inline="always")
def race_of_masks(mine, theirs):
    """The rule on bit masks: ``mine`` has bit p for my checkers on p (25 = my bar), ``theirs`` bit p for his
    checkers on my point p (0 = his bar); True when my rearmost checker is ahead of his."""
    my_back = 63 - leading_zeros(mine) if mine else 0
    their_back = trailing_zeros(theirs) if theirs else 25
    return my_back < their_back


@njit(cache=True, nogil=True, inline="always")
def race_scan(row):
    """(checkers of mine still in play, whether contact is over) of one board row (26,), in one branch-free pass."""
    in_play = 0
    mine = np.int64(0)
    theirs = np.int64(0)
    for p in range(26):
        n = np.int64(row[p])
        in_play += max(n, 0)
        mine |= np.int64(n > 0) << p
        theirs |= np.int64(n < 0) << p
    return in_play, race_of_masks(mine, theirs)


@njit(cache=True, nogil=True, inline="always")
def is_race(row):
    """Whether contact is over on one board row (26,) int8."""
    return race_scan(row)[1]


@njit(cache=True, nogil=True)
def _race_flags_kernel(boards):
    n = boards.shape[0]
    out = np.empty(n, np.bool_)
    for i in range(n):
        out[i] = race_scan(boards[i])[1]
    return out


def race_flags(boards: np.ndarray) -> np.ndarray:
    """(N,) bool: True for each board of ``boards`` (N, 26) int8 where contact is over."""
    return np.asarray(_race_flags_kernel(np.ascontiguousarray(boards, np.int8).reshape(-1, 26)))
