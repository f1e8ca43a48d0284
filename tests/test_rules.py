"""Game rules: game over, winner, single/gammon/backgammon, the opening roll."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from bgnet import Position
from bgnet.rules import Result, is_game_over, opening_roll, result_kind, winner

# Each case: the loser's checkers (his own numbering, 25 = bar), the result, when the
# winner has borne off all fifteen.  The winner's home board is the loser's 19..24.
LOSER_CASES = [
    ({6: 14}, Result.SINGLE),  # one borne off
    ({1: 1}, Result.SINGLE),
    ({6: 15}, Result.GAMMON),  # none off, all in his own home
    ({18: 1, 6: 14}, Result.GAMMON),  # none off, outfield only
    ({19: 1, 6: 14}, Result.BACKGAMMON),  # one in the winner's home board
    ({24: 15}, Result.BACKGAMMON),
    ({25: 1, 6: 14}, Result.BACKGAMMON),  # one on the bar
    ({25: 1, 6: 13}, Result.SINGLE),  # on the bar, but one borne off
]


@pytest.mark.parametrize("loser, kind", LOSER_CASES)
def test_result_kind_when_the_opponent_won(loser: dict[int, int], kind: Result) -> None:
    # The side on roll lost: the opponent (who just moved) has no checkers left.
    pos = Position.from_points(loser, {})
    assert winner(pos) == 1 and is_game_over(pos) and pos.is_game_over()
    assert result_kind(pos) == kind


@pytest.mark.parametrize("loser, kind", LOSER_CASES)
def test_result_kind_when_the_side_on_roll_won(loser: dict[int, int], kind: Result) -> None:
    pos = Position.from_points(loser, {}).swap_sides()
    assert winner(pos) == 0 and is_game_over(pos)
    assert result_kind(pos) == kind


def test_result_values_are_points_at_cube_one() -> None:
    assert (int(Result.SINGLE), int(Result.GAMMON), int(Result.BACKGAMMON)) == (1, 2, 3)


def test_game_not_over() -> None:
    for pos in (Position.start(), Position.from_points({1: 1}, {1: 1})):
        assert winner(pos) is None and not is_game_over(pos)
        with pytest.raises(ValueError, match="not over"):
            result_kind(pos)


def test_opening_roll_is_never_a_double() -> None:
    rng = np.random.default_rng(123)
    rolls = [opening_roll(rng) for _ in range(6000)]
    assert all(a != b and 1 <= b < a <= 6 for a, b in rolls)
    counts = Counter(rolls)
    assert len(counts) == 15  # every non-double roll occurs ...
    assert max(counts.values()) < 2 * min(counts.values())  # ... about equally often


def test_opening_roll_is_seeded() -> None:
    a = [opening_roll(np.random.default_rng(5)) for _ in range(3)]
    b = [opening_roll(np.random.default_rng(5)) for _ in range(3)]
    assert a == b
