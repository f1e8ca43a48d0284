"""The backgammon position: an immutable value seen from the side on roll.

Layout (shared by every kernel in bgnet): a board is 26 signed int8 slots.

* slots 1..24: point ``p`` in the numbering of the side on roll ("me"), 24 the
  farthest back, 1 my ace point. A positive count is my checkers, a negative
  count the opponent's (who sits on his own point ``25 - p``);
* slot 25 (``BAR``): my checkers on the bar (>= 0);
* slot 0 (``OPP_BAR``): the opponent's checkers on the bar, stored negative (<= 0);
* borne-off checkers are not stored: 15 minus the checkers still in play.

``swap_sides`` turns the board round: ``new[i] = -old[25 - i]``.

Position sits above the modules it offers as methods (``formats`` for the IDs,
``notation`` for move text, ``movegen`` for legal plays, ``render`` for the
drawing), which work on boards and reach the Position class only through the
object they are given, so the engine's imports run one way.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Iterable, Literal, Sequence, TypeAlias

import numpy as np

from bgnet.core.errors import IllegalMoveError, InvalidPositionError  # InvalidPositionError is re-exported: raised here
from bgnet.core.formats import (CHECKERS, boards_from_position_id, is_xgid, parse_xgid, position_id_from_boards,
                           xgid_from_position)
from bgnet.core.movegen import legal_moves as _legal_moves
from bgnet.core.notation import Move, format_move, parse_move
from bgnet.core.race import is_race as _is_race
from bgnet.core.render import render_board

__all__ = ["BAR", "CHECKERS", "NUM_SLOTS", "OFF", "OPP_BAR", "STARTING_POSITION", "InvalidPositionError",
           "Outcome", "Point", "Position", "Result"]

Point: TypeAlias = int

BAR: Point = 25
OFF: Point = 0
OPP_BAR = 0
NUM_SLOTS = 26

_START = [0] * NUM_SLOTS
for _p, _n in ((24, 2), (13, 5), (8, 3), (6, 5)):
    _START[_p] = _n
    _START[25 - _p] = -_n


class Result(IntEnum):
    """How a finished game was won: the points it is worth at cube 1."""

    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended, seen from the position's side on roll (``Position.outcome``)."""

    winner: Literal["me", "opponent"]
    """"me": the side on roll of the position has borne off all 15; "opponent": the other side has."""
    kind: Result
    """Single, gammon (the loser bore off none) or backgammon (and still has a checker on the bar or
    in the winner's home board)."""

    @property
    def points(self) -> int:
        """Points the game is worth at cube 1 (1, 2 or 3)."""
        return int(self.kind)

    @property
    def signed_points(self) -> int:
        """Points for the side on roll: ``+points`` when it won, ``-points`` when it lost.

        This is the code ``bgnet.core._game_kernels.terminal_codes`` gives a finished board.
        """
        return self.points if self.winner == "me" else -self.points


def _check_board(board: Sequence[int]) -> None:
    if len(board) != NUM_SLOTS:
        raise InvalidPositionError(f"a board has {NUM_SLOTS} slots, got {len(board)}")
    if board[BAR] < 0:
        raise InvalidPositionError("the side on roll has a negative number of checkers on the bar")
    if board[OPP_BAR] > 0:
        raise InvalidPositionError("the opponent's bar slot must hold a count <= 0 (opponent checkers are negative)")
    mine = sum(n for n in board[1:] if n > 0)
    theirs = -sum(n for n in board[:25] if n < 0)
    if mine > CHECKERS:
        raise InvalidPositionError(f"the side on roll has {mine} checkers; at most {CHECKERS} are allowed")
    if theirs > CHECKERS:
        raise InvalidPositionError(f"the opponent has {theirs} checkers; at most {CHECKERS} are allowed")


class Position:
    """An immutable backgammon position seen from the side on roll.

    Build one with ``Position(board)`` (26 signed slots, see the module docstring),
    ``Position.from_boards`` (gnubg's two 25-int arrays), ``Position.from_position_id``,
    ``Position.from_xgid`` or ``Position.from_points`` (a short test constructor).
    """

    __slots__ = ("_board",)
    _board: tuple[int, ...]

    def __init__(self, board: Iterable[int] = _START) -> None:
        cells = tuple(int(x) for x in board)
        _check_board(cells)
        object.__setattr__(self, "_board", cells)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Position is immutable")

    # -- construction -------------------------------------------------------
    @classmethod
    def start(cls) -> "Position":
        """The opening position."""
        return cls(_START)

    @classmethod
    def _trusted(cls, cells: tuple[int, ...]) -> "Position":
        """A Position from 26 ints known to be valid (kernel output), without checking them again."""
        obj = object.__new__(cls)
        _SET_BOARD(obj, cells)
        return obj

    @classmethod
    def _trusted_rows(cls, rows: list[list[int]]) -> "list[Position]":
        """Positions from rows of 26 ints known to be valid (move-generation output), the fast way."""
        new = object.__new__
        set_board = _SET_BOARD
        out = []
        for r in rows:
            obj = new(cls)
            set_board(obj, tuple(r))
            out.append(obj)
        return out

    @classmethod
    def from_array(cls, board: np.ndarray) -> "Position":
        """A Position from a 26-slot int array (validated)."""
        return cls(board.tolist())

    @classmethod
    def from_points(cls, me: dict[int, int] | None = None, opp: dict[int, int] | None = None) -> "Position":
        """Short constructor: ``from_points({6: 5, 25: 1}, {6: 2})``.

        Keys are points in each side's own numbering (25 = that side's bar);
        checkers not placed are borne off.
        """
        board = [0] * NUM_SLOTS
        for p, n in (me or {}).items():
            if not 1 <= p <= 25:
                raise InvalidPositionError(f"point {p} is not a point (1..24) or the bar (25)")
            board[p] += n
        for p, n in (opp or {}).items():
            if not 1 <= p <= 25:
                raise InvalidPositionError(f"point {p} is not a point (1..24) or the bar (25)")
            if n < 0:
                raise InvalidPositionError(f"the opponent has a negative count ({n}) on point {p}")
            slot = 25 - p
            if board[slot] > 0 and n > 0:
                raise InvalidPositionError(f"both sides have checkers on point {slot} (the opponent's {p})")
            board[slot] -= n
        if any(n < 0 for p, n in (me or {}).items()):
            raise InvalidPositionError("the side on roll has a negative checker count")
        return cls(board)

    @classmethod
    def from_boards(cls, not_on_roll: Sequence[int], on_roll: Sequence[int]) -> "Position":
        """From gnubg's arrays: each 25 ints, own points 1..24 at index 0..23, bar at 24."""
        for name, arr in (("opponent's", not_on_roll), ("on-roll", on_roll)):
            if len(arr) != 25:
                raise InvalidPositionError(f"the {name} array has {len(arr)} entries; it needs 25")
            if any(int(n) < 0 for n in arr):
                raise InvalidPositionError(f"the {name} array has a negative checker count")
        board = [0] * NUM_SLOTS
        for i in range(24):
            mine, theirs = int(on_roll[i]), int(not_on_roll[23 - i])
            if mine and theirs:
                raise InvalidPositionError(f"both sides have checkers on point {i + 1}")
            board[i + 1] = mine - theirs
        board[BAR] = int(on_roll[24])
        board[OPP_BAR] = -int(not_on_roll[24])
        return cls(board)

    @classmethod
    def from_position_id(cls, position_id: str) -> "Position":
        """Parse a GNU Backgammon Position ID (14 characters), player on roll as seen by gnubg."""
        not_on_roll, on_roll = boards_from_position_id(position_id)
        return cls.from_boards(not_on_roll, on_roll)

    @classmethod
    def from_xgid(cls, xgid: str) -> "Position":
        """The position of an XGID, seen from the player on roll."""
        x = parse_xgid(xgid)
        return cls.from_boards(x.not_on_roll, x.on_roll)

    @classmethod
    def parse(cls, text: str) -> "Position":
        """A Position ID or an XGID (with or without ``XGID=``)."""
        text = text.strip()
        if is_xgid(text):
            return cls.from_xgid(text)
        if ":" in text:  # gnubg's "PositionID:MatchID"
            text = text.split(":", 1)[0]
        return cls.from_position_id(text)

    # -- views ----------------------------------------------------------------
    @property
    def board(self) -> tuple[int, ...]:
        """The 26 signed slots (see the module docstring)."""
        return self._board

    def array(self) -> np.ndarray:
        """A fresh int8 copy of the 26 slots."""
        return np.array(self._board, dtype=np.int8)

    def boards(self) -> tuple[list[int], list[int]]:
        """gnubg's arrays ``(not_on_roll, on_roll)``, 25 ints each."""
        b = self._board
        on_roll = [max(b[i + 1], 0) for i in range(24)] + [b[BAR]]
        not_on_roll = [max(-b[24 - j], 0) for j in range(24)] + [-b[OPP_BAR]]
        return not_on_roll, on_roll

    def position_id(self) -> str:
        """The GNU Backgammon Position ID."""
        return position_id_from_boards(self.boards())

    def xgid(self, match: object | None = None) -> str:
        """An XGID for this position with the side on roll at the bottom (see formats.xgid_from_position)."""
        return xgid_from_position(self, match)

    @property
    def bar(self) -> int:
        """My checkers on the bar."""
        return self._board[BAR]

    @property
    def opp_bar(self) -> int:
        """The opponent's checkers on the bar (a count >= 0)."""
        return -self._board[OPP_BAR]

    @property
    def off(self) -> int:
        """My checkers borne off."""
        return CHECKERS - sum(n for n in self._board[1:] if n > 0)

    @property
    def opp_off(self) -> int:
        """The opponent's checkers borne off."""
        return CHECKERS + sum(n for n in self._board[:25] if n < 0)

    def pips(self) -> tuple[int, int]:
        """Pip counts ``(mine, the opponent's)``."""
        b = self._board
        mine = sum(p * b[p] for p in range(1, 26) if b[p] > 0)
        theirs = sum((25 - p) * -b[p] for p in range(0, 25) if b[p] < 0)
        return mine, theirs

    def swap_sides(self) -> "Position":
        """The same board seen by the opponent (who is then on roll)."""
        b = self._board
        return Position._trusted(tuple(-b[25 - i] for i in range(NUM_SLOTS)))

    def is_race(self) -> bool:
        """True when no contact remains: every checker of mine is past every opposing checker (``bgnet.core.race``)."""
        return bool(_is_race(np.array(self._board, np.int8)))

    def outcome(self) -> Outcome | None:
        """Who won and how once a side has borne off all 15 checkers; None while the game goes on."""
        b = self._board
        if any(n > 0 for n in b[1:]):
            if any(n < 0 for n in b[:25]):
                return None
            winner: Literal["me", "opponent"] = "opponent"
            loser = b  # seen from the loser, who is on roll
        else:
            winner = "me"
            loser = tuple(-b[25 - i] for i in range(NUM_SLOTS))
        if sum(n for n in loser[1:] if n > 0) < CHECKERS:
            kind = Result.SINGLE
        elif loser[BAR] > 0 or any(loser[p] > 0 for p in range(19, 25)):
            kind = Result.BACKGAMMON  # the winner's home board is the loser's points 19..24
        else:
            kind = Result.GAMMON
        return Outcome(winner, kind)

    def is_game_over(self) -> bool:
        """True when either side has borne off all 15 checkers (``outcome()`` says how)."""
        b = self._board
        return not any(n > 0 for n in b[1:]) or not any(n < 0 for n in b[:25])

    # -- moves ----------------------------------------------------------------
    def legal_moves(self, dice: Sequence[int] | str) -> list[Move]:
        """Every distinct legal play of ``dice`` (see ``bgnet.core.movegen.legal_moves``)."""
        return _legal_moves(self, dice)

    def parse_move(self, text: str, dice: Sequence[int] | str) -> Move:
        """Resolve move text against the legal plays of ``dice`` (see ``bgnet.core.notation.resolve_move``)."""
        return parse_move(self, text, dice)

    def format_move(self, move: Move) -> str:
        """gnubg-style text of a legal move of this position, with hit marks."""
        return format_move(self, move)

    def play(self, move: Move) -> "Position":
        """The next position after ``move``: its steps played on this board, then the other side on roll.

        The steps must be playable checker by checker (a step from an empty point,
        onto a point the opponent holds, past a checker on the bar, or off the board
        before all are home is an ``IllegalMoveError``); whether they use the dice is
        the caller's business (take moves from ``legal_moves``).
        """
        b = list(self._board)
        for a, t in move.steps:
            if (not (1 <= a <= 25 and 0 <= t < a) or b[a] <= 0 or (t >= 1 and b[t] < -1) or (b[BAR] > 0 and a != BAR)
                    or (t == 0 and any(n > 0 for n in b[7:]))):
                raise IllegalMoveError(f"{move.text or 'the empty move'} cannot be played in this position "
                                       f"(step {a}/{t})")
            b[a] -= 1
            if t >= 1:
                if b[t] == -1:
                    b[t] = 0
                    b[OPP_BAR] -= 1
                b[t] += 1
        return Position._trusted(tuple(b)).swap_sides()

    # -- dunder ---------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and self._board == other._board

    def __hash__(self) -> int:
        return hash(self._board)

    def __repr__(self) -> str:
        return f"Position.from_position_id({self.position_id()!r})"

    def __str__(self) -> str:
        return render_board(self)


_SET_BOARD = Position.__dict__["_board"].__set__
"""The slot's own setter: the trusted constructors fill a new Position without the immutable __setattr__."""


STARTING_POSITION = Position.start()
