"""What every player can do by default (``BaseAgent``), so a new kind of player writes only what it does differently.

``bgnet.core.protocols.Agent`` declares the abilities; ``BaseAgent`` gives each a
default from the player's ``evaluator`` at its ``ply``, or the plain answers of a
player without probabilities. The players themselves and ``load_agent`` are in
``bgnet.play.agents``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from bgnet.core.errors import BgnetError
from bgnet.core.movegen import parse_dice
from bgnet.core.notation import Move
from bgnet.core.position import Position
from bgnet.core.probs import Probs
from bgnet.core.protocols import Agent, Answer, BatchScorer, Evaluator
from bgnet.cube.match import MatchState

if TYPE_CHECKING:
    from bgnet.play.hint import CubeHint, MoveHints

__all__ = ["BaseAgent", "NoProbabilitiesError"]


class NoProbabilitiesError(BgnetError):
    """A request for probabilities (an evaluation, a hint) from a player that gives none."""


class BaseAgent:
    """Defaults for every ability of ``Agent``: plays by its evaluator at ``ply``, cube actions from it.

    Without an evaluator (``evaluator = None``) the agent never doubles, always
    takes, never raccoons and refuses evaluations and hints; subclasses override
    ``choose_move`` and ``batch_scorer`` as they need.
    """

    name: str = "agent"
    ply: int = 0
    evaluator: Evaluator | None = None

    def _needs_evaluator(self, what: str) -> Evaluator:
        if self.evaluator is None:
            raise NoProbabilitiesError(f"{self.name} gives no probabilities, so it cannot give {what}")
        return self.evaluator

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        """The best play at ``ply`` by the evaluator (match-aware with ``state``)."""
        from bgnet.play.search import best_move

        return best_move(self._needs_evaluator("plays"), pos, parse_dice(dice), self.ply, state=state)

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:
        """Cubeless chances for the side on roll at ``ply`` (``state`` steers the plays inside the search)."""
        from bgnet.play.search import evaluate_position

        return evaluate_position(self._needs_evaluator("evaluations"), pos, self.ply, state=state)

    def offers_double(self, pos: Position, state: MatchState) -> bool:
        """Doubles when ``bgnet.cube.decision`` says so for its own chances (never without an evaluator)."""
        if self.evaluator is None or not state.may_double:
            return False
        from bgnet.cube.decision import cube_action

        return cube_action(self.evaluate(pos, state), state, pos)[0].startswith("double")

    def cube_response(self, pos: Position, state: MatchState) -> Answer:
        """Takes, passes or beavers as ``bgnet.cube.decision`` says for its own chances (always takes without an
        evaluator)."""
        if self.evaluator is None:
            return "take"
        from bgnet.cube.decision import cube_action

        response = cube_action(self.evaluate(pos, state), state, pos)[1]
        return "pass" if response == "pass" else "beaver" if response == "beaver" else "take"

    def offers_raccoon(self, pos: Position, state: MatchState) -> bool:
        """Raccoons while its own chances say it is still the favourite after the take (positive double/take equity)."""
        if self.evaluator is None:
            return False
        from bgnet.cube.decision import raccoons

        return raccoons(self.evaluate(pos), state, pos)

    def batch_scorer(self) -> BatchScorer | None:
        """None: play table by table."""
        return None

    def cube_evaluator(self) -> Evaluator | None:
        """The evaluator at 0 ply (its probabilities are then the agent's cube view); None when it searches deeper."""
        return self.evaluator if self.ply == 0 else None

    def hint(self, pos: Position, dice: Sequence[int] | str, *, state: MatchState | None = None,
             top: int | None = None, cubeful: bool = False) -> MoveHints:
        """The plays of ``dice`` ranked best first at ``ply`` (see ``bgnet.play.hint.move_hint``)."""
        from bgnet.play.hint import move_hint

        return move_hint(self._needs_evaluator("hints"), pos, dice, ply=self.ply, state=state, top=top,
                         cubeful=cubeful)

    def cube(self, pos: Position, state: MatchState | None = None) -> CubeHint:
        """The cube decision of the side on roll at ``ply`` (see ``bgnet.play.hint.cube_hint``)."""
        from bgnet.play.hint import cube_hint

        return cube_hint(self._needs_evaluator("cube hints"), pos, state, ply=self.ply)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def _conforms(agent: BaseAgent) -> Agent:
    """Type check only: every BaseAgent is an ``Agent``."""
    return agent
