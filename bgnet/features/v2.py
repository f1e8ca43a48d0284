"""Feature set 2 (``WIDTH`` = 246): set 1 followed by ``expert`` (2 x 16), for each side S with O the other side.

In this order (each has its own kernel below):

* ``p1``, ``p2``: rolls of 36 with which O hits at least one / two of S's blots, / 36
  (a hit is a die, or two or more dice through open points, from an O checker or
  O's bar to the blot; a checker on O's bar is not made to enter first; two blots
  means one die hits each on a non-double, or at most four steps in all on a double);
* ``pip_loss``: the pips S loses to the biggest hit O has, averaged over the 36 rolls, / 12;
* ``back_escapes``: rolls of 36 that carry S's rearmost checker past O's points (see
  ``_escapes``), / 36;
* ``containment`` and its square: 1 - the fewest escapes / 36 an O checker has on O's
  points 15..24 against S's points;
* ``break_contact``: pips S's checkers must travel to pass O's rearmost checker, / 100;
* ``back_checker``: S's rearmost checker (25 = bar), / 25; ``back_anchor``: S's
  highest point held with two or more, / 24;
* ``forward_anchor``: S's lowest held point among 13..24 as (25 - p) / 12, 0 if none;
* ``mobility``: sum over S's checkers of their escapes, / (15 * 36);
* ``moment2``: variance of S's checker positions (bar 25, not borne off), / 100;
* ``timing``: pips S can play without breaking a home-board point (every pip of a
  checker above 6 down to the 6-point, plus spares above two on home points down to
  the 1-point), / 100;
* ``backbone``: pairs of S's held points at most 6 apart, / 20;
* ``free_pips``: pips of S's checkers that hold nothing (blots, spares above two,
  the bar), / 100;
* ``enter_fail``: chance that a checker on S's bar fails to enter, (closed O home points / 6)^2.

The kernels take two count arrays (26,) in their owners' own numbering: ``c`` for
side S (c[p] checkers on S's point p, c[25] on S's bar) and ``o`` for O. S's point p
is O's point 25 - p. The torch twin is ``bgnet.features.v2_torch`` (equal bit for bit, tested).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.features import v1
from bgnet.features.common import count, high_bit, popcount

EXPERT_PER_SIDE = 16
"""Expert inputs of one side."""
WIDTH = v1.WIDTH + 2 * EXPERT_PER_SIDE
"""Inputs of feature set 2."""


@njit(cache=True, nogil=True, inline="always")
def _side_counts(b, side, c):
    """Fill ``c`` (26,) with ``side``'s checkers on its own points 1..24 and bar (25); c[0] = borne off."""
    total = 0
    for p in range(1, 26):
        c[p] = count(b, side, p)
        total += c[p]
    c[0] = 15 - total


@njit(cache=True, nogil=True, inline="always")
def _open(blk, q):
    """Whether the mover's point q is open: not held by the blocker (counts ``blk``, own numbering); q <= 0 is off."""
    return q <= 0 or blk[25 - q] < 2


# Distances (pips) a double can land beyond 12: 5-5 and 4-4 and 6-6 on their third and fourth steps.
_FAR = (15, 16, 18, 20, 24)


@njit(cache=True, nogil=True)
def _escape_rolls(held):
    """Rolls of 36 that escape, given ``held``: bit r-1 (r = 1..12) and bits 12..16 (r in _FAR) for held points r
    pips ahead.

    The wall is the farthest held point within 12 pips; a roll escapes when one die,
    or both (or up to four of a double) through open points, lands on an open point
    beyond it. No wall: 36.
    """
    wall = 0
    for r in range(12, 0, -1):
        if (held >> (r - 1)) & 1:
            wall = r
            break
    if wall == 0:
        return 36
    n = 0
    for a in range(1, 7):
        for d in range(a, 7):
            if a == d:
                for k in range(1, 5):
                    r = k * a
                    if r <= 12:
                        h = (held >> (r - 1)) & 1
                    else:
                        h = 0
                        for f in range(5):
                            if _FAR[f] == r:
                                h = (held >> (12 + f)) & 1
                    if h:
                        break
                    if r > wall:
                        n += 1
                        break
            else:
                ha = (held >> (a - 1)) & 1
                hd = (held >> (d - 1)) & 1
                hs = (held >> (a + d - 1)) & 1
                if (a > wall and not ha) or (d > wall and not hd) or (a + d > wall and not hs and not (ha and hd)):
                    n += 2
    return n


@njit(cache=True)
def _escape_table():
    t = np.empty(1 << 17, np.int8)
    for m in range(1 << 17):
        t[m] = _escape_rolls(m)
    return t


_ESCAPES = _escape_table()


@njit(cache=True, nogil=True, inline="always")
def _held_bits(blk):
    """Bit j set when the blocker holds its own point j (1..24): the mover's point 25 - j is closed."""
    m = 0
    for j in range(1, 25):
        if blk[j] >= 2:
            m |= 1 << j
    return m


@njit(cache=True, nogil=True)
def _escapes_bits(hb, p, table):
    """``_escapes`` from the blocker's held bits ``hb`` (see ``_held_bits``)."""
    base = 25 - p  # blocker's number of the mover's point p - r is base + r
    held = (
        ((hb >> (base + 1)) & 0xFFF)
        | (((hb >> (base + 15)) & 3) << 12)  # _FAR: 15, 16
        | (((hb >> (base + 18)) & 1) << 14)
        | (((hb >> (base + 20)) & 1) << 15)
        | (((hb >> (base + 24)) & 1) << 16)
    )
    return np.int64(table[held])


@njit(cache=True, nogil=True, inline="always")
def _escape_row(hb, row):
    """Fill ``row`` (26,) with ``_escapes`` of a mover's checker on each point p = 1..25 (row[0] unused), from the
    blocker's held bits.

    One row per blocker and board serves ``_mobility``, ``_containment`` and the rear checker's
    escapes of both sides, so each escape count is looked up once.
    """
    row[0] = 0
    for p in range(1, 26):
        row[p] = _escapes_bits(hb, p, _ESCAPES)


@njit(cache=True, nogil=True)
def _escapes(blk, p):
    """Rolls of 36 that carry a checker on the mover's point p (25 = bar) past the blocker's points (counts ``blk``,
    own numbering).

    The wall is the lowest point the blocker holds (2+) among the 12 in front of p;
    a roll escapes when one die, or both (or up to four of a double) through open
    points, lands on an open point below it (landing off the board counts as open).
    No wall in front: 36.
    """
    return _escapes_bits(_held_bits(blk), p, _ESCAPES)


@njit(cache=True)
def _die_tables():
    """Masks of the non-double rolls (bits 6..20) whose first / second die is in a set of dice (bit d - 1),
    and whose two dice together hit: index = bits of distances 3..11 held by a hitter, then the
    six points between (distance 1..6) held by the defender."""
    first = np.zeros(64, np.int64)
    second = np.zeros(64, np.int64)
    combo = np.zeros(1 << 15, np.int64)
    for idx in range(1 << 15):
        far = idx & 511
        between = idx >> 9
        r = 6
        for a in range(1, 7):
            for d in range(a + 1, 7):
                if (far >> (a + d - 3)) & 1 and not ((between >> (a - 1)) & 1 and (between >> (d - 1)) & 1):
                    combo[idx] |= 1 << r
                r += 1
    for dice in range(64):
        r = 6
        for a in range(1, 7):
            for d in range(a + 1, 7):
                if (dice >> (a - 1)) & 1:
                    first[dice] |= 1 << r
                if (dice >> (d - 1)) & 1:
                    second[dice] |= 1 << r
                r += 1
    return first, second, combo


_FIRST_DIE, _SECOND_DIE, _COMBO = _die_tables()


@njit(cache=True, nogil=True, inline="always")
def _roll_weight(mask):
    """Rolls of 36 in a mask of the 21 distinct rolls (bits 0..5 doubles 1-1..6-6, bits 6..20 the others, twice
    each)."""
    return popcount(mask & 63) + 2 * popcount((mask >> 6) & 0x7FFF)


# Per double d (index d - 1): bits j * d (j = 1..4), the distances a double's steps reach.
_DOUBLE_REACH = tuple(sum(1 << (j * d) for j in range(1, 5)) for d in range(1, 7))


@njit(cache=True, nogil=True, inline="always")
def _side_bits(c):
    """(occupied, held, held reversed, blots) bit masks of one side's counts ``c``: bit p for c[p] > 0 (p = 1..25),
    c[p] >= 2 (1..24, as ``_held_bits``), c[25 - x] >= 2 at bit x (1..24, the other side's numbering), c[p] == 1
    (1..24)."""
    occ = np.int64(c[25] > 0) << 25
    held = np.int64(0)  # int64 from the start: a literal 0 here makes numba compile the callers' callees twice
    rev = np.int64(0)
    blots = np.int64(0)
    for p in range(1, 25):
        n = c[p]
        occ |= np.int64(n > 0) << p
        held |= np.int64(n >= 2) << p
        rev |= np.int64(n >= 2) << (25 - p)
        blots |= np.int64(n == 1) << p
    return occ, held, rev, blots


@njit(cache=True, nogil=True)
def _shots(c, o):
    """(p1, p2, pip loss sum) over the 36 rolls: O's rolls hitting one / two of S's blots, and the pips S loses.

    A blot on S's point q sits on O's point t = 25 - q; an O checker at distance D
    above t hits it with a die D, or with dice summing to D through points S does
    not hold (checked on O's points between). Being hit costs S t pips; a roll's
    loss is that of the costliest blot it hits.
    """
    _, _, sb, blots = _side_bits(c)
    ob = _side_bits(o)[0]
    return _shots_bits(blots, ob, sb)


@njit(cache=True, nogil=True)
def _shots_bits(blots, ob, sb):
    """``_shots`` from S's blot bits (S's points), O's occupied bits (O's points, 25 = bar) and S's held bits on O's
    points (``_side_bits``)."""
    hit = 0  # rolls hitting some blot (mask of the 21 rolls)
    loss = 0
    a1 = 0  # non-doubles: rolls whose first die hits >= 1 blot, >= 2 blots; likewise the second die
    a2 = 0
    b1 = 0
    b2 = 0
    ab = 0  # rolls where one blot is hit by either die
    one1 = 0  # doubles: rolls with >= 1 blot within k steps (oneK), and >= 2 (twoK)
    one2 = 0
    one3 = 0
    two1 = 0
    two2 = 0
    two3 = 0
    bl = blots
    # S's blots from its lowest point q (O's highest t = 25 - q) up: the first blot a roll hits is its costliest
    while bl:
        low = bl & -bl
        bl ^= low
        t = 25 - popcount(low - 1)
        m = ob >> t  # bit D: an O checker D pips above the blot
        if (m >> 1) == 0:  # no O checker above it: no roll hits it
            continue
        h = 0
        for d in range(1, 7):  # doubles, roll index d - 1
            if (m & _DOUBLE_REACH[d - 1]) == 0:  # no O checker a multiple of d away
                continue
            k = 0
            for j in range(1, 5):
                x = t + j * d
                if x > 25:
                    break
                if (m >> (j * d)) & 1:
                    k = j
                    break
                if (sb >> x) & 1:
                    break
            if k > 0:
                bit = 1 << (d - 1)
                h |= bit
                if k <= 1:
                    two1 |= one1 & bit
                    one1 |= bit
                if k <= 2:
                    two2 |= one2 & bit
                    one2 |= bit
                if k <= 3:
                    two3 |= one3 & bit
                    one3 |= bit
        direct = (m >> 1) & 63
        ma = _FIRST_DIE[direct]
        mb = _SECOND_DIE[direct]
        h |= ma | mb | _COMBO[((m >> 3) & 511) | (((sb >> (t + 1)) & 63) << 9)]
        loss += t * _roll_weight(h & ~hit)
        hit |= h
        a2 |= a1 & ma
        a1 |= ma
        b2 |= b1 & mb
        b1 |= mb
        ab |= ma & mb
    same_single = a1 & ~a2 & b1 & ~b2 & ab
    p2_mask = (a1 & b1 & ~same_single) | two1 | (one1 & two3) | two2
    return _roll_weight(hit), _roll_weight(p2_mask), loss


@njit(cache=True, nogil=True)
def _rear(c):
    """S's rearmost checker's point (25 = bar), 0 when all are off."""
    return high_bit(_side_bits(c)[0])


@njit(cache=True, nogil=True)
def _containment(c, o):
    """The fewest escapes (of 36) an O checker on O's points 15..24 has against S's points."""
    hb = _held_bits(c)
    best = 36
    for p in range(15, 25):
        e = _escapes_bits(hb, p, _ESCAPES)
        if e < best:
            best = e
    return best


@njit(cache=True, nogil=True)
def _break_contact(c, o):
    """Pips S's checkers must travel to get past O's rearmost checker (0 when no contact)."""
    return _break_contact_rear(c, _rear(o))


_NO_ESCAPES = np.zeros(26, np.int64)
"""An escape row of zeros: ``_side_sums`` for the features that need no escapes."""


@njit(cache=True, nogil=True, inline="always")
def _side_sums(c, esc_o, r_o):
    """The expert features that are sums over S's checkers, in one pass over its counts (the encoder's hot loop):
    (mobility: escapes ``esc_o`` against O's points, see ``_escape_row``; break-contact pips past O's rearmost point
    ``r_o``, 0 when O has none; timing; free pips; checkers in play; their pip sum). Integer sums: any order gives
    the same numbers."""
    r = 25 - r_o  # O's rearmost checker on S's numbering (O's bar: 0, behind all of S)
    k = c[25]  # the bar: 25 pips to play and to free, 19 of timing
    mob = k * esc_o[25]
    contact = k * max(25 - r, 0)
    n = k
    pips = 25 * k
    timing = 19 * k
    free = 25 * k
    for p in range(1, 25):
        k = c[p]
        mob += k * esc_o[p]
        contact += k * max(p - r, 0)
        n += k
        pips += k * p
        timing += k * max(p - 6, 0)  # every pip of a checker above 6 down to the 6-point
        free += p * ((k == 1) + max(k - 2, 0))  # branch-free: a blot's pips, or the spares' above two
    for p in range(2, 7):  # spares above two on home points, down to the 1-point
        timing += max(c[p] - 2, 0) * (p - 1)
    return mob, (contact if r_o > 0 else 0), timing, free, n, pips


@njit(cache=True, nogil=True)
def _break_contact_rear(c, r_o):
    """``_break_contact`` given O's rearmost point ``r_o`` (0 when all of O's checkers are off)."""
    return _side_sums(c, _NO_ESCAPES, r_o)[1]


@njit(cache=True, nogil=True)
def _anchors(c):
    """(back anchor, forward anchor): S's highest held point (0 if none), and its lowest held point in 13..24 (0 if
    none)."""
    return _anchors_bits(_held_bits(c))


@njit(cache=True, nogil=True, inline="always")
def _anchors_bits(held):
    """``_anchors`` from S's held bits (``_held_bits``)."""
    fwd_bits = held & ~np.int64(0x1FFF)  # held points 13..24
    low = fwd_bits & -fwd_bits
    return high_bit(held), (popcount(low - 1) if fwd_bits else 0)


@njit(cache=True, nogil=True)
def _mobility(c, o):
    """Sum over S's checkers (bar included) of their escapes against O's points."""
    esc = np.empty(26, np.int64)
    _escape_row(_held_bits(o), esc)
    return _side_sums(c, esc, np.int64(0))[0]


@njit(cache=True, nogil=True)
def _moment2(c):
    """Variance of the positions of S's checkers still in play (bar = 25)."""
    sums = _side_sums(c, _NO_ESCAPES, np.int64(0))
    return _moment2_of(c, _side_bits(c)[0], sums[4], sums[5])


@njit(cache=True, nogil=True, inline="always")
def _moment2_of(c, occ, n, pips):
    """``_moment2`` given S's occupied bits and its checkers in play ``n`` and their pip sum: the squares skip
    empty points, whose terms are exactly 0 (the same float result as the plain sum over 1..25)."""
    if n == 0:
        return 0.0
    mean = float(pips) / n
    v = 0.0
    bits = occ
    while bits:  # ascending p, as the plain sum over 1..25
        low = bits & -bits
        bits ^= low
        p = popcount(low - 1)
        v += c[p] * (p - mean) ** 2
    return v / n


@njit(cache=True, nogil=True)
def _timing(c):
    """Pips S can play without breaking a home-board point."""
    return _side_sums(c, _NO_ESCAPES, np.int64(0))[2]


@njit(cache=True, nogil=True)
def _backbone(c):
    """Pairs of S's held points at most 6 pips apart."""
    return _backbone_bits(_held_bits(c))


@njit(cache=True, nogil=True, inline="always")
def _backbone_bits(held):
    """``_backbone`` from S's held bits: pairs k = 1..6 apart are the bits of held & (held >> k)."""
    n = 0
    for k in range(1, 7):
        n += popcount(held & (held >> k))
    return n


@njit(cache=True, nogil=True)
def _free_pips(c):
    """Pips of S's checkers that hold no point: blots, spares above two, and the bar."""
    return _side_sums(c, _NO_ESCAPES, np.int64(0))[3]


@njit(cache=True, nogil=True)
def _enter_fail(o):
    """Chance that one checker on S's bar stays there: (O's closed home points / 6) squared."""
    return _enter_fail_bits(_held_bits(o))


@njit(cache=True, nogil=True, inline="always")
def _enter_fail_bits(held_o):
    """``_enter_fail`` from O's held bits (``_held_bits``): its closed home points are bits 1..6."""
    return (popcount(held_o & 0x7E) / 6.0) ** 2


@njit(cache=True, nogil=True)
def _expert_side_rows(c, o, esc_c, esc_o, bits_c, bits_o, out, base):
    """Write S's 16 expert features at ``out[base:]`` (S = ``c``, O = ``o``), given the escape rows (``_escape_row``)
    of a checker against S's points (``esc_c``) and O's (``esc_o``), and both sides' ``_side_bits``."""
    p1, p2, loss = _shots_bits(bits_c[3], bits_o[0], bits_c[2])
    rear = high_bit(bits_c[0])
    best = 36  # _containment(c, o)
    for p in range(15, 25):
        if esc_c[p] < best:
            best = esc_c[p]
    mob, contact, timing, free, n, pips = _side_sums(c, esc_o, high_bit(bits_o[0]))
    cont = (36 - best) / 36.0
    back, fwd = _anchors_bits(bits_c[1])
    out[base] = p1 / 36.0
    out[base + 1] = p2 / 36.0
    out[base + 2] = loss / 36.0 / 12.0
    out[base + 3] = (esc_o[rear] if rear > 0 else 36) / 36.0
    out[base + 4] = cont
    out[base + 5] = cont * cont
    out[base + 6] = contact / 100.0
    out[base + 7] = rear / 25.0
    out[base + 8] = back / 24.0
    out[base + 9] = (25 - fwd) / 12.0 if fwd > 0 else 0.0
    out[base + 10] = mob / (15.0 * 36.0)
    out[base + 11] = _moment2_of(c, bits_c[0], n, pips) / 100.0
    out[base + 12] = timing / 100.0
    out[base + 13] = _backbone_bits(bits_c[1]) / 20.0
    out[base + 14] = free / 100.0
    out[base + 15] = _enter_fail_bits(bits_o[1])


@njit(cache=True, nogil=True)
def encode_row(b, out, scratch):  # type: ignore[no-untyped-def]
    """Set-2 features of board ``b`` into ``out[:WIDTH]``; ``scratch`` (4, 26) int64 holds both sides' counts and
    escape rows."""
    c = scratch[0]
    o = scratch[1]
    esc_c = scratch[2]
    esc_o = scratch[3]
    v1.encode_row(b, out, scratch)
    _side_counts(b, np.int64(0), c)
    _side_counts(b, np.int64(1), o)
    bits_c = _side_bits(c)
    bits_o = _side_bits(o)
    _escape_row(bits_c[1], esc_c)
    _escape_row(bits_o[1], esc_o)
    _expert_side_rows(c, o, esc_c, esc_o, bits_c, bits_o, out, np.int64(v1.WIDTH))
    _expert_side_rows(o, c, esc_o, esc_c, bits_o, bits_c, out, np.int64(v1.WIDTH + EXPERT_PER_SIDE))
