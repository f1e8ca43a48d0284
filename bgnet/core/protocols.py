"""The roles every player module shares: ``Evaluator`` (boards to five probabilities, batched) and ``Agent``.

One protocol per role, low in the stack, so that the game loop, duels, search,
hints, the terminal game, the evaluator CLI and the trainer all speak the same
language:

* an ``Evaluator`` maps boards (N, 26) int8, each seen from its side on roll, to
  (N, 5) probabilities (win, win gammon, win backgammon, lose gammon, lose
  backgammon) for that side: a net, gnubg's nets, a bear-off database. Library
  functions also take a plain function of that shape (``ProbsFn``) and turn it
  into an Evaluator with ``as_evaluator``;
* a ``BatchScorer`` scores candidate plays of many games at once (duels);
* an ``Agent`` is a player. Its optional abilities are declared, not probed:
  ``evaluator`` is None when the agent gives no probabilities (pubeval, random),
  ``batch_scorer()`` and ``cube_evaluator()`` return None when it cannot play in
  batches, and ``offers_raccoon`` is always there (False for most players).
  ``bgnet.play.agents.BaseAgent`` gives every default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Literal, Protocol, Sequence, runtime_checkable

import numpy as np

from bgnet.core.errors import NotAnEvaluatorError
from bgnet.core.notation import Move
from bgnet.core.position import Position
from bgnet.core.probs import Probs

if TYPE_CHECKING:  # types only: these modules sit higher in the stack
    from bgnet.play.hint import CubeHint, MoveHints
    from bgnet.cube.match import MatchState

ProbsFn = Callable[[np.ndarray], np.ndarray]
"""A plain function from boards (N, 26) int8 to (N, 5) probabilities, each for its board's side on roll."""

Answer = Literal["take", "pass", "beaver"]
"""The answers to a double."""

CubeAction = Literal["no double", "double, take", "double, pass", "too good"]
"""The proper cube action of the side on roll (``bgnet.cube.decision.CubeDecision.action``)."""


@runtime_checkable
class Evaluator(Protocol):
    """Cubeless chances of many positions in one call."""

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float probabilities for boards (N, 26) int8, each for its side on roll."""
        ...


class FunctionEvaluator:
    """An Evaluator around a plain ``ProbsFn``."""

    def __init__(self, fn: ProbsFn) -> None:
        self.fn = fn

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """The wrapped function's probabilities."""
        return self.fn(boards)

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        return self.fn(boards)


EvaluatorLike = Evaluator | ProbsFn
"""What the library's functions accept where they need probabilities."""


def as_evaluator(source: EvaluatorLike) -> Evaluator:
    """``source`` as an Evaluator: itself when it is one, else a ``FunctionEvaluator`` around the function."""
    if isinstance(source, Evaluator):
        return source
    owner = getattr(source, "__self__", None)
    if getattr(source, "__name__", None) == "probs_of_boards" and isinstance(owner, Evaluator):
        return owner  # ``net.probs_of_boards`` is ``net``: keeps what the evaluator is (e.g. a bear-off database)
    if callable(source):
        return FunctionEvaluator(source)
    raise NotAnEvaluatorError(f"{source!r} is neither an Evaluator (probs_of_boards) nor a function of boards")


class BatchScorer(Protocol):
    """Scores candidate plays of many games at once: higher is better for the mover."""

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Scores (N,) for afterstates ``after`` (N, 26) seen from the mover; game i's plays are
        ``offsets[i]:offsets[i + 1]`` and its position before the roll is ``before[i]``."""
        ...


class Agent(Protocol):
    """A backgammon player: moves, cube actions, and (when it has probabilities) evaluations and hints."""

    name: str
    """How the agent is named in reports (``default@2``, ``pubeval``)."""
    ply: int
    """Search depth of its plays and evaluations (0 for players that do not search)."""
    evaluator: Evaluator | None
    """Its 0-ply probabilities, or None when the agent gives none."""

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        """The play for ``dice`` (the empty move when none is legal); ``state`` makes it match-aware."""
        ...

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:
        """Cubeless chances for the side on roll at ``ply`` (``NoProbabilitiesError`` without an evaluator)."""
        ...

    def offers_double(self, pos: Position, state: MatchState) -> bool:
        """Whether to double (the side on roll, before rolling)."""
        ...

    def cube_response(self, pos: Position, state: MatchState) -> Answer:
        """Answer to a double by the side on roll in ``pos``."""
        ...

    def offers_raccoon(self, pos: Position, state: MatchState) -> bool:
        """After its double was beavered: whether to redouble at once (``state`` as when it doubled)."""
        ...

    def batch_scorer(self) -> BatchScorer | None:
        """A scorer that plays many games at once, or None."""
        ...

    def cube_evaluator(self) -> Evaluator | None:
        """Batched probabilities whose cube decisions are this agent's own, or None (then ask per position)."""
        ...

    def hint(self, pos: Position, dice: Sequence[int] | str, *, state: MatchState | None = None,
             top: int | None = None, cubeful: bool = False) -> MoveHints:
        """The plays of ``dice`` ranked best first (``NoProbabilitiesError`` without an evaluator)."""
        ...

    def cube(self, pos: Position, state: MatchState | None = None) -> CubeHint:
        """The cube decision of the side on roll (``NoProbabilitiesError`` without an evaluator)."""
        ...
