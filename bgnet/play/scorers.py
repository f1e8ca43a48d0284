"""Batch scorers: how a player ranks the candidate plays of many games in one call (duels, self-play evaluation).

Each scorer implements ``bgnet.core.protocols.BatchScorer``: afterstates of every game
in one flat array in, one score per play out (higher is better for the mover).
``bgnet.play.search.SearchScorer`` is the n-ply one.
"""

from __future__ import annotations

import numpy as np

from bgnet.features.encoding import race_flags
from bgnet.core.dice import splitmix64
from bgnet.core.movegen import swap_sides_batch
from bgnet.core.probs import equities
from bgnet.core.protocols import BatchScorer, EvaluatorLike, as_evaluator
from bgnet.nets.pruning import PrunedEvaluator
from bgnet.play.search import MONEY, leaf_probs, play_values

__all__ = ["BatchScorer", "NeuralScorer", "PubevalScorer", "RandomScorer"]


class NeuralScorer:
    """0-ply neural scoring: the mover's cubeless equity of each afterstate (exact when the game ends); with a
    ``PrunedEvaluator``, of the plays its pruning net keeps for each game (the others -inf, ``play_values``)."""

    def __init__(self, evaluator: EvaluatorLike) -> None:
        self.evaluator = as_evaluator(evaluator)

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """The mover's cubeless money equity of each afterstate (-inf for plays a pruning net leaves out)."""
        if isinstance(self.evaluator, PrunedEvaluator):
            return play_values(self.evaluator, swap_sides_batch(after), offsets, MONEY)
        values: np.ndarray = -equities(leaf_probs(self.evaluator, swap_sides_batch(after)))
        return values


class PubevalScorer:
    """Tesauro's pubeval, with race or contact weights chosen from the position before the move."""

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Pubeval's score of each afterstate (race weights where the position before the move was a race)."""
        from bgnet.nets.pubeval import pubeval_scores

        race = np.repeat(race_flags(before), np.diff(offsets))
        return pubeval_scores(after, race=race)


def _board_hash(boards: np.ndarray, key: np.uint64) -> np.ndarray:
    """A 64-bit hash of each board row (N, 26) int8, keyed."""
    padded = np.zeros((boards.shape[0], 32), np.int8)
    padded[:, :26] = boards
    words = padded.view(np.uint64)
    h = np.full(boards.shape[0], key, np.uint64)
    for k in range(4):
        h = splitmix64(h ^ words[:, k])
    return h


class RandomScorer:
    """Uniformly random play: a seeded hash of (position, play), so a choice never depends on batching."""

    def __init__(self, seed: int = 0) -> None:
        self.key = np.random.SeedSequence([int(seed), 0x5EED]).generate_state(1, np.uint64)[0]

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """A uniform [0, 1) score per play from a keyed hash of the position before and the afterstate."""
        h_before = np.repeat(_board_hash(np.ascontiguousarray(before, np.int8), self.key), np.diff(offsets))
        h = _board_hash(np.ascontiguousarray(after, np.int8), self.key) ^ splitmix64(h_before)
        return (splitmix64(h) >> np.uint64(11)).astype(np.float64) / float(1 << 53)
