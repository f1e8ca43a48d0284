"""Numba kernels behind the rollout's pruning and luck variance reduction: pubeval's best plays of many positions.

``pubeval_top_kernel`` keeps each segment's best plays by pubeval's table form
(``bgnet.nets.pubeval.pubeval_tables``) in one pass: the checker play's pruning and
the luck's general path (``bgnet.sim.rollout_play.pubeval_top``).

The luck of a roll needs, for every live position and each of the 21 rolls, the
best of the plays pubeval ranks highest, valued by the net. ``luck_plays`` does it
without the big intermediate arrays of the general path: it generates each roll's
plays into a small reused buffer (the move generator's own ``gen_one``), ranks them
with pubeval's table form as it goes (``bgnet.nets.ranker.table_score``), re-ranks pubeval's
best few with ``bgnet.nets.ranker``'s fitted score when asked, keeps the top ``k`` (within a
margin), and writes each kept afterstate turned round (the opponent on roll), once per position:
the same afterstate reached by two rolls (4-1 and 3-2 both playing 8/4 6/5, say) is
evaluated once. The net then values them through ``bgnet.nets.fastnet`` (whose fused
kernel is ``bgnet.nets._net_kernels``).

It calls other modules' numba functions (``gen_one`` and the move generator's step
helpers, ``bgnet.nets.ranker``'s scores), whose later edits numba's on-disk cache does not
notice here: a stale ``luck_plays`` could only make the luck a
worse control variate, never a biased one (``tests/test_rollout_luck.py`` checks it
against the move generator).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.core._movegen_kernels import (
    MAX_PER_POSITION, TABLE_SIZE, gen_one,
)
from bgnet.core.race import race_scan
from bgnet.nets.ranker import score_row, table_score


@njit(cache=True, nogil=True, inline="always")
def pubeval_row(row, tables, extra, win_score):  # type: ignore[no-untyped-def]
    """Pubeval's score of one afterstate (mover's view), from ``bgnet.nets.pubeval.pubeval_tables``."""
    in_play, is_race = race_scan(row)
    if in_play == 0:
        return win_score
    return table_score(row, tables, extra, in_play, is_race)


@njit(cache=True, nogil=True)
def pubeval_top_kernel(after, offsets, k, margin, tables, extra, win_score):  # type: ignore[no-untyped-def]
    """Per segment: the ``k`` plays pubeval scores highest, less those more than ``margin`` below the best."""
    n = offsets.shape[0] - 1
    scores = np.empty(after.shape[0], np.float64)
    for i in range(after.shape[0]):
        scores[i] = pubeval_row(after[i], tables, extra, win_score)
    out = np.empty(n * k, np.int64)
    new_offsets = np.empty(n + 1, np.int64)
    top = np.empty(k, np.int64)
    m = 0
    for i in range(n):
        new_offsets[i] = m
        lo, hi = offsets[i], offsets[i + 1]
        c = 0
        for j in range(lo, hi):  # insertion into the sorted (best first) window of the best k
            if c < k:
                q = c
                c += 1
            elif scores[j] > scores[top[k - 1]]:
                q = k - 1
            else:
                continue
            while q > 0 and scores[top[q - 1]] < scores[j]:
                top[q] = top[q - 1]
                q -= 1
            top[q] = j
        if c == 0:
            continue
        best = scores[top[0]]
        kept = 0
        for q in range(c):
            if scores[top[q]] >= best - margin:
                kept += 1
        window = top[:kept].copy()
        window.sort()
        for q in range(kept):
            out[m] = window[q]
            m += 1
    new_offsets[n] = m
    return out[:m], new_offsets


@njit(cache=True, nogil=True)
def luck_plays(boards, rolls, k, margin, tables, extra, win_score, rtables, rextra, rcontact,
               window):  # type: ignore[no-untyped-def]
    """For each board and roll, the best ``k`` plays (less those more than ``margin`` below the best).

    With ``window`` 0 the plays are ranked by pubeval (``tables``, ``extra``); else
    pubeval's best ``window`` are re-ranked by ``bgnet.nets.ranker``'s score (``rtables``,
    ``rextra``, ``rcontact``), and ``margin`` is in the ranker's units.
    Returns ``(cand, slot, owner)``: ``cand`` (M, 26) int8 the distinct afterstates of
    each board, turned round (the opponent on roll); ``slot`` (B, R, k) int64 the row
    of ``cand`` of each roll's kept plays in the move generator's play order (-1 past
    the last kept one): with ``window`` 0 the same plays, in the same order, as
    ``gen_batch`` followed by ``pubeval_top_kernel``; ``owner`` (M,) the board
    each row belongs to.
    """
    n = boards.shape[0]
    nr = rolls.shape[0]
    tk1 = np.zeros(TABLE_SIZE, np.int64)
    tk2 = np.zeros(TABLE_SIZE, np.int64)
    tst = np.zeros(TABLE_SIZE, np.int64)
    genbox = np.zeros(1, np.int64)
    out_b = np.empty((MAX_PER_POSITION, 26), np.int8)
    out_s = np.empty((MAX_PER_POSITION, 8), np.int8)
    out_n = np.empty(MAX_PER_POSITION, np.int8)
    out_d = np.empty(MAX_PER_POSITION, np.int64)
    b = np.empty(26, np.int8)
    steps = np.zeros(8, np.int8)
    scores = np.empty(MAX_PER_POSITION, np.float64)
    top = np.empty(k, np.int64)
    order = np.empty(k, np.int64)
    kk = k if window == 0 else window  # pubeval's window
    first = np.empty(kk, np.int64)
    cand = np.empty((n * nr * k, 26), np.int8)
    owner = np.empty(n * nr * k, np.int64)
    slot = np.full((n, nr, k), -1, np.int64)
    size = 1
    while size < 4 * nr * k:
        size *= 2
    mask = size - 1
    hrow = np.zeros(size, np.int64)
    hstamp = np.zeros(size, np.int64)
    m = 0
    for i in range(n):
        stamp = i + 1
        for r in range(nr):
            cnt_gen = gen_one(boards[i], np.int64(rolls[r, 0]), np.int64(rolls[r, 1]), out_b, out_s, out_n, out_d,
                              np.int64(0), tk1, tk2, tst, genbox, b, steps)  # int64s: gen_single's signature
            c = 0
            for j in range(cnt_gen):  # insertion into the sorted (best first) window of the best kk
                sj = pubeval_row(out_b[j], tables, extra, win_score)
                scores[j] = sj
                if c < kk:
                    q = c
                    c += 1
                elif sj > scores[first[kk - 1]]:
                    q = kk - 1
                else:
                    continue
                while q > 0 and scores[first[q - 1]] < sj:
                    first[q] = first[q - 1]
                    q -= 1
                first[q] = j
            if window == 0:
                for q in range(c):
                    top[q] = first[q]
            else:  # pubeval's best ``window`` sorted again by the ranker's score (ties: pubeval's order), best k
                for q1 in range(c):
                    j = first[q1]
                    scores[j] = score_row(out_b[j], rtables, rextra, rcontact)
                    q = q1
                    while q > 0 and scores[first[q - 1]] < scores[j]:
                        first[q] = first[q - 1]
                        q -= 1
                    first[q] = j
                c = min(c, k)
                for q in range(c):
                    top[q] = first[q]
            best = scores[top[0]]
            kept = 0
            for q in range(c):
                if scores[top[q]] >= best - margin:
                    w = top[q]
                    j = kept
                    while j > 0 and order[j - 1] > w:  # into the move generator's order
                        order[j] = order[j - 1]
                        j -= 1
                    order[j] = w
                    kept += 1
            for q in range(kept):
                src = out_b[order[q]]
                h = np.uint64(1469598103934665603)
                for x in range(26):  # the turned-round board's hash (FNV-1a over its bytes)
                    h = (h ^ np.uint64(np.uint8(-src[25 - x]))) * np.uint64(1099511628211)
                pos = np.int64(h >> np.uint64(40)) & mask
                found = -1
                while hstamp[pos] == stamp:
                    row = hrow[pos]
                    same = True
                    for x in range(26):
                        if cand[row, x] != -src[25 - x]:
                            same = False
                            break
                    if same:
                        found = row
                        break
                    pos = (pos + 1) & mask
                if found < 0:
                    for x in range(26):
                        cand[m, x] = -src[25 - x]
                    hstamp[pos] = stamp
                    hrow[pos] = m
                    owner[m] = i
                    found = m
                    m += 1
                slot[i, r, q] = found
    return cand[:m], slot, owner[:m]
