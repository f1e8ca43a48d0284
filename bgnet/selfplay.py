"""Vectorised self-play: B games held in arrays, one batched move generation and one evaluation per step.

Each ``SelfPlay.step`` rolls dice for every game (the opening roll for a new game
follows the rules: never a double), generates every candidate afterstate of every
game in one kernel call, turns them round so the opponent is on roll, scores them
all with one call of ``probs_fn`` (one forward pass), picks each game's best play
by segment argmax (with optional epsilon exploration), and restarts finished games
at once so the batch stays full. Finished games come back as trajectories: plain
numpy arrays, so the learner can live in another process (DESIGN.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from bgnet import _game_kernels as gk
from bgnet import _movegen_kernels as mk
from bgnet.probs import equities
from bgnet.movegen import _SCRATCH, generate_plays_parallel
from bgnet.position import STARTING_POSITION

ProbsFn = Callable[[np.ndarray], np.ndarray]
"""Maps boards (N, 26) int8 to (N, 5) float32 probabilities for each board's side on roll."""

START_BOARD = np.array(STARTING_POSITION.board, dtype=np.int8)


@dataclass
class Trajectory:
    """One finished game: the positions after each play (each seen from its side on roll),
    the values the net gave them during play, and the result for the side that won."""

    boards: np.ndarray
    values: np.ndarray
    result: int


def roll_dice(rng: np.random.Generator, n: int, opening: np.ndarray) -> np.ndarray:
    """Dice (n, 2) int8; rows marked ``opening`` get two different dice (the opening roll)."""
    dice = rng.integers(1, 7, size=(n, 2), dtype=np.int8)
    if opening.any():
        k = int(opening.sum())
        first = rng.integers(1, 7, size=k, dtype=np.int8)
        shift = rng.integers(1, 6, size=k, dtype=np.int8)
        dice[opening, 0] = first
        dice[opening, 1] = (first - 1 + shift) % 6 + 1
    return dice


def score_candidates(cand: np.ndarray, probs_fn: ProbsFn) -> np.ndarray:
    """Probabilities (N, 5) for candidate boards (opponent on roll), exact for finished games."""
    probs = np.ascontiguousarray(probs_fn(cand), dtype=np.float32)
    gk.apply_terminal(gk.terminal_codes(cand), probs)
    return probs


class SelfPlay:
    """B concurrent self-play games with their in-progress trajectories."""

    def __init__(self, n_games: int, seed: int, max_plies: int = 600, threads: int = 1) -> None:
        self.n_games = n_games
        self.threads = threads
        self.max_plies = max_plies
        self.rng = np.random.default_rng(seed)
        self.boards = np.tile(START_BOARD, (n_games, 1))
        self.plies = np.zeros(n_games, np.int64)
        self.traj_boards = np.zeros((n_games, max_plies, 26), np.int8)
        self.traj_values = np.zeros((n_games, max_plies, 5), np.float32)

    def step(self, probs_fn: ProbsFn, exploration: float = 0.0) -> list[Trajectory]:
        """Play one ply in every game; returns the games that finished."""
        n = self.n_games
        dice = roll_dice(self.rng, n, self.plies == 0)
        if self.threads > 1:
            after, _steps, _ns, offsets = generate_plays_parallel(self.boards, dice, self.threads)
        else:
            after, _steps, _ns, offsets = mk.gen_batch(self.boards, dice, *_SCRATCH)
        cand = mk.swap_sides_batch(after)
        probs = score_candidates(cand, probs_fn)
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
        rows = np.arange(n)
        ply = self.plies
        self.traj_boards[rows, ply] = chosen
        self.traj_values[rows, ply] = chosen_probs
        self.plies = ply + 1
        finished: list[Trajectory] = []
        done = (codes != 0) | (self.plies >= self.max_plies)
        for g in np.flatnonzero(done):
            length = int(self.plies[g])
            if codes[g] != 0:  # the game was won by the side that just played
                finished.append(Trajectory(self.traj_boards[g, :length - 1].copy(),
                                           self.traj_values[g, :length - 1].copy(), int(-codes[g])))
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
            raise ValueError(f"saved self-play state holds {boards.shape[0]} games; this run has {self.n_games}")
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
