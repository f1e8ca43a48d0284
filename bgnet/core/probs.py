"""Probs: the evaluator's five cumulative probabilities for the side on roll, and their one flip.

This module owns the names of the five outputs (``PROB_NAMES``), their printed
line (``Probs.line``), cubeless money equity (``equities``) and turning them round
to the other side's view (``flip_row`` in kernels, ``flip_probs`` on arrays,
``Probs.flip`` on a value; the last two call the first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np
from numba import njit

from bgnet.core.errors import ProbsShapeError

PROB_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
"""The five outputs, in order (JSON keys and field names)."""


@njit(cache=True, nogil=True)
def flip_row(v: np.ndarray, out: np.ndarray) -> None:
    """Write into ``out`` (5,) the probabilities ``v`` (5,) seen by the other side: win and loss swap."""
    w, wg, wbg, lg, lbg = v[0], v[1], v[2], v[3], v[4]
    out[0] = 1.0 - w
    out[1] = lg
    out[2] = lbg
    out[3] = wg
    out[4] = wbg


@njit(cache=True, nogil=True)
def _flip_rows(probs: np.ndarray, out: np.ndarray) -> None:
    for i in range(probs.shape[0]):
        flip_row(probs[i], out[i])


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
            raise ProbsShapeError(f"probabilities need five values (win, wg, wbg, lg, lbg), got {len(vals)}")
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
        return Probs(*(float(x) for x in flip_probs(np.array([list(self)], np.float64))[0]))

    def to_dict(self) -> dict[str, float]:
        """The five probabilities keyed by ``PROB_NAMES``, for JSON."""
        return dict(zip(PROB_NAMES, self.as_list()))

    def line(self) -> str:
        """gnubg's probability line: ``win wg wbg - lose lg lbg``, three decimals."""
        return (f"{self.win:.3f} {self.win_gammon:.3f} {self.win_backgammon:.3f} - "
                f"{self.lose:.3f} {self.lose_gammon:.3f} {self.lose_backgammon:.3f}")

    def __iter__(self) -> Iterator[float]:
        return iter((self.win, self.win_gammon, self.win_backgammon, self.lose_gammon, self.lose_backgammon))

    def as_list(self) -> list[float]:
        """The five values in ``PROB_NAMES`` order."""
        return list(self)


def equities(probs: Any) -> Any:
    """Cubeless money equity of each row (N, 5) of probabilities (numpy or torch), for the side they belong to."""
    return 2.0 * probs[:, 0] - 1.0 + probs[:, 1] - probs[:, 3] + probs[:, 2] - probs[:, 4]


def flip_probs(probs: np.ndarray) -> np.ndarray:
    """Rows (N, 5) of probabilities seen by the other side (a new array of the same dtype)."""
    probs = np.asarray(probs)
    out = np.empty(probs.shape, probs.dtype if probs.dtype in (np.float32, np.float64) else np.float64)
    if len(out):
        _flip_rows(np.ascontiguousarray(probs, out.dtype), out)
    return out
