"""Network input features for positions seen from the side on roll, computed for whole batches.

Feature families (``FEATURE_VERSION`` 1, ``NUM_FEATURES`` = 214), all for the side
on roll ("me") first and then the opponent, each point in the owner's own numbering:

* ``raw`` (2 x 98, Tesauro's encoding with gnubg's blot/point split): for points
  1..24, four units ``n == 1``, ``n == 2``, ``n >= 3``, ``(n - 3) / 2`` when n > 3;
  then bar ``n / 2`` and borne off ``n / 15``.
* ``race`` (1): 1.0 when contact is over.
* ``pips`` (3): my pips / 100, the opponent's / 100, and (his - mine) / 50.
* ``structure`` (2 x 7): home-board points made / 6, longest prime / 6, blots / 5,
  checkers back in the opponent's home board or on the bar / 5, checkers in the
  outfield (points 7..12) / 5, stripped-point count (points made with 4+ checkers) / 6,
  and escapes: 6-point-or-better direct shots from my rearmost checker blocked / 6.

Each family is computed by its own small kernel so it can be tested alone.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

FEATURE_VERSION = 1
RAW_PER_SIDE = 98
NUM_FEATURES = 2 * RAW_PER_SIDE + 1 + 3 + 2 * 7


@njit(cache=True, nogil=True, inline="always")
def _count(b, side, p):
    """Checkers of ``side`` (0 = me, 1 = opponent) on its own point p (1..24, 25 = bar)."""
    if side == 0:
        v = b[p]
        return v if v > 0 else 0
    v = -b[25 - p]
    return v if v > 0 else 0


@njit(cache=True, nogil=True)
def _raw_side(b, side, out, base):
    total = 0
    for p in range(1, 25):
        n = _count(b, side, p)
        total += n
        k = base + 4 * (p - 1)
        out[k] = 1.0 if n == 1 else 0.0
        out[k + 1] = 1.0 if n == 2 else 0.0
        out[k + 2] = 1.0 if n >= 3 else 0.0
        out[k + 3] = (n - 3) / 2.0 if n > 3 else 0.0
    bar = _count(b, side, 25)
    out[base + 96] = bar / 2.0
    out[base + 97] = (15 - total - bar) / 15.0


@njit(cache=True, nogil=True)
def _pips(b, side):
    s = 0
    for p in range(1, 26):
        s += p * _count(b, side, p)
    return s


@njit(cache=True, nogil=True)
def _is_race(b):
    if b[25] > 0 or b[0] < 0:
        return False
    my_back = 0
    for p in range(24, 0, -1):
        if b[p] > 0:
            my_back = p
            break
    for p in range(1, 25):
        if b[p] < 0:
            return p > my_back
    return True


@njit(cache=True, nogil=True)
def _structure_side(b, side, out, base):
    home = 0
    stripped = 0
    best = 0
    run = 0
    blots = 0
    outfield = 0
    for p in range(1, 25):
        n = _count(b, side, p)
        if n >= 2:
            if p <= 6:
                home += 1
            run += 1
            if run > best:
                best = run
            if n >= 4:
                stripped += 1
        else:
            run = 0
        if n == 1:
            blots += 1
        if 7 <= p <= 12:
            outfield += n
    back = _count(b, side, 25)
    for p in range(19, 25):
        back += _count(b, side, p)
    # Escapes: of the six landing points 1..6 pips in front of my rearmost checker,
    # how many are closed by the opponent.
    rear = 0
    for p in range(25, 0, -1):
        if _count(b, side, p) > 0:
            rear = p
            break
    other = 1 - side
    blocked = 0
    for d in range(1, 7):
        t = rear - d
        if t >= 1 and _count(b, other, 25 - t) >= 2:
            blocked += 1
    out[base] = home / 6.0
    out[base + 1] = best / 6.0
    out[base + 2] = blots / 5.0
    out[base + 3] = back / 5.0
    out[base + 4] = outfield / 5.0
    out[base + 5] = stripped / 6.0
    out[base + 6] = blocked / 6.0


@njit(cache=True, nogil=True)
def _encode_one(b, out):
    _raw_side(b, 0, out, 0)
    _raw_side(b, 1, out, RAW_PER_SIDE)
    k = 2 * RAW_PER_SIDE
    out[k] = 1.0 if _is_race(b) else 0.0
    mine = _pips(b, 0)
    theirs = _pips(b, 1)
    out[k + 1] = mine / 100.0
    out[k + 2] = theirs / 100.0
    out[k + 3] = (theirs - mine) / 50.0
    _structure_side(b, 0, out, k + 4)
    _structure_side(b, 1, out, k + 11)


@njit(cache=True, nogil=True)
def _encode_batch(boards, out):
    for i in range(boards.shape[0]):
        _encode_one(boards[i], out[i])


@njit(cache=True, nogil=True, parallel=True)
def _encode_batch_parallel(boards, out):
    for i in prange(boards.shape[0]):
        _encode_one(boards[i], out[i])


def encode(boards: np.ndarray, threads: int = 1) -> np.ndarray:
    """Features (N, NUM_FEATURES) float32 for boards (N, 26) int8, each seen from its side on roll.

    ``threads`` > 1 spreads large batches over numba threads (for many-core GPU hosts).
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    if boards.ndim == 1:
        boards = boards.reshape(1, -1)
    out = np.empty((boards.shape[0], NUM_FEATURES), np.float32)
    if threads > 1 and boards.shape[0] >= 4096:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]  # numba.config sets it via globals()
        _encode_batch_parallel(boards, out)
    else:
        _encode_batch(boards, out)
    return out


@njit(cache=True, nogil=True)
def race_flags(boards):
    """True for each board (N, 26) where contact is over."""
    n = boards.shape[0]
    out = np.empty(n, np.bool_)
    for i in range(n):
        out[i] = _is_race(boards[i])
    return out
