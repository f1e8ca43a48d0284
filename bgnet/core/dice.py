"""Counter-based randomness: SplitMix64's finaliser, the one hash behind bgnet's reproducible dice and random plays.

A counter-based generator draws number ``i`` of a stream as ``hash(seed, i)``
instead of stepping a hidden state, so any draw can be made anywhere, in any
order, and gives the same number: a rollout's dice (``bgnet.sim.rollout_dice``)
depend only on ``(seed, trial, ply)`` and a random player's choice
(``bgnet.play.scorers.RandomScorer``) only on the position and the play.
"""

from __future__ import annotations

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
"""SplitMix64's increment: 2**64 divided by the golden ratio, odd."""
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
MASK64 = 0xFFFFFFFFFFFFFFFF
"""A Python int cut to 64 bits with ``& MASK64`` before it becomes a uint64."""


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output for states ``x`` (uint64, elementwise, wrapping): a bijection that scrambles every bit.

    ``splitmix64(np.uint64(0))`` is 0xE220A8397B1DCDAF, SplitMix64's first output from seed 0.
    """
    with np.errstate(over="ignore"):
        z = x + GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def counter_hash(seed: int, *parts: np.ndarray | int | np.integer) -> np.ndarray:
    """A 64-bit hash (uint64, the parts broadcast together) of ``seed`` and integer counters, chained through
    ``splitmix64``: ``h = mix(seed)``, then ``h = mix(h ^ part)`` for each part in turn."""
    h = splitmix64(np.asarray(np.uint64(seed & MASK64)))
    for p in parts:
        with np.errstate(over="ignore"):
            h = splitmix64(h ^ np.asarray(p).astype(np.uint64))
    return h
