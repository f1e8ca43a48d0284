"""Fit ``bgnet.nets.ranker``'s play ranker to a net (``python -m bgnet.trainer.ranker``, see ``bgnet.cli.ranker``).

Positions come from the net's own 0-ply self-play from the opening. For each
position and each of the 21 rolls, pubeval's best ``window`` plays are valued by
the net (the mover's cubeless equity); the ranker's weights are the least-squares
fit of those equities within each roll's plays (each roll's mean removed, since only
the order within a roll matters). The fit is printed with its held-out agreement:
how often the ranker's top play is the net's best play of the roll.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numba import njit

from bgnet.nets import ranker as rk
from bgnet.nets.pruning import load_exact_evaluator
from bgnet.core.movegen import generate_plays, swap_sides_batch
from bgnet.core.position import Position
from bgnet.core.probs import equities
from bgnet.core.protocols import ProbsFn
from bgnet.core.race import race_scan
from bgnet.core.resources import default_checkpoint
from bgnet.sim.rollout_play import pubeval_top

ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], np.int8)
_N_TABLE = 2 * 24 * 31
N_WEIGHTS = _N_TABLE + 4 + rk.N_CONTACT


def _mover_equity(probs_fn: ProbsFn, after: np.ndarray) -> np.ndarray:
    """Cubeless equity of the side that made each afterstate (mover's view rows)."""
    return -equities(np.asarray(probs_fn(swap_sides_batch(after)), np.float64))  # the opponent on roll


def self_play_positions(probs_fn: ProbsFn, games: int, seed: int) -> np.ndarray:
    """Every position (side on roll's view) of ``games`` 0-ply self-play games from the opening."""
    rng = np.random.default_rng(seed)
    boards = np.repeat(np.array(Position.start().board, np.int8)[None, :], games, axis=0)
    seen = []
    while len(boards):
        seen.append(boards.copy())
        dice = rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8)
        after, _s, _n, off = generate_plays(boards, dice)
        eq = _mover_equity(probs_fn, after)
        best = np.array([lo + int(np.argmax(eq[lo:hi])) for lo, hi in zip(off[:-1], off[1:])], np.int64)
        boards = swap_sides_batch(after[best])
        alive = (boards > 0).any(axis=1) & (boards < 0).any(axis=1)
        boards = boards[alive]
    return np.ascontiguousarray(np.concatenate(seen))


def roll_plays(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every play of every board and roll: (mover-view afterstates, offsets per (board, roll))."""
    n = len(boards)
    after, _s, _n, off = generate_plays(np.repeat(boards, len(ROLLS), axis=0), np.tile(ROLLS, (n, 1)))
    return after, off


@njit(cache=True)
def _design_row(row, idx, val, xs):  # type: ignore[no-untyped-def]
    """Non-zero columns of one afterstate's design row (0 for a finished game)."""
    in_play, race = race_scan(row)
    if in_play == 0:
        return 0
    v = 0 if race else 1
    for block in range(24):
        idx[block] = (v * 24 + block) * 31 + row[24 - block] + 15
        val[block] = 1.0
    idx[24] = _N_TABLE + 2 * v
    val[24] = (-row[0]) / 2.0
    idx[25] = _N_TABLE + 2 * v + 1
    val[25] = (15 - in_play) / 15.0
    m = 26
    if not race:
        rk.contact_features(row, xs)
        for k in range(xs.shape[0]):
            idx[m] = _N_TABLE + 4 + k
            val[m] = xs[k]
            m += 1
    return m


@njit(cache=True)
def _normal_equations(after, off, y, nw):  # type: ignore[no-untyped-def]
    """X'X and X'y of the within-segment (demeaned) least squares."""
    a = np.zeros((nw, nw))
    b = np.zeros(nw)
    s = np.zeros(nw)
    nz = np.zeros(nw, np.int64)
    mark = np.zeros(nw, np.bool_)
    idx = np.zeros(64, np.int64)
    val = np.zeros(64)
    xs = np.zeros(rk.N_CONTACT)
    for g in range(off.shape[0] - 1):
        lo, hi = off[g], off[g + 1]
        cnt = 0
        ybar = 0.0
        nn = 0
        for j in range(lo, hi):
            m = _design_row(after[j], idx, val, xs)
            if m == 0:
                continue
            cnt += 1
            ybar += y[j]
            for q in range(m):
                f = idx[q]
                if not mark[f]:
                    mark[f] = True
                    nz[nn] = f
                    nn += 1
                s[f] += val[q]
        if cnt >= 2:
            ybar /= cnt
            for j in range(lo, hi):
                m = _design_row(after[j], idx, val, xs)
                if m == 0:
                    continue
                yy = y[j] - ybar
                for q in range(m):
                    b[idx[q]] += val[q] * yy
                    for r in range(m):
                        a[idx[q], idx[r]] += val[q] * val[r]
            for q in range(nn):
                for r in range(nn):
                    a[nz[q], nz[r]] -= s[nz[q]] * s[nz[r]] / cnt
        for q in range(nn):
            s[nz[q]] = 0.0
            mark[nz[q]] = False
    return a, b


def fit(probs_fn: ProbsFn, boards: np.ndarray, window: int = 4, ridge: float = 1e-3) -> rk.Ranker:
    """The ranker fitted to ``probs_fn``'s equities of pubeval's best ``window`` plays of each board and roll."""
    after, off = roll_plays(boards)
    rows, new_off = pubeval_top(after, off, window)
    top = np.ascontiguousarray(after[rows])
    a, b = _normal_equations(top, new_off, _mover_equity(probs_fn, top), N_WEIGHTS)
    w = np.linalg.solve(a + ridge * np.eye(N_WEIGHTS), b)
    return rk.Ranker(w[:_N_TABLE].reshape(2, 24, 31).copy(), w[_N_TABLE:_N_TABLE + 4].reshape(2, 2).copy(),
                     w[_N_TABLE + 4:].copy(), window)


def agreement(probs_fn: ProbsFn, boards: np.ndarray, rankers: Sequence[rk.Ranker | None]
              ) -> list[tuple[float, float]]:
    """Per ranker, (share of rolls whose top play is the net's best, mean equity the top play gives up) over every
    roll of ``boards``: the ranker's top among pubeval's best ``window``, or (``None``) pubeval's top."""
    after, off = roll_plays(boards)
    eq = _mover_equity(probs_fn, after)
    best = np.array([eq[lo:hi].max() for lo, hi in zip(off[:-1], off[1:]) if hi > lo])
    out = []
    for ranker in rankers:
        rows, new_off = pubeval_top(after, off, 1 if ranker is None else ranker.window)
        score = np.zeros(len(rows)) if ranker is None else ranker.scores(after[rows])
        picks = np.array([rows[lo + int(np.argmax(score[lo:hi]))] for lo, hi in zip(new_off[:-1], new_off[1:])
                          if hi > lo])
        out.append((float(np.mean(eq[picks] >= best)), float(np.mean(best - eq[picks]))))
    return out


@dataclass
class RankerFit:
    """A ranker fitted to a net, with the net and the held-out positions to check it on."""

    ranker: rk.Ranker
    probs_fn: ProbsFn
    """The net the ranker was fitted to (with the bear-off database in front)."""
    train_positions: int
    """Positions of the self-play games the ranker was fitted on."""
    held_out: np.ndarray
    """Positions of other games (a tenth as many) to check it on."""

    def agreement(self) -> list[tuple[float, float]]:
        """``agreement`` on the held-out positions: pubeval's top play first, then the ranker's."""
        return agreement(self.probs_fn, self.held_out, [None, self.ranker])


def fit_to_net(model: str | None, games: int, window: int, seed: int) -> RankerFit:
    """The ranker fitted to checkpoint ``model`` (the released net when None) on ``games`` self-play games from
    seed ``seed``, with a tenth as many other games' positions to check it on."""
    probs_fn = load_exact_evaluator(model or default_checkpoint()).probs_of_boards
    train = self_play_positions(probs_fn, games, seed)
    held_out = self_play_positions(probs_fn, max(1, games // 10), seed + 1_000_003)
    return RankerFit(fit(probs_fn, train, window), probs_fn, len(train), held_out)


if __name__ == "__main__":
    import sys

    from bgnet.cli.ranker import main

    sys.exit(main())
