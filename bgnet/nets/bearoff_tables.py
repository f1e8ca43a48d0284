"""The bear-off tables computed from the rules: how one side's home-board positions are numbered, and the kernels
that build the one-sided roll distributions and the two-sided exact chances (``bgnet.nets.bearoff`` holds them).

Positions are numbered as GNU Backgammon numbers its bear-off positions (by number of
checkers, then by the count on the 1-point, largest first, then the 2-point, ...), so
that the 924 positions of at most 6 checkers are the first 924 indices and index 0 is
the empty position; ``index_of`` and ``position_of`` convert. ``build_tables`` takes a
few seconds and reads and writes no file.
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np
from numba import njit

from bgnet.core.errors import BgnetError

VERSION = 1
"""Format and algorithm version of the cached file; a file of another version is rebuilt."""
POINTS = 6
"""Home points per side."""
MAX_CHECKERS = 15
"""Checkers per side."""
N_POSITIONS = 54264
"""One-sided positions: up to 15 checkers on 6 points, C(21, 6), the empty one included."""
TWO_SIDED_CHECKERS = 6
"""Most checkers a side may have for the exact two-sided table."""
N_TWO_SIDED = 924
"""Positions of at most 6 checkers, C(12, 6): the first indices of the one-sided numbering."""
FULL_START = 38760
"""First index of the 15,504 positions with all 15 checkers on the board (C(20, 6) have fewer)."""
MAX_ROLLS = 32
"""Columns of the roll-count distributions: 0 .. 31 rolls (no position needs more than 30)."""

_ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
_D1 = np.array([a for a, _ in _ROLLS], np.int64)
_D2 = np.array([b for _, b in _ROLLS], np.int64)
_WEIGHTS = np.array([1.0 if a == b else 2.0 for a, b in _ROLLS], np.float64)  # in 36ths: sums of 36ths stay exact
BINOM = np.zeros((32, 32), np.int64)
for _n in range(32):
    BINOM[_n, 0] = 1
    for _k in range(1, _n + 1):
        BINOM[_n, _k] = BINOM[_n - 1, _k - 1] + BINOM[_n - 1, _k]

_SUCC_CAP = 2048  # more distinct results than any roll of any bear-off position has (6^4 = 1296 orderings)


class BearoffError(BgnetError):
    """Bad input to the bear-off database (wrong board shape, a position outside the tables)."""


# -- kernels: numbering, plays, building -------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def rank(c, binom):
    """Index of counts ``c`` (6, points 1..6): positions with fewer checkers first, then more on point 1, ..."""
    s = 0
    for p in range(6):
        s += c[p]
    r = binom[s + 5, 6]  # positions with fewer than s checkers
    for p in range(5):
        m = s - c[p] - 1  # those with more on point p + 1 (and the same before it) come first
        if m >= 0:
            k = 5 - p
            r += binom[m + k, k]
        s -= c[p]
    return r


@njit(cache=True, nogil=True)
def _enumerate_positions(binom):
    """Every position (N_POSITIONS, 6) int8 at its index."""
    out = np.zeros((54264, 6), np.int8)
    c = np.zeros(6, np.int64)
    for a in range(16):
        for b in range(16 - a):
            for d in range(16 - a - b):
                for e in range(16 - a - b - d):
                    for f in range(16 - a - b - d - e):
                        for g in range(16 - a - b - d - e - f):
                            c[0] = a
                            c[1] = b
                            c[2] = d
                            c[3] = e
                            c[4] = f
                            c[5] = g
                            row = rank(c, binom)
                            for k in range(6):  # a loop, not a row assignment: its shape check costs 1.9 s to compile
                                out[row, k] = c[k]
    return out


@njit(cache=True, nogil=True)
def _step(src, nsrc, d, pos, binom, stamp, gen, dst, ndst, c):
    """Append to ``dst`` every distinct position one checker move of die ``d`` from those in ``src``.

    Any die can be played while a checker is left in a pure bear-off: a checker on
    point p moves to p - d, bears off with d == p, and with d > p only from the
    highest occupied point. The empty position stays empty (the game is over).
    """
    for s in range(nsrc):
        idx = src[s]
        if idx == 0:
            if stamp[0] != gen:
                stamp[0] = gen
                dst[ndst] = 0
                ndst += 1
            continue
        top = -1
        for p in range(6):
            c[p] = pos[idx, p]
            if c[p] > 0:
                top = p
        for p in range(6):
            if c[p] == 0 or (p + 1 < d and p != top):
                continue
            c[p] -= 1
            if p + 1 > d:
                c[p - d] += 1
            j = rank(c, binom)
            if stamp[j] != gen:
                stamp[j] = gen
                dst[ndst] = j
                ndst += 1
            c[p] += 1
            if p + 1 > d:
                c[p - d] -= 1
    return ndst


@njit(cache=True, nogil=True)
def _roll_results(idx, d1, d2, pos, binom, stamps, gens, buf, out, c):
    """Distinct positions (indices, into ``out``) that the plays of roll ``d1-d2`` can leave from ``idx``."""
    one = np.empty(1, np.int64)
    one[0] = idx
    gens[1] += 1
    final = gens[1]
    if d1 != d2:
        nout = np.int64(0)  # int64s throughout: a literal count would compile _step again
        for order in range(2):
            a = d1 if order == 0 else d2
            b = d2 if order == 0 else d1
            gens[0] += 1
            nb = _step(one, np.int64(1), a, pos, binom, stamps[0], gens[0], buf[0], np.int64(0), c)
            nout = _step(buf[0], nb, b, pos, binom, stamps[1], final, out, nout, c)
        return nout
    gens[0] += 1
    n = _step(one, np.int64(1), d1, pos, binom, stamps[0], gens[0], buf[0], np.int64(0), c)
    for level in range(1, 3):
        gens[0] += 1
        n = _step(buf[(level - 1) % 2], n, d1, pos, binom, stamps[0], gens[0], buf[level % 2], np.int64(0), c)
    return _step(buf[0], n, d1, pos, binom, stamps[1], final, out, np.int64(0), c)


@njit(cache=True, nogil=True)
def _new_scratch(n):
    """Stamp tables, generation counters, two stage buffers, the result buffer and a count vector."""
    return (np.zeros((2, n), np.int64), np.zeros(2, np.int64), np.zeros((2, 2048), np.int64),
            np.zeros(2048, np.int64), np.zeros(6, np.int64))


@njit(cache=True, nogil=True)
def _pip_buckets(pips):
    """``(order, start)``: the indices of ``pips`` (small counts >= 0) in increasing order, ties in index order (a
    stable counting sort: ``np.argsort(pips, kind="mergesort")`` without its second of compiling), and where each
    count's run begins in it: ``order[start[p]:start[p + 1]]`` hold the positions of ``p`` pips."""
    top = 0
    for v in pips:
        top = max(top, v)
    start = np.zeros(top + 2, np.int64)
    for v in pips:
        start[v + 1] += 1
    for p in range(top + 1):
        start[p + 1] += start[p]
    order = np.empty(len(pips), np.int64)
    fill = start.copy()
    for i in range(len(pips)):
        order[fill[pips[i]]] = i
        fill[pips[i]] += 1
    return order, start


@njit(cache=True, nogil=True)
def _build_one_sided(pos, binom, d1s, d2s, weights, ncols, full_start):
    """Roll-count distributions to bear off all (N, ncols), and the first of 15 (N - full_start, ncols)."""
    n = pos.shape[0]
    checkers = np.zeros(n, np.int64)
    pips = np.zeros(n, np.int64)
    for i in range(n):
        for p in range(6):
            checkers[i] += pos[i, p]
            pips[i] += (p + 1) * pos[i, p]
    order = _pip_buckets(pips)[0]  # every play lowers the pip count
    dist = np.zeros((n, ncols))
    first = np.zeros((n - full_start, ncols))  # row i - full_start: position i, all 15 on the board
    mean = np.zeros(n)
    fmean = np.zeros(n)
    stamps, gens, buf, out, c = _new_scratch(n)
    dist[0, 0] = 1.0
    for t in range(n):
        i = order[t]
        if i == 0:
            continue
        for r in range(21):
            k = _roll_results(i, d1s[r], d2s[r], pos, binom, stamps, gens, buf, out, c)
            w = weights[r]
            best = out[0]
            for s in range(1, k):  # fewest rolls on average; ties to the lowest index
                j = out[s]
                if mean[j] < mean[best] - 1e-12 or (mean[j] <= mean[best] + 1e-12 and j < best):
                    best = j
            for m in range(ncols - 1):
                dist[i, m + 1] += w * dist[best, m]
            if checkers[i] == 15:
                fbest = -1
                for s in range(k):
                    j = out[s]
                    if checkers[j] < 15:  # a checker is off: the gammon is saved this roll
                        fbest = -1
                        break
                    if fbest < 0 or fmean[j] < fmean[fbest] - 1e-12 or (
                            fmean[j] <= fmean[fbest] + 1e-12 and j < fbest):
                        fbest = j
                if fbest < 0:
                    first[i - full_start, 1] += w
                else:
                    for m in range(ncols - 1):
                        first[i - full_start, m + 1] += w * first[fbest - full_start, m]
        for m in range(ncols):
            dist[i, m] /= 36.0
            mean[i] += m * dist[i, m]
            if i >= full_start:
                first[i - full_start, m] /= 36.0
                fmean[i] += m * first[i - full_start, m]
    return dist, first


@njit(cache=True, nogil=True)
def _build_two_sided(pos, binom, d1s, d2s, weights, nt):
    """Exact win chance (nt, nt) and cubeful money equities (3, nt, nt) of the side on roll, by pip-sum order.

    ``win[a, b]``: the side on roll has position ``a``, the other ``b``. Cubeful
    equities per unit cube, for the cube centred (0), owned by the side on roll (1),
    owned by the other (2): a side that may double does so when doubling is worth
    more than not; the taker takes when taking costs no more than passing (+1).
    """
    n = pos.shape[0]
    stamps, gens, buf, out, c = _new_scratch(n)
    pips = np.zeros(nt, np.int64)
    for i in range(nt):
        for p in range(6):
            pips[i] += (p + 1) * pos[i, p]
    # The distinct results of every roll of every position, as CSR lists.
    ptr = np.zeros(nt * 21 + 1, np.int64)
    for a in range(nt):
        for r in range(21):
            ptr[a * 21 + r + 1] = ptr[a * 21 + r] + _roll_results(a, d1s[r], d2s[r], pos, binom, stamps, gens, buf,
                                                                  out, c)
    succ = np.zeros(ptr[nt * 21], np.int32)
    for a in range(nt):
        for r in range(21):
            k = _roll_results(a, d1s[r], d2s[r], pos, binom, stamps, gens, buf, out, c)
            at = ptr[a * 21 + r]
            for j in range(k):  # a loop, not a slice assignment (whose shape check is slow to compile)
                succ[at + j] = out[j]
    by_pip, start = _pip_buckets(pips)
    maxpip = len(start) - 2
    win = np.zeros((nt, nt))
    eq = np.zeros((3, nt, nt), np.float32)  # float32 keeps the build small; its rounding stays below 1e-6
    nd = np.zeros(3)
    for total in range(2 * maxpip + 1):
        for pa in range(max(0, total - maxpip), min(total, maxpip) + 1):
            pb = total - pa
            for ia in range(start[pa], start[pa + 1]):
                a = by_pip[ia]
                for ib in range(start[pb], start[pb + 1]):
                    b = by_pip[ib]
                    if a == 0:  # the side on roll has nothing left: it has won
                        win[a, b] = 1.0
                        for x in range(3):
                            eq[x, a, b] = 1.0
                        continue
                    if b == 0:
                        win[a, b] = 0.0
                        for x in range(3):
                            eq[x, a, b] = -1.0
                        continue
                    acc = 0.0
                    for x in range(3):
                        nd[x] = 0.0
                    for r in range(21):
                        bw = -1.0
                        be0 = -3.0
                        be1 = -3.0
                        be2 = -3.0
                        for s in range(ptr[a * 21 + r], ptr[a * 21 + r + 1]):
                            j = succ[s]
                            if j == 0:
                                v = 1.0
                                e0 = 1.0
                                e1 = 1.0
                                e2 = 1.0
                            else:  # the other side on roll: centred stays centred, ownership swaps
                                v = 1.0 - win[b, j]
                                e0 = -eq[0, b, j]
                                e1 = -eq[2, b, j]
                                e2 = -eq[1, b, j]
                            bw = max(bw, v)
                            be0 = max(be0, e0)
                            be1 = max(be1, e1)
                            be2 = max(be2, e2)
                        w = weights[r]
                        acc += w * bw
                        nd[0] += w * be0
                        nd[1] += w * be1
                        nd[2] += w * be2
                    win[a, b] = min(1.0, max(0.0, acc / 36.0))
                    for x in range(3):
                        nd[x] = min(1.0, max(-1.0, nd[x] / 36.0))
                    doubled = min(1.0, 2.0 * nd[2])  # after a take the other side owns the cube at twice the value
                    eq[0, a, b] = max(nd[0], doubled)
                    eq[1, a, b] = max(nd[1], doubled)
                    eq[2, a, b] = nd[2]
    return win, eq


_POSITIONS: np.ndarray | None = None  # made on first use by positions_table(), then read-only
_POS_LOCK = threading.Lock()


def positions_table() -> np.ndarray:
    """Every one-sided position (N_POSITIONS, 6) int8, row ``i`` the checker counts on points 1..6 of index ``i``."""
    global _POSITIONS
    with _POS_LOCK:
        if _POSITIONS is None:
            table = _enumerate_positions(BINOM)
            table.flags.writeable = False
            _POSITIONS = table
        return _POSITIONS


def index_of(counts: Sequence[int]) -> int:
    """Index of a one-sided position given its checker counts on points 1..6 (at most 15 in all)."""
    c = np.array([int(x) for x in counts], np.int64)
    if len(c) != POINTS or (c < 0).any() or c.sum() > MAX_CHECKERS:
        raise BearoffError(f"a one-sided bear-off position is 6 counts >= 0 summing to at most 15, got {list(counts)}")
    return int(rank(c, BINOM))


def position_of(index: int) -> tuple[int, ...]:
    """Checker counts on points 1..6 of one-sided position ``index`` (0 .. N_POSITIONS - 1)."""
    if not 0 <= int(index) < N_POSITIONS:
        raise BearoffError(f"a one-sided bear-off index is 0 .. {N_POSITIONS - 1}, got {index}")
    return tuple(int(x) for x in positions_table()[int(index)])


def roll_results(counts: Sequence[int], dice: tuple[int, int]) -> list[tuple[int, ...]]:
    """The distinct one-sided positions that the legal plays of ``dice`` can leave from ``counts``."""
    pos = positions_table()
    stamps, gens, buf, out, c = _new_scratch(N_POSITIONS)
    d1, d2 = max(dice), min(dice)
    k = _roll_results(index_of(counts), d1, d2, pos, BINOM, stamps, gens, buf, out, c)
    return sorted(tuple(int(x) for x in pos[j]) for j in out[:k])


def build_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rolls, first_off, win, cubeful) computed from the rules (seconds; no file is read or written); see
    ``bgnet.nets.bearoff.BearoffDatabase`` for what each holds."""
    pos = positions_table()
    rolls, first = _build_one_sided(pos, BINOM, _D1, _D2, _WEIGHTS, MAX_ROLLS, FULL_START)
    win, cubeful = _build_two_sided(pos, BINOM, _D1, _D2, _WEIGHTS, N_TWO_SIDED)
    return rolls, first, win, cubeful
