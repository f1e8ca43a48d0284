"""Cube decisions backed by search: the leaves one exchange ahead and the cube decision at n plies."""

from __future__ import annotations

from typing import Any

import numpy as np

from bgnet.core import _game_kernels as gk
from bgnet.core.movegen import generate_plays, swap_sides_batch
from bgnet.core.position import Position
from bgnet.core.probs import flip_probs
from bgnet.core.protocols import EvaluatorLike, as_evaluator
from bgnet.cube.decision import CubeDecision, InvalidProbsError, cube_decision
from bgnet.cube.lookahead import lookahead_decision
from bgnet.cube.match import MatchState
from bgnet.play.search import ROLL_WEIGHTS, ROLLS, check_ply, evaluate_boards, evaluate_position, leaf_probs, utility_for


def exchange_leaves(evaluator: EvaluatorLike, position: Position, state: MatchState | None = None,
                    ply: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The side on roll's chances at its next turn, after its roll and play and the opponent's: (441, 5) leaves and weights.

    Plays are picked at 0 ply by the cubeless value at the score, as ``bgnet.play.search``
    picks them; leaves are evaluated at ``ply``; a game the first play ends is a leaf
    with its exact result. The weighted mean of the leaves is the (ply + 2)-ply
    evaluation of ``position``.
    """
    ev = as_evaluator(evaluator)
    ply = check_ply(ply)
    mine = utility_for(state)
    theirs = utility_for(state.swap_sides()) if state is not None else mine
    dice_rows = np.array(ROLLS, np.int8)

    def replies(boards: np.ndarray, util: Any) -> tuple[np.ndarray, np.ndarray]:
        """Each board's chosen play for each of the 21 rolls: the afterstate turned round, and its 0-ply chances."""
        n = len(boards)
        after, _steps, _n, offsets = generate_plays(np.repeat(boards, len(ROLLS), axis=0), np.tile(dice_rows, (n, 1)))
        cand = swap_sides_batch(after)
        probs = leaf_probs(ev, cand).astype(np.float64)
        choice = gk.segment_argmax(util.of(flip_probs(probs)), offsets)
        return cand[choice], probs[choice]

    if gk.terminal_codes(np.array([position.board], np.int8))[0] != 0:
        raise InvalidProbsError("the game is over: there is no next turn to look ahead to")
    first, first_probs = replies(np.array([position.board], np.int8), mine)  # the opponent on roll
    leaves = np.repeat(flip_probs(first_probs), len(ROLLS), axis=0)  # games over after my play: exact
    live = np.flatnonzero(gk.terminal_codes(first) == 0)
    if len(live):
        second, second_probs = replies(first[live], theirs)  # me on roll again
        if ply > 0:
            second_probs = evaluate_boards(ev, second, ply, mine, theirs)
        rows = (live[:, None] * len(ROLLS) + np.arange(len(ROLLS))).ravel()
        leaves[rows] = second_probs
    weights = np.outer(ROLL_WEIGHTS, ROLL_WEIGHTS).ravel()
    return np.clip(leaves, 0.0, 1.0), weights


def searched_decision(evaluator: EvaluatorLike, position: Position, state: MatchState, ply: int = 2) -> CubeDecision:
    """The cube decision at ``ply`` plies: below 2 ``cube_decision`` of the ply's chances, from 2 the look-ahead one."""
    if ply < 2:
        return cube_decision(evaluate_position(evaluator, position, ply, state=state), state, position)
    leaves, weights = exchange_leaves(evaluator, position, state, ply - 2)
    mean = np.clip(weights @ leaves / weights.sum(), 0.0, 1.0)
    return lookahead_decision(mean, state, position, leaves, weights, replies=len(ROLLS))
