"""Numba kernels for the cube: each board's kind of position and its cube efficiency, a batch at a time.

The one owner of the efficiency rule (``bgnet.cube.decision`` wraps it for single positions):
the game loops ask it for every table on roll in one call instead of one Python
scan of the board per cube question. Boards are (N, 26) int8, seen from the side on
roll (mine positive, my bar at 25, the opponent's bar at 0). Whether contact is over is
``bgnet.core.race``'s rule (``is_race``, inlined from its source when this module compiles; numba's
on-disk cache of this module does not see later edits of it, so clear ``__pycache__`` after changing it).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from bgnet.core.race import is_race

KIND_CONTACT, KIND_RACE, KIND_BEAROFF = 0, 1, 2
"""Kind codes, in the order of ``bgnet.cube.decision.POSITION_KINDS``."""

CONTACT_EFFICIENCY = 0.68
"""Cube efficiency for contact positions (gnubg's published default, also used for crashed positions)."""
RACE_EFFICIENCY_MIN, RACE_EFFICIENCY_MAX = 0.60, 0.70
"""Race efficiency bounds: 0.55 + 0.00125 * pips of the side on roll, clamped (gnubg's published defaults)."""
BEAROFF_EFFICIENCY = 0.60
"""Cube efficiency once both sides are bearing off (every checker in its home board): few rolls remain."""


@njit(cache=True, nogil=True)
def bearoff_efficiency(rolls):
    """Bear-off efficiency when the side closer to finishing needs ``rolls`` rolls: 0 on the last roll, then 0.4,
    0.5, 0.6 (docs/CUBE.md)."""
    return 0.0 if rolls <= 1 else min(BEAROFF_EFFICIENCY, 0.2 + 0.1 * rolls)


@njit(cache=True, nogil=True)
def _rolls(checkers, pips):
    """Rough rolls to bear off ``checkers`` with ``pips`` to go: enough for the pips, two checkers a roll."""
    return max(1, (checkers + 1) // 2, int(math.ceil((pips + checkers) / 8.17 - 0.5)))


@njit(cache=True, nogil=True)
def bearoff_rolls(board):
    """(mine, the opponent's) rough rolls to bear off for one board (26,)."""
    mc = mp = tc = tp = np.int64(0)  # not a literal 0: numba would compile _rolls for it too
    for p in range(1, 25):
        v = board[p]
        if v > 0:
            mc += v
            mp += p * v
        elif v < 0:
            tc -= v
            tp -= (25 - p) * v
    return _rolls(mc, mp), _rolls(tc, tp)


@njit(cache=True, nogil=True)
def kind_and_efficiency(board):
    """(kind code, cube efficiency) of one board (26,).

    Contact (a checker on a bar, or my rearmost checker at or behind the opponent's
    rearmost): 0.68. Bear-off (every checker of both sides in its home board):
    ``bearoff_efficiency`` of the fewer rolls either side needs. Race: 0.55 +
    0.00125 * my pips, clamped to [0.6, 0.7].
    """
    if not is_race(board):
        return KIND_CONTACT, CONTACT_EFFICIENCY
    pips = 0
    all_home = True  # every checker of both sides in its own home board
    for p in range(1, 25):
        v = board[p]
        if v > 0:
            pips += p * v
            all_home = all_home and p <= 6
        elif v < 0:
            all_home = all_home and p >= 19
    if all_home:
        mine, theirs = bearoff_rolls(board)
        return KIND_BEAROFF, bearoff_efficiency(min(mine, theirs))
    return KIND_RACE, min(RACE_EFFICIENCY_MAX, max(RACE_EFFICIENCY_MIN, 0.55 + 0.00125 * pips))


@njit(cache=True, nogil=True)
def kinds_and_efficiencies(boards):
    """Kind codes (N,) int8 and cube efficiencies (N,) float64 of boards (N, 26)."""
    n = boards.shape[0]
    kinds = np.empty(n, np.int8)
    effs = np.empty(n, np.float64)
    for i in range(n):
        k, x = kind_and_efficiency(boards[i])
        kinds[i] = k
        effs[i] = x
    return kinds, effs
