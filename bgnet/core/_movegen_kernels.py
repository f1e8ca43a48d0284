"""Numba kernels for legal-move generation over bgnet's 26-slot int8 boards.

Design (why it is fast):

* Opposing closed points never change during my move (I can only hit blots), so
  "is this landing open" is one test of the opponent's count, computed once.
* Plays are enumerated with apply/undo on one scratch board, nested loops (no
  recursion, no allocation in the loop).
* Doubles are enumerated with non-increasing source points: every legal multiset
  of steps has exactly one such ordering (bar first, outside checkers before
  bear-offs), so duplicate orderings are pruned before they are played.
* Each play's afterstate is identified by a packed key held in two int64 words,
  updated incrementally per step: 4 bits per point count of mine (points 1..15 in
  word one, points 16..24 and the bar in word two) and one bit per point where an
  opposing blot was hit (bits 40..63 of word two). Duplicates are removed with an
  open-addressing hash table whose slots are stamped with a generation number, so
  it never needs clearing.

Compile time counts too (the first command after an install compiles these): the
step helpers are plain kernels, compiled once, rather than numba's ``inline="always"``,
which types a helper's body again at every call site; constant arguments are passed as
``np.int64`` so that each helper has one signature, not one per literal; rows are copied
element by element, because a slice assignment costs numba over a second to compile.
``_record`` alone is inlined: a call that passes its eleven arrays costs far more than
what it does, and with it called the generator ran 5-7 times slower (2.4 s of
compilation without it inlined, 3.0 s with it; docs/BENCHMARKS.md, "The move generator
and the encoders at full speed again").
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros

BAR = 25
MAX_PER_POSITION = 8192  # more distinct plays than any backgammon position has
TABLE_SIZE = 16384  # power of two, at least twice MAX_PER_POSITION
TABLE_MASK = TABLE_SIZE - 1

# Key unit of one of my checkers on point p (1..25) in each key word.
_UNIT1 = np.zeros(26, dtype=np.int64)
_UNIT2 = np.zeros(26, dtype=np.int64)
for _p in range(1, 26):
    if _p <= 15:
        _UNIT1[_p] = np.int64(1) << np.int64(4 * (_p - 1))
    else:
        _UNIT2[_p] = np.int64(1) << np.int64(4 * (_p - 16))
_HITBIT = np.zeros(26, dtype=np.int64)
for _p in range(1, 25):
    _HITBIT[_p] = np.int64(1) << np.int64(39 + _p)


def new_scratch() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hash-table scratch for the kernels: (keys1, keys2, stamps, generation box)."""
    return (np.zeros(TABLE_SIZE, np.int64), np.zeros(TABLE_SIZE, np.int64),
            np.zeros(TABLE_SIZE, np.int64), np.zeros(1, np.int64))


# Bits of home-board points above p (p + 1 .. 6), for "a higher die only from the highest point".
_ABOVE = np.zeros(26, dtype=np.int64)
for _p in range(0, 7):
    for _q in range(_p + 1, 7):
        _ABOVE[_p] |= np.int64(1) << np.int64(_q)
_OUTSIDE = np.int64(((1 << 26) - 1) ^ ((1 << 7) - 1))  # bits 7..25: checkers not yet home
_BAR_BIT = np.int64(1) << np.int64(BAR)


@njit(cache=True, nogil=True)
def step_target(b, p, d, occ):
    """Landing point (0 = off) of my checker on ``p`` moved ``d`` pips, or -1 if illegal.

    ``occ`` has bit q set where I have checkers; the caller only offers sources
    that hold a checker and respects "everything on the bar enters first".
    """
    t = p - d
    if t >= 1:
        return t if b[t] >= -1 else -1  # two or more opposing checkers: closed
    if occ & _OUTSIDE:
        return -1  # bear off only with all fifteen home
    if t == 0:
        return 0
    if occ & _ABOVE[p]:
        return -1  # a higher die only from the highest occupied point
    return 0


@njit(cache=True, nogil=True)
def apply_step(b, p, t, k1, k2, occ):
    """Play p -> t on ``b``; returns the new keys, occupancy mask and whether it hit."""
    b[p] -= 1
    k1 -= _UNIT1[p]
    k2 -= _UNIT2[p]
    if b[p] == 0:
        occ ^= np.int64(1) << np.int64(p)
    hit = False
    if t >= 1:
        if b[t] == -1:
            b[t] = 1
            b[0] -= 1
            hit = True
            k2 |= _HITBIT[t]
        else:
            b[t] += 1
        k1 += _UNIT1[t]
        k2 += _UNIT2[t]
        occ |= np.int64(1) << np.int64(t)
    return k1, k2, occ, hit


@njit(cache=True, nogil=True)
def undo_step(b, p, t, hit):
    """Take back p -> t on ``b``."""
    if t >= 1:
        if hit:
            b[t] = -1
            b[0] += 1
        else:
            b[t] -= 1
    b[p] += 1


@njit(cache=True, nogil=True)
def step_sources(b, occ, limit):
    """Mask of points I may move from: the bar alone while it holds a checker, else my points <= limit."""
    if b[BAR] > 0:
        return _BAR_BIT
    return occ & ((np.int64(1) << np.int64(limit + 1)) - 1)


@njit(cache=True, nogil=True)
def top_bit(m):
    """Highest set bit of a non-zero mask."""
    return 63 - leading_zeros(m)


@njit(cache=True, nogil=True, inline="always")
def _record(b, k1, k2, steps, nsteps, die, out_b, out_s, out_n, out_d, base, cnt, tk1, tk2, tst, gen):
    # out_d holds the die of a single-die play in its low 3 bits and the hit mask (bit p: hit on point p) above
    """Store the current afterstate unless its key was seen; returns the new count."""
    h = ((k1 * np.int64(-7046029254386353131)) ^ (k2 * np.int64(-4658895280553007687)))
    h = (h >> np.int64(40)) & TABLE_MASK
    while tst[h] == gen:
        if tk1[h] == k1 and tk2[h] == k2:
            return cnt
        h = (h + 1) & TABLE_MASK
    if cnt >= MAX_PER_POSITION:
        raise RuntimeError("more distinct plays than MAX_PER_POSITION")
    tst[h] = gen
    tk1[h] = k1
    tk2[h] = k2
    row = base + cnt
    for i in range(26):
        out_b[row, i] = b[i]
    for i in range(8):
        out_s[row, i] = steps[i] if i < 2 * nsteps else 0
    out_n[row] = nsteps
    out_d[row] = die | (((k2 >> np.int64(39)) & np.int64(0x1FFFFFE)) << np.int64(3))
    return cnt + 1


@njit(cache=True, nogil=True)
def board_keys(b):
    k1 = np.int64(0)
    k2 = np.int64(0)
    occ = np.int64(0)
    for p in range(1, 26):
        if b[p] > 0:
            k1 += _UNIT1[p] * b[p]
            k2 += _UNIT2[p] * b[p]
            occ |= np.int64(1) << np.int64(p)
    return k1, k2, occ


@njit(cache=True, nogil=True)
def gen_one(board, d1, d2, out_b, out_s, out_n, out_d, base, tk1, tk2, tst, genbox, b, steps):
    """Write every distinct legal play of (d1, d2) from ``board`` at rows ``base..``; returns the count.

    Each row gets the afterstate (seen from the mover), up to four (from, to) steps
    (25 = bar, 0 = off) and the number of steps. When nothing can be played the
    single row is the unchanged board with zero steps. ``b`` (26) and ``steps`` (8)
    are scratch arrays.
    """
    for i in range(26):
        b[i] = board[i]
    k1, k2, occ = board_keys(b)
    genbox[0] += 1
    gen = genbox[0]
    cnt = 0
    maxd = 0
    if d1 != d2:
        hi = max(d1, d2)
        lo = min(d1, d2)
        # The larger die is tried first so that a single-die play found with both
        # dice is kept with the larger one ("else the larger die").
        for o in range(2):
            da = hi if o == 0 else lo
            db = lo if o == 0 else hi
            m1 = step_sources(b, occ, np.int64(25))
            while m1:
                p1 = top_bit(m1)
                m1 ^= np.int64(1) << np.int64(p1)
                t1 = step_target(b, p1, da, occ)
                if t1 < 0:
                    continue
                k1a, k2a, occa, hit1 = apply_step(b, p1, t1, k1, k2, occ)
                steps[0] = p1
                steps[1] = t1
                any2 = False
                m2 = step_sources(b, occa, np.int64(25))
                while m2:
                    p2 = top_bit(m2)
                    m2 ^= np.int64(1) << np.int64(p2)
                    t2 = step_target(b, p2, db, occa)
                    if t2 < 0:
                        continue
                    any2 = True
                    k1b, k2b, _occb, hit2 = apply_step(b, p2, t2, k1a, k2a, occa)
                    steps[2] = p2
                    steps[3] = t2
                    if maxd < 2:
                        maxd = 2
                        cnt = 0
                        genbox[0] += 1
                        gen = genbox[0]
                    cnt = _record(b, k1b, k2b, steps, np.int64(2), np.int64(0),
                                   out_b, out_s, out_n, out_d, base, cnt, tk1, tk2, tst, gen)
                    undo_step(b, p2, t2, hit2)
                if not any2 and maxd <= 1:
                    maxd = 1
                    cnt = _record(b, k1a, k2a, steps, np.int64(1), da,
                                   out_b, out_s, out_n, out_d, base, cnt, tk1, tk2, tst, gen)
                undo_step(b, p1, t1, hit1)
        if maxd == 1:
            # "If either number can be played but not both, the larger one must be played."
            nhi = 0
            for i in range(cnt):
                if (out_d[base + i] & 7) == hi:
                    nhi += 1
            if 0 < nhi < cnt:
                j = 0
                for i in range(cnt):
                    if (out_d[base + i] & 7) == hi:
                        if j != i:
                            for k in range(26):  # element loops: a slice copy costs numba seconds to compile
                                out_b[base + j, k] = out_b[base + i, k]
                            for k in range(8):
                                out_s[base + j, k] = out_s[base + i, k]
                            out_n[base + j] = out_n[base + i]
                            out_d[base + j] = out_d[base + i]
                        j += 1
                cnt = j
    else:
        d = d1
        # Doubles: play as many of the four as possible; sources never increase.
        m1 = step_sources(b, occ, np.int64(25))
        while m1:
            p1 = top_bit(m1)
            m1 ^= np.int64(1) << np.int64(p1)
            t1 = step_target(b, p1, d, occ)
            if t1 < 0:
                continue
            k1a, k2a, oa, h1 = apply_step(b, p1, t1, k1, k2, occ)
            steps[0] = p1
            steps[1] = t1
            any2 = False
            m2 = step_sources(b, oa, p1)
            while m2:
                p2 = top_bit(m2)
                m2 ^= np.int64(1) << np.int64(p2)
                t2 = step_target(b, p2, d, oa)
                if t2 < 0:
                    continue
                any2 = True
                k1b, k2b, ob, h2 = apply_step(b, p2, t2, k1a, k2a, oa)
                steps[2] = p2
                steps[3] = t2
                any3 = False
                m3 = step_sources(b, ob, p2)
                while m3:
                    p3 = top_bit(m3)
                    m3 ^= np.int64(1) << np.int64(p3)
                    t3 = step_target(b, p3, d, ob)
                    if t3 < 0:
                        continue
                    any3 = True
                    k1c, k2c, oc, h3 = apply_step(b, p3, t3, k1b, k2b, ob)
                    steps[4] = p3
                    steps[5] = t3
                    any4 = False
                    m4 = step_sources(b, oc, p3)
                    while m4:
                        p4 = top_bit(m4)
                        m4 ^= np.int64(1) << np.int64(p4)
                        t4 = step_target(b, p4, d, oc)
                        if t4 < 0:
                            continue
                        any4 = True
                        k1d, k2d, _od, h4 = apply_step(b, p4, t4, k1c, k2c, oc)
                        steps[6] = p4
                        steps[7] = t4
                        if maxd < 4:
                            maxd = 4
                            cnt = 0
                            genbox[0] += 1
                            gen = genbox[0]
                        cnt = _record(b, k1d, k2d, steps, np.int64(4), d,
                                       out_b, out_s, out_n, out_d, base, cnt, tk1, tk2, tst, gen)
                        undo_step(b, p4, t4, h4)
                    if not any4 and maxd <= 3:
                        if maxd < 3:
                            maxd = 3
                            cnt = 0
                            genbox[0] += 1
                            gen = genbox[0]
                        cnt = _record(b, k1c, k2c, steps, np.int64(3), d,
                                       out_b, out_s, out_n, out_d, base, cnt, tk1, tk2, tst, gen)
                    undo_step(b, p3, t3, h3)
                if not any3 and maxd <= 2:
                    if maxd < 2:
                        maxd = 2
                        cnt = 0
                        genbox[0] += 1
                        gen = genbox[0]
                    cnt = _record(b, k1b, k2b, steps, np.int64(2), d,
                                   out_b, out_s, out_n, out_d, base, cnt, tk1, tk2, tst, gen)
                undo_step(b, p2, t2, h2)
            if not any2 and maxd <= 1:
                maxd = 1
                cnt = _record(b, k1a, k2a, steps, np.int64(1), d,
                               out_b, out_s, out_n, out_d, base, cnt, tk1, tk2, tst, gen)
            undo_step(b, p1, t1, h1)
    if cnt == 0:
        cnt = _record(b, k1, k2, steps, np.int64(0), np.int64(0),
                       out_b, out_s, out_n, out_d, base, np.int64(0), tk1, tk2, tst, gen)
    return cnt


@njit(cache=True, nogil=True)
def gen_batch(boards, dice, tk1, tk2, tst, genbox):
    """All legal afterstates of B boards with their dice, in one flat array.

    Returns ``(after, steps, nsteps, offsets)``: the plays of board ``i`` are rows
    ``offsets[i]:offsets[i + 1]``.
    """
    n_pos = boards.shape[0]
    cap = n_pos * 40 + MAX_PER_POSITION
    out_b = np.empty((cap, 26), np.int8)
    out_s = np.empty((cap, 8), np.int8)
    out_n = np.empty(cap, np.int8)
    out_d = np.empty(cap, np.int64)
    offsets = np.empty(n_pos + 1, np.int64)
    b = np.empty(26, np.int8)
    steps = np.zeros(8, np.int8)
    total = np.int64(0)  # gen_one's argument types as gen_single passes them: one compiled gen_one for both
    for i in range(n_pos):
        if total + MAX_PER_POSITION > cap:
            new_cap = cap * 2
            nb = np.empty((new_cap, 26), np.int8)
            ns = np.empty((new_cap, 8), np.int8)
            nn = np.empty(new_cap, np.int8)
            nd = np.empty(new_cap, np.int64)
            for r in range(total):  # element loops: slice copies cost numba seconds to compile
                for k in range(26):
                    nb[r, k] = out_b[r, k]
                for k in range(8):
                    ns[r, k] = out_s[r, k]
                nn[r] = out_n[r]
                nd[r] = out_d[r]
            out_b, out_s, out_n, out_d, cap = nb, ns, nn, nd, new_cap
        offsets[i] = total
        total += gen_one(boards[i], np.int64(dice[i, 0]), np.int64(dice[i, 1]), out_b, out_s, out_n, out_d, total,
                         tk1, tk2, tst, genbox, b, steps)
    offsets[n_pos] = total
    return out_b[:total], out_s[:total], out_n[:total], offsets


def new_single_buffers() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Reusable outputs for ``gen_single``: boards, steps, step counts, die/hit words, and two scratch arrays."""
    return (np.empty((MAX_PER_POSITION, 26), np.int8), np.empty((MAX_PER_POSITION, 8), np.int8),
            np.empty(MAX_PER_POSITION, np.int8), np.empty(MAX_PER_POSITION, np.int64),
            np.empty(26, np.int8), np.zeros(8, np.int8))


@njit(cache=True, nogil=True)
def gen_single(board, d1, d2, out_b, out_s, out_n, out_d, b, steps, tk1, tk2, tst, genbox):
    """The plays of one position into reusable buffers (see ``new_single_buffers``); returns the count.

    ``out_d[i] >> 3`` is play i's hit mask: bit p set when a blot was hit on point p.
    """
    return gen_one(board, np.int64(d1), np.int64(d2), out_b, out_s, out_n, out_d, np.int64(0), tk1, tk2, tst, genbox,
                   b, steps)


@njit(cache=True, nogil=True)
def swap_sides_batch(boards):
    """Each board turned round so that the other side is on roll."""
    n = boards.shape[0]
    out = np.empty_like(boards)
    for i in range(n):
        for j in range(26):
            out[i, j] = -boards[i, 25 - j]
    return out
