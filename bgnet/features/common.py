"""Numba helpers every feature set shares: checker counts in a side's own numbering, bit tricks, the scratch shape.

A feature set's row kernel ``encode_row(b, out, scratch)`` writes one board (26,)
int8, seen from the side on roll, into one row of float32, with an int64 scratch
array of shape ``SCRATCH_SHAPE`` that the caller allocates once per batch (or per
thread). Small helpers called across modules are ``inline="always"``: numba inlines them
from their source, whereas a function it loaded from its cache is only called. A row
kernel itself is not: it is large, and inlining it typed the whole encoder again inside
every kernel that encodes (seconds of compilation each on the first run after an
install). Inside a row kernel, the helpers that take the board or a side's counts once
per row (``v1``'s sides and pips, ``v2``'s counts, bits and escape rows) are inlined:
called, each passes its arrays at a cost that made the encoding 1.3 times slower. Constant arguments are
passed as ``np.int64`` so that a helper compiles one signature, not one per literal.
"""

from __future__ import annotations

from numba import njit

SCRATCH_SHAPE = (4, 26)
"""Shape of a row kernel's int64 scratch array (room for four count or escape rows of 26)."""


@njit(cache=True, nogil=True, inline="always")
def count(b, side, p):
    """Checkers of ``side`` (0 = me, 1 = opponent) on its own point p (1..24, 25 = bar)."""
    if side == 0:
        v = b[p]
        return v if v > 0 else 0
    v = -b[25 - p]
    return v if v > 0 else 0


@njit(cache=True, nogil=True, inline="always")
def popcount(x):
    """Set bits of x (0 <= x < 2**32), by SWAR sums (no loop, no branch)."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) >> 24) & 0xFF


@njit(cache=True, nogil=True, inline="always")
def high_bit(x):
    """Index of the highest set bit of x (0 <= x < 2**32), 0 when x == 0: bits below it smeared, then counted."""
    x |= x >> 1
    x |= x >> 2
    x |= x >> 4
    x |= x >> 8
    x |= x >> 16
    return popcount(x >> 1)


@njit(cache=True, nogil=True, inline="always")
def longest_run(x):
    """Length of the longest run of consecutive set bits of x (each pass shortens every run by one)."""
    k = 0
    while x:
        x &= x << 1
        k += 1
    return k
