"""bgnet: a backgammon neural-network bot and TD(lambda) self-play trainer.

    import bgnet
    pos = bgnet.Position.from_position_id("4HPwATDgc/ABMA")
    agent = bgnet.load_agent("default", ply=2)
    hints = agent.hint(pos, "31")          # ranked Move objects: hints.best.move
    agent.cube(pos, bgnet.MatchState(7, 2, 4)).decision.action

The library is built in layers, lowest first; a module imports only from layers
below it (``tests/test_layers.py`` checks every import against this order):

1. **engine**: errors, the text formats (Position ID, Match ID, XGID), move
   notation, move generation, the position, game end and the opening roll,
   probabilities, features, nets (torch and numpy), pubeval and bear-off
   databases. Boards, moves and five probabilities; no cube, no score.
2. **cube and match logic**: match state, match equity tables, cube decisions,
   the game state machine, and n-ply search (it ranks plays by equity at the
   match score, so it sits on the match layer).
3. **coach**: batch scorers, vectorised self-play, TD targets, the learner,
   duels and their statistics, rollouts, the trainer and the evaluator.
4. **front ends**: agents (players behind one protocol), hints, match files and
   analysis, the terminal game, the web server, the ``bgnet`` command.

``bgnet.protocols`` (the ``Evaluator`` and ``Agent`` roles) sits in the engine so
that every layer can name them. Names below are exported lazily: ``import bgnet``
stays fast, and the cube, hint and agent modules load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from bgnet.errors import (AmbiguousMoveError, BgnetError, FormatError, IllegalMoveError, InvalidDiceError,
                          InvalidMoveError, InvalidPositionError)
from bgnet.movegen import generate_afterstates, legal_moves, parse_dice
from bgnet.notation import Move
from bgnet.position import BAR, OFF, STARTING_POSITION, Outcome, Position, Result
from bgnet.probs import Probs

if TYPE_CHECKING:
    from bgnet.agents import AgentSpecError, BaseAgent, NoProbabilitiesError, load_agent
    from bgnet.cube import CubeDecision, InvalidProbsError, cube_decision
    from bgnet.game import GameRuleError
    from bgnet.hint import CubeHint, HintError, MoveHint, MoveHints
    from bgnet.match import InvalidMatchStateError, MatchState
    from bgnet.met import InvalidMETError
    from bgnet.protocols import Agent, Evaluator
    from bgnet.backends import BackendError
    from bgnet.bearoff import BearoffError
    from bgnet.cli import CliError
    from bgnet.evaluation.cli import EvalUsageError
    from bgnet.evaluation.curve import CurveError
    from bgnet.matchfile import MatchFileError
    from bgnet.model import CheckpointError
    from bgnet.ranker import RankerError
    from bgnet.rollout import RolloutError
    from bgnet.pubeval import PubevalInputError
    from bgnet.search import SearchError
    from bgnet.serve.engine import ApiError
    from bgnet.trainer.config import ConfigError

_LAZY = {
    "load_agent": "bgnet.agents", "BaseAgent": "bgnet.agents", "AgentSpecError": "bgnet.agents",
    "NoProbabilitiesError": "bgnet.agents",
    "Agent": "bgnet.protocols", "Evaluator": "bgnet.protocols",
    "MatchState": "bgnet.match", "InvalidMatchStateError": "bgnet.match",
    "cube_decision": "bgnet.cube", "CubeDecision": "bgnet.cube", "InvalidProbsError": "bgnet.cube",
    "InvalidMETError": "bgnet.met",
    "GameRuleError": "bgnet.game",
    "MoveHints": "bgnet.hint", "MoveHint": "bgnet.hint", "CubeHint": "bgnet.hint", "HintError": "bgnet.hint",
    "SearchError": "bgnet.search",
    "CheckpointError": "bgnet.model", "PubevalInputError": "bgnet.pubeval", "BearoffError": "bgnet.bearoff",
    "BackendError": "bgnet.backends", "ConfigError": "bgnet.trainer.config", "CliError": "bgnet.cli",
    "EvalUsageError": "bgnet.evaluation.cli", "CurveError": "bgnet.evaluation.curve", "ApiError": "bgnet.serve.engine",
    "MatchFileError": "bgnet.matchfile", "RolloutError": "bgnet.rollout", "RankerError": "bgnet.ranker",
}
"""Exported names that live in heavier modules: name -> module, imported on first access."""

ERROR_CLASSES = ("BgnetError", "AmbiguousMoveError", "FormatError", "IllegalMoveError", "InvalidDiceError",
                 "InvalidMoveError", "InvalidPositionError", "AgentSpecError", "NoProbabilitiesError",
                 "InvalidMatchStateError", "InvalidProbsError", "InvalidMETError", "GameRuleError", "HintError",
                 "SearchError", "CheckpointError", "PubevalInputError", "BearoffError", "BackendError", "ConfigError",
                 "CliError", "EvalUsageError", "CurveError", "ApiError", "MatchFileError", "RolloutError",
                 "RankerError")
"""Every error class a library user meets, all subclasses of ``BgnetError`` (itself a ``ValueError``)."""

__all__ = [
    "BAR", "OFF", "STARTING_POSITION", "Agent", "BaseAgent", "CubeDecision", "CubeHint", "Evaluator", "MatchState",
    "Move", "MoveHint", "MoveHints", "Outcome", "Position", "Probs", "Result", "cube_decision",
    "generate_afterstates", "legal_moves", "load_agent", "parse_dice", *ERROR_CLASSES,
]


def __getattr__(name: str) -> Any:
    """Load a lazily exported name (see ``_LAZY``)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'bgnet' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
