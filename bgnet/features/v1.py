"""Feature set 1 (``WIDTH`` = 214): the shipped net's inputs, for the side on roll ("me") first, then the opponent.

Each point is in its owner's own numbering:

* ``raw`` (2 x 98, Tesauro's encoding with gnubg's blot/point split): for points
  1..24, four units ``n == 1``, ``n == 2``, ``n >= 3``, ``(n - 3) / 2`` when n > 3;
  then bar ``n / 2`` and borne off ``n / 15``.
* ``race`` (1): 1.0 when contact is over (``bgnet.core.race``).
* ``pips`` (3): my pips / 100, the opponent's / 100, and (his - mine) / 50.
* ``structure`` (2 x 7): home-board points made / 6, longest prime / 6, blots / 5,
  checkers back in the opponent's home board or on the bar / 5, checkers in the
  outfield (points 7..12) / 5, stripped-point count (points made with 4+ checkers) / 6,
  and escapes: 6-point-or-better direct shots from my rearmost checker blocked / 6.

Each family is computed by its own small kernel so it can be tested alone; the
torch twin is ``bgnet.features.encoding_torch``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.core.race import is_race
from bgnet.features.common import count, high_bit, longest_run, popcount

RAW_PER_SIDE = 98
"""Raw inputs of one side: four per point, its bar, its borne-off checkers."""
STRUCTURE_PER_SIDE = 7
"""Structure inputs of one side."""
WIDTH = 2 * RAW_PER_SIDE + 1 + 3 + 2 * STRUCTURE_PER_SIDE
"""Inputs of feature set 1."""


@njit(cache=True, nogil=True, inline="always")
def _raw_side(b, side, out, base):
    total = 0
    for p in range(1, 25):
        n = count(b, side, p)
        total += n
        k = base + 4 * (p - 1)
        out[k] = 1.0 if n == 1 else 0.0
        out[k + 1] = 1.0 if n == 2 else 0.0
        out[k + 2] = 1.0 if n >= 3 else 0.0
        out[k + 3] = (n - 3) / 2.0 if n > 3 else 0.0
    bar = count(b, side, 25)
    out[base + 96] = bar / 2.0
    out[base + 97] = (15 - total - bar) / 15.0


@njit(cache=True, nogil=True, inline="always")
def _pips(b, side):
    s = 0
    for p in range(1, 26):
        s += p * count(b, side, p)
    return s


@njit(cache=True, nogil=True, inline="always")
def _structure_side(b, side, out, base):
    """Write ``side``'s 7 structure features at ``out[base:]``; counts gathered into bit masks, no data-dependent
    branches."""
    other = 1 - side
    held = 0  # bit p: side holds its point p
    occ = np.int64(count(b, side, 25) > 0) << 25  # bit p: side has a checker on p (25 = bar)
    closed = 0  # bit t: the other side holds side's point t
    stripped = 0
    blots = 0
    outfield = 0
    back = count(b, side, 25)
    for p in range(1, 25):
        n = count(b, side, p)
        held |= np.int64(n >= 2) << p
        occ |= np.int64(n > 0) << p
        closed |= np.int64(count(b, other, 25 - p) >= 2) << p
        stripped += n >= 4
        blots += n == 1
        if 7 <= p <= 12:
            outfield += n
        if p >= 19:
            back += n
    # Escapes: of the six landing points 1..6 pips in front of my rearmost checker,
    # how many are closed by the opponent.
    rear = high_bit(occ)
    window = ((np.int64(1) << rear) - 1) & ~((np.int64(1) << max(rear - 6, 0)) - 1)  # points rear - 6 .. rear - 1
    blocked = popcount(closed & window)
    out[base] = popcount(held & 0x7E) / 6.0
    out[base + 1] = longest_run(held) / 6.0
    out[base + 2] = blots / 5.0
    out[base + 3] = back / 5.0
    out[base + 4] = outfield / 5.0
    out[base + 5] = stripped / 6.0
    out[base + 6] = blocked / 6.0


@njit(cache=True, nogil=True)
def encode_row(b, out, scratch):
    """Set-1 features of board ``b`` into ``out[:WIDTH]`` (``scratch`` unused)."""
    for side in range(2):  # a loop, so that numba types the inlined helper once, not once per side
        _raw_side(b, side, out, side * RAW_PER_SIDE)
    k = 2 * RAW_PER_SIDE
    out[k] = 1.0 if is_race(b) else 0.0
    mine = _pips(b, np.int64(0))
    theirs = _pips(b, np.int64(1))
    out[k + 1] = mine / 100.0
    out[k + 2] = theirs / 100.0
    out[k + 3] = (theirs - mine) / 50.0
    for side in range(2):
        _structure_side(b, side, out, k + 4 + side * STRUCTURE_PER_SIDE)
