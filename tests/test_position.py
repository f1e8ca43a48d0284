"""Position: validation, views, pips, swapping sides, text forms."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bgnet import BAR, OFF, STARTING_POSITION, InvalidPositionError, Position

VECTORS = json.loads((Path(__file__).resolve().parent / "data" / "format_vectors.json").read_text())


def _random_positions(seed: int, n: int) -> list[Position]:
    """Seeded positions with checkers anywhere, on the bar and borne off, never sharing a point."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        board = [0] * 26
        for p in rng.integers(1, 26, size=rng.integers(1, 16)):
            board[p] += 1  # mine: points and bar
        for p in rng.integers(0, 25, size=rng.integers(1, 16)):
            if p == 0 or board[p] <= 0:
                board[p] -= 1  # theirs: my numbering, slot 0 is their bar
        out.append(Position(board))
    return out


# -- validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    "board, words",
    [
        ([0] * 25, "26 slots"),
        ([0] * 25 + [-1], "negative"),
        ([1] + [0] * 25, "opponent's bar"),
        ([0] + [2] * 8 + [0] * 17, "16 checkers"),
        ([0] + [-2] * 8 + [0] * 17, "16 checkers"),
    ],
)
def test_impossible_boards_are_rejected(board: list[int], words: str) -> None:
    with pytest.raises(InvalidPositionError, match=words) as err:
        Position(board)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, ValueError)


def test_from_points_rejects_impossible_positions() -> None:
    with pytest.raises(InvalidPositionError, match="both sides"):
        Position.from_points({6: 2}, {19: 1})  # O's 19 is X's 6
    with pytest.raises(InvalidPositionError, match="negative"):
        Position.from_points({6: -1})
    with pytest.raises(InvalidPositionError, match="negative"):
        Position.from_points({}, {6: -1})
    with pytest.raises(InvalidPositionError, match="not a point"):
        Position.from_points({26: 1})
    with pytest.raises(InvalidPositionError, match="not a point"):
        Position.from_points({}, {0: 1})
    with pytest.raises(InvalidPositionError, match="16 checkers"):
        Position.from_points({6: 10, 8: 6})


def test_from_boards_rejects_impossible_positions() -> None:
    empty = [0] * 25
    with pytest.raises(InvalidPositionError, match="25"):
        Position.from_boards(empty[:24], empty)
    with pytest.raises(InvalidPositionError, match="negative"):
        Position.from_boards(empty, [-1] + empty[1:])
    shared = [0] * 25
    shared[0] = 1  # on-roll side's point 1 ...
    other = [0] * 25
    other[23] = 1  # ... is the other side's point 24
    with pytest.raises(InvalidPositionError, match="both sides"):
        Position.from_boards(other, shared)
    with pytest.raises(ValueError):
        Position.from_boards(empty, [16] + empty[1:])


def test_immutable() -> None:
    pos = Position.start()
    with pytest.raises(AttributeError):
        pos.board = (0,) * 26  # type: ignore[misc]
    arr = pos.array()
    arr[6] = 0
    assert pos.board[6] == 5 and arr.dtype == np.int8


# -- views ------------------------------------------------------------------------


def test_start() -> None:
    pos = Position.start()
    assert pos == STARTING_POSITION and hash(pos) == hash(STARTING_POSITION)
    assert pos.board[24] == 2 and pos.board[13] == 5 and pos.board[8] == 3 and pos.board[6] == 5
    assert pos.board[1] == -2 and pos.board[12] == -5 and pos.board[17] == -3 and pos.board[19] == -5
    assert pos.pips() == (167, 167)
    assert (pos.off, pos.opp_off, pos.bar, pos.opp_bar) == (0, 0, 0, 0)
    assert not pos.is_race() and not pos.is_game_over()
    assert BAR == 25 and OFF == 0


def test_pips_count_the_bar_as_25() -> None:
    # X: bar + two on 6 = 25 + 12; O: one on his 1 and one on his bar = 1 + 25.
    pos = Position.from_points({25: 1, 6: 2}, {1: 1, 25: 1})
    assert pos.pips() == (37, 26)
    assert (pos.bar, pos.opp_bar, pos.off, pos.opp_off) == (1, 1, 12, 13)


def test_from_points_places_each_side_in_its_own_numbering() -> None:
    pos = Position.from_points({24: 2}, {24: 2})
    assert pos.board[24] == 2 and pos.board[1] == -2
    assert pos.boards() == ([0] * 23 + [2, 0], [0] * 23 + [2, 0])


def test_swap_sides() -> None:
    assert Position.start().swap_sides() == Position.start()
    for pos in _random_positions(1, 200):
        other = pos.swap_sides()
        assert other.swap_sides() == pos
        assert other.pips() == pos.pips()[::-1]
        assert (other.off, other.opp_off, other.bar, other.opp_bar) == (pos.opp_off, pos.off, pos.opp_bar, pos.bar)
        not_on_roll, on_roll = pos.boards()
        assert other.boards() == (on_roll, not_on_roll)


def test_is_race() -> None:
    assert Position.from_points({6: 5, 5: 5}, {6: 5, 5: 5}).is_race()
    assert not Position.from_points({20: 1, 6: 5}, {6: 5}).is_race()  # X's 20 is behind O's 19
    assert not Position.from_points({6: 5, 25: 1}, {6: 5}).is_race()


def test_round_trips_through_boards_ids_and_repr() -> None:
    for pos in _random_positions(2, 300):
        assert Position.from_boards(*pos.boards()) == pos
        assert Position.from_position_id(pos.position_id()) == pos
        assert Position.from_array(pos.array()) == pos
        assert eval(repr(pos), {"Position": Position}) == pos
        assert Position.parse(pos.position_id()) == pos
        assert Position.parse(pos.xgid()) == pos


def test_parse_accepts_position_id_with_match_id_and_xgid() -> None:
    start = Position.start()
    assert Position.parse("4HPwATDgc/ABMA") == start
    assert Position.parse("  4HPwATDgc/ABMA:cAkAAAAAAAAA ") == start
    assert Position.parse("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10") == start
    with pytest.raises(ValueError):
        Position.parse("4HPwATDgc/AB")
    with pytest.raises(ValueError):
        Position.parse("not a position")


@pytest.mark.parametrize("v", VECTORS["position_ids"], ids=lambda v: v["name"])
def test_position_id_vectors(v: dict) -> None:
    try:
        pos = Position.from_position_id(v["position_id"])
    except ValueError:
        on_roll, not_on_roll = v["board_on_roll"], v["board_not_on_roll"]
        assert any(on_roll[i] and not_on_roll[23 - i] for i in range(24)), "only shared points may be refused"
        return
    assert pos.boards() == (v["board_not_on_roll"], v["board_on_roll"])
    assert (pos.opp_off, pos.off) == (v["checkers_off_not_on_roll"], v["checkers_off_on_roll"])
    assert pos.position_id() == v["position_id"]


# -- text -------------------------------------------------------------------------


def test_str_is_a_board_a_player_recognizes() -> None:
    pos = Position.from_points({25: 1, 6: 5, 13: 4}, {25: 2, 6: 5, 1: 3})
    text = str(pos)
    mine, theirs = pos.pips()
    for n in range(1, 25):
        assert str(n) in text
    assert "on roll" in text and "BAR" in text.upper()
    assert f"pips {mine}" in text and f"pips {theirs}" in text
    assert f"off {pos.off}" in text and f"off {pos.opp_off}" in text
    assert "X" in text and "O" in text
