"""Round-robin ratings: least-squares points-per-game ratings and Elo-like ratings from win rates."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

ELO_BASE = 1500.0
"""Average Elo-like rating of the field."""


def least_squares_ratings(n: int, pairs: Sequence[tuple[int, int, float, float]]) -> list[float]:
    """Ratings r (mean 0) that best explain each result as ``value(i vs j) ~ r_i - r_j``.

    ``pairs`` holds (i, j, value, weight); weighted least squares with the mean
    pinned at 0, so that with every pair played and equal weights r_i is the mean of
    player i's results (the classic round-robin score).
    """
    rows = []
    rhs = []
    for i, j, value, weight in pairs:
        w = math.sqrt(max(weight, 0.0))
        row = np.zeros(n)
        row[i], row[j] = w, -w
        rows.append(row)
        rhs.append(w * value)
    rows.append(np.ones(n))
    rhs.append(0.0)
    solution, *_ = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)
    return [float(x) for x in solution]


def elo_difference(win_rate: float, games: int) -> float:
    """Elo difference implied by a win rate (clamped half a game away from 0% and 100%)."""
    eps = 0.5 / max(games, 1)
    p = min(1.0 - eps, max(eps, win_rate))
    return 400.0 * math.log10(p / (1.0 - p))


def elo_ratings(n: int, results: Sequence[tuple[int, int, float, int]]) -> list[float]:
    """Elo-like ratings (mean ``ELO_BASE``) from (i, j, i's win rate against j, games) by least squares."""
    diffs = [(i, j, elo_difference(w, g), float(g)) for i, j, w, g in results]
    return [ELO_BASE + r for r in least_squares_ratings(n, diffs)]
