"""A rollout's dice: a pure function of ``(seed, trial, ply)``, stratified across trials.

The dice of trial ``i`` at ply ``t`` come from a counter-based hash
(``bgnet.core.dice.counter_hash``), not a sequential generator, so chunks of trials
can run anywhere and in any order and still see the same dice, and every candidate
of a rollout sees the same dice (common random numbers).

Quasi-random dice (``RolloutSettings.quasi_random``): the first roll is stratified
over the 36 outcomes and the first two over all 1,296 pairs (a Latin square, so any
36 consecutive trials also cover the second roll); later rolls are permuted per
block of 36 trials, so each block sees every outcome once. Each trial's own dice
stay i.i.d. uniform, so a rollout's mean is unbiased.
"""

from __future__ import annotations

import numpy as np

from bgnet.core.dice import counter_hash

DICE36 = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], np.int8)
"""The 36 ordered outcomes, index ``6 * (a - 1) + (b - 1)``."""


def _perms(seed: int, ply: int, blocks: np.ndarray) -> np.ndarray:
    """One random permutation of the 36 outcomes per block (B, 36), from (seed, ply, block)."""
    keys = counter_hash(seed, np.int64(ply) + 1, blocks[:, None].astype(np.int64) + 7, np.arange(36)[None, :])
    return np.argsort(keys, axis=1, kind="stable")


def dice_for(seed: int, trials: np.ndarray, ply: int, quasi_random: bool = True) -> np.ndarray:
    """Outcome indices (N,) in 0..35 of trials ``trials`` at ``ply`` (0 = the first roll after the root).

    ``DICE36[index]`` gives the two dice. Each trial's dice are i.i.d. uniform;
    with ``quasi_random`` they are stratified across trials (see the module docstring).
    """
    trials = np.asarray(trials, np.int64)
    if not quasi_random:
        h = counter_hash(seed, 0x5EED, np.int64(ply), trials)
        return ((h >> np.uint64(32)) * np.uint64(36) >> np.uint64(32)).astype(np.int64)
    j = trials % 36
    if ply == 0:
        return _perms(seed, -1, np.zeros(1, np.int64))[0][j]
    if ply == 1:
        return _perms(seed, -2, np.zeros(1, np.int64))[0][(j + trials // 36) % 36]
    blocks = trials // 36
    ub, inv = np.unique(blocks, return_inverse=True)
    return _perms(seed, ply, ub)[inv, j]
