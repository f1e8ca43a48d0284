"""Probs: the evaluator's five cumulative probabilities for the side on roll."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np


@dataclass(frozen=True)
class Probs:
    """Chances for the side on roll: win, win a gammon (or more), win a backgammon,
    lose a gammon (or more), lose a backgammon. Gammon counts include backgammons."""

    win: float
    win_gammon: float
    win_backgammon: float
    lose_gammon: float
    lose_backgammon: float

    @classmethod
    def of(cls, values: "Probs | Sequence[float]") -> "Probs":
        """A Probs from a Probs or any sequence of five floats."""
        if isinstance(values, Probs):
            return values
        vals = [float(v) for v in values]
        if len(vals) != 5:
            raise ValueError(f"probabilities need five values (win, wg, wbg, lg, lbg), got {len(vals)}")
        return cls(*vals)

    @property
    def lose(self) -> float:
        """Chance that the side on roll loses."""
        return 1.0 - self.win

    def equity(self) -> float:
        """Cubeless money equity for the side on roll, in points per game."""
        return (2.0 * self.win - 1.0 + self.win_gammon - self.lose_gammon
                + self.win_backgammon - self.lose_backgammon)

    def flip(self) -> "Probs":
        """The same position's chances seen by the other side."""
        return Probs(1.0 - self.win, self.lose_gammon, self.lose_backgammon,
                     self.win_gammon, self.win_backgammon)

    def __iter__(self) -> Iterator[float]:
        return iter((self.win, self.win_gammon, self.win_backgammon, self.lose_gammon, self.lose_backgammon))

    def as_list(self) -> list[float]:
        return list(self)


def equities(probs: Any) -> Any:
    """Cubeless money equity of each row (N, 5) of probabilities (numpy or torch), for the side they belong to."""
    return 2.0 * probs[:, 0] - 1.0 + probs[:, 1] - probs[:, 3] + probs[:, 2] - probs[:, 4]


def flip_probs(probs: np.ndarray) -> np.ndarray:
    """Rows (N, 5) of probabilities seen by the other side."""
    out = np.empty_like(probs)
    out[:, 0] = 1.0 - probs[:, 0]
    out[:, 1] = probs[:, 3]
    out[:, 2] = probs[:, 4]
    out[:, 3] = probs[:, 1]
    out[:, 4] = probs[:, 2]
    return out
