"""The luck of every roll in a duel: a control variate that narrows a duel's interval without moving its mean.

Before each roll after the opening, a judge values the 21 rolls (the mover's cubeless equity after the best play
of each, as a rollout's luck does: ``bgnet.sim.rollout_luck.roll_values``); the luck of the roll that came is its
value minus their probability-weighted mean. Its expectation is exactly zero whatever the judge, so the points
minus the luck have the same mean as the points, with much less spread when the judge is good. The opening roll's
luck is left out: it is the same in both games of a pair and cancels there. The judge values each board on its
own, so the luck does not depend on how games are batched or split over workers.
"""

from __future__ import annotations

import math

import numpy as np

from bgnet.core.errors import BgnetError
from bgnet.core.probs import equities
from bgnet.core.protocols import Evaluator, ProbsFn
from bgnet.nets.pruning import PrunedEvaluator
from bgnet.play.search import MONEY
from bgnet.sim.rollout_luck import roll_values

__all__ = ["DuelLuck", "default_duel_luck"]

JUDGE_CANDIDATES = 1
"""Plays per roll the judge values: the fitted ranker's best (``RolloutSettings.luck_candidates``' default)."""


class DuelLuckError(BgnetError):
    """A duel's luck asked for where it cannot be measured: with the cube or in a match."""


class DuelLuck:
    """The judge of a duel's luck: ``evaluator``'s student when it ships one (as a rollout's luck is valued), else
    ``evaluator`` itself, on the ranker's best play of each roll."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.evaluator = evaluator
        student = evaluator.student if isinstance(evaluator, PrunedEvaluator) else None
        self.value_fn: ProbsFn | None = None if student is None else student.probs_of_boards

    def of_rolls(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        """The luck (N,) of each board's roll ``dice`` (N, 2) for its side on roll, in cubeless money equity."""
        if len(boards) == 0:
            return np.zeros(0)
        d = np.asarray(dice, np.int64)
        outcome = 6 * (d[:, 0] - 1) + (d[:, 1] - 1)  # the index in bgnet.sim.rollout_dice.DICE36
        got, mean, _ = roll_values(self.evaluator.probs_of_boards, np.ascontiguousarray(boards, np.int8), outcome,
                                   np.ones(len(boards), bool), JUDGE_CANDIDATES, 0, MONEY, MONEY, math.inf, "fitted",
                                   self.value_fn)
        luck: np.ndarray = equities(got) - equities(mean)
        return luck


_DEFAULT: list[DuelLuck] = []


def default_duel_luck() -> DuelLuck:
    """The released net's judge (loaded once per process): the same for every pair of players."""
    if not _DEFAULT:
        from bgnet.play.agents import DEFAULT_CHECKPOINT, NeuralAgent

        _DEFAULT.append(DuelLuck(NeuralAgent(DEFAULT_CHECKPOINT).probs_fn))
    return _DEFAULT[0]
