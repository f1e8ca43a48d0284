"""Numba kernel behind the rollout's luck variance reduction: the 21 rolls' plays of many positions.

The luck of a roll needs, for every live position and each of the 21 rolls, the
best of the plays pubeval ranks highest, valued by the net. ``luck_plays`` does it
without the big intermediate arrays of the general path: it generates each roll's
plays into a small reused buffer (the move generator's own ``gen_one``), ranks them
with pubeval's table form as it goes, keeps the top ``k`` (within a margin), and
writes each kept afterstate turned round (the opponent on roll), once per position:
the same afterstate reached by two rolls (4-1 and 3-2 both playing 8/4 6/5, say) is
evaluated once. The net then values them through ``bgnet.fastnet`` (whose fused
kernel is ``bgnet._net_kernels``).

It calls another module's numba function (``gen_one``), whose later edits numba's
on-disk cache does not notice here: a stale ``luck_plays`` could only make the luck a
worse control variate, never a biased one (``tests/test_rollout_luck.py`` checks it
against the move generator).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bgnet._movegen_kernels import MAX_PER_POSITION, TABLE_SIZE, gen_one
from bgnet.pubeval import race_scan


@njit(cache=True, nogil=True, inline="always")
def pubeval_row(row, tables, extra, win_score):  # type: ignore[no-untyped-def]
    """Pubeval's score of one afterstate (mover's view), from ``bgnet.rollout._pubeval_tables``."""
    in_play, is_race = race_scan(row)
    if in_play == 0:
        return win_score
    v = 0 if is_race else 1
    s = 0.0
    for block in range(24):
        s += tables[v, block, row[24 - block] + 15]
    s += extra[v, 0] * (-row[0]) / 2.0
    s += extra[v, 1] * (15 - in_play) / 15.0
    return s


@njit(cache=True, nogil=True)
def luck_plays(boards, rolls, k, margin, tables, extra, win_score):  # type: ignore[no-untyped-def]
    """For each board and roll, pubeval's best ``k`` plays (less those more than ``margin`` below the best).

    Returns ``(cand, slot, owner)``: ``cand`` (M, 26) int8 the distinct afterstates of
    each board, turned round (the opponent on roll); ``slot`` (B, R, k) int64 the row
    of ``cand`` of each roll's kept plays in the move generator's play order (-1 past
    the last kept one): the same plays, in the same order, as ``gen_batch`` followed
    by ``bgnet.rollout._pubeval_top``; ``owner`` (M,) the board each row belongs to.
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
    window = np.empty(k, np.int64)
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
            cnt = gen_one(boards[i], rolls[r, 0], rolls[r, 1], out_b, out_s, out_n, out_d, 0, tk1, tk2, tst, genbox,
                          b, steps)
            c = 0
            for j in range(cnt):  # insertion into the sorted (best first) window of the best k
                sj = pubeval_row(out_b[j], tables, extra, win_score)
                scores[j] = sj
                if c < k:
                    q = c
                    c += 1
                elif sj > scores[top[k - 1]]:
                    q = k - 1
                else:
                    continue
                while q > 0 and scores[top[q - 1]] < sj:
                    top[q] = top[q - 1]
                    q -= 1
                top[q] = j
            best = scores[top[0]]
            kept = 0
            for q in range(c):
                if scores[top[q]] >= best - margin:
                    w = top[q]
                    j = kept
                    while j > 0 and window[j - 1] > w:  # into the move generator's order
                        window[j] = window[j - 1]
                        j -= 1
                    window[j] = w
                    kept += 1
            for q in range(kept):
                src = out_b[window[q]]
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
