"""The ASCII board: point numbers, checkers in the right columns, bar, borne-off and pip counts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bgnet.core.position import Position
from bgnet.core.render import render_board

VECTORS_PATH = Path(__file__).resolve().parent / "data" / "format_vectors.json"  # made with GNU Backgammon
POSITION_IDS = [v["position_id"] for v in json.loads(VECTORS_PATH.read_text())["position_ids"]]


def _columns(border: str) -> dict[int, int]:
    """Point number -> text column of its last digit, read from a numbered border line."""
    board_part = border[: border.rindex("+") + 1]  # the notes on the right hold numbers too
    return {int(m.group()): m.end() - 1 for m in re.finditer(r"\d+", board_part)}


def _stack(rows_from_edge: list[str], col: int) -> tuple[str, int]:
    """(mark, count) drawn in column ``col``: marks from the edge, or the number on the fifth row."""
    marks = [row[col] for row in rows_from_edge]
    number = rows_from_edge[-1][col - 1 : col + 1].strip()
    if number.isdigit():
        return marks[0], int(number)
    used = [m for m in marks if m != " "]
    assert marks[: len(used)] == used, "checkers must be drawn from the edge without gaps"
    return (used[0] if used else " "), len(used)


@pytest.mark.parametrize("pid", POSITION_IDS)
def test_checkers_are_drawn_on_their_points(pid: str) -> None:
    pos = Position.from_position_id(pid)
    lines = render_board(pos).splitlines()
    assert len(lines) == 13
    top_cols, bottom_cols = _columns(lines[0]), _columns(lines[12])
    assert list(top_cols) == list(range(13, 25))
    assert list(bottom_cols) == list(range(12, 0, -1))
    top_rows, bottom_rows = lines[1:6], lines[7:12][::-1]
    for point in range(1, 25):
        n = pos.board[point]
        rows, col = (top_rows, top_cols[point]) if point >= 13 else (bottom_rows, bottom_cols[point])
        expected = ("X" if n > 0 else "O" if n < 0 else " ", abs(n))
        assert _stack(rows, col) == expected, f"point {point}"
    bar_col = lines[6].index("BAR") + 1
    assert _stack(top_rows, bar_col) == ("X" if pos.bar else " ", pos.bar)
    assert _stack(bottom_rows, bar_col) == ("O" if pos.opp_bar else " ", pos.opp_bar)


@pytest.mark.parametrize("pid", POSITION_IDS)
def test_pip_and_off_counts_shown(pid: str) -> None:
    pos = Position.from_position_id(pid)
    text = render_board(pos)
    mine, theirs = pos.pips()
    assert f"X: pips {mine}, off {pos.off}," in text
    assert f"O: pips {theirs}, off {pos.opp_off}," in text
    assert "X on roll" in text


def test_opening_board() -> None:
    text = str(Position.start())
    assert text.count("pips 167") == 2  # the published opening pip count
    assert text == render_board(Position.start())


def test_tall_stack_shows_count() -> None:
    pos = Position.from_points({6: 12, 25: 3}, {1: 9})
    lines = render_board(pos).splitlines()
    col = _columns(lines[12])[6]
    assert lines[7][col - 1 : col + 1] == "12"
    assert "X" in lines[11][col] and "off 0, bar 3" in lines[12]


def test_moving_a_checker_changes_the_board() -> None:
    before = Position.start()
    after = Position.from_points({24: 1, 23: 1, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5})
    a, b = render_board(before), render_board(after)
    assert a != b
    lines = b.splitlines()
    col = _columns(lines[0])[23]
    assert [row[col] for row in lines[1:6]] == ["X", " ", " ", " ", " "]
    assert "pips 166" in b
