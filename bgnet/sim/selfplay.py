"""Vectorised self-play: B games held in arrays, one batched move generation and one evaluation per step.

Each ``SelfPlay.step`` rolls dice for every game (the opening roll for a new game
follows the rules: never a double), generates every candidate afterstate of every
game in one kernel call, turns them round so the opponent is on roll, scores them
all with one call of the evaluator (one forward pass), picks each game's best play
by segment argmax (with optional epsilon exploration), and restarts finished games
at once so the batch stays full. Finished games come back as trajectories: plain
numpy arrays, so the learner can live in another process (docs/SCALING.md).

With ``bearoff`` (the default) the candidates are scored through the bear-off
database (``bgnet.nets.bearoff.with_database``) and a game stops as soon as a play
leaves a pure bear-off: its last position is then that board, valued exactly, and
its ``result`` is 0 (see ``Trajectory``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from bgnet.core import _game_kernels as gk
from bgnet.core.errors import BgnetError
from bgnet.nets.bearoff import is_bearoff, with_database
from bgnet.core.movegen import generate_plays, generate_plays_parallel, swap_sides_batch
from bgnet.core.position import STARTING_POSITION
from bgnet.core.probs import equities
from bgnet.core.protocols import EvaluatorLike, ProbsFn, as_evaluator
from bgnet.core.rules import other_opening_die
from bgnet.play.search import leaf_probs

__all__ = ["START_BOARD", "ProbsFn", "SelfPlay", "Trajectory", "roll_dice"]

START_BOARD = STARTING_POSITION.array()
"""The opening board (26,) int8, seen from the first mover."""



class SelfPlayStateError(BgnetError):
    """A saved self-play state that does not fit this run (another number of games)."""

@dataclass
class Trajectory:
    """One finished game: the positions after each play (each seen from its side on roll),
    the values the net gave them during play, and how it ended.

    ``result`` 1, 2 or 3: the side on roll at the last position made the winning play,
    worth that many points. ``result`` 0: the game stopped at the bear-off database;
    the last position is the pure bear-off the last play left and ``values[-1]`` are
    its exact chances for its side on roll (the game's exact outcome).
    """

    boards: np.ndarray
    values: np.ndarray
    result: int

    def outcome(self) -> np.ndarray:
        """The five probabilities (5,) float32 of the outcome for the side on roll at the last position."""
        if self.result == 0:
            return np.asarray(self.values[-1], np.float32).copy()
        return np.array([1.0, float(self.result >= 2), float(self.result >= 3), 0.0, 0.0], np.float32)


def roll_dice(rng: np.random.Generator, n: int, opening: np.ndarray) -> np.ndarray:
    """Dice (n, 2) int8; rows marked ``opening`` get two different dice (the opening roll)."""
    dice = rng.integers(1, 7, size=(n, 2), dtype=np.int8)
    if opening.any():
        k = int(opening.sum())
        first = rng.integers(1, 7, size=k, dtype=np.int8)
        shift = rng.integers(1, 6, size=k, dtype=np.int8)
        dice[opening, 0] = first
        dice[opening, 1] = other_opening_die(first, shift)
    return dice


class SelfPlay:
    """B concurrent self-play games with their in-progress trajectories."""

    def __init__(self, n_games: int, seed: int, max_plies: int = 600, threads: int = 1, bearoff: bool = True,
                 dice: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        self.n_games = n_games
        self.dice = dice  # opening mask (n,) -> dice (n, 2) when set (tests feed two engines the same rolls)
        self.bearoff = bearoff  # stop games at the bear-off database (exact outcome) instead of playing them out
        self.threads = threads
        self.max_plies = max_plies
        self.rng = np.random.default_rng(seed)
        self.boards = np.tile(START_BOARD, (n_games, 1))
        self.plies = np.zeros(n_games, np.int64)
        self.traj_boards = np.zeros((n_games, max_plies, 26), np.int8)
        self.traj_values = np.zeros((n_games, max_plies, 5), np.float32)

    def step(self, evaluator: EvaluatorLike, exploration: float = 0.0) -> list[Trajectory]:
        """Play one ply in every game; returns the games that finished."""
        ev = with_database(evaluator) if self.bearoff else as_evaluator(evaluator)
        n = self.n_games
        opening = self.plies == 0
        dice = roll_dice(self.rng, n, opening) if self.dice is None else np.asarray(self.dice(opening), np.int8)
        if self.threads > 1:
            after, _steps, _ns, offsets = generate_plays_parallel(self.boards, dice, self.threads)
        else:
            after, _steps, _ns, offsets = generate_plays(self.boards, dice)
        cand = swap_sides_batch(after)
        probs = leaf_probs(ev, cand)
        mover_equity = -equities(probs)
        choice = gk.segment_argmax(mover_equity, offsets)
        if exploration > 0.0:
            explore = self.rng.random(n) < exploration
            if explore.any():
                counts = np.diff(offsets)
                pick = offsets[:-1] + (self.rng.random(n) * counts).astype(np.int64)
                choice = np.where(explore, pick, choice)
        chosen = cand[choice]
        chosen_probs = probs[choice]
        codes = gk.terminal_codes(chosen)
        stopped = (codes == 0) & is_bearoff(chosen) if self.bearoff else np.zeros(n, np.bool_)
        rows = np.arange(n)
        ply = self.plies
        self.traj_boards[rows, ply] = chosen
        self.traj_values[rows, ply] = chosen_probs
        self.plies = ply + 1
        finished: list[Trajectory] = []
        done = (codes != 0) | stopped | (self.plies >= self.max_plies)
        for g in np.flatnonzero(done):
            length = int(self.plies[g])
            if codes[g] != 0:  # the game was won by the side that just played
                finished.append(Trajectory(self.traj_boards[g, :length - 1].copy(),
                                           self.traj_values[g, :length - 1].copy(), int(-codes[g])))
            elif stopped[g]:  # a pure bear-off: its exact chances (already in traj_values) end the game
                finished.append(Trajectory(self.traj_boards[g, :length].copy(),
                                           self.traj_values[g, :length].copy(), 0))
        chosen[done] = START_BOARD
        self.plies[done] = 0
        self.boards = chosen
        return finished

    # -- resume -----------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue the same games (numpy arrays and plain types)."""
        top = int(self.plies.max()) if self.n_games else 0
        return {
            "rng": _encode_rng(self.rng),
            "boards": self.boards.copy(),
            "plies": self.plies.copy(),
            "traj_boards": self.traj_boards[:, :top].copy(),
            "traj_values": self.traj_values[:, :top].copy(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state_dict()`` output."""
        boards = np.asarray(state["boards"], np.int8)
        if boards.shape != (self.n_games, 26):
            raise SelfPlayStateError(f"saved self-play state holds {boards.shape[0]} games; this run has {self.n_games}")
        self.rng = _decode_rng(state["rng"])
        self.boards = boards.copy()
        self.plies = np.asarray(state["plies"], np.int64).copy()
        top = np.asarray(state["traj_boards"]).shape[1]
        self.traj_boards[:, :top] = np.asarray(state["traj_boards"], np.int8)
        self.traj_values[:, :top] = np.asarray(state["traj_values"], np.float32)


def _encode_rng(rng: np.random.Generator) -> dict[str, Any]:
    """A numpy Generator's state as strings and ints (safe for ``weights_only`` loading)."""
    st = rng.bit_generator.state
    return {"bit_generator": st["bit_generator"], "state": str(st["state"]["state"]),
            "inc": str(st["state"]["inc"]), "has_uint32": int(st["has_uint32"]), "uinteger": int(st["uinteger"])}


def _decode_rng(data: dict[str, Any]) -> np.random.Generator:
    rng = np.random.default_rng()
    rng.bit_generator.state = {"bit_generator": data["bit_generator"],
                               "state": {"state": int(data["state"]), "inc": int(data["inc"])},
                               "has_uint32": int(data["has_uint32"]), "uinteger": int(data["uinteger"])}
    return rng
