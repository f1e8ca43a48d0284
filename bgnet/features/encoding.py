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

``FEATURE_VERSION`` 2 (``NUM_FEATURES_V2`` = 246) appends ``expert`` (2 x 16): for
each side S, with O the other side, in this order (each has its own kernel below):

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

Each family is computed by its own small kernel so it can be tested alone. ``encode``
computes version 1 unless told otherwise; a net's ``ModelConfig.feature_version``
says which it needs.
"""

from __future__ import annotations

from typing import Sequence, TypeVar

import numpy as np
from numba import njit, prange

FEATURE_VERSION = 2
"""The newest feature version (the one new nets should use)."""
FEATURE_VERSIONS = (1, 2)
RAW_PER_SIDE = 98
NUM_FEATURES_V1 = 2 * RAW_PER_SIDE + 1 + 3 + 2 * 7
EXPERT_PER_SIDE = 16
NUM_FEATURES_V2 = NUM_FEATURES_V1 + 2 * EXPERT_PER_SIDE
NUM_FEATURES = NUM_FEATURES_V1
"""Width of ``encode(boards)`` with its default version 1."""


def num_features(version: int) -> int:
    """Input width of feature ``version``; ValueError for a version this bgnet does not compute."""
    if version == 1:
        return NUM_FEATURES_V1
    if version == 2:
        return NUM_FEATURES_V2
    raise ValueError(f"feature version {version} is not one of {FEATURE_VERSIONS}")


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


@njit(cache=True, nogil=True, inline="always")
def _popcount(x):
    """Set bits of x (0 <= x < 2**32), by SWAR sums (no loop, no branch)."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) >> 24) & 0xFF


@njit(cache=True, nogil=True, inline="always")
def _high_bit(x):
    """Index of the highest set bit of x (0 <= x < 2**32), 0 when x == 0: bits below it smeared, then counted."""
    x |= x >> 1
    x |= x >> 2
    x |= x >> 4
    x |= x >> 8
    x |= x >> 16
    return _popcount(x >> 1)


@njit(cache=True, nogil=True, inline="always")
def _longest_run(x):
    """Length of the longest run of consecutive set bits of x (each pass shortens every run by one)."""
    k = 0
    while x:
        x &= x << 1
        k += 1
    return k


@njit(cache=True, nogil=True)
def _structure_side(b, side, out, base):
    """Write ``side``'s 7 structure features at ``out[base:]``; counts gathered into bit masks, no data-dependent branches."""
    other = 1 - side
    held = 0  # bit p: side holds its point p
    occ = np.int64(_count(b, side, 25) > 0) << 25  # bit p: side has a checker on p (25 = bar)
    closed = 0  # bit t: the other side holds side's point t
    stripped = 0
    blots = 0
    outfield = 0
    back = _count(b, side, 25)
    for p in range(1, 25):
        n = _count(b, side, p)
        held |= np.int64(n >= 2) << p
        occ |= np.int64(n > 0) << p
        closed |= np.int64(_count(b, other, 25 - p) >= 2) << p
        stripped += n >= 4
        blots += n == 1
        if 7 <= p <= 12:
            outfield += n
        if p >= 19:
            back += n
    # Escapes: of the six landing points 1..6 pips in front of my rearmost checker,
    # how many are closed by the opponent.
    rear = _high_bit(occ)
    window = ((np.int64(1) << rear) - 1) & ~((np.int64(1) << max(rear - 6, 0)) - 1)  # points rear - 6 .. rear - 1
    blocked = _popcount(closed & window)
    out[base] = _popcount(held & 0x7E) / 6.0
    out[base + 1] = _longest_run(held) / 6.0
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


# -- version 2: expert features ------------------------------------------------------
# The kernels below take two count arrays (26,) in their owners' own numbering:
# ``c`` for side S (c[p] checkers on S's point p, c[25] on S's bar) and ``o`` for O.
# S's point p is O's point 25 - p.


@njit(cache=True, nogil=True)
def _side_counts(b, side, c):
    """Fill ``c`` (26,) with ``side``'s checkers on its own points 1..24 and bar (25); c[0] = borne off."""
    total = 0
    for p in range(1, 26):
        c[p] = _count(b, side, p)
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
    """Rolls of 36 that escape, given ``held``: bit r-1 (r = 1..12) and bits 12..16 (r in _FAR) for held points r pips ahead.

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


@njit(cache=True, nogil=True)
def _escape_row(hb, row):
    """Fill ``row`` (26,) with ``_escapes`` of a mover's checker on each point p = 1..25 (row[0] unused), from the blocker's held bits.

    One row per blocker and board serves ``_mobility``, ``_containment`` and the rear checker's
    escapes of both sides, so each escape count is looked up once.
    """
    row[0] = 0
    for p in range(1, 26):
        row[p] = _escapes_bits(hb, p, _ESCAPES)


@njit(cache=True, nogil=True)
def _escapes(blk, p):
    """Rolls of 36 that carry a checker on the mover's point p (25 = bar) past the blocker's points (counts ``blk``, own numbering).

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
    """Rolls of 36 in a mask of the 21 distinct rolls (bits 0..5 doubles 1-1..6-6, bits 6..20 the others, twice each)."""
    return _popcount(mask & 63) + 2 * _popcount((mask >> 6) & 0x7FFF)


# Per double d (index d - 1): bits j * d (j = 1..4), the distances a double's steps reach.
_DOUBLE_REACH = tuple(sum(1 << (j * d) for j in range(1, 5)) for d in range(1, 7))


@njit(cache=True, nogil=True)
def _side_bits(c):
    """(occupied, held, held reversed, blots) bit masks of one side's counts ``c``: bit p for c[p] > 0 (p = 1..25),
    c[p] >= 2 (1..24, as ``_held_bits``), c[25 - x] >= 2 at bit x (1..24, the other side's numbering), c[p] == 1 (1..24)."""
    occ = np.int64(c[25] > 0) << 25
    held = 0
    rev = 0
    blots = 0
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
    """``_shots`` from S's blot bits (S's points), O's occupied bits (O's points, 25 = bar) and S's held bits on O's points (``_side_bits``)."""
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
    while bl:  # S's blots from its lowest point q (O's highest t = 25 - q) up: the first blot a roll hits is its costliest
        low = bl & -bl
        bl ^= low
        t = 25 - _popcount(low - 1)
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
    return _high_bit(_side_bits(c)[0])


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


@njit(cache=True, nogil=True)
def _break_contact_rear(c, r_o):
    """``_break_contact`` given O's rearmost point ``r_o`` (0 when all of O's checkers are off); branch-free sum."""
    r = 25 - r_o  # O's rearmost checker on S's numbering (O's bar: 0, behind all of S)
    s = 0
    for p in range(1, 26):
        s += c[p] * max(p - r, 0)
    return s if r_o > 0 else 0


@njit(cache=True, nogil=True)
def _anchors(c):
    """(back anchor, forward anchor): S's highest held point (0 if none), and its lowest held point in 13..24 (0 if none)."""
    return _anchors_bits(_held_bits(c))


@njit(cache=True, nogil=True, inline="always")
def _anchors_bits(held):
    """``_anchors`` from S's held bits (``_held_bits``)."""
    fwd_bits = held & ~np.int64(0x1FFF)  # held points 13..24
    low = fwd_bits & -fwd_bits
    return _high_bit(held), (_popcount(low - 1) if fwd_bits else 0)


@njit(cache=True, nogil=True)
def _mobility(c, o):
    """Sum over S's checkers (bar included) of their escapes against O's points."""
    hb = _held_bits(o)
    s = 0
    for p in range(1, 26):
        if c[p] > 0:
            s += c[p] * _escapes_bits(hb, p, _ESCAPES)
    return s


@njit(cache=True, nogil=True)
def _moment2(c):
    """Variance of the positions of S's checkers still in play (bar = 25)."""
    return _moment2_bits(c, _side_bits(c)[0])


@njit(cache=True, nogil=True)
def _moment2_bits(c, occ):
    """``_moment2`` given S's occupied bits: the sums skip empty points, whose terms are exactly 0 (same float result)."""
    n = 0
    s = 0
    for p in range(1, 26):
        n += c[p]
        s += c[p] * p
    if n == 0:
        return 0.0
    mean = float(s) / n
    v = 0.0
    bits = occ
    while bits:  # ascending p, as the plain sum over 1..25
        low = bits & -bits
        bits ^= low
        p = _popcount(low - 1)
        v += c[p] * (p - mean) ** 2
    return v / n


@njit(cache=True, nogil=True)
def _timing(c):
    """Pips S can play without breaking a home-board point."""
    s = 0
    for p in range(7, 26):
        s += c[p] * (p - 6)
    for p in range(2, 7):
        if c[p] > 2:
            s += (c[p] - 2) * (p - 1)
    return s


@njit(cache=True, nogil=True)
def _backbone(c):
    """Pairs of S's held points at most 6 pips apart."""
    return _backbone_bits(_held_bits(c))


@njit(cache=True, nogil=True, inline="always")
def _backbone_bits(held):
    """``_backbone`` from S's held bits: pairs k = 1..6 apart are the bits of held & (held >> k)."""
    n = 0
    for k in range(1, 7):
        n += _popcount(held & (held >> k))
    return n


@njit(cache=True, nogil=True)
def _free_pips(c):
    """Pips of S's checkers that hold no point: blots, spares above two, and the bar."""
    s = 25 * c[25]
    for p in range(1, 25):  # branch-free: a blot's pips, or the spares' above two
        n = c[p]
        s += p * ((n == 1) + max(n - 2, 0))
    return s


@njit(cache=True, nogil=True)
def _enter_fail(o):
    """Chance that one checker on S's bar stays there: (O's closed home points / 6) squared."""
    k = 0
    for q in range(1, 7):
        if o[q] >= 2:
            k += 1
    return (k / 6.0) ** 2


@njit(cache=True, nogil=True)
def _expert_side(c, o, out, base):
    """Write S's 16 expert features at ``out[base:]`` (S = ``c``, O = ``o``)."""
    esc_c = np.empty(26, np.int64)
    esc_o = np.empty(26, np.int64)
    bits_c = _side_bits(c)
    bits_o = _side_bits(o)
    _escape_row(bits_c[1], esc_c)
    _escape_row(bits_o[1], esc_o)
    _expert_side_rows(c, o, esc_c, esc_o, bits_c, bits_o, out, base)


@njit(cache=True, nogil=True)
def _expert_side_rows(c, o, esc_c, esc_o, bits_c, bits_o, out, base):
    """``_expert_side`` given the escape rows (``_escape_row``) of a checker against S's points (``esc_c``) and O's
    (``esc_o``), and both sides' ``_side_bits``."""
    p1, p2, loss = _shots_bits(bits_c[3], bits_o[0], bits_c[2])
    rear = _high_bit(bits_c[0])
    best = 36  # _containment(c, o)
    for p in range(15, 25):
        if esc_c[p] < best:
            best = esc_c[p]
    mob = 0  # _mobility(c, o)
    for p in range(1, 26):
        mob += c[p] * esc_o[p]
    cont = (36 - best) / 36.0
    back, fwd = _anchors_bits(bits_c[1])
    out[base] = p1 / 36.0
    out[base + 1] = p2 / 36.0
    out[base + 2] = loss / 36.0 / 12.0
    out[base + 3] = (esc_o[rear] if rear > 0 else 36) / 36.0
    out[base + 4] = cont
    out[base + 5] = cont * cont
    out[base + 6] = _break_contact_rear(c, _high_bit(bits_o[0])) / 100.0
    out[base + 7] = rear / 25.0
    out[base + 8] = back / 24.0
    out[base + 9] = (25 - fwd) / 12.0 if fwd > 0 else 0.0
    out[base + 10] = mob / (15.0 * 36.0)
    out[base + 11] = _moment2_bits(c, bits_c[0]) / 100.0
    out[base + 12] = _timing(c) / 100.0
    out[base + 13] = _backbone_bits(bits_c[1]) / 20.0
    out[base + 14] = _free_pips(c) / 100.0
    out[base + 15] = _enter_fail(o)


@njit(cache=True, nogil=True)
def _encode_one_v2(b, out, c, o, esc_c, esc_o):
    """Version-2 features of board ``b`` into ``out``; ``c``, ``o``, ``esc_c``, ``esc_o`` are (26,) int64 scratch."""
    _encode_one(b, out)
    _side_counts(b, 0, c)
    _side_counts(b, 1, o)
    bits_c = _side_bits(c)
    bits_o = _side_bits(o)
    _escape_row(bits_c[1], esc_c)
    _escape_row(bits_o[1], esc_o)
    _expert_side_rows(c, o, esc_c, esc_o, bits_c, bits_o, out, NUM_FEATURES_V1)
    _expert_side_rows(o, c, esc_o, esc_c, bits_o, bits_c, out, NUM_FEATURES_V1 + EXPERT_PER_SIDE)


@njit(cache=True, nogil=True)
def _encode_batch(boards, out):
    for i in range(boards.shape[0]):
        _encode_one(boards[i], out[i])


@njit(cache=True, nogil=True, parallel=True)
def _encode_batch_parallel(boards, out):
    for i in prange(boards.shape[0]):
        _encode_one(boards[i], out[i])


@njit(cache=True, nogil=True)
def _encode_batch_v2(boards, out):
    c = np.empty(26, np.int64)
    o = np.empty(26, np.int64)
    esc_c = np.empty(26, np.int64)
    esc_o = np.empty(26, np.int64)
    for i in range(boards.shape[0]):
        _encode_one_v2(boards[i], out[i], c, o, esc_c, esc_o)


@njit(cache=True, nogil=True, parallel=True)
def _encode_batch_v2_parallel(boards, out):
    for i in prange(boards.shape[0]):
        c = np.empty(26, np.int64)
        o = np.empty(26, np.int64)
        esc_c = np.empty(26, np.int64)
        esc_o = np.empty(26, np.int64)
        _encode_one_v2(boards[i], out[i], c, o, esc_c, esc_o)


def encode(boards: np.ndarray, threads: int = 1, version: int = 1) -> np.ndarray:
    """Features (N, num_features(version)) float32 for boards (N, 26) int8, each seen from its side on roll.

    ``threads`` > 1 spreads large batches over numba threads (for many-core GPU hosts).
    """
    width = num_features(version)
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    if boards.ndim == 1:
        boards = boards.reshape(1, -1)
    out = np.empty((boards.shape[0], width), np.float32)
    if threads > 1 and boards.shape[0] >= 4096:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]  # numba.config sets it via globals()
        (_encode_batch_parallel if version == 1 else _encode_batch_v2_parallel)(boards, out)
    else:
        (_encode_batch if version == 1 else _encode_batch_v2)(boards, out)
    return out


@njit(cache=True, nogil=True)
def _race_flags_kernel(boards):
    """True for each board (N, 26) where contact is over."""
    n = boards.shape[0]
    out = np.empty(n, np.bool_)
    for i in range(n):
        out[i] = _is_race(boards[i])
    return out


KINDS = ("contact", "crashed", "race")
"""Kinds of position, by ``position_kinds`` code 0, 1, 2 (bear-offs are a race; the database answers those)."""


@njit(cache=True, nogil=True)
def _dead(b, side):
    """Checkers of ``side`` out of the play: borne off, or on its own 1- and 2-points."""
    total = 0
    for p in range(1, 26):
        total += _count(b, side, p)
    return 15 - total + _count(b, side, 1) + _count(b, side, 2)


@njit(cache=True, nogil=True)
def _position_kinds_kernel(boards):
    """Kind code (N,) int8 of boards (N, 26): 2 race (contact over), 1 crashed (contact, and a side has at most
    6 checkers left to play with: 9 or more borne off or on its 1- and 2-points), 0 other contact."""
    n = boards.shape[0]
    out = np.empty(n, np.int8)
    for i in range(n):
        b = boards[i]
        if _is_race(b):
            out[i] = 2
        elif _dead(b, 0) >= 9 or _dead(b, 1) >= 9:
            out[i] = 1
        else:
            out[i] = 0
    return out


def race_flags(boards: np.ndarray) -> np.ndarray:
    """(N,) bool: True for each board of ``boards`` (N, 26) int8 where contact is over."""
    return np.asarray(_race_flags_kernel(np.ascontiguousarray(boards, np.int8)))


def position_kinds(boards: np.ndarray) -> np.ndarray:
    """(N,) int8 kind code of each board (N, 26): 0 contact, 1 crashed, 2 race (``KINDS`` names them)."""
    return np.asarray(_position_kinds_kernel(np.ascontiguousarray(boards, np.int8)))


T = TypeVar("T")


def rows_by_scorer(boards: np.ndarray, scorers: Sequence[T]) -> list[tuple[T, np.ndarray]]:
    """The rows of ``boards`` grouped by the scorer of their kind (``scorers[c]`` scores kind code ``c``).

    One group per distinct scorer (by identity) that has rows, so that nets by kind
    run one forward pass each, whichever kinds share a net.
    """
    kinds = position_kinds(boards)
    groups = []
    for scorer in {id(x): x for x in scorers}.values():
        rows = np.flatnonzero(np.isin(kinds, [c for c, x in enumerate(scorers) if x is scorer]))
        if len(rows):
            groups.append((scorer, rows))
    return groups
