"""Bear-off databases built by bgnet itself: exact chances once both sides are bearing off.

Two tables, computed here from the rules alone (``python -m bgnet.nets.bearoff build``,
a few seconds; never downloaded):

* **one-sided**: for each of the 54,264 ways to place up to 15 checkers on one side's
  six home points, the distribution of the number of rolls that side needs to bear
  everything off when it plays every roll to minimise its expected number of rolls;
  and, for the positions with all 15 checkers still on the board, the distribution
  of the rolls needed to bear off its *first* checker (playing to minimise that),
  which decides gammons;
* **two-sided**: for each pair of positions with at most 6 checkers a side (924 x 924),
  the exact cubeless winning chance of the side on roll, both sides playing every
  roll to maximise their own winning chance, found by recursion over all 21 rolls.
  With at most 6 checkers left a side has borne off at least 9, so there are no
  gammons and the winning chance is the whole cubeless equity. The same recursion
  gives the exact cubeful money equities (cube centred, owned by the side on roll,
  owned by the opponent; optimal doubles and takes, no beavers).

Positions are numbered as GNU Backgammon numbers its bear-off positions (by number of
checkers, then by the count on the 1-point, largest first, then the 2-point, ...), so
that the 924 positions of at most 6 checkers are the first 924 indices and index 0 is
the empty position; ``index_of`` and ``position_of`` convert.

**Pure bear-off** (``is_bearoff``): every checker still in play on either side lies on
its owner's home points (the side on roll's on points 1..6, the opponent's on the side
on roll's 19..24), no checker is on a bar, and the board is not empty. Then no contact
is possible and the two sides race independently, so ``exact_probs`` can answer:

* both sides with at most 6 checkers: the two-sided table, exact;
* otherwise: the race between the two sides' independent one-sided roll counts. The
  side on roll needing ``k`` rolls wins when the other needs ``k`` or more; it wins a
  gammon when, in addition, the other (with all 15 still on the board) needs ``k`` or
  more rolls for its first checker; likewise for the gammon it loses. This is exact
  for sides that play the one-sided policies (fewest rolls on average; the first
  checker first when all 15 are on the board); best play can differ slightly: on the
  positions of the two-sided table the race's win chance is within 0.014 of the exact
  one, 0.0009 on average (``bench/bearoff.py``).

A finished game (one side has no checker left) whose other side is all home is a pure
bear-off too, with the game's exact result (as ``bgnet.core.rules`` scores it). Positions where only one side is home (the other still has checkers outside its
home board, with or without contact) are not in the tables: the net answers them.

No backgammon is possible in a pure bear-off (neither side has a checker in the other's
home board or on the bar). Chances follow bgnet's five-probability convention
``(win, win_g, win_bg, lose_g, lose_bg)`` for the side on roll, gammons including
backgammons (see ``bgnet.core.probs``).

The tables are cached in ``$BGNET_CACHE_DIR`` (or ``$XDG_CACHE_HOME/bgnet``, or
``~/.cache/bgnet``) as ``bearoff-v<VERSION>.npz``, with a SHA-256 checksum; a missing,
corrupt or stale file is rebuilt (one line of notice on stderr) and written atomically
(temporary file, then rename).

Use: ``exact_probs(boards) -> (mask, probs)`` for batches; ``with_database(evaluator)``
wraps any Evaluator or function of boards so that search, hints, self-play and
rollouts get exact chances wherever the database has them.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from numba import njit

from bgnet.core.errors import BgnetError
from bgnet.core.protocols import Evaluator, EvaluatorLike, as_evaluator

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
_BINOM = np.zeros((32, 32), np.int64)
for _n in range(32):
    _BINOM[_n, 0] = 1
    for _k in range(1, _n + 1):
        _BINOM[_n, _k] = _BINOM[_n - 1, _k - 1] + _BINOM[_n - 1, _k]

_SUCC_CAP = 2048  # more distinct results than any roll of any bear-off position has (6^4 = 1296 orderings)


class BearoffError(BgnetError):
    """Bad input to the bear-off database (wrong board shape, a position outside the tables)."""


# -- kernels: numbering, plays, building, lookup ---------------------------------------------


@njit(cache=True, nogil=True)
def _rank(c, binom):
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
                            out[_rank(c, binom)] = c
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
            j = _rank(c, binom)
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
        nout = 0
        for order in range(2):
            a = d1 if order == 0 else d2
            b = d2 if order == 0 else d1
            gens[0] += 1
            nb = _step(one, 1, a, pos, binom, stamps[0], gens[0], buf[0], 0, c)
            nout = _step(buf[0], nb, b, pos, binom, stamps[1], final, out, nout, c)
        return nout
    gens[0] += 1
    n = _step(one, 1, d1, pos, binom, stamps[0], gens[0], buf[0], 0, c)
    for level in range(1, 3):
        gens[0] += 1
        n = _step(buf[(level - 1) % 2], n, d1, pos, binom, stamps[0], gens[0], buf[level % 2], 0, c)
    return _step(buf[0], n, d1, pos, binom, stamps[1], final, out, 0, c)


@njit(cache=True, nogil=True)
def _new_scratch(n):
    """Stamp tables, generation counters, two stage buffers, the result buffer and a count vector."""
    return (np.zeros((2, n), np.int64), np.zeros(2, np.int64), np.zeros((2, 2048), np.int64),
            np.zeros(2048, np.int64), np.zeros(6, np.int64))


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
    order = np.argsort(pips, kind="mergesort")  # every play lowers the pip count
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
            succ[ptr[a * 21 + r]:ptr[a * 21 + r] + k] = out[:k]
    maxpip = 0
    for i in range(nt):
        maxpip = max(maxpip, pips[i])
    by_pip = np.argsort(pips, kind="mergesort")
    start = np.zeros(maxpip + 2, np.int64)
    for i in range(nt):
        start[pips[i] + 1] += 1
    for p in range(maxpip + 1):
        start[p + 1] += start[p]
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


@njit(cache=True, nogil=True)
def _classify(boards, binom, idx):
    """Per board: 0 not a pure bear-off, 1 one-sided race, 2 in the two-sided table; indices (N, 2) of both sides."""
    n = boards.shape[0]
    code = np.zeros(n, np.int8)
    c = np.zeros(6, np.int64)
    t = np.zeros(6, np.int64)
    for i in range(n):
        b = boards[i]
        if b[0] != 0 or b[25] != 0:
            continue
        ok = True
        for p in range(7, 19):
            if b[p] != 0:
                ok = False
        nm = 0
        no = 0
        for p in range(1, 7):
            if b[p] < 0 or b[25 - p] > 0:
                ok = False
            c[p - 1] = b[p]
            t[p - 1] = -b[25 - p]
            nm += c[p - 1]
            no += t[p - 1]
        if not ok or nm > 15 or no > 15 or nm + no == 0:
            continue
        idx[i, 0] = _rank(c, binom)
        idx[i, 1] = _rank(t, binom)
        code[i] = 2 if nm <= 6 and no <= 6 else 1
    return code


@njit(cache=True, nogil=True)
def _lookup(boards, binom, dist, first, full_start, win, probs):
    """Classify boards and fill ``probs`` (N, 5) for the pure bear-offs; returns the codes of ``_classify``."""
    n = boards.shape[0]
    idx = np.zeros((n, 2), np.int64)
    code = _classify(boards, binom, idx)
    ncols = dist.shape[1]
    for i in range(n):
        for k in range(5):
            probs[i, k] = 0.0
        if code[i] == 0:
            continue
        x = idx[i, 0]
        y = idx[i, 1]
        if code[i] == 2:
            probs[i, 0] = win[x, y]
            continue
        w = 0.0
        cy = 0.0  # P(the other side needs fewer than k rolls)
        for k in range(ncols):
            w += dist[x, k] * (1.0 - cy)
            cy += dist[y, k]
        probs[i, 0] = min(1.0, max(0.0, w))  # sums of float64 terms: keep them inside [0, 1]
        if y >= full_start:  # the other side has all 15 on the board
            g = 0.0
            fy = 0.0
            for k in range(ncols):
                g += dist[x, k] * (1.0 - fy)
                fy += first[y - full_start, k]
            probs[i, 1] = min(probs[i, 0], max(0.0, g))
        if x >= full_start:
            g = 0.0
            fx = 0.0
            for k in range(ncols):
                fx += first[x - full_start, k]
                g += dist[y, k] * (1.0 - fx)  # I have not got my first checker off within k rolls
            probs[i, 3] = min(1.0 - probs[i, 0], max(0.0, g))
    return code


# -- the database object ----------------------------------------------------------------------


def _as_boards(boards: np.ndarray) -> np.ndarray:
    """Boards as a contiguous (N, 26) int8 array, or a BearoffError."""
    arr = np.asarray(boards)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != 26:
        raise BearoffError(f"boards must be an (N, 26) array of checker counts, got shape {np.shape(boards)}")
    return np.ascontiguousarray(arr, np.int8)


@dataclass(frozen=True, eq=False, repr=False)
class BearoffDatabase:
    """The one-sided and two-sided tables (read-only arrays) with batched lookups."""

    rolls: np.ndarray
    """(N_POSITIONS, MAX_ROLLS) float64: P(exactly k rolls to bear off all), fewest rolls on average."""
    first_off: np.ndarray
    """(N_POSITIONS - FULL_START, MAX_ROLLS) float64: for the positions with all 15 checkers on the board
    (index ``FULL_START + row``), P(exactly k rolls to bear off the first checker)."""
    win: np.ndarray
    """(N_TWO_SIDED, N_TWO_SIDED) float64: exact win chance of the side on roll, positions (on roll, other)."""
    cubeful: np.ndarray
    """(3, N_TWO_SIDED, N_TWO_SIDED) float32: exact money equity per unit cube, cube centred / mine / the other's."""

    def __repr__(self) -> str:
        return f"<BearoffDatabase v{VERSION}: {N_POSITIONS} one-sided, {N_TWO_SIDED}x{N_TWO_SIDED} two-sided>"

    def mean_rolls(self, index: int | np.ndarray) -> np.ndarray:
        """Expected number of rolls to bear off all checkers of one-sided position(s) ``index``."""
        return np.asarray(self.rolls[index] @ np.arange(MAX_ROLLS, dtype=np.float64))

    def first_off_rolls(self, index: int) -> np.ndarray:
        """P(exactly k rolls to bear off the first checker) of one-sided position ``index`` (k = 0 unless 15 left)."""
        if int(index) >= FULL_START:
            return np.asarray(self.first_off[int(index) - FULL_START])
        out = np.zeros(MAX_ROLLS)
        out[0] = 1.0
        return out

    def lookup(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Codes (N,) int8 (0 not a pure bear-off, 1 one-sided race, 2 exact two-sided) and probabilities (N, 5)."""
        arr = _as_boards(boards)
        probs = np.zeros((len(arr), 5), np.float64)
        codes = _lookup(arr, _BINOM, self.rolls, self.first_off, FULL_START, self.win, probs)
        return codes, probs

    def exact_probs(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mask (N,) of pure bear-offs and their probabilities (N, 5) for each side on roll (zeros elsewhere)."""
        codes, probs = self.lookup(boards)
        return codes != 0, probs

    def cubeful_equities(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mask (N,) of boards in the two-sided table and their money equities (N, 3) per unit cube for the side
        on roll: cube centred, owned by the side on roll, owned by the other side (optimal cube play, no beavers)."""
        arr = _as_boards(boards)
        idx = np.zeros((len(arr), 2), np.int64)
        mask = _classify(arr, _BINOM, idx) == 2
        out = np.zeros((len(arr), 3), np.float64)
        out[mask] = self.cubeful[:, idx[mask, 0], idx[mask, 1]].T.astype(np.float64)
        return mask, out

    def checksum(self) -> str:
        """SHA-256 of the tables' bytes, version and shapes."""
        h = hashlib.sha256(f"bgnet-bearoff-v{VERSION}".encode())
        for arr in (self.rolls, self.first_off, self.win, self.cubeful):
            h.update(f"{arr.dtype.str}{arr.shape}".encode())
            h.update(np.ascontiguousarray(arr).data)  # no copy
        return h.hexdigest()

    @property
    def nbytes(self) -> int:
        """Memory held by the tables."""
        return int(self.rolls.nbytes + self.first_off.nbytes + self.win.nbytes + self.cubeful.nbytes)


def _frozen(arr: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """A contiguous read-only copy (or view) of ``arr``."""
    out: np.ndarray = np.ascontiguousarray(arr, dtype)
    out.flags.writeable = False
    return out


_POSITIONS: np.ndarray | None = None  # made on first use by positions_table(), then read-only
_POS_LOCK = threading.Lock()


def positions_table() -> np.ndarray:
    """Every one-sided position (N_POSITIONS, 6) int8, row ``i`` the checker counts on points 1..6 of index ``i``."""
    global _POSITIONS
    with _POS_LOCK:
        if _POSITIONS is None:
            table = _enumerate_positions(_BINOM)
            table.flags.writeable = False
            _POSITIONS = table
        return _POSITIONS


def index_of(counts: Sequence[int]) -> int:
    """Index of a one-sided position given its checker counts on points 1..6 (at most 15 in all)."""
    c = np.array([int(x) for x in counts], np.int64)
    if len(c) != POINTS or (c < 0).any() or c.sum() > MAX_CHECKERS:
        raise BearoffError(f"a one-sided bear-off position is 6 counts >= 0 summing to at most 15, got {list(counts)}")
    return int(_rank(c, _BINOM))


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
    k = _roll_results(index_of(counts), d1, d2, pos, _BINOM, stamps, gens, buf, out, c)
    return sorted(tuple(int(x) for x in pos[j]) for j in out[:k])


def build() -> BearoffDatabase:
    """Compute both tables from the rules (seconds; no file is read or written)."""
    pos = positions_table()
    rolls, first = _build_one_sided(pos, _BINOM, _D1, _D2, _WEIGHTS, MAX_ROLLS, FULL_START)
    win, cubeful = _build_two_sided(pos, _BINOM, _D1, _D2, _WEIGHTS, N_TWO_SIDED)
    return BearoffDatabase(rolls=_frozen(rolls), first_off=_frozen(first), win=_frozen(win),
                           cubeful=_frozen(cubeful, np.float32))


# -- the cached file ---------------------------------------------------------------------------


def cache_dir() -> Path:
    """Where the database file lives: $BGNET_CACHE_DIR, else $XDG_CACHE_HOME/bgnet, else ~/.cache/bgnet."""
    if os.environ.get("BGNET_CACHE_DIR"):
        return Path(os.environ["BGNET_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "bgnet"
    return Path.home() / ".cache" / "bgnet"


def cache_path() -> Path:
    """The database file of this version."""
    return cache_dir() / f"bearoff-v{VERSION}.npz"


def save(db: BearoffDatabase, path: Path | None = None) -> Path:
    """Write ``db`` with its version and checksum to ``path`` (default ``cache_path()``): temp file, then rename."""
    path = cache_path() if path is None else Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, version=np.int64(VERSION), checksum=np.array(db.checksum()), rolls=db.rolls,
                     first_off=db.first_off, win=db.win, cubeful=db.cubeful)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load(path: Path | None = None) -> BearoffDatabase:
    """Read and verify a database file; a BearoffError says why it cannot be used (missing, corrupt, stale)."""
    path = cache_path() if path is None else Path(path)
    if not path.exists():
        raise BearoffError(f"no bear-off database at {path}")
    try:
        with np.load(path, allow_pickle=False) as z:
            version = int(z["version"])
            if version != VERSION:
                raise BearoffError(f"the bear-off database at {path} is version {version}, not {VERSION}")
            db = BearoffDatabase(rolls=_frozen(z["rolls"]), first_off=_frozen(z["first_off"]),
                                 win=_frozen(z["win"]), cubeful=_frozen(z["cubeful"], np.float32))
            stored = str(z["checksum"])
    except BearoffError:
        raise
    except Exception as exc:  # a truncated or garbled file: zip, key or shape errors of any kind
        raise BearoffError(f"the bear-off database at {path} cannot be read ({type(exc).__name__})") from None
    shapes = ((N_POSITIONS, MAX_ROLLS), (N_POSITIONS - FULL_START, MAX_ROLLS), (N_TWO_SIDED, N_TWO_SIDED),
              (3, N_TWO_SIDED, N_TWO_SIDED))
    if tuple(a.shape for a in (db.rolls, db.first_off, db.win, db.cubeful)) != shapes:
        raise BearoffError(f"the bear-off database at {path} has tables of the wrong shape")
    if db.checksum() != stored:
        raise BearoffError(f"the bear-off database at {path} fails its checksum")
    return db


_DB: BearoffDatabase | None = None
_DB_LOCK = threading.Lock()


def database() -> BearoffDatabase:
    """The process's database: loaded from the cache file, or built and cached (one line on stderr) if that fails."""
    global _DB
    with _DB_LOCK:
        if _DB is None:
            path = cache_path()
            try:
                _DB = load(path)
            except BearoffError as exc:
                why = "" if not path.exists() else f" ({exc})"
                print(f"bgnet: building the bear-off database at {path}{why}", file=sys.stderr)
                _DB = build()
                try:
                    save(_DB, path)
                except OSError as err:  # a read-only home still gets exact answers, just not cached
                    print(f"bgnet: could not cache the bear-off database at {path}: {err}", file=sys.stderr)
        return _DB


def _reset_for_tests() -> None:
    """Forget the loaded database (tests that move the cache folder)."""
    global _DB
    with _DB_LOCK:
        _DB = None


# -- the API other modules use --------------------------------------------------------------


def is_bearoff(boards: np.ndarray) -> np.ndarray:
    """Mask (N,) of pure bear-offs among boards (N, 26): all checkers in play home, none on a bar (see module doc)."""
    arr = _as_boards(boards)
    return _classify(arr, _BINOM, np.zeros((len(arr), 2), np.int64)) != 0


def exact_probs(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mask (N,) of pure bear-offs and their chances (N, 5) float64 for each side on roll, from ``database()``."""
    return database().exact_probs(boards)


class DatabaseEvaluator:
    """An Evaluator that answers pure bear-offs from the database and every other board from ``inner``.

    It is also a plain function of boards (``ProbsFn``), so that it can stand wherever
    a net's ``probs_of_boards`` does: search, hints, self-play, rollouts. ``inner`` is
    called once per call, on the other rows only (not at all when every row is a
    bear-off); the result is float32 (N, 5), each row for its board's side on roll.
    """

    def __init__(self, inner: EvaluatorLike) -> None:
        self.inner: Evaluator = as_evaluator(inner)

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """Probabilities (N, 5) float32: exact for pure bear-offs, the inner evaluator's elsewhere."""
        arr = _as_boards(boards)
        mask = is_bearoff(arr)
        if not mask.any():
            return np.asarray(self.inner.probs_of_boards(arr), np.float32)
        out = np.empty((len(arr), 5), np.float32)
        rest = ~mask
        if rest.any():
            out[rest] = np.asarray(self.inner.probs_of_boards(arr[rest]), np.float32)
        out[mask] = database().exact_probs(arr[mask])[1]
        return out

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        return self.probs_of_boards(boards)

    def __repr__(self) -> str:
        return f"with_database({self.inner!r})"


def with_database(inner: EvaluatorLike) -> DatabaseEvaluator:
    """``inner`` (an Evaluator or a function of boards) with exact answers for pure bear-offs."""
    return inner if isinstance(inner, DatabaseEvaluator) else DatabaseEvaluator(inner)


# -- command line --------------------------------------------------------------------------------


def add_bearoff_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``python -m bgnet.nets.bearoff`` / ``bgnet bearoff``."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    b = sub.add_parser("build", help="build the databases and write the cache file")
    b.add_argument("--path", default=None, help="file to write (default: the user cache file)")
    sub.add_parser("info", help="where the cache file is and whether it is valid")


def run_bearoff(args: argparse.Namespace) -> int:
    """Build or inspect the bear-off databases."""
    if args.action == "build":
        path = Path(args.path) if args.path else cache_path()
        t0 = time.perf_counter()
        db = build()
        t1 = time.perf_counter()
        save(db, path)
        t2 = time.perf_counter()
        print(f"built the bear-off databases in {t1 - t0:.1f} s ({N_POSITIONS} one-sided positions, "
              f"{N_TWO_SIDED} x {N_TWO_SIDED} two-sided), {db.nbytes / 2**20:.1f} MiB; "
              f"wrote {path} in {t2 - t1:.1f} s")
        return 0
    path = cache_path()
    try:
        db = load(path)
    except BearoffError as exc:
        print(f"{exc}; 'python -m bgnet.nets.bearoff build' makes it")
        return 1
    print(f"{path}: version {VERSION}, {db.nbytes / 2**20:.1f} MiB, checksum ok")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bgnet.nets.bearoff build|info``."""
    parser = argparse.ArgumentParser(prog="python -m bgnet.nets.bearoff", description="bgnet's bear-off databases")
    add_bearoff_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_bearoff(args)
    except (BearoffError, OSError) as exc:
        print(f"bgnet: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
