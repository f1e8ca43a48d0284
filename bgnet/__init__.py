"""bgnet: a backgammon neural-network bot and TD(lambda) self-play trainer.

    import bgnet
    pos = bgnet.Position.from_position_id("4HPwATDgc/ABMA")
    agent = bgnet.load_agent("default", ply=2)
    hints = agent.hint(pos, "31")          # ranked Move objects: hints.best.move
    agent.cube(pos, bgnet.MatchState(7, 2, 4)).decision.action

The library is built in layers, one folder each, lowest first; a module imports
only from its own folder and the ones below it (``tests/test_layers.py`` derives the
layers from the folders and checks every import; docs/ARCHITECTURE.md draws the graph):
``core`` (boards, moves, formats, rules of play), ``features`` (input feature sets),
``nets`` (evaluators: torch model, fast evaluator, pubeval, bear-off, ranker), ``cube``
(match state, MET, cube decisions), ``play`` (search, agents, hints, the game loop),
``io`` (match files), ``sim`` (self-play, duels, rollouts, backends), ``trainer``,
``app`` (typed requests and answers, analysis), and the front ends ``cli`` and ``serve``.

Names below are exported lazily: ``import bgnet`` stays fast, and the cube, hint and
agent modules load on first use. Modules that moved into the folders keep their old
dotted names for one version (``bgnet.match`` is ``bgnet.cube.match``), with a
``DeprecationWarning`` except for the documented ``bgnet.match``, ``bgnet.met`` and
``bgnet.movegen``.
"""

from __future__ import annotations

import sys
import warnings
from importlib import import_module
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from typing import TYPE_CHECKING, Any

from bgnet.core.kernel_cache import use_kernel_cache

use_kernel_cache()  # before any kernel is defined: numba caches them per version of the kernels' sources

from bgnet.core.errors import (AmbiguousMoveError, BgnetError, FormatError, IllegalMoveError, InvalidDiceError,
                          InvalidMoveError, InvalidPositionError)
from bgnet.core.movegen import generate_afterstates, legal_moves, parse_dice
from bgnet.core.notation import Move
from bgnet.core.position import BAR, OFF, STARTING_POSITION, Outcome, Position, Result
from bgnet.core.probs import Probs

LAYERS = ("core", "features", "nets", "cube", "play", "io", "sim", "trainer", "app", "cli", "serve")
"""The folders of ``bgnet``, lowest first: a module imports only from its own folder and the ones before it
(``cli`` and ``serve`` are the two front ends side by side; ``tests/test_layers.py`` checks this)."""

MOVED = {
    "bgnet.errors": "bgnet.core.errors",
    "bgnet.formats": "bgnet.core.formats",
    "bgnet.probs": "bgnet.core.probs",
    "bgnet.notation": "bgnet.core.notation",
    "bgnet._movegen_kernels": "bgnet.core._movegen_kernels",
    "bgnet.movegen": "bgnet.core.movegen",
    "bgnet.position": "bgnet.core.position",
    "bgnet.render": "bgnet.core.render",
    "bgnet.rules": "bgnet.core.rules",
    "bgnet._game_kernels": "bgnet.core._game_kernels",
    "bgnet.protocols": "bgnet.core.protocols",
    "bgnet.resources": "bgnet.core.resources",
    "bgnet.blas": "bgnet.core.blas",
    "bgnet.encoding": "bgnet.features.encoding",
    "bgnet.encoding_torch": "bgnet.features.encoding_torch",
    "bgnet.model": "bgnet.nets.model",
    "bgnet._net_kernels": "bgnet.nets._net_kernels",
    "bgnet.fastnet": "bgnet.nets.fastnet",
    "bgnet.pubeval": "bgnet.nets.pubeval",
    "bgnet.bearoff": "bgnet.nets.bearoff",
    "bgnet.ranker": "bgnet.nets.ranker",
    "bgnet.match": "bgnet.cube.match",
    "bgnet.met": "bgnet.cube.met",
    "bgnet._cube_kernels": "bgnet.cube._cube_kernels",
    "bgnet.search": "bgnet.play.search",
    "bgnet.game": "bgnet.play.game",
    "bgnet.hint": "bgnet.play.hint",
    "bgnet.scorers": "bgnet.play.scorers",
    "bgnet.agents": "bgnet.play.agents",
    "bgnet.matchfile": "bgnet.io.matchfile",
    "bgnet.selfplay": "bgnet.sim.selfplay",
    "bgnet.duel_stats": "bgnet.sim.duel_stats",
    "bgnet.duel": "bgnet.sim.duel",
    "bgnet.backends": "bgnet.sim.backends",
    "bgnet._rollout_kernels": "bgnet.sim._rollout_kernels",
    "bgnet.rollout": "bgnet.sim.rollout",
    "bgnet.evaluation.tournament": "bgnet.sim.tournament",
    "bgnet.evaluation.runner": "bgnet.sim.runner",
    "bgnet.evaluation.games": "bgnet.sim.recorded_games",
    "bgnet.evaluation.curve": "bgnet.sim.curve",
    "bgnet.td": "bgnet.trainer.td",
    "bgnet.learner": "bgnet.trainer.learner",
    "bgnet.answers": "bgnet.app.answers",
    "bgnet.analysis": "bgnet.app.analysis",
    "bgnet.analyze_cli": "bgnet.cli.analyze",
    "bgnet.rollout_cli": "bgnet.cli.rollout",
    "bgnet.evaluation.cli": "bgnet.cli.eval"
}
"""Module names before the layer folders -> where each module lives now; the old names still import for one
version."""
QUIET_MOVES = frozenset({"bgnet.match", "bgnet.met", "bgnet.movegen"})
"""Old names that documented contracts use (``from bgnet.match import MatchState``): they import without a warning."""


class _MovedModuleLoader(Loader):
    """Loads an old module name as the module that now holds it (the same object, not a copy)."""

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        old = module.__name__
        if old not in QUIET_MOVES:
            warnings.warn(f"{old} moved to {MOVED[old]}; the old name goes in the next version",
                          DeprecationWarning, stacklevel=2)
        sys.modules[old] = import_module(MOVED[old])


class _MovedModuleFinder(MetaPathFinder):
    """Finds the old dotted names of moved modules (see ``MOVED``)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        return ModuleSpec(fullname, _MovedModuleLoader()) if fullname in MOVED else None


if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModuleFinder())

if TYPE_CHECKING:
    from bgnet.play.agents import AgentSpecError, BaseAgent, NoProbabilitiesError, load_agent
    from bgnet.cube.decision import CubeDecision, InvalidProbsError, cube_decision
    from bgnet.play.game import GameRuleError
    from bgnet.play.hint import CubeHint, HintError, MoveHint, MoveHints
    from bgnet.cube.match import CubeRules, InvalidCubeRulesError, InvalidMatchStateError, MatchState
    from bgnet.cube.met import InvalidMETError
    from bgnet.core.protocols import Agent, Evaluator
    from bgnet.core.movegen_torch import generate_afterstates_torch
    from bgnet.sim.backends import BackendError
    from bgnet.nets.bearoff import BearoffError
    from bgnet.app.requests import RequestError
    from bgnet.cli.parser import CliError
    from bgnet.cli.eval import EvalUsageError
    from bgnet.sim.curve import CurveError
    from bgnet.io.record import MatchFileError
    from bgnet.nets.model import CheckpointError
    from bgnet.nets.ranker import RankerError
    from bgnet.nets.pruning import PruningError
    from bgnet.nets.companion import CompanionError
    from bgnet.sim.rollout_settings import RolloutError
    from bgnet.nets.pubeval import PubevalInputError
    from bgnet.play.search import SearchError
    from bgnet.serve.engine import ApiError, ServeConfigError
    from bgnet.trainer.config import ConfigError
    from bgnet.play.agents import AgentPlayError
    from bgnet.trainer.learner import FitError
    from bgnet.trainer.round_config import RoundsError
    from bgnet.trainer.distill import DistillError
    from bgnet.trainer.td import TDTargetError
    from bgnet.sim.selfplay import SelfPlayStateError
    from bgnet.sim.duel_luck import DuelLuckError
    from bgnet.nets.bf16net import Bf16NetError
    from bgnet.features.v2_fused import FusedFeaturesError
    from bgnet.nets.bearoff_fused import FusedBearoffError
    from bgnet.core.device_kernels import DeviceKernelsError

_LAZY = {
    "load_agent": "bgnet.play.agents", "BaseAgent": "bgnet.play.agents", "AgentSpecError": "bgnet.play.agents",
    "NoProbabilitiesError": "bgnet.play.agents",
    "Agent": "bgnet.core.protocols", "Evaluator": "bgnet.core.protocols",
    "MatchState": "bgnet.cube.match", "InvalidMatchStateError": "bgnet.cube.match",
    "CubeRules": "bgnet.cube.match", "InvalidCubeRulesError": "bgnet.cube.match",
    "cube_decision": "bgnet.cube.decision", "CubeDecision": "bgnet.cube.decision", "InvalidProbsError": "bgnet.cube.decision",
    "InvalidMETError": "bgnet.cube.met",
    "GameRuleError": "bgnet.play.game",
    "MoveHints": "bgnet.play.hint", "MoveHint": "bgnet.play.hint", "CubeHint": "bgnet.play.hint", "HintError": "bgnet.play.hint",
    "SearchError": "bgnet.play.search",
    "CheckpointError": "bgnet.nets.model", "PubevalInputError": "bgnet.nets.pubeval", "BearoffError": "bgnet.nets.bearoff",
    "BackendError": "bgnet.sim.backends", "ConfigError": "bgnet.trainer.config", "CliError": "bgnet.cli.parser",
    "EvalUsageError": "bgnet.cli.eval", "CurveError": "bgnet.sim.curve", "ApiError": "bgnet.serve.engine",
    "ServeConfigError": "bgnet.serve.engine", "RequestError": "bgnet.app.requests",
    "MatchFileError": "bgnet.io.record", "RolloutError": "bgnet.sim.rollout_settings", "RankerError": "bgnet.nets.ranker",
    "AgentPlayError": "bgnet.play.agents", "FitError": "bgnet.trainer.learner", "RoundsError": "bgnet.trainer.round_config",
    "TDTargetError": "bgnet.trainer.td", "SelfPlayStateError": "bgnet.sim.selfplay",
    "GameNotOverError": "bgnet.core.errors", "NotAnEvaluatorError": "bgnet.core.errors",
    "ProbsShapeError": "bgnet.core.errors", "FeatureVersionError": "bgnet.features.registry",
    "ModelError": "bgnet.nets.model", "NumpyNetError": "bgnet.nets.fastnet", "PubevalWeightsError": "bgnet.nets.pubeval",
    "PruningError": "bgnet.nets.pruning", "CompanionError": "bgnet.nets.companion", "DistillError": "bgnet.trainer.distill",
    "DuelSpecError": "bgnet.sim.runner", "DuelLuckError": "bgnet.sim.duel_luck", "Bf16NetError": "bgnet.nets.bf16net",
    "EncodeOutputError": "bgnet.features.registry", "FusedFeaturesError": "bgnet.features.v2_fused",
    "FusedBearoffError": "bgnet.nets.bearoff_fused", "DeviceKernelsError": "bgnet.core.device_kernels",
    "generate_afterstates_torch": "bgnet.core.movegen_torch",
}
"""Exported names that live in heavier modules: name -> module, imported on first access."""

ERROR_CLASSES = ("BgnetError", "AmbiguousMoveError", "FormatError", "IllegalMoveError", "InvalidDiceError",
                 "InvalidMoveError", "InvalidPositionError", "AgentSpecError", "NoProbabilitiesError",
                 "InvalidMatchStateError", "InvalidCubeRulesError", "InvalidProbsError", "InvalidMETError",
                 "GameRuleError", "HintError",
                 "SearchError", "CheckpointError", "PubevalInputError", "BearoffError", "BackendError", "ConfigError",
                 "CliError", "EvalUsageError", "CurveError", "ApiError", "ServeConfigError", "RequestError",
                 "MatchFileError", "RolloutError", "RankerError", "AgentPlayError", "FitError", "RoundsError",
                 "TDTargetError", "SelfPlayStateError", "GameNotOverError", "NotAnEvaluatorError", "ProbsShapeError", "FeatureVersionError",
                 "ModelError", "NumpyNetError", "PubevalWeightsError", "PruningError", "CompanionError",
                 "DistillError", "DuelSpecError", "DuelLuckError", "Bf16NetError", "EncodeOutputError",
                 "FusedFeaturesError", "FusedBearoffError", "DeviceKernelsError")
"""Every error class a library user meets, all subclasses of ``BgnetError`` (itself a ``ValueError``)."""

__all__ = [
    "BAR", "OFF", "STARTING_POSITION", "Agent", "BaseAgent", "CubeDecision", "CubeRules", "CubeHint", "Evaluator",
    "MatchState",
    "Move", "MoveHint", "MoveHints", "Outcome", "Position", "Probs", "Result", "cube_decision",
    "generate_afterstates", "generate_afterstates_torch", "legal_moves", "load_agent", "parse_dice", *ERROR_CLASSES,
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
