"""Ranked move hints and cube hints, as data (JSON-ready dataclasses) and as GNU Backgammon-like text.

``move_hint`` ranks every play of a roll with ``bgnet.play.search.rank_moves`` at the
chosen ply and match score; ``cube_hint`` feeds the n-ply evaluation of a position
to ``bgnet.cube.decision.cube_decision``. Both take an evaluator (``bgnet.core.protocols``: an
object with ``probs_of_boards`` or a plain function of boards), so this module
needs no torch: the caller loads the net. ``agent.hint`` and ``agent.cube`` call
them with the agent's own evaluator and depth. Hints hold ``Move`` objects; text
appears only in ``format()`` and ``to_dict()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from bgnet.cube.decision import CubeDecision, cube_decision, rules_dict, rules_text
from bgnet.play.cube_search import searched_decision
from bgnet.core.errors import BgnetError
from bgnet.cube.match import MatchState
from bgnet.core.movegen import high_first, parse_dice, roll_text
from bgnet.core.notation import Move
from bgnet.core.position import Position
from bgnet.core.probs import PROB_NAMES, Probs
from bgnet.core.protocols import EvaluatorLike, ProbsFn, as_evaluator
from bgnet.nets.pruning import PrunedEvaluator
from bgnet.play.search import MoveFilter, evaluate_position, match_winning_chance, mwc_to_equity, rank_moves

__all__ = ["PROB_NAMES", "CubeHint", "HintError", "MoveHint", "MoveHints", "ProbsFn", "cube_hint", "cubeful_after",
           "move_hint", "probs_dict"]


class HintError(BgnetError):
    """A hint request that cannot be answered (for example a non-positive --top)."""


def probs_dict(probs: Probs) -> dict[str, float]:
    """Five probabilities keyed by name, for JSON (``Probs.to_dict``)."""
    return probs.to_dict()


@dataclass(frozen=True)
class MoveHint:
    """One ranked play, evaluated for the side that makes it."""

    rank: int
    """1 for the best play."""
    move: Move
    """The play (from ``legal_moves``: it carries its afterstate and hit marks; empty when nothing can be played)."""
    equity: float
    """The ranking equity for the mover: cubeless (or cubeful when asked), money points per game
    (per unit of the current cube) or gnubg's normalised equity at the match score."""
    diff: float
    """``equity`` minus the best play's equity (0 for the best, negative below it)."""
    probs: Probs
    """The mover's chances after this play."""
    ply: int
    """The depth this play was searched to (plays cut by the move filter stay shallower)."""
    mwc: float | None
    """Match winning chance after this play, cubeless or cubeful like ``equity`` (None in money play)."""
    cubeless_equity: float
    """The cubeless equity (the same as ``equity`` unless the hint is cubeful)."""

    @property
    def text(self) -> str:
        """The play in gnubg notation, with hit marks (empty when nothing can be played)."""
        return self.move.text

    @property
    def position_id(self) -> str:
        """Position ID of the afterstate, still seen from the mover."""
        assert self.move.after is not None, "hints hold plays from legal_moves, which carry their afterstates"
        return self.move.after.position_id()

    @property
    def position_id_opponent_on_roll(self) -> str:
        """Position ID of the afterstate with the opponent on roll, as GNU Backgammon shows the position next."""
        assert self.move.after is not None, "hints hold plays from legal_moves, which carry their afterstates"
        return self.move.after.swap_sides().position_id()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the play as text with its afterstate's Position IDs (from the mover, and with the
        opponent on roll), the figures, the probabilities."""
        return {"rank": self.rank, "move": self.text, "position_id": self.position_id,
                "position_id_opponent_on_roll": self.position_id_opponent_on_roll, "equity": self.equity,
                "diff": self.diff, "probs": self.probs.to_dict(), "ply": self.ply, "mwc": self.mwc,
                "cubeless_equity": self.cubeless_equity}


@dataclass(frozen=True)
class MoveHints:
    """The ranked plays of one roll in one position."""

    position_id: str
    dice: tuple[int, int]
    """The roll, higher die first."""
    ply: int
    state: MatchState | None
    """The match score and cube (None for plain money play)."""
    legal_plays: int
    """How many distinct legal plays the roll has (``moves`` may hold fewer with ``top``)."""
    moves: tuple[MoveHint, ...]
    cubeful: bool = False
    """Whether ``equity`` is cubeful (the opponent's best cube action after each play, Janowski's model)."""
    pruned: int = 0
    """How many replies of each roll the search valued (``bgnet.nets.pruning``); 0 when it valued every one (a
    net without a pruning net, ``--no-prune``, or 0 ply)."""

    @property
    def best(self) -> MoveHint:
        """The top-ranked play."""
        return self.moves[0]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``moves`` ranked best first, each with move, position_id, equity and probs."""
        return {
            "position_id": self.position_id,
            "dice": list(self.dice),
            "ply": self.ply,
            "match": None if self.state is None else self.state.to_dict(),
            "rules": None if self.state is None else rules_dict(self.state),
            "equity": ("cubeful " if self.cubeful else "cubeless ")
                      + ("money" if self.state is None or self.state.is_money else "normalised at the match score"),
            "legal_plays": self.legal_plays,
            "pruned": self.pruned,
            "moves": [m.to_dict() for m in self.moves],
        }

    def format(self) -> str:
        """Text in the style of GNU Backgammon's hint list."""
        where = "money game" if self.state is None else str(self.state)
        lines = [f"Position ID {self.position_id}, dice {roll_text(self.dice)}, {where}: "
                 f"{self.legal_plays} legal play{'s' if self.legal_plays != 1 else ''}, {self._kind} {self.ply}-ply"
                 + (f", pruned to {self.pruned} replies a roll" if self.pruned else "")]
        if self.state is not None:
            lines.append(f"Rules assumed: {rules_text(self.state)}")
        width = max(len(m.text or "(no play)") for m in self.moves)
        for m in self.moves:
            diff = "" if m.rank == 1 else f" ({m.diff:+.3f})"
            mwc = "" if m.mwc is None else f"  MWC {100 * m.mwc:.2f}%"
            lines.append(f"{m.rank:5d}. {self._kind.capitalize()} {m.ply}-ply  {m.text or '(no play)':<{width}}  "
                         f"Eq.: {m.equity:+.3f}{diff}{mwc}")
            lines.append(f"       {m.probs.line()}")
        return "\n".join(lines)

    @property
    def _kind(self) -> str:
        return "cubeful" if self.cubeful else "cubeless"


@dataclass(frozen=True)
class CubeHint:
    """The cube decision of the side on roll, from an n-ply evaluation of the position."""

    position_id: str
    ply: int
    decision: CubeDecision

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with the decision's fields nested under ``decision`` (its ``match`` and ``rules`` also
        at the top, as in every answer)."""
        decision = self.decision.to_dict()
        return {"position_id": self.position_id, "ply": self.ply, "match": decision["match"],
                "rules": decision["rules"], "action": self.decision.action, "decision": decision}

    def format(self) -> str:
        """GNU Backgammon-style cube analysis, naming the evaluation depth."""
        return f"Position ID {self.position_id}, cubeless evaluation at {self.ply}-ply\n" + self.decision.format()


def cubeful_after(probs: Probs, after: Position, state: MatchState) -> tuple[float, float | None]:
    """Cubeful (equity, MWC) for the mover of a play with cubeless chances ``probs`` and afterstate ``after``.

    The opponent, on roll next, takes his best cube action (``bgnet.cube.decision``): no
    double, or a double answered the mover's best way. Equity as ``equity_at_score``
    (money: units of the current cube); MWC None in money play.
    """
    d = cube_decision(probs.flip(), state.swap_sides(), after.swap_sides())
    if d.equity_double_take is None or d.equity_double_pass is None:
        theirs, their_mwc = d.equity_no_double, d.mwc_no_double
    else:
        if d.response == "beaver":
            doubled, doubled_mwc = 2.0 * d.equity_double_take, d.mwc_double_take
        elif d.response == "pass":
            doubled, doubled_mwc = d.equity_double_pass, d.mwc_double_pass
        else:
            doubled, doubled_mwc = d.equity_double_take, d.mwc_double_take
        if doubled > d.equity_no_double:
            theirs, their_mwc = doubled, doubled_mwc
        else:
            theirs, their_mwc = d.equity_no_double, d.mwc_no_double
    if state.is_money:
        return -theirs, None
    assert their_mwc is not None
    mwc = 1.0 - their_mwc
    return mwc_to_equity(mwc, state), mwc


def pruned_replies(evaluator: EvaluatorLike) -> int:
    """How many replies of each roll a search with ``evaluator`` values: its pruning net's ``keep``, or 0 (every one)."""
    ev = as_evaluator(evaluator)
    return ev.keep if isinstance(ev, PrunedEvaluator) else 0


def move_hint(evaluator: EvaluatorLike, pos: Position, dice: Sequence[int] | str, *, ply: int = 0,
              state: MatchState | None = None, top: int | None = None,
              filter: MoveFilter | Sequence[MoveFilter] | None = None, cubeful: bool = False) -> MoveHints:
    """The plays of ``dice`` ranked best first at ``ply`` plies and ``state``'s score (``top`` keeps the best n).

    ``cubeful`` ranks the searched plays by cubeful equity (the opponent's cube
    action after each play) instead of cubeless equity.
    """
    if top is not None and top < 1:
        raise HintError(f"--top must be at least 1, got {top}")
    d = high_first(parse_dice(dice))
    ranked = rank_moves(evaluator, pos, d, ply, filter=filter, state=state)
    match = state is not None and not state.is_money
    rows = []
    for r in ranked:
        assert r.move.after is not None
        mwc = match_winning_chance(r.probs, state) if match and state is not None else None
        equity = r.equity
        if cubeful:
            equity, mwc = cubeful_after(r.probs, r.move.after, state or MatchState())
        rows.append((r, equity, mwc))
    if cubeful:  # deeper plays first, as in rank_moves, then by cubeful equity
        rows.sort(key=lambda row: (-row[0].ply, -row[1]))
    best = rows[0][1]
    hints = tuple(
        MoveHint(rank=i, move=r.move, equity=equity,
                 diff=equity - best, probs=r.probs, ply=r.ply, mwc=mwc, cubeless_equity=r.equity)
        for i, (r, equity, mwc) in enumerate(rows[:top] if top is not None else rows, start=1)
        if r.move.after is not None)
    return MoveHints(position_id=pos.position_id(), dice=d, ply=ply, state=state, legal_plays=len(ranked),
                     moves=hints, cubeful=cubeful, pruned=pruned_replies(evaluator) if ply > 0 else 0)


def cube_hint(evaluator: EvaluatorLike, pos: Position, state: MatchState | None = None, *, ply: int = 0) -> CubeHint:
    """The cube action for the side on roll at ``ply`` plies and ``state`` (default: money, centred cube).

    From 2 plies "no double" is valued one exchange ahead (``bgnet.play.cube_search.searched_decision``,
    docs/CUBE.md), as GNU Backgammon's cubeful search does; below that, Janowski's model
    on the ``ply``-ply chances.
    """
    state = MatchState() if state is None else state
    if ply >= 2:
        return CubeHint(position_id=pos.position_id(), ply=ply, decision=searched_decision(evaluator, pos, state, ply))
    probs = evaluate_position(evaluator, pos, ply, state=state)
    return CubeHint(position_id=pos.position_id(), ply=ply, decision=cube_decision(probs, state, pos))
