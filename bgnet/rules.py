"""Game rules beyond move generation: game end, winner, result kind, the opening roll."""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from bgnet.position import BAR, Position


class Result(IntEnum):
    """How a finished game was won: the points it is worth at cube 1."""

    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


def winner(pos: Position) -> int | None:
    """0 if the side on roll has borne off all 15, 1 if the opponent has, None while the game goes on."""
    if pos.off == 15:
        return 0
    if pos.opp_off == 15:
        return 1
    return None


def is_game_over(pos: Position) -> bool:
    """True when one side has borne off every checker."""
    return winner(pos) is not None


def result_kind(pos: Position) -> Result:
    """Single, gammon or backgammon for the side that has borne off all 15 (game must be over).

    A gammon: the loser has borne off none. A backgammon: the loser has borne off
    none and still has a checker on the bar or in the winner's home board.
    """
    who = winner(pos)
    if who is None:
        raise ValueError("the game is not over: neither side has borne off all 15 checkers")
    loser_view = pos if who == 1 else pos.swap_sides()  # seen from the loser
    if loser_view.off > 0:
        return Result.SINGLE
    b = loser_view.board
    # The winner's home board is the loser's points 19..24; the bar is slot 25.
    if b[BAR] > 0 or any(b[p] > 0 for p in range(19, 25)):
        return Result.BACKGAMMON
    return Result.GAMMON


def opening_roll(rng: np.random.Generator) -> tuple[int, int]:
    """Each side rolls one die until they differ; the higher die's side plays both, never a double.

    Returns the two dice, the first being the die of the player who moves first.
    """
    while True:
        a, b = (int(x) for x in rng.integers(1, 7, size=2))
        if a != b:
            return (a, b) if a > b else (b, a)
