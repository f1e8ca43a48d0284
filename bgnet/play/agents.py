"""Players behind one protocol (``bgnet.core.protocols.Agent``): neural nets at n-ply, pubeval, random, GNU Backgammon.

``load_agent(spec)`` understands ``random``, ``pubeval``, a checkpoint path with an
optional ``@ply`` (``checkpoints/bgnet.pt@2``), ``default`` (the shipped net) and
``gnubg[@ply]`` (needs the optional ``gnubg-nn`` package). ``BaseAgent`` gives
every ability of the protocol a default, so a new player only writes what it
does differently:

    agent = bgnet.load_agent("default", ply=2)
    agent.hint(pos, "31").best.move      # a Move
    agent.cube(pos, MatchState(7, 2, 4)).decision.action
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from bgnet.nets.bearoff import DatabaseEvaluator, with_database
from bgnet.core.errors import BgnetError
from bgnet.cube.match import MatchState
from bgnet.core.movegen import afterstate_boards, legal_moves, parse_dice
from bgnet.core.notation import Move
from bgnet.core.position import Position
from bgnet.core.probs import Probs
from bgnet.core.protocols import Agent, Answer, BatchScorer, Evaluator, as_evaluator
from bgnet.core.resources import default_checkpoint
from bgnet.play.search import MAX_PLY, check_ply

if TYPE_CHECKING:
    from bgnet.play.hint import CubeHint, MoveHints

__all__ = ["DEFAULT_CHECKPOINT", "Agent", "AgentSpecError", "BaseAgent", "GnubgAgent", "NeuralAgent",
           "NoProbabilitiesError", "PubevalAgent", "RandomAgent", "load_agent"]

DEFAULT_CHECKPOINT = default_checkpoint()
"""The released net (packaged in a wheel, or ``checkpoints/bgnet.pt`` in the repository)."""


class AgentSpecError(BgnetError):
    """An agent specification that names no known player."""


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
        """Takes, passes or beavers as ``bgnet.cube.decision`` says for its own chances (always takes without an evaluator)."""
        if self.evaluator is None:
            return "take"
        from bgnet.cube.decision import cube_action

        response = cube_action(self.evaluate(pos, state), state, pos)[1]
        return "pass" if response == "pass" else "beaver" if response == "beaver" else "take"

    def offers_raccoon(self, pos: Position, state: MatchState) -> bool:
        """Raccoons while its own chances say it is still the favourite after the take (positive double/take equity)."""
        if self.evaluator is None:
            return False
        from bgnet.cube.decision import cube_decision

        dt = cube_decision(self.evaluate(pos), state, pos).equity_double_take
        return dt is not None and dt > 0.0

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


class NeuralAgent(BaseAgent):
    """A bgnet checkpoint, searching ``ply`` plies deep (0 = the net alone); pure bear-offs come from the database.

    ``evaluator`` is the net behind ``bgnet.nets.bearoff.with_database``: exact chances for
    every pure bear-off (at any ply, since the search stops there), the net's elsewhere.
    """

    def __init__(self, path: str | Path = DEFAULT_CHECKPOINT, ply: int = 0) -> None:
        from bgnet.nets.fastnet import load_evaluator

        self.path = str(path)
        self.ply = check_ply(ply)
        self.net = load_evaluator(path)  # no torch import: see bgnet.nets.fastnet; nets by kind when the file has them
        self._exact: DatabaseEvaluator = with_database(self.net)
        self.evaluator = self._exact
        self.name = f"{self.path}@{ply}"

    @property
    def probs_fn(self) -> DatabaseEvaluator:
        """0-ply probabilities (N, 5) of boards, each for its side on roll, as a function (``evaluator`` itself)."""
        return self._exact

    def batch_scorer(self) -> BatchScorer:
        """0-ply: the evaluator on every play; n-ply: ``SearchScorer`` (cubeless money ranking, all games at once)."""
        if self.ply != 0:
            from bgnet.play.search import SearchScorer

            return SearchScorer(self._exact, self.ply)
        from bgnet.play.scorers import NeuralScorer

        return NeuralScorer(self._exact)


class PubevalAgent(BaseAgent):
    """Tesauro's pubeval: moves only; never doubles and always takes (it has no probabilities)."""

    name = "pubeval"

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        """The play pubeval scores highest (race or contact weights from the position)."""
        from bgnet.nets.pubeval import pubeval_scores

        moves = legal_moves(pos, dice)
        return moves[int(np.argmax(pubeval_scores(afterstate_boards(moves), race=pos.is_race())))]

    def batch_scorer(self) -> BatchScorer:
        """``PubevalScorer``."""
        from bgnet.play.scorers import PubevalScorer

        return PubevalScorer()


class RandomAgent(BaseAgent):
    """Uniformly random legal plays (seeded); never doubles, always takes."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.seed = seed

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        """A uniformly random legal play."""
        moves = legal_moves(pos, dice)
        return moves[int(self.rng.integers(len(moves)))]

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:
        """An even game, whatever the position."""
        return Probs(0.5, 0.0, 0.0, 0.0, 0.0)

    def batch_scorer(self) -> BatchScorer:
        """``RandomScorer`` (its choices do not depend on how games are batched)."""
        from bgnet.play.scorers import RandomScorer

        return RandomScorer(self.seed)


class _GnubgEvaluator:
    """GNU Backgammon's probabilities through ``gnubg_nn`` (exact for finished games)."""

    def __init__(self, gnubg: Any, ply: int) -> None:
        self.gnubg = gnubg
        self.ply = ply

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        from bgnet.core import _game_kernels as gk

        boards = np.ascontiguousarray(boards, np.int8)
        out = np.zeros((len(boards), 5), np.float32)
        codes = gk.terminal_codes(boards)
        for i, row in enumerate(boards):
            if codes[i] == 0:
                nr, r = Position._trusted(tuple(int(x) for x in row)).boards()
                out[i] = self.gnubg.probabilities([list(nr), list(r)], self.ply)
        gk.apply_terminal(codes, out)
        return out


class GnubgAgent(BaseAgent):
    """GNU Backgammon's neural nets through the optional ``gnubg-nn`` package (its own search depth)."""

    def __init__(self, ply: int = 0) -> None:
        try:
            import gnubg_nn
        except ImportError:
            raise AgentSpecError("agent 'gnubg' needs the optional gnubg-nn package (pip install 'bgnet[ref]')") from None
        self.gnubg = gnubg_nn
        self.ply = check_ply(ply)  # gnubg's own depth: its probabilities and plays are already this deep
        self.evaluator = _GnubgEvaluator(gnubg_nn, ply)
        self.name = f"gnubg@{ply}"

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:
        """gnubg's chances at its own depth (no bgnet search on top)."""
        row = self._needs_evaluator("evaluations").probs_of_boards(np.array([pos.board], np.int8))[0]
        return Probs(*map(float, row))

    def probs_fn(self, boards: np.ndarray) -> np.ndarray:
        """gnubg's probabilities (N, 5) for boards, each for its side on roll."""
        return as_evaluator(self._needs_evaluator("probabilities")).probs_of_boards(boards)

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        """gnubg's own cubeless choice (``state`` is not passed on: gnubg-nn ranks plays cubeless)."""
        d1, d2 = parse_dice(dice)
        moves = legal_moves(pos, (d1, d2))
        if moves[0].is_empty:
            return moves[0]
        not_on_roll, on_roll = pos.boards()
        pairs = self.gnubg.best_move([list(not_on_roll), list(on_roll)], d1, d2, self.ply)
        from bgnet.core.notation import apply_pairs

        after = apply_pairs(pos, [(int(a), int(b)) for a, b in pairs])
        for m in moves:
            if m.after == after:
                return m
        raise RuntimeError(f"gnubg's play {pairs} for {d1}{d2} in {pos.position_id()} is not among bgnet's legal plays")

    def batch_scorer(self) -> BatchScorer:
        """``NeuralScorer`` over gnubg's probabilities."""
        from bgnet.play.scorers import NeuralScorer

        return NeuralScorer(self._needs_evaluator("plays"))


def load_agent(spec: str = "default", ply: int | None = None, seed: int = 0) -> BaseAgent:
    """The player named by ``spec``; ``ply`` overrides an ``@ply`` suffix."""
    name, _, suffix = spec.strip().partition("@")
    if suffix:
        if not suffix.isdigit() or int(suffix) > MAX_PLY:
            raise AgentSpecError(f"agent {spec!r}: the ply after '@' must be from 0 to {MAX_PLY}")
        ply = int(suffix) if ply is None else ply
    ply = 0 if ply is None else ply
    try:
        check_ply(ply)
    except BgnetError:
        raise AgentSpecError(f"agent {spec!r}: ply must be from 0 to {MAX_PLY}") from None
    lowered = name.lower()
    if lowered == "random":
        return RandomAgent(seed)
    if lowered == "pubeval":
        return PubevalAgent()
    if lowered == "gnubg":
        return GnubgAgent(ply)
    if lowered in ("default", "bgnet", ""):
        return NeuralAgent(DEFAULT_CHECKPOINT, ply)
    if not Path(name).exists():
        raise AgentSpecError(f"agent {spec!r} is not random, pubeval, gnubg or an existing checkpoint file")
    return NeuralAgent(name, ply)


def _conforms(agent: BaseAgent) -> Agent:
    """Type check only: every BaseAgent is an ``Agent``."""
    return agent
