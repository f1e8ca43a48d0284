"""Checker play inside a rollout's trials: every live trial's best play of its roll, chosen in one batch.

Each ply is one move generation over every live trial and one ``probs_fn`` call over
every candidate afterstate, then a segment argmax. Play is 0-ply (the net judges
every play, or with ``prune`` only pubeval's best few; an evaluator that carries a
pruning net, ``bgnet.nets.pruning.PrunedEvaluator``, values only the plays its
pruning net keeps, as GNU Backgammon's rollouts do with theirs) or 1-ply; trials
that share a position (all of them at the first ply) choose their play once.
"""

from __future__ import annotations

import math

import numpy as np

from bgnet.core import _game_kernels as gk
from bgnet.core.movegen import generate_plays, swap_sides_batch
from bgnet.core.probs import flip_probs
from bgnet.core.protocols import ProbsFn
from bgnet.nets.pruning import PrunedEvaluator
from bgnet.nets.pubeval import WIN_SCORE, pubeval_tables
from bgnet.play.search import (DEFAULT_FILTERS, MoveFilter, RowUtilities, Utility, blend_one_ply, evaluate_boards,
                               play_chances_and_values)
from bgnet.sim._rollout_kernels import pubeval_top_kernel


def net_probs(probs_fn: ProbsFn, boards: np.ndarray) -> np.ndarray:
    """0-ply chances (N, 5) float64 for each board's side on roll, exact for finished games."""
    return evaluate_boards(probs_fn, boards, 0)


def mover_values(probs_mover: np.ndarray, root_mover: np.ndarray, util: Utility, opp_util: Utility) -> np.ndarray:
    """What each mover maximises: the root side's utility where it moves, the opponent's elsewhere."""
    if util == opp_util:
        return util.of(probs_mover)
    return np.where(root_mover, util.of(probs_mover), opp_util.of(probs_mover))


def _segment_filter(values: np.ndarray, offsets: np.ndarray, f: MoveFilter) -> np.ndarray:
    """Indices kept by move filter ``f`` in every segment at once (the best always), sorted."""
    n = len(offsets) - 1
    counts = np.diff(offsets)
    seg = np.repeat(np.arange(n), counts)
    order = np.lexsort((-values, seg))
    rank = np.arange(len(values)) - np.repeat(offsets[:-1], counts)
    best = np.repeat(values[order[offsets[:-1]]], counts)
    v = values[order]
    keep = (rank < max(1, f.accept)) | ((rank < max(1, f.accept) + f.extra) & (v >= best - f.threshold))
    return np.sort(order[keep])


def choose(probs_fn: ProbsFn, cand: np.ndarray, offsets: np.ndarray, root_mover: np.ndarray, ply: int,
           util: Utility, opp_util: Utility, cand_probs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(index, chances)``: index into ``cand`` (afterstates turned round) of each segment's best play for its mover,
    at 0 or 1 ply, and that play's 0-ply chances for its side on roll (the next position's, as ``net_probs`` gives
    them: the rollout's cube reads them instead of valuing the position again)."""
    counts = np.diff(offsets)
    row_root = np.repeat(root_mover, counts)
    if ply == 0 and cand_probs is None and isinstance(probs_fn, PrunedEvaluator):
        utility: Utility | RowUtilities = util if util == opp_util else RowUtilities.per_segment(
            [util if root else opp_util for root in root_mover], offsets)
        kept_probs, kept_values = play_chances_and_values(probs_fn, cand, offsets, utility)
        best = gk.segment_argmax(kept_values, offsets)
        return best, kept_probs[best]
    if cand_probs is None:
        cand_probs = net_probs(probs_fn, cand)
    values = mover_values(flip_probs(cand_probs), row_root, util, opp_util)
    if ply == 0:
        best = gk.segment_argmax(values, offsets)
        return best, cand_probs[best]
    alive = _segment_filter(values, offsets, DEFAULT_FILTERS[0])
    deep = np.empty((len(alive), 5), np.float64)
    for side in (True, False):  # the side on roll of cand is the mover's opponent
        rows = alive[row_root[alive] == side]
        if len(rows):
            on_roll, other = (opp_util, util) if side else (util, opp_util)
            searched = evaluate_boards(probs_fn, cand[rows], ply, on_roll, other)
            deep[row_root[alive] == side] = blend_one_ply(cand_probs[rows], searched, ply)
    lifted = np.full(len(values), -np.inf)
    lifted[alive] = mover_values(flip_probs(deep), row_root[alive], util, opp_util)
    best = gk.segment_argmax(lifted, offsets)
    return best, cand_probs[best]


def pubeval_top(after: np.ndarray, offsets: np.ndarray, keep: int, margin: float = math.inf
                ) -> tuple[np.ndarray, np.ndarray]:
    """``(indices, offsets)`` of each segment's best ``keep`` plays by pubeval (ties: the first), fused in one pass.

    ``margin`` drops those of them more than that many pubeval points below the
    segment's best (a fixed function of the position and roll, so a luck built on
    it stays an exact control variate).
    """
    tables, extra = pubeval_tables()
    return pubeval_top_kernel(np.ascontiguousarray(after, np.int8), np.asarray(offsets, np.int64), int(keep),
                              float(margin), tables, extra, WIN_SCORE)  # type: ignore[no-any-return]


def pruned(after: np.ndarray, offsets: np.ndarray, keep: int, margin: float = math.inf
           ) -> tuple[np.ndarray, np.ndarray]:
    """The ``keep`` plays of each segment that pubeval ranks highest (all of them when ``keep`` is 0),
    less those more than ``margin`` pubeval points below the best."""
    if keep <= 0:
        return after, offsets
    idx, new_offsets = pubeval_top(after, offsets, keep, margin)
    return after[idx], new_offsets


def unique_rows(*arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)``: indices of the distinct rows of the arrays side by side, and each row's distinct one.

    Early in a rollout many trials share a position (at the first ply all of them
    do), so their plays are chosen once.
    """
    key = np.ascontiguousarray(np.concatenate([a.reshape(len(a), -1).astype(np.int8) for a in arrays], axis=1))
    packed = key.view(np.dtype((np.void, key.shape[1]))).ravel()
    _vals, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def play(probs_fn: ProbsFn, boards: np.ndarray, dice: np.ndarray, root_mover: np.ndarray, ply: int, prune: int,
         util: Utility, opp_util: Utility) -> tuple[np.ndarray, np.ndarray]:
    """Each board's best play of its dice, as the next board (the other side on roll), and its 0-ply chances for
    that side (``choose``)."""
    first, inverse = unique_rows(boards, dice, root_mover)
    after, _s, _n, offsets = generate_plays(boards[first], dice[first])
    after, offsets = pruned(after, offsets, prune)
    cand = swap_sides_batch(after)
    best, chances = choose(probs_fn, cand, offsets, root_mover[first], ply, util, opp_util)
    return cand[best][inverse], chances[inverse]
