"""Numba kernels for batched play: game-over detection, exact end-of-game values, segment argmax."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def terminal_codes(boards):
    """For boards (N, 26) seen from the side on roll: 0 while play goes on, else the result for that side.

    +1/+2/+3: the side on roll has borne off all 15 (single, gammon, backgammon);
    -1/-2/-3: the opponent has. Gammon: the loser bore off none; backgammon: and
    the loser still has a checker on the bar or in the winner's home board.
    """
    n = boards.shape[0]
    out = np.zeros(n, np.int8)
    for i in range(n):
        b = boards[i]
        mine = 0
        theirs = 0
        for j in range(26):
            v = b[j]
            if v > 0:
                mine += v
            else:
                theirs -= v
        if mine == 0:
            if theirs < 15:
                out[i] = 1
            else:
                bg = b[0] < 0  # the loser (opponent) on the bar or in my home board
                for p in range(1, 7):
                    if b[p] < 0:
                        bg = True
                out[i] = 3 if bg else 2
        elif theirs == 0:
            if mine < 15:
                out[i] = -1
            else:
                bg = b[25] > 0  # I lost: on the bar or in the opponent's home board
                for p in range(19, 25):
                    if b[p] > 0:
                        bg = True
                out[i] = -3 if bg else -2
    return out


@njit(cache=True, nogil=True)
def apply_terminal(codes, probs):
    """Overwrite the rows of finished games in ``probs`` (N, 5) with their exact values."""
    for i in range(codes.shape[0]):
        c = codes[i]
        if c == 0:
            continue
        k = abs(c)
        if c > 0:
            probs[i, 0] = 1.0
            probs[i, 1] = 1.0 if k >= 2 else 0.0
            probs[i, 2] = 1.0 if k >= 3 else 0.0
            probs[i, 3] = 0.0
            probs[i, 4] = 0.0
        else:
            probs[i, 0] = 0.0
            probs[i, 1] = 0.0
            probs[i, 2] = 0.0
            probs[i, 3] = 1.0 if k >= 2 else 0.0
            probs[i, 4] = 1.0 if k >= 3 else 0.0


@njit(cache=True, nogil=True)
def segment_argmax(values, offsets):
    """Index (into ``values``) of the largest value in each segment ``offsets[i]:offsets[i + 1]``."""
    n = offsets.shape[0] - 1
    out = np.empty(n, np.int64)
    for i in range(n):
        best = offsets[i]
        for j in range(offsets[i] + 1, offsets[i + 1]):
            if values[j] > values[best]:
                best = j
        out[i] = best
    return out
