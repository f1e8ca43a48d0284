"""Cube decisions for money and match play from five cubeless probabilities and a MatchState.

The cubeful value of a position is Janowski's interpolation between a dead cube
(the cubeless value) and a fully live cube (winning chances that move
continuously, each side doubling exactly at the other's take point), weighted by a
cube efficiency ``x`` that depends on the kind of position. The live part is the
ladder of ``bgnet.cube.met`` (shared with the MET generator): cash points found level by
level from the average value of a win and of a loss, with play-on lines for the
side that is too good to double. In matches the outcome values are match winning
chances from the match equity table, so gammon values, the Crawford rule and dead
cubes at the score come out of the same ladder. ``lookahead_decision`` and
``searched_decision`` value "no double" one exchange ahead instead, from the
chances at the next turn. docs/CUBE.md derives each rule.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from typing import Literal, NamedTuple, Sequence

import numpy as np

from bgnet.cube import _cube_kernels as ck
from bgnet.cube._cube_kernels import (CONTACT_EFFICIENCY)
from bgnet.core.errors import BgnetError
from bgnet.cube.match import NO_CUBE_RULES, MatchState
from bgnet.cube.met import Ladder, MatchEquityTable, build_ladder, default_met, polyline_value
from bgnet.core.position import Position
from bgnet.core.probs import Probs

Action = Literal["no double", "double, take", "double, pass", "too good"]
Response = Literal["take", "pass", "beaver"]
PositionKind = Literal["contact", "race", "bear-off"]


class InvalidProbsError(BgnetError):
    """Probabilities that are not five consistent chances."""


@dataclass(frozen=True)
class CubeDecision:
    """The cube decision of the side on roll, with cubeful equities normalised to the current cube.

    Equities are in units of the current cube value (money) or gnubg's normalised
    match equity (+1 = winning a single game at this cube, -1 = losing one); the
    ``mwc_*`` fields carry the match winning chances behind them (None in money play).
    ``take_point`` is the opponent's take point: his lowest game winning chance at
    which taking is right. Double fields are None when the side on roll cannot double
    (no access, the Crawford game, or a dead cube: see ``dead_cube``).
    """

    action: Action
    """"no double", "double, take", "double, pass" or "too good" (a beavered double reads "double, take")."""
    proper_cube_action: str
    """gnubg-style text, e.g. "Double, take", "No redouble, beaver", "Too good to double, pass"."""
    response: Response | None
    """The opponent's best answer to a double: "take", "pass" or "beaver" (None if no double is possible)."""
    equity_no_double: float
    equity_double_take: float | None
    """Double/take, before any beaver (a beaver doubles it again: see ``double_value``)."""
    equity_double_pass: float | None
    cubeless_equity: float
    """Dead-cube equity at this cube and score (normalised like the cubeful ones)."""
    money_equity: float
    """Plain cubeless money equity of the five probabilities, points per unit cube."""
    take_point: float | None
    mwc_no_double: float | None
    mwc_double_take: float | None
    mwc_double_pass: float | None
    mwc_cubeless: float | None
    cube_efficiency: float
    probs: Probs
    state: MatchState
    dead_cube: str | None = None
    """Why the cube is dead for the side on roll (a sentence), or None."""
    position_kind: PositionKind = "contact"
    """The kind of position the cube efficiency was chosen for."""

    @property
    def is_redouble(self) -> bool:
        """Whether a double here would be a redouble (the side on roll owns the cube)."""
        return self.state.cube_owner == "me"

    @property
    def beaver(self) -> bool:
        """Whether the opponent's best answer to a double is to beaver."""
        return self.response == "beaver"

    @property
    def double_value(self) -> float | None:
        """What doubling is worth after the opponent's best answer (None when no double is possible)."""
        if self.equity_double_take is None or self.equity_double_pass is None:
            return None
        if self.response == "beaver":
            return 2.0 * self.equity_double_take
        return min(self.equity_double_take, self.equity_double_pass)

    @property
    def equity(self) -> float:
        """The cubeful equity of the best cube action (normalised like the others)."""
        dv = self.double_value
        return self.equity_no_double if dv is None else max(self.equity_no_double, dv)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict of every field (probabilities and state as nested dicts)."""
        d = asdict(self)
        d["probs"] = self.probs.to_dict()
        del d["state"]
        d["match"] = self.state.to_dict()
        d["rules"] = rules_dict(self.state)
        return d

    def format(self) -> str:
        """Text in the style of GNU Backgammon's cube analysis, headed by the rules it assumed."""
        p = self.probs
        where = replace(self.state, rules=NO_CUBE_RULES) if self.state.is_money else self.state
        lines = [f"Cube analysis ({where})", f"Rules assumed: {rules_text(self.state)}",
                 f"  {p.line()}"]
        if self.state.is_money:
            lines.append(f"Cubeless equity: {self.cubeless_equity:+.3f}")
        else:
            lines.append(f"Cubeless equity: {self.cubeless_equity:+.3f} (Money: {self.money_equity:+.3f}) "
                         f"[MWC {100 * (self.mwc_cubeless or 0.0):.2f}%]")
        lines.append("Cubeful equities:")
        word = "Redouble" if self.is_redouble else "Double"
        options: list[tuple[str, float, float | None]] = [
            ("No " + word.lower(), self.equity_no_double, self.mwc_no_double)]
        if self.equity_double_take is not None and self.equity_double_pass is not None:
            take_label = f"{word}, beaver" if self.beaver else f"{word}, take"
            take_eq = 2 * self.equity_double_take if self.beaver else self.equity_double_take
            options += [(take_label, take_eq, self.mwc_double_take),
                        (f"{word}, pass", self.equity_double_pass, self.mwc_double_pass)]
        best = self.equity
        for i, (label, eq, mwc) in enumerate(options, 1):
            diff = "" if abs(eq - best) < 5e-7 else f"  ({eq - best:+.3f})"
            extra = "" if mwc is None else f"  [MWC {100 * mwc:.2f}%]"
            lines.append(f"{i}. {label:<20}{eq:+.3f}{diff}{extra}")
        lines.append(f"Proper cube action: {self.proper_cube_action}")
        if self.take_point is not None:
            lines.append(f"Take point: {100 * self.take_point:.1f}%  "
                         f"(cube efficiency {self.cube_efficiency:.2f}, {self.position_kind})")
        return "\n".join(lines)


def rules_text(state: MatchState) -> str:
    """The kind of play and the cube rules a state assumes, in words, as every command prints them:
    "money game, Jacoby rule on, beavers and raccoons allowed", "5-point match, post-Crawford, no Holland rule"."""
    if state.is_money:
        return "money game, " + state.rules.describe(True)
    tag = "Crawford game" if state.crawford else ("post-Crawford" if state.post_crawford else "Crawford rule")
    return f"{state.match_length}-point match, {tag}, " + state.rules.describe(False)


def rules_dict(state: MatchState) -> dict[str, object]:
    """The JSON ``rules`` object of every answer: each cube rule by name (``max_cube`` 0: no limit) and ``text``,
    the words of ``rules_text``."""
    return {**asdict(state.rules), "text": rules_text(state)}


# -- position kinds and cube efficiency ------------------------------------------------

POSITION_KINDS: tuple[PositionKind, ...] = ("contact", "race", "bear-off")
"""The kinds by ``bgnet.cube._cube_kernels`` code."""


def position_kind(position: Position) -> PositionKind:
    """"bear-off" when every checker of both sides is in its home board, "race" without contact, else "contact"."""
    return _kind_and_efficiency(position)[0]


def cube_efficiency(position: Position | None) -> float:
    """Cube efficiency x for a position by its kind (contact, race by pips, bear-off by the rolls left)."""
    if position is None:
        return CONTACT_EFFICIENCY
    return _kind_and_efficiency(position)[1]


def cube_efficiencies(boards: np.ndarray) -> np.ndarray:
    """``cube_efficiency`` of each board (N, 26) int8 seen from its side on roll, in one kernel call (float64)."""
    return ck.kinds_and_efficiencies(np.ascontiguousarray(boards, np.int8))[1]


def bearoff_rolls(position: Position) -> tuple[int, int]:
    """Rough rolls each side needs to bear off (mine, the opponent's): enough for the pips, two checkers a roll."""
    mine, theirs = ck.bearoff_rolls(np.array(position.board, np.int8))
    return int(mine), int(theirs)


def bearoff_efficiency(rolls: int) -> float:
    """Bear-off efficiency when the side closer to finishing needs ``rolls`` rolls: 0 on the last roll, then 0.4, 0.5, 0.6.

    On the last roll the cube can never be turned again, so it is dead (exact). With
    two or more rolls left the values are the ones that best reproduce the optimal
    cube actions of the project's exact bear-off database (docs/CUBE.md).
    """
    return float(ck.bearoff_efficiency(int(rolls)))


@lru_cache(maxsize=4096)
def _kind_and_efficiency(position: Position) -> tuple[PositionKind, float]:
    """Cached kind and efficiency of a position (``bgnet.cube._cube_kernels.kind_and_efficiency``)."""
    code, x = ck.kind_and_efficiency(np.array(position.board, np.int8))
    return POSITION_KINDS[code], float(x)


# -- probabilities ------------------------------------------------------------------------

def _check_probs(values: Probs | Sequence[float]) -> Probs:
    """Validate five chances (clamping rounding noise) and return them as Probs."""
    if isinstance(values, Probs):
        w, wg, wb, lg, lb = values.win, values.win_gammon, values.win_backgammon, values.lose_gammon, values.lose_backgammon
    else:
        try:
            w, wg, wb, lg, lb = [float(v) for v in values]
        except (TypeError, ValueError):
            return _checked_probs(values)
    if 0.0 <= lb <= lg <= 1.0 - w and 0.0 <= wb <= wg <= w <= 1.0:  # consistent already (NaN is not)
        return values if isinstance(values, Probs) else Probs(w, wg, wb, lg, lb)
    return _checked_probs(values)


def _checked_probs(values: Probs | Sequence[float]) -> Probs:
    """``_check_probs`` for chances that need clamping, or the sentence saying what is wrong with them."""
    try:
        probs = Probs.of(values)
    except (TypeError, ValueError) as exc:
        raise InvalidProbsError(str(exc)) from exc
    vals = list(probs)
    if any(math.isnan(v) or v < -1e-6 or v > 1 + 1e-6 for v in vals):
        raise InvalidProbsError(f"each probability must lie between 0 and 1, got {vals}")
    w, wg, wb, lg, lb = (min(1.0, max(0.0, v)) for v in vals)
    if wb > wg + 1e-6 or wg > w + 1e-6 or lb > lg + 1e-6 or lg > 1.0 - w + 1e-6:
        raise InvalidProbsError("need win_backgammon <= win_gammon <= win and lose_backgammon <= lose_gammon <= 1 - win, "
                                f"got {vals}")
    wg, lg = min(wg, w), min(lg, 1.0 - w)
    return Probs(w, wg, min(wb, wg), lg, min(lb, lg))


# -- outcome values ---------------------------------------------------------------------------

@dataclass(frozen=True)
class OutcomeValues:
    """What each game result is worth to the side on roll at one score and cube, for every cube level.

    Level n is the current cube times 2**n. ``won[n]``/``lost[n]``: my value (money: points
    per current cube; match: MWC) when I win/lose a single game, a gammon and a
    backgammon at that level. ``mine_useful[n]``: whether my double from level n can
    gain at all (the doubled cube does not already cover what I need), likewise
    ``theirs_useful``. These depend on the score only, so they are cached per state.
    """

    money: bool
    won: tuple[tuple[float, float, float], ...]
    lost: tuple[tuple[float, float, float], ...]
    mine_useful: tuple[bool, ...]
    theirs_useful: tuple[bool, ...]
    dead_reason: str | None
    """Why my cube is dead at level 0 (None when my double can gain)."""

    def ladder(self, ratios: tuple[float, float, float, float], singles_now: bool) -> Ladder:
        """The live-cube ladder for gammon ratios (gw, bw, gl, bl) (shares of wins/losses that are gammons+, backgammons).

        ``singles_now``: the Jacoby rule with a centred cube, so level 0 counts gammons
        single; once the cube is turned they count again.
        """
        gw, bw, gl, bl = ratios
        win = [(1 - gw) * s + (gw - bw) * g + bw * b for s, g, b in self.won]
        lose = [(1 - gl) * s + (gl - bl) * g + bl * b for s, g, b in self.lost]
        cash = [w[0] for w in self.won]
        drop = [v[0] for v in self.lost]
        if self.money:
            # The infinite money ladder is the same at every level (in units of its cube):
            # its fixed point gives the cash points in closed form (docs/CUBE.md).
            big_w, big_l = win[0], -lose[0]
            my_cash = (big_l + 1.0) / (big_w + big_l + 0.5)
            opp_cash = (big_l - 0.5) / (big_w + big_l + 0.5)
            if singles_now:
                win[0], lose[0] = cash[0], drop[0]
            return Ladder(tuple(win), tuple(lose), tuple(cash), tuple(drop), (my_cash, my_cash), (opp_cash, opp_cash))
        else:
            ladder = build_ladder(win, lose, cash, drop, self.mine_useful, self.theirs_useful)
        if singles_now:
            ladder = Ladder((cash[0],) + ladder.win[1:], (drop[0],) + ladder.lose[1:], ladder.cash, ladder.drop,
                            ladder.my_cash, ladder.opp_cash)
        return ladder


_MONEY_VALUES = OutcomeValues(True, ((1.0, 2.0, 3.0), (2.0, 4.0, 6.0)), ((-1.0, -2.0, -3.0), (-2.0, -4.0, -6.0)),
                              (True, True), (True, True), None)


@lru_cache(maxsize=1024)
def _match_values(met: MatchEquityTable, a: int, b: int, cube: int, crawford_done: bool) -> OutcomeValues:
    """Outcome values at a match score (I need ``a``, the opponent ``b``, cube ``cube``)."""
    after = met.after_game
    levels = [cube]
    while levels[-1] < max(a, b):
        levels.append(2 * levels[-1])
    levels.append(2 * levels[-1])
    won = tuple((after(a - k, b, crawford_done), after(a - 2 * k, b, crawford_done), after(a - 3 * k, b, crawford_done))
                for k in levels)
    lost = tuple((after(a, b - k, crawford_done), after(a, b - 2 * k, crawford_done), after(a, b - 3 * k, crawford_done))
                 for k in levels)
    mine = tuple(k < a for k in levels)
    theirs = tuple(k < b for k in levels)
    reason = None
    if a == 1 and b == 1:
        reason = "double match point: the next game decides the match, so the cube is dead"
    elif a == 1:
        reason = "the post-Crawford leader's cube is dead: any win already takes the match"
    elif cube >= a:
        reason = f"the cube at {cube} already wins the match for the {a} points needed, so it is dead"
    return OutcomeValues(False, won, lost, mine, theirs, reason)


def outcome_values(state: MatchState, met: MatchEquityTable | None = None) -> OutcomeValues:
    """The (cached) outcome values of ``state``: money points, or MWC from ``met`` (default Kazaross-XG2)."""
    if state.is_money:
        return _MONEY_VALUES
    return _match_values(met or default_met(), state.away_me, state.away_opp, state.cube_value, state.crawford_done)


def _cubeful(ladder: Ladder, level: int, mine: bool, theirs: bool, x: float, p: float) -> float:
    """x * live + (1 - x) * dead at ``level`` for winning chance ``p``."""
    dead = p * ladder.win[level] + (1.0 - p) * ladder.lose[level]
    keep = x * polyline_value(ladder.knots(level, mine, theirs), p) + (1.0 - x) * dead
    if theirs and not mine and level + 1 < len(ladder.win) and _free_redouble(ladder, level):
        # The opponent's redouble costs him nothing (my wins already take the match): he makes
        # it at once when that is worse for me than playing on, and I take or pass it.
        redoubled = max(_cubeful(ladder, level + 1, False, False, x, p), ladder.drop[level])
        return min(keep, redoubled)
    return keep


def _free_redouble(ladder: Ladder, level: int) -> bool:
    """Whether the opponent, holding the cube at ``level``, loses nothing by redoubling at once.

    True when my results are worth the same on the next level (the cube already wins me
    the match) while his redouble could gain (his cash point exists).
    """
    return (ladder.opp_cash[level] is not None and ladder.win[level + 1] == ladder.win[level]
            and ladder.cash[level + 1] == ladder.cash[level])


def _take_point(ladder: Ladder, theirs: bool, x: float, cash: float) -> float:
    """The opponent's take point: 1 - the p where my double/take value (cubeful, level 1) reaches the cash."""
    if theirs and len(ladder.win) > 2 and _free_redouble(ladder, 1):
        # Two regimes (his immediate redouble above his cash point): bisect the rising value.
        if _cubeful(ladder, 1, False, True, x, 1.0) <= cash:
            return 0.0
        if _cubeful(ladder, 1, False, True, x, 0.0) >= cash:
            return 1.0
        lo, hi = 0.0, 1.0
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            if _cubeful(ladder, 1, False, True, x, mid) < cash:
                lo = mid
            else:
                hi = mid
        return 1.0 - 0.5 * (lo + hi)
    knots = ladder.knots(1, False, theirs)
    w, l = ladder.win[1], ladder.lose[1]
    pts = [(q, x * v + (1.0 - x) * (q * w + (1.0 - q) * l)) for q, v in knots]
    if pts[-1][1] <= cash:
        return 0.0
    if pts[0][1] >= cash:
        return 1.0
    for (q0, v0), (q1, v1) in zip(pts, pts[1:]):
        if v1 >= cash:
            p_star = q0 if v1 <= v0 else q0 + (cash - v0) * (q1 - q0) / (v1 - v0)
            return 1.0 - p_star
    return 0.0  # pragma: no cover - the last knot reaches the cash


# -- the decision ------------------------------------------------------------------------

def normalised_equity(mwc: float, won: float, lost: float) -> float:
    """gnubg's normalised match equity of an MWC, between losing (-1) and winning (+1) a single game."""
    return 2.0 * (mwc - lost) / (won - lost) - 1.0 if won > lost else 0.0


def mwc_from_equity(equity: float, won: float, lost: float) -> float:
    """The MWC behind a normalised match equity (the inverse of ``normalised_equity``)."""
    return lost + 0.5 * (equity + 1.0) * (won - lost)


def best_response(dt: float, dp: float, state: MatchState) -> tuple[Response, float]:
    """The taker's best answer to a double and what the double is then worth to the doubler, from the doubler's
    double/take and double/pass equities (a beaver where the rules allow it and the take is not worse than 0)."""
    if dt >= dp:
        return "pass", dp
    if dt <= 0.0 and state.rules.may_beaver(state.cube_value):
        return "beaver", 2.0 * dt
    return "take", dt


def cube_decision(probs: Probs | Sequence[float], state: MatchState, position: Position | None = None,
                  *, efficiency: float | None = None, met: MatchEquityTable | None = None) -> CubeDecision:
    """The cube action for the side on roll from its five cubeless probabilities and the match state.

    ``position`` (optional) only sets the cube efficiency by its kind (``efficiency``
    overrides it); ``met`` defaults to Kazaross-XG2. A pure function of its arguments.
    """
    pr = _check_probs(probs)
    kind, x = _kind_efficiency(position, efficiency)
    c = _Core.of(pr, state, x, met)
    money = state.is_money
    mwc_nd, ladder = c.mwc_nd, c.ladder
    mwc_dead = _cubeful(ladder, 0, False, False, 0.0, c.p)
    norm = c.norm

    def decision(action: Action, text: str, response: Response | None, dt: float | None, dp: float | None,
                 take_point: float | None, dead: str | None = None) -> CubeDecision:
        return CubeDecision(
            action=action, proper_cube_action=text, response=response, equity_no_double=norm(mwc_nd),
            equity_double_take=None if dt is None else norm(dt), equity_double_pass=None if dp is None else norm(dp),
            cubeless_equity=norm(mwc_dead), money_equity=pr.equity(), take_point=take_point,
            mwc_no_double=None if money else mwc_nd, mwc_double_take=None if money else dt,
            mwc_double_pass=None if money else dp, mwc_cubeless=None if money else mwc_dead,
            cube_efficiency=x, probs=pr, state=state, dead_cube=dead, position_kind=kind)

    if not c.mine_now:
        if state.crawford:
            return decision("no double", "No double (Crawford game)", None, None, None, None)
        if state.cube_owner == "opponent":
            return decision("no double", "No double (the opponent owns the cube)", None, None, None, None)
        reason = c.values.dead_reason or "the cube is dead"
        return decision("no double", f"No double (dead cube: {reason})", None, None, None, None, reason)
    mwc_dt, mwc_dp = c.doubled()
    take_point = _take_point(ladder, c.values.theirs_useful[1], x, mwc_dp)
    action, text, response = c.choice(mwc_dt, mwc_dp)
    return decision(action, text, response, mwc_dt, mwc_dp, take_point)


def raccoons(probs: Probs | Sequence[float], state: MatchState, position: Position | None = None) -> bool:
    """Whether the doubler, beavered, redoubles at once (raccoons): while its chances say it is still the favourite
    after the take (a positive double/take equity). ``state`` is the cube as when it doubled."""
    dt = cube_decision(probs, state, position).equity_double_take
    return dt is not None and dt > 0.0


def cube_action(probs: Probs | Sequence[float], state: MatchState, position: Position | None = None,
                *, efficiency: float | None = None) -> tuple[Action, Response | None]:
    """``(action, response)`` of ``cube_decision(probs, state, position, efficiency=efficiency)``, without its
    equities and text.

    The game loops' path: the same rule (one ``_Core``), without the take point,
    the cubeless equity and the ``CubeDecision`` it would build; they pass each
    table's ``efficiency`` from one ``cube_efficiencies`` call over all their boards.
    """
    pr = _check_probs(probs)
    c = _Core.of(pr, state, _kind_efficiency(position, efficiency)[1], None)
    if not c.mine_now:
        return "no double", None
    action, _text, response = c.choice(*c.doubled())
    return action, response


def cube_equity(probs: Probs | Sequence[float], state: MatchState, position: Position | None = None,
                *, efficiency: float | None = None) -> float:
    """``cube_decision(probs, state, position, efficiency=efficiency).equity`` alone: the cubeful equity of the
    best cube action, without the take point, the texts and the ``CubeDecision`` (a truncated rollout trial's value)."""
    pr = _check_probs(probs)
    c = _Core.of(pr, state, _kind_efficiency(position, efficiency)[1], None)
    nd = c.norm(c.mwc_nd)
    if not c.mine_now:
        return nd
    mwc_dt, mwc_dp = c.doubled()
    return max(nd, best_response(c.norm(mwc_dt), c.norm(mwc_dp), state)[1])


def _kind_efficiency(position: Position | None, efficiency: float | None) -> tuple[PositionKind, float]:
    """The position's kind and cube efficiency (``efficiency`` overrides the kind's; contact without a position)."""
    kind: PositionKind = "contact"
    if position is not None:
        kind, x = _kind_and_efficiency(position)
    else:
        x = CONTACT_EFFICIENCY
    if efficiency is not None:
        x = float(efficiency)
        if not 0.0 <= x <= 1.0:
            raise InvalidProbsError(f"cube efficiency must lie between 0 and 1, got {x}")
    return kind, x


class _Core(NamedTuple):
    """What every cube answer needs: the ladder at the probabilities' gammon ratios and the no-double value
    (a NamedTuple: built on every cube question of a game loop)."""

    state: MatchState
    values: OutcomeValues
    ladder: Ladder
    x: float
    p: float
    mine_now: bool
    mwc_nd: float
    gammons: bool

    @staticmethod
    def of(pr: Probs, state: MatchState, x: float, met: MatchEquityTable | None) -> "_Core":
        values = outcome_values(state, met)
        p = pr.win
        ratios = (pr.win_gammon / p if p > 0 else 0.0, pr.win_backgammon / p if p > 0 else 0.0,
                  pr.lose_gammon / (1 - p) if p < 1 else 0.0, pr.lose_backgammon / (1 - p) if p < 1 else 0.0)
        singles = not state.gammons_count  # the Jacoby rule with a centred cube
        ladder = values.ladder(ratios, singles)
        mine_now = state.may_double and values.mine_useful[0]
        theirs_now = state.cube_owner != "me" and not state.crawford and values.theirs_useful[0]
        mwc_nd = _cubeful(ladder, 0, mine_now, theirs_now, x, p)
        if singles:
            mwc_nd = min(mwc_nd, ladder.cash[0])  # Jacoby: playing on cannot beat the cash (docs/CUBE.md)
        return _Core(state, values, ladder, x, p, mine_now, mwc_nd, pr.win_gammon > 0.0)

    def doubled(self) -> tuple[float, float]:
        """(double/take, double/pass) in MWC (money: cube units) when I may double."""
        return _cubeful(self.ladder, 1, False, self.values.theirs_useful[1], self.x, self.p), self.ladder.cash[0]

    def norm(self, v: float) -> float:
        """An MWC (money: cube units) as the equity the decisions compare: money as it is, else gnubg's normalised
        equity."""
        return v if self.state.is_money else normalised_equity(v, self.ladder.cash[0], self.ladder.drop[0])

    def choice(self, mwc_dt: float, mwc_dp: float) -> tuple[Action, str, Response]:
        """The action, its text and the response from the MWC of the three lines."""
        nd, dt, dp = self.norm(self.mwc_nd), self.norm(mwc_dt), self.norm(mwc_dp)
        response, double_value = best_response(dt, dp, self.state)
        action, text = choose_action(nd, dp, double_value, response, self.state.cube_owner == "me", self.gammons)
        return action, text, response


def choose_action(nd: float, dp: float, double_value: float, response: Response, redouble: bool,
                  gammons: bool) -> tuple[Action, str]:
    """The action and gnubg-style text from the no-double equity, the cash and the value of a double."""
    word = "redouble" if redouble else "double"
    if double_value >= nd or (nd > dp and not gammons):
        return ("double, pass" if response == "pass" else "double, take"), f"{word.capitalize()}, {response}"
    if nd > dp:
        return "too good", f"Too good to {word}, {response}"
    return "no double", f"No {word}, {response}"
