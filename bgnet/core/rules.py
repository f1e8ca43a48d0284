"""Game rules beyond move generation: the opening roll, and the older names for game end.

How a game ends is ``Position.outcome()`` (an ``Outcome``: winner and ``Result``);
``winner``, ``is_game_over`` and ``result_kind`` below are thin views of it, kept
for callers written before it existed.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

import numpy as np

from bgnet.core.position import Outcome, Position, Result

__all__ = ["Outcome", "Result", "is_game_over", "opening_roll", "other_opening_die", "result_kind", "winner"]

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
        raise ValueError("the game is not over: neither side has borne off all 15 checkers")
    return out.kind


def other_opening_die(first: _Die, shift: _Die) -> _Die:
    """The second opening die from the first and a ``shift`` of 1 to 5: any of the five other faces, never a double.

    With ``shift`` uniform on 1..5 the pair is uniform over the 30 non-double rolls;
    it works on ints and on numpy arrays alike (self-play and duels roll whole batches).
    """
    second: Any = (first - 1 + shift) % 6 + 1
    return cast(_Die, second)


def opening_roll(rng: np.random.Generator) -> tuple[int, int]:
    """Each side rolls one die until they differ; the higher die's side plays both, never a double.

    Returns the two dice, the first being the die of the player who moves first.
    """
    while True:
        a, b = (int(x) for x in rng.integers(1, 7, size=2))
        if a != b:
            return (a, b) if a > b else (b, a)
