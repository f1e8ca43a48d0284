"""The value types of a recorded match (``MatchRecord`` > ``GameRecord`` > ``Action``) and ``MatchFileError``.

Seats 0 and 1 are the left and right columns of a ``.mat`` file (gnubg's player 0
and 1, White and Black in its ``.sgf``). Every action is one cell of a ``.mat``
move line: a roll and its play, a double, a take, a drop, a beaver or a raccoon.
Every format reads into these values and writes from them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, Sequence

from bgnet.core.errors import BgnetError
from bgnet.core.notation import Step, format_steps
from bgnet.play import game as g

ActionKind = Literal["move", "double", "take", "drop", "beaver", "raccoon"]


class MatchFileError(BgnetError):
    """A match file that cannot be read or replayed; ``partial`` holds what was read before the problem."""

    def __init__(self, message: str, partial: "MatchRecord | None" = None) -> None:
        super().__init__(message)
        self.partial = partial


@dataclass(frozen=True)
class Action:
    """One decision of one player: a roll and its play, or a cube action."""

    player: int
    """Seat 0 (left column, gnubg's player 0) or 1."""
    kind: ActionKind
    dice: tuple[int, int] | None = None
    """The roll of a "move" (None for cube actions)."""
    steps: tuple[Step, ...] = ()
    """The play of a "move" as written: (from, to) in the mover's numbering, 25 = bar, 0 = off."""
    cube: int = 0
    """The cube value a double, beaver or raccoon turns it to (0 when the file does not say)."""
    number: int = 0
    """The move number: the ``N)`` of its line in a ``.mat`` (``mat_move_numbers`` for the other sources)."""

    @property
    def text(self) -> str:
        """The play in gnubg's notation, e.g. ``24/18 13/11*`` (without hit marks: they need the board)."""
        return format_steps(self.steps)


def next_mat_cell(previous: int, player: int) -> int:
    """The cell a ``.mat`` gives the action by ``player`` after cell ``previous`` (-1 before the game's first).

    Cells alternate seat 0 (left) and seat 1 (right), two to a numbered line, as GNU
    Backgammon writes them: an action by the seat whose column is not next skips a cell.
    """
    cell = previous + 1
    return cell if cell % 2 == player else cell + 1


def mat_move_numbers(actions: Sequence[Action]) -> list[int]:
    """The move number (the ``N)`` of its ``.mat`` line) of each action of one game: "1)" holds the first roll."""
    cell, numbers = -1, []
    for action in actions:
        cell = next_mat_cell(cell, action.player)
        numbers.append(cell // 2 + 1)
    return numbers


def numbered(actions: Sequence[Action]) -> tuple[Action, ...]:
    """``actions`` with the move numbers of ``mat_move_numbers``, for sources without line numbers."""
    return tuple(replace(a, number=n) for a, n in zip(actions, mat_move_numbers(actions)))


@dataclass(frozen=True)
class GameRecord:
    """One game as written: the score before it, its actions, and who won how much."""

    number: int
    """1-based game number."""
    score: tuple[int, int]
    """Points of seats 0 and 1 before this game."""
    actions: tuple[Action, ...]
    winner: int | None = None
    """Seat that won, or None for a game left unfinished."""
    points: int = 0
    """Points the winner scored (cube included)."""
    resigned: bool = False
    """True when the game ended by a resignation (known after replay)."""
    crawford: bool = False
    """True for the Crawford game (known after replay)."""


@dataclass(frozen=True)
class MatchRecord:
    """A whole match or money session: players, length, rules and games."""

    players: tuple[str, str]
    match_length: int
    """Points to win; 0 for money play."""
    games: tuple[GameRecord, ...]
    crawford_rule: bool = True
    """Match play: the Crawford rule applies."""
    jacoby: bool = False
    """Money play: the Jacoby rule applies."""
    beavers: bool = False
    """Money play: beavers are allowed."""
    headers: tuple[tuple[str, str], ...] = ()
    """``; [Key "value"]`` lines of a ``.mat`` (event, date, site, ...)."""
    problems: tuple[str, ...] = ()
    """Sentences for games skipped when read leniently."""

    @property
    def rules(self) -> g.Rules:
        """The rules of ``bgnet.play.game`` for these games."""
        return g.Rules(match_length=self.match_length, jacoby=self.jacoby, beavers=self.beavers,
                       raccoons=self.beavers)
