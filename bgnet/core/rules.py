"""Game rules beyond move generation: the opening roll, and the older names for game end.

How a game ends is ``Position.outcome()`` (an ``Outcome``: winner and ``Result``);
``winner``, ``is_game_over`` and ``result_kind`` below are thin views of it, kept
for callers written before it existed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, TypeVar, Union, cast

import numpy as np

from bgnet.core.errors import GameNotOverError
from bgnet.core.position import Outcome, Position, Result

__all__ = ["DiceSource", "OpeningRoll", "Outcome", "Result", "is_game_over", "opening_roll", "other_opening_die",
           "result_kind", "roll_opening", "winner"]

_Die = TypeVar("_Die", int, np.ndarray)


def winner(pos: Position) -> int | None:
    """0 if the side on roll has borne off all 15, 1 if the opponent has, None while the game goes on."""
    out = pos.outcome()
    return None if out is None else (0 if out.winner == "me" else 1)


def is_game_over(pos: Position) -> bool:
    """True when one side has borne off every checker."""
    return pos.is_game_over()


def result_kind(pos: Position) -> Result:
    """Single, gammon or backgammon for the side that has borne off all 15 (the game must be over)."""
    out = pos.outcome()
    if out is None:
        raise GameNotOverError("the game is not over: neither side has borne off all 15 checkers")
    return out.kind


def other_opening_die(first: _Die, shift: _Die) -> _Die:
    """The second opening die from the first and a ``shift`` of 1 to 5: any of the five other faces, never a double.

    With ``shift`` uniform on 1..5 the pair is uniform over the 30 non-double rolls;
    it works on ints and on numpy arrays alike (self-play and duels roll whole batches).
    """
    second: Any = (first - 1 + shift) % 6 + 1
    return cast(_Die, second)


DiceSource = Union[np.random.Generator, Callable[[], tuple[int, int]]]
"""Where rolls come from: a generator (two ``integers(1, 7)`` per roll) or a callable returning (die, die)."""


@dataclass(frozen=True)
class OpeningRoll:
    """Who moves first and with which dice, and every pair rolled to decide it."""

    first: int
    """Seat (0 or 1) of the side that rolled the higher die and moves first."""
    dice: tuple[int, int]
    """The dice the first mover plays: higher, lower (never a double)."""
    tries: tuple[tuple[int, int], ...]
    """Each pair rolled, seat 0's die first: ties, then the deciding pair."""


def roll_opening(dice: DiceSource) -> OpeningRoll:
    """Each side rolls one die until they differ; the higher die's side plays both, never a double."""
    tries: list[tuple[int, int]] = []
    while True:
        if isinstance(dice, np.random.Generator):
            a, b = (int(x) for x in dice.integers(1, 7, size=2))
        else:
            a, b = (int(x) for x in dice())
        tries.append((a, b))
        if a != b:
            return OpeningRoll(first=0 if a > b else 1, dice=(a, b) if a > b else (b, a), tries=tuple(tries))


def opening_roll(rng: DiceSource) -> tuple[int, int]:
    """The dice of ``roll_opening``: the first being the die of the player who moves first."""
    return roll_opening(rng).dice
