"""What a rollout's columns play out: a play of the root's dice, or the position itself before the roll.

A ``Candidate`` is plain data (a label, a board, whose turn, its cube lines), so a
backend can ship it with the chunks of trials.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from bgnet.core.movegen import parse_dice
from bgnet.core.notation import Move
from bgnet.core.position import Position
from bgnet.core.protocols import ProbsFn
from bgnet.cube.match import MatchState
from bgnet.play.search import DEFAULT_FILTERS, MoveFilter, rank_moves


NO_PLAY = "(no play)"
"""The label of the empty play of a roll that cannot be played (its move text is empty)."""


@dataclass(frozen=True)
class Candidate:
    """What one column of a rollout plays out: a play of the root's dice, or the position itself (no dice)."""

    label: str
    """The play's text (``"8/5 6/5"``), or "Current position" / "No double" / "Double, take" for cube rollouts."""
    board: tuple[int, ...]
    """The board the trials start from, seen from its side on roll (for a play: the opponent after it)."""
    root_on_roll: bool
    """Whether the root's side (the mover, or the side on roll of a position) is on roll in ``board``."""
    cube_lines: tuple[tuple[int, str], ...] = ()
    """Cubeful trials: the cube lines to follow, each ``(cube value, owner)`` with the owner ("centred", "me",
    "opponent") seen by the root side; every line shares the candidate's checker play and dice (none: cubeless)."""


def play_candidates(pos: Position, dice: Sequence[int] | str, plays: Sequence[str] | None, probs_fn: ProbsFn,
                    state: MatchState | None = None, filter: MoveFilter | None = None) -> list[Candidate]:
    """The plays to roll out: ``plays`` given as text, or those the hint's move filter keeps."""
    d = parse_dice(dice)
    chosen: list[Move]
    if plays:
        chosen = []
        for text in plays:
            move = pos.parse_move(text, d)
            if move not in chosen:
                chosen.append(move)
    else:
        f = filter or DEFAULT_FILTERS[0]
        ranked = rank_moves(probs_fn, pos, d, 0, filter=f, state=state)
        values = np.array([r.equity for r in ranked])
        chosen = [ranked[i].move for i in f.select(values)]
    out = []
    for m in chosen:
        assert m.after is not None
        out.append(Candidate(m.text or NO_PLAY, tuple(int(x) for x in m.after.swap_sides().board), False))
    return out


def position_candidate(pos: Position, label: str = "Current position") -> Candidate:
    """The position itself, its side on roll rolling first."""
    return Candidate(label, tuple(int(x) for x in pos.board), True)
