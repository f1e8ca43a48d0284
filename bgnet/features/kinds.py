"""Kinds of position (contact, crashed, race), so that nets by kind can each score their own boards.

A checkpoint may hold one net per kind (``bgnet.nets.model.NetSet``); these kernels
sort a batch of boards (N, 26) int8, each seen from its side on roll, by kind.
"""

from __future__ import annotations

from typing import Sequence, TypeVar

import numpy as np
from numba import njit

from bgnet.core.race import is_race
from bgnet.features.common import count

__all__ = ["KINDS", "position_kinds", "rows_by_scorer"]

KINDS = ("contact", "crashed", "race")
"""Kinds of position, by ``position_kinds`` code 0, 1, 2 (bear-offs are a race; the database answers those)."""


@njit(cache=True, nogil=True)
def _dead(b, side):
    """Checkers of ``side`` out of the play: borne off, or on its own 1- and 2-points."""
    total = 0
    for p in range(1, 26):
        total += count(b, side, p)
    return 15 - total + count(b, side, 1) + count(b, side, 2)


@njit(cache=True, nogil=True)
def _position_kinds_kernel(boards):
    """Kind code (N,) int8 of boards (N, 26): 2 race (contact over), 1 crashed (contact, and a side has at most
    6 checkers left to play with: 9 or more borne off or on its 1- and 2-points), 0 other contact."""
    n = boards.shape[0]
    out = np.empty(n, np.int8)
    for i in range(n):
        b = boards[i]
        if is_race(b):
            out[i] = 2
        elif _dead(b, 0) >= 9 or _dead(b, 1) >= 9:
            out[i] = 1
        else:
            out[i] = 0
    return out


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
