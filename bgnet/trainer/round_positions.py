"""The positions a round labels: sampled from the current net's self-play, or its best plays' afterstates.

Positions are seen from their side on roll and games that are over are left out;
each function's sample depends only on its seed, so a round's positions can be made
again.
"""

from __future__ import annotations

import numpy as np

from bgnet.core import _game_kernels as gk
from bgnet.core.protocols import ProbsFn
from bgnet.features.encoding import KINDS, position_kinds
from bgnet.sim.selfplay import SelfPlay
from bgnet.trainer.round_config import RoundsConfig, round_seed


def collect_positions(probs_fn: ProbsFn, n: int, seed: int, batch_games: int = 256,
                      exploration: float = 0.05) -> np.ndarray:
    """``n`` positions (each seen from its side on roll, games not over) sampled from self-play of ``probs_fn``."""
    play = SelfPlay(batch_games, seed=seed)
    rng = np.random.default_rng(seed)
    pools: list[np.ndarray] = []
    have = 0
    while have < 2 * n:  # play twice as many as needed, then sample: fewer positions from any one game
        for t in play.step(probs_fn, exploration):
            live = t.boards[gk.terminal_codes(np.ascontiguousarray(t.boards, np.int8)) == 0]
            pools.append(live)
            have += len(live)
    pool = np.concatenate(pools)
    return np.ascontiguousarray(pool[np.sort(rng.choice(len(pool), n, replace=False))], np.int8)


def candidate_positions(probs_fn: ProbsFn, boards: np.ndarray, k: int, n: int, seed: int,
                        grouped: bool = False) -> np.ndarray:
    """``n`` positions among the ``k`` best plays' afterstates (at 0-ply) of each board for a random roll.

    These are the positions between which a 0-ply move is chosen, each turned round so that its
    side on roll is the one about to reply; games that are over are left out. Sampled without
    replacement from all the candidates (all of them when there are fewer than ``n``); with
    ``grouped``, ``n // k`` boards' whole groups of ``k`` instead, best first and consecutive
    (boards with fewer than ``k`` such plays are left out).
    """
    from bgnet.core.movegen import generate_afterstates, swap_sides_batch
    from bgnet.core.probs import equities

    rng = np.random.default_rng(seed)
    dice = rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8)
    picked: list[np.ndarray] = []
    for lo in range(0, len(boards), 4096):
        after, offsets = generate_afterstates(boards[lo:lo + 4096], dice[lo:lo + 4096])
        replies = swap_sides_batch(after)
        live = gk.terminal_codes(replies) == 0
        mover = -equities(probs_fn(replies))  # the equity each play leaves its mover
        for i in range(len(offsets) - 1):
            a, b = offsets[i], offsets[i + 1]
            order = a + np.argsort(-mover[a:b], kind="stable")[:k]
            order = order[live[order]]
            if not grouped or len(order) == k:
                picked.append(replies[order])
    if grouped:
        chosen = np.sort(rng.choice(len(picked), min(n // k, len(picked)), replace=False))
        picked = [picked[i] for i in chosen]
    pool = np.concatenate(picked) if picked else np.zeros((0, 26), np.int8)
    if not grouped and len(pool) > n:
        pool = pool[np.sort(rng.choice(len(pool), n, replace=False))]
    return np.ascontiguousarray(pool, np.int8)


def collect_kind_positions(probs_fn: ProbsFn, n: int, seed: int, kind: str, batch_games: int = 256,
                           exploration: float = 0.05) -> np.ndarray:
    """``n`` self-play positions of one kind (``bgnet.features.encoding.KINDS``), from as many sampled positions as
    it takes."""
    code = KINDS.index(kind)
    found: list[np.ndarray] = []
    have, batch = 0, 0
    while have < n:
        boards = collect_positions(probs_fn, max(1000, 2 * (n - have)), seed + 7919 * batch, batch_games, exploration)
        boards = boards[position_kinds(boards) == code]
        found.append(boards)
        have += len(boards)
        batch += 1
    return np.ascontiguousarray(np.concatenate(found)[:n], np.int8)


def round_positions(fn: ProbsFn, cfg: RoundsConfig, r: int) -> np.ndarray:
    """The positions round ``r`` labels: self-play positions, or their best plays' afterstates (``cfg.candidates``)."""
    grouped = cfg.group_size > 1
    # whole groups need only positions // k boards (twice that, for those with fewer than k plays)
    n_boards = min(cfg.positions, 2 * (cfg.positions // cfg.candidates)) if grouped else cfg.positions
    boards = collect_positions(fn, n_boards, round_seed(cfg.seed, r, 0), cfg.batch_games, cfg.exploration)
    if cfg.candidates > 0:
        boards = candidate_positions(fn, boards, cfg.candidates, cfg.positions, round_seed(cfg.seed, r, 4), grouped)
    return boards


def round_kind_positions(fn: ProbsFn, cfg: RoundsConfig, r: int) -> np.ndarray:
    """The positions round ``r`` of a one-kind run (``cfg.kind``) labels: self-play positions of that kind."""
    return collect_kind_positions(fn, cfg.positions, round_seed(cfg.seed, r, 0), cfg.kind, cfg.batch_games,
                                  cfg.exploration)
