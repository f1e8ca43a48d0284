"""Players behind one protocol: neural nets at n-ply, pubeval, random, and GNU Backgammon when installed.

``load_agent(spec)`` understands ``random``, ``pubeval``, a checkpoint path with an
optional ``@ply`` (``checkpoints/bgnet.pt@2``), ``default`` (the shipped net) and
``gnubg[@ply]`` (needs the optional ``gnubg-nn`` package).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from bgnet.match import MatchState
from bgnet.movegen import _after_boards, legal_moves, parse_dice
from bgnet.notation import Move
from bgnet.position import Position
from bgnet.probs import Probs
from bgnet.resources import default_checkpoint

DEFAULT_CHECKPOINT = default_checkpoint()
"""The released net (packaged in a wheel, or ``checkpoints/bgnet.pt`` in the repository)."""


class AgentSpecError(ValueError):
    """An agent specification that names no known player."""


class Agent(Protocol):
    """A backgammon player."""

    name: str

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        """The play for ``dice`` (the empty move when none is legal); ``state`` makes it match-aware."""
        ...

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:
        """Cubeless chances for the side on roll (``state`` steers the plays inside a search)."""
        ...

    def offers_double(self, pos: Position, state: MatchState) -> bool:
        """Whether to double (the side on roll, before rolling)."""
        ...

    def cube_response(self, pos: Position, state: MatchState) -> str:
        """Answer to a double by the side on roll in ``pos``: "take", "pass" or "beaver"."""
        ...

    def batch_scorer(self):
        """A ``bgnet.duel.BatchScorer`` for vectorised play, or None when the agent has none."""
        ...


class _CubeByProbs:
    """Cube actions from the agent's own probabilities through ``bgnet.cube``."""

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:  # pragma: no cover - overridden
        raise NotImplementedError

    def offers_double(self, pos: Position, state: MatchState) -> bool:
        from bgnet.cube import cube_decision

        if not state.may_double:
            return False
        return cube_decision(self.evaluate(pos, state), state, pos).action.startswith("double")

    def cube_response(self, pos: Position, state: MatchState) -> str:
        from bgnet.cube import cube_decision

        response = cube_decision(self.evaluate(pos, state), state, pos).response
        return response or "take"


class NeuralAgent(_CubeByProbs):
    """A bgnet checkpoint, searching ``ply`` plies deep (0 = the net alone)."""

    def __init__(self, path: str | Path = DEFAULT_CHECKPOINT, ply: int = 0) -> None:
        from bgnet.fastnet import load_numpy_net

        self.path = str(path)
        self.ply = ply
        self.net = load_numpy_net(path)  # no torch import: see bgnet.fastnet
        self.name = f"{self.path}@{ply}"

    def probs_fn(self, boards: np.ndarray) -> np.ndarray:
        """0-ply probabilities (N, 5) for boards, each for its side on roll."""
        return self.net.probs_of_boards(boards)

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        from bgnet.search import best_move

        return best_move(self.probs_fn, pos, parse_dice(dice), self.ply, state=state)

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:
        from bgnet.search import evaluate_position

        return evaluate_position(self.probs_fn, pos, self.ply, state=state)

    def batch_scorer(self):
        """0-ply: the net on every play; n-ply: ``SearchScorer`` (cubeless money ranking, all games at once)."""
        if self.ply != 0:
            from bgnet.search import SearchScorer

            return SearchScorer(self.probs_fn, self.ply)
        from bgnet.duel import NeuralScorer

        return NeuralScorer(self.probs_fn)


class PubevalAgent:
    """Tesauro's pubeval: moves only; never doubles and always takes (it has no probabilities)."""

    name = "pubeval"

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        from bgnet.pubeval import pubeval_scores

        moves = legal_moves(pos, dice)
        after = _after_boards(moves)
        return moves[int(np.argmax(pubeval_scores(after, race=pos.is_race())))]

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:
        raise NotImplementedError("pubeval scores plays but gives no probabilities")

    def offers_double(self, pos: Position, state: MatchState) -> bool:
        return False

    def cube_response(self, pos: Position, state: MatchState) -> str:
        return "take"

    def batch_scorer(self):
        from bgnet.duel import PubevalScorer

        return PubevalScorer()


class RandomAgent:
    """Uniformly random legal plays (seeded); never doubles, always takes."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.seed = seed

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        moves = legal_moves(pos, dice)
        return moves[int(self.rng.integers(len(moves)))]

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:
        return Probs(0.5, 0.0, 0.0, 0.0, 0.0)

    def offers_double(self, pos: Position, state: MatchState) -> bool:
        return False

    def cube_response(self, pos: Position, state: MatchState) -> str:
        return "take"

    def batch_scorer(self):
        from bgnet.duel import RandomScorer

        return RandomScorer(self.seed)


class GnubgAgent(_CubeByProbs):
    """GNU Backgammon's neural nets through the optional ``gnubg-nn`` package (evaluation only)."""

    def __init__(self, ply: int = 0) -> None:
        try:
            import gnubg_nn
        except ImportError:
            raise AgentSpecError("agent 'gnubg' needs the optional gnubg-nn package (pip install 'bgnet[ref]')") from None
        self.gnubg = gnubg_nn
        self.ply = ply
        self.name = f"gnubg@{ply}"

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        """gnubg's own cubeless choice (``state`` is not passed on: gnubg-nn ranks plays cubeless)."""
        d1, d2 = parse_dice(dice)
        moves = legal_moves(pos, (d1, d2))
        if moves[0].is_empty:
            return moves[0]
        not_on_roll, on_roll = pos.boards()
        pairs = self.gnubg.best_move([list(not_on_roll), list(on_roll)], d1, d2, self.ply)
        from bgnet.notation import apply_pairs

        after = apply_pairs(pos, [(int(a), int(b)) for a, b in pairs])
        for m in moves:
            if m.after == after:
                return m
        raise RuntimeError(f"gnubg's play {pairs} for {d1}{d2} in {pos.position_id()} is not among bgnet's legal plays")

    def probs_fn(self, boards: np.ndarray) -> np.ndarray:
        """gnubg's probabilities (N, 5) for boards, each for its side on roll."""
        from bgnet import _game_kernels as gk

        out = np.empty((len(boards), 5), np.float32)
        codes = gk.terminal_codes(np.ascontiguousarray(boards, np.int8))
        for i, row in enumerate(boards):
            if codes[i] == 0:
                nr, r = Position._trusted(tuple(int(x) for x in row)).boards()
                out[i] = self.gnubg.probabilities([list(nr), list(r)], self.ply)
        gk.apply_terminal(codes, out)
        return out

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:
        return Probs(*map(float, self.probs_fn(np.array([pos.board], np.int8))[0]))

    def batch_scorer(self):
        from bgnet.duel import NeuralScorer

        return NeuralScorer(self.probs_fn)


def load_agent(spec: str, ply: int | None = None, seed: int = 0) -> Agent:
    """The player named by ``spec``; ``ply`` overrides an ``@ply`` suffix."""
    name, _, suffix = spec.strip().partition("@")
    if suffix:
        if not suffix.isdigit() or int(suffix) > 3:
            raise AgentSpecError(f"agent {spec!r}: the ply after '@' must be 0, 1, 2 or 3")
        ply = int(suffix) if ply is None else ply
    ply = 0 if ply is None else ply
    if ply < 0 or ply > 3:
        raise AgentSpecError(f"agent {spec!r}: ply must be 0, 1, 2 or 3")
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
