"""Cubeless money duels between two batch scorers, with paired (duplicate) dice.

Every dice sequence is played twice, once with A moving first and once with B,
so luck largely cancels within a pair; the 95% interval is computed from the
per-pair means. All games of a duel advance together: one move generation per
step for every live game, and each agent scores all its candidates in one call.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Protocol

import numpy as np

from bgnet import _game_kernels as gk
from bgnet import _movegen_kernels as mk
from bgnet.encoding import race_flags
from bgnet.model import equities
from bgnet.movegen import _SCRATCH
from bgnet.selfplay import START_BOARD, ProbsFn


class BatchScorer(Protocol):
    """Scores candidate plays: higher is better for the mover."""

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Scores (N,) for afterstates ``after`` (N, 26) seen from the mover; game i's plays are
        ``offsets[i]:offsets[i + 1]`` and its position before the roll is ``before[i]``."""
        ...


class NeuralScorer:
    """0-ply neural scoring: the mover's cubeless equity of each afterstate (exact when the game ends)."""

    def __init__(self, probs_fn: ProbsFn) -> None:
        self.probs_fn = probs_fn

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        from bgnet.selfplay import score_candidates

        cand = mk.swap_sides_batch(after)
        return -equities(score_candidates(cand, self.probs_fn))


class PubevalScorer:
    """Tesauro's pubeval, with race or contact weights chosen from the position before the move."""

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        from bgnet.pubeval import pubeval_scores

        race = np.repeat(race_flags(before), np.diff(offsets))
        return pubeval_scores(after, race=race)


class RandomScorer:
    """Uniformly random play (seeded)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        return self.rng.random(after.shape[0])


@dataclass
class DuelResult:
    """Outcome of a paired duel, all figures for A."""

    games: int
    ppg: float
    ci95: float
    win_rate: float
    gammon_rate: float
    backgammon_rate: float
    points: list[int]

    def summary(self) -> dict[str, float | int]:
        d = asdict(self)
        d.pop("points")
        return d


def dice_streams(seed: int, n_streams: int, max_plies: int) -> np.ndarray:
    """Dice (n_streams, max_plies, 2); ply 0 of every stream is an opening roll (two different dice)."""
    rng = np.random.default_rng(seed)
    dice = rng.integers(1, 7, size=(n_streams, max_plies, 2), dtype=np.int8)
    first = dice[:, 0, 0]
    shift = rng.integers(1, 6, size=n_streams, dtype=np.int8)
    dice[:, 0, 1] = (first - 1 + shift) % 6 + 1
    return dice


def play_games(scorers: tuple[BatchScorer, BatchScorer], dice: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Play one game per dice stream; ``first[g]`` (0 or 1) is the scorer that moves first in game g.

    Returns the signed result for scorer 0 of each game (+-1, 2, 3 points).
    """
    n_games, max_plies, _ = dice.shape
    boards = np.tile(START_BOARD, (n_games, 1))
    result = np.zeros(n_games, np.int64)
    live = np.ones(n_games, bool)
    for ply in range(max_plies):
        idx = np.flatnonzero(live)
        if idx.size == 0:
            break
        on_roll = (first[idx] + ply) % 2
        after, _s, _n, offsets = mk.gen_batch(boards[idx], dice[idx, ply], *_SCRATCH)
        scores = np.empty(after.shape[0])
        counts = np.diff(offsets)
        for side in (0, 1):
            sel = on_roll == side
            if not sel.any():
                continue
            rows = np.repeat(sel, counts)
            sub_off = np.concatenate(([0], np.cumsum(counts[sel])))
            scores[rows] = scorers[side].score_plays(boards[idx[sel]], after[rows], sub_off)
        choice = gk.segment_argmax(scores, offsets)
        chosen = after[choice]
        codes = gk.terminal_codes(chosen)  # seen from the mover: > 0 when the mover just won
        over = codes != 0
        sign = np.where(on_roll == 0, 1, -1)
        result[idx[over]] = sign[over] * codes[over]
        live[idx[over]] = False
        boards[idx] = mk.swap_sides_batch(chosen)
    return result


def paired_duel(a: BatchScorer, b: BatchScorer, n_pairs: int, seed: int, max_plies: int = 600) -> DuelResult:
    """Play ``n_pairs`` dice streams twice (A first, then B first) and summarise A's results."""
    dice = dice_streams(seed, n_pairs, max_plies)
    both = np.concatenate([dice, dice])
    first = np.concatenate([np.zeros(n_pairs, np.int64), np.ones(n_pairs, np.int64)])
    points = play_games((a, b), both, first)
    return summarise(points, n_pairs)


def summarise(points: np.ndarray, n_pairs: int) -> DuelResult:
    """Summary of results for A where game i and game i + n_pairs share dice."""
    points = np.asarray(points, np.int64)
    n = len(points)
    pair_means = (points[:n_pairs] + points[n_pairs:2 * n_pairs]) / 2.0 if n_pairs else np.zeros(0)
    ci = 1.96 * pair_means.std(ddof=1) / math.sqrt(n_pairs) if n_pairs > 1 else float("inf")
    finished = points != 0
    return DuelResult(
        games=n,
        ppg=float(points.mean()) if n else 0.0,
        ci95=float(ci),
        win_rate=float((points > 0).mean()) if n else 0.0,
        gammon_rate=float((np.abs(points[finished]) >= 2).mean()) if finished.any() else 0.0,
        backgammon_rate=float((np.abs(points[finished]) >= 3).mean()) if finished.any() else 0.0,
        points=points.tolist(),
    )
