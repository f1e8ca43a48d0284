"""Whether contact is over: ``bgnet.core.race`` on hand-made boards, and every caller of the rule agreeing with it."""

from __future__ import annotations

import numpy as np
import pytest

from bgnet.core.position import Position
from bgnet.core.race import is_race, race_flags, race_scan
from bgnet.features.kinds import position_kinds
from bgnet.features.registry import encode
from bgnet.features.v1 import RAW_PER_SIDE
from bgnet.nets import ranker


def board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    return np.array(Position.from_points(mine, theirs).board, np.int8)


@pytest.mark.parametrize("mine, theirs, race", [
    ({6: 5, 5: 5}, {6: 5, 5: 5}, True),      # both sides home
    ({13: 1, 6: 4}, {13: 1, 6: 4}, False),   # his 13-point is my 12: my 13 is behind it
    ({12: 1, 6: 4}, {12: 1, 6: 4}, True),    # my 12 has passed his 12 (my 13)
    ({20: 1, 6: 5}, {6: 5}, False),          # my 20 is behind his 6 (my 19)
    ({6: 5, 25: 1}, {6: 5}, False),          # I am on the bar
    ({6: 5}, {6: 5, 25: 1}, False),          # he is on the bar
    ({}, {6: 5}, True),                      # I have borne off every checker
    ({25: 1}, {}, False),                    # on the bar, with nothing of his left: still not a race
])
def test_rule_on_hand_made_boards(mine: dict[int, int], theirs: dict[int, int], race: bool) -> None:
    b = board(mine, theirs)
    assert bool(is_race(b)) is race and Position.from_array(b).is_race() is race
    assert race_scan(b) == (sum(mine.values()), race)


def test_every_caller_agrees_with_the_rule(game_boards) -> None:
    boards = game_boards(4000, seed=5)
    flags = race_flags(boards)
    assert 0 < flags.sum() < len(flags)  # both kinds occur
    assert [bool(is_race(b)) for b in boards] == flags.tolist()
    assert [Position.from_array(b).is_race() for b in boards[:500]] == flags[:500].tolist()
    assert np.array_equal(encode(boards)[:, 2 * RAW_PER_SIDE] == 1.0, flags)  # the input of feature set 1
    assert np.array_equal(position_kinds(boards) == 2, flags)
    assert np.array_equal(ranker.features(boards)[0], flags)  # the play ranker's own pass over bit masks
