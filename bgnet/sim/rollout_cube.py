"""Cubeful rollouts: the cube played inside every trial, and the cube decision read from the rolled-out lines.

A candidate carries cube lines (a cube value and owner; "No double" and "Double,
take" of one position share its trials, as they share checker play and dice).
Before every roll of every live trial the side on roll decides by
``bgnet.cube.decision.cube_decision`` on the net's 0-ply chances of the position
(those the play that led there was valued at; the root's own once per distinct
position), doubles when it says so, and the opponent takes,
beavers or passes by the same decision. A pass ends the line at the cube value
while its cubeless trial plays on, so the cubeless numbers are exactly those of a
cubeless rollout; a finished game scores single, gammon or backgammon times the
cube (gammons as ``MatchState.gammons_count`` says), in match winning chances at a
match score; a truncated trial (or one stopped at the bear-off database) scores the
cubeful equity of ``cube_decision`` for its line's cube. With luck VR each open line
is also charged the cubeless equity luck of every roll, times its cube
(``CubeTracks.add_luck``): the line's cube is settled before the roll, so this too is
an exact control variate.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from bgnet.core.position import Position
from bgnet.core.probs import Probs
from bgnet.cube.decision import (best_response, choose_action, cube_action, cube_decision, cube_efficiencies,
                                 cube_equity, mwc_from_equity, outcome_values)
from bgnet.cube.match import MatchState
from bgnet.cube.met import default_met
from bgnet.sim.rollout_candidates import Candidate
from bgnet.sim.rollout_settings import RolloutError
from bgnet.sim.rollout_stats import clamp_probs

_OWNER_CODE = {"centred": 0, "me": 1, "opponent": -1}
"""A cube owner seen by the root side, as the int8 code ``CubeTracks.owner`` holds."""
_OWNER_NAME = {0: "centred", 1: "me", -1: "opponent"}


def cube_units(state: MatchState) -> tuple[float, float]:
    """``(w1, l1)``: what the root side's winning and losing a single game at its cube is worth.

    Money: +-1 (points per cube); match: the two match winning chances behind GNU
    Backgammon's normalised equity ``2 (mwc - l1) / (w1 - l1) - 1``.
    """
    values = outcome_values(state)
    return values.won[0][0], values.lost[0][0]


class CubeTracks:
    """Cube lines followed alongside the cubeless trials: per line, a cube value and owner, and a result.

    A line belongs to one trial row (candidate x trial); several lines may share a row
    (no double and double/take of one position), as their checker play and dice are
    the same. Results are in the root side's terms: money points per root cube, or
    match winning chances. A pass ends a line while its (cubeless) trial plays on.
    """

    def __init__(self, candidates: Sequence[Candidate], n: int, state: MatchState) -> None:
        rows, cube, owner = [], [], []
        for ci, cd in enumerate(candidates):
            for value, own in cd.cube_lines:
                rows.append(np.arange(ci * n, (ci + 1) * n))
                cube.append(np.full(n, value, np.int64))
                owner.append(np.full(n, _OWNER_CODE[own], np.int8))
        self.state = state
        self.row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        self.cube = np.concatenate(cube) if cube else np.zeros(0, np.int64)
        self.owner = np.concatenate(owner) if owner else np.zeros(0, np.int8)
        self.done = np.zeros(len(self.row), bool)
        self.value = np.zeros(len(self.row), np.float64)
        self.luck = np.zeros(len(self.row), np.float64)
        self.doubles = np.zeros(len(self.row), np.int64)
        self._states: dict[tuple[bool, int, int], MatchState] = {}

    def on_roll_state(self, root_on_roll: bool, cube: int, owner: int) -> MatchState:
        """The ``MatchState`` of the side on roll for a line's cube (cached: few distinct ones)."""
        key = (root_on_roll, cube, owner)
        st = self._states.get(key)
        if st is None:
            root = replace(self.state, cube_value=int(cube), cube_owner=_OWNER_NAME[owner])  # type: ignore[arg-type]
            st = root if root_on_roll else root.swap_sides()
            self._states[key] = st
        return st

    def active(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lines, where)``: the open lines of trial rows ``rows`` and each one's index into ``rows``."""
        pos = np.full(int(self.row.max()) + 1 if len(self.row) else 0, -1, np.int64)
        pos[rows[rows < len(pos)]] = np.flatnonzero(rows < len(pos))
        lines = np.flatnonzero(~self.done & (pos[self.row] >= 0)) if len(pos) else np.zeros(0, np.int64)
        return lines, pos[self.row[lines]]

    def _open_lines(self, rows: np.ndarray, boards: np.ndarray) -> tuple[list[int], list[int], list[float]]:
        """``active(rows)`` as lists for a per-line loop, and the cube efficiency of each of the rows' ``boards`` (one
        kernel call, none when no line is open)."""
        lines, where = self.active(rows)
        if len(lines) == 0:
            return [], [], []
        return lines.tolist(), where.tolist(), cube_efficiencies(boards).tolist()

    def _points(self, lines: np.ndarray, root_points: np.ndarray) -> None:
        """Close ``lines`` with the root side winning ``root_points`` (negative: losing) points of this game."""
        st = self.state
        met = None if st.is_money else default_met()
        for ln, pts in zip(lines.tolist(), root_points.tolist()):
            if met is None:
                self.value[ln] = pts / st.cube_value
            else:
                k = int(round(pts))
                won, lost = (k, 0) if k > 0 else (0, -k)
                self.value[ln] = met.after_game(st.away_me - won, st.away_opp - lost, st.crawford_done)
        self.done[lines] = True

    def end_game(self, rows: np.ndarray, codes: np.ndarray, root_on_roll: np.ndarray) -> None:
        """Score the open lines of finished trial rows: single, gammon or backgammon times the line's cube.

        ``codes`` are ``terminal_codes`` of the rows' boards (for their side on roll),
        ``root_on_roll`` whether the root side is on roll there. A gammon counts single
        where the line's ``MatchState.gammons_count`` says so (the Jacoby rule).
        """
        lines, where = self.active(rows)
        if len(lines) == 0:
            return
        c = codes[where].astype(np.int64)
        c = np.where(root_on_roll[where], c, -c)
        gammons = np.array([self.on_roll_state(True, cube, owner).gammons_count
                            for cube, owner in zip(self.cube[lines].tolist(), self.owner[lines].tolist())], bool)
        c = np.where(gammons, c, np.sign(c))
        self._points(lines, c * self.cube[lines])

    def estimate(self, rows: np.ndarray, probs: np.ndarray, boards: np.ndarray, root_on_roll: np.ndarray) -> None:
        """Close the open lines of truncated rows with the cubeful equity (``cube_decision``) of the side on roll.

        ``probs`` (len(rows), 5) are the chances of that side, ``boards`` the rows' boards.
        """
        lines, where, efficiency = self._open_lines(rows, boards)
        for ln, w in zip(lines, where):
            mine = bool(root_on_roll[w])
            st = self.on_roll_state(mine, int(self.cube[ln]), int(self.owner[ln]))
            eq = cube_equity(clamp_probs(probs[w]), st, efficiency=efficiency[w])
            if self.state.is_money:
                self.value[ln] = (eq if mine else -eq) * self.cube[ln] / self.state.cube_value
            else:
                w1, l1 = cube_units(st)
                mwc = mwc_from_equity(eq, w1, l1)
                self.value[ln] = mwc if mine else 1.0 - mwc
            self.done[ln] = True

    def decide(self, rows: np.ndarray, probs: np.ndarray, boards: np.ndarray, root_on_roll: np.ndarray) -> None:
        """Cube actions before the roll of trial rows ``rows``: the side on roll doubles when ``cube_decision``
        says so and it has access to the cube (``MatchState.may_double``).

        The opponent takes, beavers or passes by the same decision; a pass closes the
        line at the cube value, a take turns the cube over to the taker.
        """
        lines, where, efficiency = self._open_lines(rows, boards)
        for ln, w in zip(lines, where):
            mine = bool(root_on_roll[w])
            cube = int(self.cube[ln])
            st = self.on_roll_state(mine, cube, int(self.owner[ln]))
            if not st.may_double:
                continue
            action, response = cube_action(clamp_probs(probs[w]), st, efficiency=efficiency[w])
            if action not in ("double, take", "double, pass"):
                continue
            self.doubles[ln] += 1
            if response == "pass":
                self._points(np.array([ln]), np.array([cube if mine else -cube]))
            else:
                self.cube[ln] = cube * (4 if response == "beaver" else 2)
                self.owner[ln] = -1 if mine else 1

    def add_luck(self, rows: np.ndarray, equity_luck: np.ndarray) -> None:
        """Charge the open lines of trial rows ``rows`` with the luck of the roll about to be played.

        ``equity_luck`` (len(rows),) is the root side's cubeless equity luck of each row's
        roll; a line's share is that times its cube over the root's, in points (money) or
        turned into match winning chances by ``(w1 - l1) / 2`` (``cube_units``: the slope
        of the chance in normalised equity). Each line's cube and whether it is open are settled before the roll,
        so the luck charged to it has mean zero: a control variate for the cubeful results.
        """
        lines, where = self.active(rows)
        if len(lines) == 0:
            return
        st = self.state
        if st.is_money:
            scale = self.cube[lines] / st.cube_value
        else:
            w1, l1 = cube_units(st)
            scale = 0.5 * (w1 - l1) * self.cube[lines] / st.cube_value
        self.luck[lines] += scale * equity_luck[where]

    def results(self, c: int, n: int, lines_per: Sequence[int]) -> np.ndarray:
        """Line results less their luck as (candidates, max lines, trials), NaN where a candidate has fewer lines."""
        out = np.full((c, max(lines_per, default=0), n), np.nan)
        reduced = self.value - self.luck
        k = 0
        for ci, nl in enumerate(lines_per):
            for li in range(nl):
                out[ci, li] = reduced[k * n:(k + 1) * n]
                k += 1
        return out


# -- from rolled-out chances and lines to cubeful equities and a cube decision -------------


def cubeful_after_play(probs: Probs, after_next: Position, state: MatchState) -> float:
    """Cubeful equity of a play's mover, whose opponent is on roll in ``after_next``, from the mover's chances.

    The opponent takes his best cube action (``bgnet.cube.decision``), the mover answers his best way.
    """
    return -cube_decision(probs.flip(), state.swap_sides(), after_next).equity


def candidate_cubeful(cd: Candidate, probs: Probs, state: MatchState, line: str = "auto") -> float:
    """Cubeful equity of the root side for a candidate with rolled-out chances ``probs`` (Janowski's model).

    ``line`` for a position (the root side on roll): "no double" or "double, take";
    a play's value is after the opponent's best cube action.
    """
    board = Position._trusted(cd.board)
    if cd.root_on_roll:
        d = cube_decision(probs, state, board)
        if line == "double, take":
            if d.equity_double_take is None:
                raise RolloutError("the side on roll cannot double at this score and cube")
            return d.equity_double_take
        return d.equity_no_double
    return cubeful_after_play(probs, board, state)


def cubeful_stats(mean: float, stderr: float, state: MatchState | None) -> tuple[float, float, float | None]:
    """``(equity, stderr, mwc)`` of a cube line from the mean and standard error of its per-trial results (see
    ``ChunkResult.cubeful``).

    Money: points per root cube; match: GNU Backgammon's normalised equity (EMG) of
    the mean match winning chance, which is also returned.
    """
    st = state or MatchState()
    if st.is_money:
        return mean, stderr, None
    w1, l1 = cube_units(st)
    scale = 2.0 / (w1 - l1) if w1 > l1 else 0.0
    return scale * (mean - l1) - 1.0, scale * stderr, mean


def cube_summary(probs: Probs, state: MatchState, pos: Position) -> dict[str, Any]:
    """The cube decision from rolled-out chances (Janowski's model), as a JSON-ready dict."""
    d = cube_decision(probs, state, pos)
    return {"janowski_action": d.proper_cube_action, "action": d.action, "proper_cube_action": d.proper_cube_action,
            "response": d.response, "equity_no_double": d.equity_no_double,
            "equity_double_take": d.equity_double_take, "equity_double_pass": d.equity_double_pass,
            "take_point": d.take_point}


def rolled_cube_action(nd: float, dt: float | None, state: MatchState) -> dict[str, Any]:
    """The cube decision from the rolled-out cubeful equities of "No double" and "Double, take" (None: no access
    to the cube, or a dead one) and a pass (+1), as a JSON-ready dict."""
    out: dict[str, Any] = {"method": "cubeful trials"}
    redouble = state.cube_owner == "me"
    if dt is None:
        word = "redouble" if redouble else "double"
        out.update(action="no double", proper_cube_action=f"No {word} (no access to the cube or a dead cube)",
                   response=None, equity_no_double=nd, equity_double_take=None, equity_double_pass=None)
        return out
    dp = 1.0
    response, double_value = best_response(dt, dp, state)  # the taker's answer as in bgnet cube: beavers too
    # The rolled-out lines already hold the gammons, so a pass is never forced by their absence (gammons=True).
    action, text = choose_action(nd, dp, double_value, response, redouble, True)
    out.update(action=action, proper_cube_action=text, response=response, equity_no_double=nd,
               equity_double_take=dt, equity_double_pass=dp)
    return out
