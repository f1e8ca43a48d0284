"""Cube decisions one exchange ahead: the value of no double and of double/take from the chances at the next turn.

Pure functions of probabilities and the match state, like ``bgnet.cube.decision``;
where the leaves come from (a search) is ``bgnet.play.cube_search``'s job.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from bgnet.core.position import Position
from bgnet.core.probs import Probs
from bgnet.cube.decision import (CubeDecision, InvalidProbsError, choose_action, best_response,
                                 cube_decision, mwc_from_equity, normalised_equity, outcome_values, OutcomeValues)
from bgnet.cube.match import CubeOwner, MatchState
from bgnet.cube.met import MatchEquityTable


def lookahead_decision(probs: Probs | Sequence[float], state: MatchState, position: Position | None,
                       leaves: np.ndarray, weights: np.ndarray, *, efficiency: float | None = None,
                       met: MatchEquityTable | None = None, replies: int = 0) -> CubeDecision:
    """``cube_decision`` with no double and double/take valued one exchange ahead, from the chances at the next turn.

    Each cube state is worth the weighted mean over ``leaves`` (``exchange_leaves``) of
    the best cube action there, shifted by how far ``probs`` sit from the leaves' mean
    (zero when ``probs`` are that mean). With ``replies`` > 0 the leaves come in groups
    of that many opponent's rolls per roll of mine (``exchange_leaves`` gives 21), and
    the opponent, on roll between my play and my next turn, doubles or redoubles when
    that is worse for me (I take or pass); with 0 the leaves are one flat set. A
    double that is taken and costs nothing when I lose (his wins already take the
    match: the post-Crawford trailer) is made at once, since doubled stakes are then
    at least as good for me in every variation. docs/CUBE.md explains both rules.
    """
    d = cube_decision(probs, state, position, efficiency=efficiency, met=met)
    if d.double_value is None or d.equity_double_pass is None or d.equity_double_take is None:
        return d
    values = outcome_values(state, met)
    if d.response == "take" and values.lost[0] == values.lost[1]:
        return d
    x = d.cube_efficiency
    rows = np.asarray(leaves, np.float64)
    w = np.asarray(weights, np.float64)
    if rows.ndim != 2 or rows.shape[1] != 5 or w.shape != (len(rows),) or not len(rows):
        raise InvalidProbsError(f"leaves must be (N, 5) with N weights, got {rows.shape} and {w.shape}")
    if replies < 0 or (replies and len(rows) % replies):
        raise InvalidProbsError(f"{len(rows)} leaves do not split into groups of {replies} replies")
    w = w / w.sum()
    mean = cube_decision(np.clip(w @ rows, 0.0, 1.0), state, position, efficiency=x, met=met)
    if mean.equity_double_take is None:
        return d
    exchange = _Exchange(state, values, rows, w, replies, x, met)
    nd = d.equity_no_double + exchange.value(0) - mean.equity_no_double
    if not state.gammons_count:
        nd = min(nd, d.equity_double_pass)  # Jacoby: playing on cannot beat the cash (docs/CUBE.md)
    dt = d.equity_double_take + exchange.value(1) - mean.equity_double_take
    dp = d.equity_double_pass
    response, double_value = best_response(dt, dp, state)
    action, text = choose_action(nd, dp, double_value, response, d.is_redouble, d.probs.win_gammon > 0.0)
    mwc_nd = mwc_dt = None
    if not state.is_money:
        mwc_nd, mwc_dt = exchange.mwc(nd), exchange.mwc(dt)
    return replace(d, action=action, proper_cube_action=text, response=response, equity_no_double=nd,
                   equity_double_take=dt, mwc_no_double=mwc_nd, mwc_double_take=mwc_dt)


class _Exchange:
    """Cubeful values one exchange ahead, in the units of the root state's normalised equity.

    The leaves are my next turn's chances, in groups of ``replies`` opponent's rolls per
    roll of mine (0: one flat set, no opponent's turn in between). Between my play and my
    next turn the opponent may turn the cube when he has access to it and his double can
    gain; I then take (the leaves at the doubled cube, mine) or pass, whichever is better.
    A beaver of his double is not considered.
    """

    def __init__(self, state: MatchState, values: OutcomeValues, rows: np.ndarray, weights: np.ndarray,
                 replies: int, x: float, met: MatchEquityTable | None) -> None:
        self.state, self.values, self.rows, self.x, self.met = state, values, rows, x, met
        self.his_turn = replies > 0
        per = replies if replies > 0 else 1
        w = weights.reshape(-1, per)
        self.my_weights = w.sum(axis=1)
        self.reply_weights = w / np.where(self.my_weights > 0, self.my_weights, 1.0)[:, None]
        self.w1, self.l1 = values.won[0][0], values.lost[0][0]

    def mwc(self, equity: float) -> float:
        """The match winning chance behind a normalised equity of the root state."""
        return mwc_from_equity(equity, self.w1, self.l1)

    def _root_units(self, value: float) -> float:
        """Money points per root cube, or an MWC as the root state's normalised equity."""
        if self.state.is_money:
            return value / self.state.cube_value
        return normalised_equity(value, self.w1, self.l1)

    def _leaf_means(self, cube: int, owner: CubeOwner) -> np.ndarray:
        """Per roll of mine, the mean over his replies of my best cube action at my next turn, in root units."""
        leaf_state = replace(self.state, cube_value=cube, cube_owner=owner)
        values = outcome_values(leaf_state, self.met)
        w1, l1 = values.won[0][0], values.lost[0][0]
        out = np.empty(len(self.rows))
        for i, row in enumerate(self.rows):
            e = cube_decision(row, leaf_state, efficiency=self.x, met=self.met).equity
            out[i] = self._root_units(e * cube if leaf_state.is_money else mwc_from_equity(e, w1, l1))
        return (out.reshape(self.reply_weights.shape) * self.reply_weights).sum(axis=1)

    def value(self, level: int) -> float:
        """The cube at ``level`` (0: as it is, 1: doubled and his), his cube turn at his turn included."""
        cube = self.state.cube_value * 2 ** level
        owner: CubeOwner = self.state.cube_owner if level == 0 else "opponent"
        stay = self._leaf_means(cube, owner)
        his_access = owner != "me" and not self.state.crawford
        useful = level < len(self.values.theirs_useful) and self.values.theirs_useful[level]
        if self.his_turn and his_access and useful:
            taken = self._leaf_means(2 * cube, "me")
            passed = self._root_units(-float(cube) if self.state.is_money else self.values.lost[level][0])
            stay = np.minimum(stay, np.maximum(taken, passed))
        return float(self.my_weights @ stay)


