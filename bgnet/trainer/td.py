"""TD(lambda) targets: forward-view lambda-returns over one finished self-play game.

Why forward view: the self-play step already evaluates every candidate, so the
value of each position a game passes through is known for free when the game
ends; turning finished trajectories into (position, target) pairs lets the
learner train on shuffled minibatches, which suits GPUs and keeps the learner
apart from the self-play workers.

Perspective: trajectory position ``t`` is seen from its side on roll, and sides
alternate, so the next position's value is flipped before it becomes a target:
``G[t] = flip((1 - lam) * V[t + 1] + lam * G[t + 1])``, and for the last
position (its side on roll made the winning play) ``G[T - 1]`` is the result.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.core.errors import BgnetError
from bgnet.core.probs import flip_row


class TDTargetError(BgnetError):
    """A TD target asked for a result that is not a win of 1, 2 or 3 points."""


def result_probs(kind: int) -> np.ndarray:
    """The five-probability vector of a win worth ``kind`` points (1 single, 2 gammon, 3 backgammon)."""
    if kind not in (1, 2, 3):
        raise TDTargetError(f"result kind must be 1, 2 or 3, got {kind}")
    return np.array([1.0, float(kind >= 2), float(kind >= 3), 0.0, 0.0], np.float32)


@njit(cache=True, nogil=True)
def lambda_returns(values: np.ndarray, result: np.ndarray, lam: float) -> np.ndarray:
    """Targets (T, 5) for a game's positions given their values (T, 5) and the final result.

    ``values[t]`` is the evaluation used during play of position t (for its side on
    roll); ``result`` is the outcome for the side on roll at position T - 1, who
    made the last (winning) play. ``values[0]`` is never used as a target source.
    """
    n = values.shape[0]
    out = np.empty((n, 5), np.float32)
    if n == 0:
        return out
    for k in range(5):  # a loop, not a row assignment (whose shape check is slow to compile)
        out[n - 1, k] = result[k]
    mix = np.empty(5, np.float32)
    for t in range(n - 2, -1, -1):
        for k in range(5):
            mix[k] = (1.0 - lam) * values[t + 1, k] + lam * out[t + 1, k]
        flip_row(mix, out[t])
    return out
