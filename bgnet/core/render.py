"""ASCII drawing of a position, laid out like gnubg's text board, for terminals and logs.

The side on roll is X and moves from the 24-point (top right) round to its
home board (bottom right); the opponent is O.  Point numbers are X's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bgnet.core.position import Position

ROWS = 5  # checkers drawn per point before the stack shows a count
_TOP = list(range(13, 25))  # left to right
_BOTTOM = list(range(12, 0, -1))


def _cell(count: int, row: int, mark: str) -> str:
    """One 3-character cell: the ``row``-th checker from the edge, or the stack size on the last row."""
    if count > ROWS and row == ROWS - 1:
        return f"{count:>2} "
    return f" {mark} " if row < count else "   "


def _point_cell(board: tuple[int, ...], point: int, row: int) -> str:
    """The cell of ``point`` at ``row`` (counted from the board edge)."""
    n = board[point]
    return _cell(abs(n), row, "X" if n > 0 else "O")


def _border(points: list[int]) -> str:
    """The numbered edge: ``+13-14-...-18-+---+19-...-24-+``."""
    left = "".join(f"{p:->2}-" for p in points[:6])
    right = "".join(f"{p:->2}-" for p in points[6:])
    return f"+{left}+---+{right}+"


def _half(board: tuple[int, ...], points: list[int], bar_count: int, bar_mark: str) -> list[str]:
    """Five rows of one half, counted from its edge (the caller flips the lower half)."""
    rows = []
    for r in range(ROWS):
        left = "".join(_point_cell(board, p, r) for p in points[:6])
        right = "".join(_point_cell(board, p, r) for p in points[6:])
        rows.append(f"|{left}|{_cell(bar_count, r, bar_mark)}|{right}|")
    return rows


def render_board(pos: "Position") -> str:
    """A text board from the view of the side on roll (X), with bar, borne-off and pip counts."""
    board = pos.board
    my_pips, opp_pips = pos.pips()
    # X's bar checkers sit by the top half, where they re-enter; O's by the bottom half.
    top = _half(board, _TOP, pos.bar, "X")
    bottom = _half(board, _BOTTOM, pos.opp_bar, "O")[::-1]
    middle = "|" + " " * 18 + "|BAR|" + " " * 18 + "|"
    lines = [_border(_TOP), *top, middle, *bottom, _border(_BOTTOM)]
    notes = {
        0: f"O: pips {opp_pips}, off {pos.opp_off}, bar {pos.opp_bar}",
        ROWS + 1: "X on roll",
        2 * ROWS + 2: f"X: pips {my_pips}, off {pos.off}, bar {pos.bar}",
    }
    return "\n".join(f" {line}   {notes[i]}".rstrip() if i in notes else f" {line}" for i, line in enumerate(lines))
