"""Cube decisions for money and match play from five cubeless probabilities and a MatchState.

The cubeful value of a position is Janowski's interpolation between a dead cube
(the cubeless value) and a fully live cube (winning chances that move
continuously, each side doubling exactly at the other's take point), weighted by a
cube efficiency ``x``. In matches the outcome values are match winning chances
from the match equity table, so gammon values, the Crawford rule and dead cubes
at the score come out of the same ladder. docs/CUBE.md derives each rule.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

from bgnet.match import MatchState
from bgnet.met import MatchEquityTable, default_met, line_solve, line_value
from bgnet.probs import Probs

CONTACT_EFFICIENCY = 0.68
"""Cube efficiency for contact positions (gnubg's published default)."""
RACE_EFFICIENCY_MIN, RACE_EFFICIENCY_MAX = 0.60, 0.70
"""Race efficiency bounds: 0.55 + 0.00125 * pips of the side on roll, clamped (gnubg's published defaults)."""
_MONEY_LADDER_LEVELS = 20
"""Money cube levels followed above the current cube before the cube is treated as dead."""

Segment = tuple[float, float, float, float]
"""A clamped rising line (p_lo, v_lo, p_hi, v_hi): v_lo below p_lo, v_hi above p_hi."""


class InvalidProbsError(ValueError):
    """Probabilities that are not five consistent chances."""


@dataclass(frozen=True)
class CubeDecision:
    """The cube decision of the side on roll, with cubeful equities normalised to the current cube.

    Equities are in units of the current cube value (money) or gnubg's normalised
    match equity (+1 = winning a single game at this cube, -1 = losing one); the
    ``mwc_*`` fields carry the match winning chances behind them (None in money play).
    ``take_point`` is the opponent's take point: his lowest game winning chance at
    which taking is right. Double fields are None when the side on roll cannot double.
    """

    action: str
    """"no double", "double, take", "double, pass", "double, beaver" or "too good"."""
    proper_cube_action: str
    """gnubg-style text, e.g. "Double, take", "No redouble, take", "Too good to double, pass"."""
    response: str | None
    """The opponent's best answer to a double: "take", "pass" or "beaver" (None if no double is possible)."""
    equity_no_double: float
    equity_double_take: float | None
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

    @property
    def is_redouble(self) -> bool:
        """Whether a double here would be a redouble (the side on roll owns the cube)."""
        return self.state.cube_owner == "me"

    def _double_value(self) -> float:
        """What doubling is worth after the opponent's best answer (-inf when no double is possible)."""
        if self.equity_double_take is None or self.equity_double_pass is None:
            return -math.inf
        if self.response == "beaver":
            return 2.0 * self.equity_double_take
        return min(self.equity_double_take, self.equity_double_pass)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict of every field (probabilities and state as nested dicts)."""
        d = asdict(self)
        d["probs"] = dict(zip(("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"),
                              self.probs.as_list()))
        return d

    def format(self) -> str:
        """Text in the style of GNU Backgammon's cube analysis."""
        p = self.probs
        lines = [f"Cube analysis ({self.state})",
                 f"  {p.win:.3f} {p.win_gammon:.3f} {p.win_backgammon:.3f} - "
                 f"{p.lose:.3f} {p.lose_gammon:.3f} {p.lose_backgammon:.3f}"]
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
            take_label = f"{word}, beaver" if self.response == "beaver" else f"{word}, take"
            take_eq = 2 * self.equity_double_take if self.response == "beaver" else self.equity_double_take
            options += [(take_label, take_eq, self.mwc_double_take), (f"{word}, pass", self.equity_double_pass, self.mwc_double_pass)]
        best = max(self.equity_no_double, self._double_value())
        for i, (label, eq, mwc) in enumerate(options, 1):
            diff = "" if abs(eq - best) < 5e-7 else f"  ({eq - best:+.3f})"
            extra = "" if mwc is None else f"  [MWC {100 * mwc:.2f}%]"
            lines.append(f"{i}. {label:<20}{eq:+.3f}{diff}{extra}")
        lines.append(f"Proper cube action: {self.proper_cube_action}")
        if self.take_point is not None:
            lines.append(f"Take point: {100 * self.take_point:.1f}%  (cube efficiency {self.cube_efficiency:.2f})")
        return "\n".join(lines)


def cube_efficiency(position: object | None) -> float:
    """Cube efficiency x for a position: lower in races (depends on pips), a fixed value in contact."""
    if position is None:
        return CONTACT_EFFICIENCY
    if position.is_race():  # type: ignore[attr-defined]
        pips = position.pips()[0]  # type: ignore[attr-defined]
        return min(RACE_EFFICIENCY_MAX, max(RACE_EFFICIENCY_MIN, 0.55 + 0.00125 * pips))
    return CONTACT_EFFICIENCY


def _check_probs(values: Probs | Sequence[float]) -> Probs:
    """Validate five chances (clamping rounding noise) and return them as Probs."""
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


def cube_decision(probs: Probs | Sequence[float], state: MatchState, position: object | None = None,
                  *, efficiency: float | None = None, met: MatchEquityTable | None = None) -> CubeDecision:
    """The cube action for the side on roll from its five cubeless probabilities and the match state.

    ``position`` (optional) only sets the cube efficiency (``efficiency`` overrides it);
    ``met`` defaults to Kazaross-XG2.
    """
    pr = _check_probs(probs)
    x = cube_efficiency(position) if efficiency is None else float(efficiency)
    if not 0.0 <= x <= 1.0:
        raise InvalidProbsError(f"cube efficiency must lie between 0 and 1, got {x}")
    c = state.cube_value
    money = state.is_money
    met = met or (None if money else default_met())

    # Outcome values: my value (money in units of the current cube, or MWC) when I win/lose k points.
    if money:
        def won(k: int) -> float:
            return k / c

        def lost(k: int) -> float:
            return -k / c
        top = c << _MONEY_LADDER_LEVELS
    else:
        assert met is not None
        a, b, done = state.away_me, state.away_opp, state.crawford_done
        after = met.after_game

        def won(k: int) -> float:
            return after(a - k, b, done)

        def lost(k: int) -> float:
            return after(a, b - k, done)
        top = 1 << max(1, (2 * max(a, b)).bit_length())

    p = pr.win
    gw = pr.win_gammon / p if p > 0 else 0.0
    bw = pr.win_backgammon / p if p > 0 else 0.0
    gl = pr.lose_gammon / (1 - p) if p < 1 else 0.0
    bl = pr.lose_backgammon / (1 - p) if p < 1 else 0.0

    def win_value(k: int, singles: bool = False) -> float:
        """Average value of my win with cube k (gammons single under Jacoby with a centred cube)."""
        if singles:
            return won(k)
        return (1 - gw) * won(k) + (gw - bw) * won(2 * k) + bw * won(3 * k)

    def lose_value(k: int, singles: bool = False) -> float:
        if singles:
            return lost(k)
        return (1 - gl) * lost(k) + (gl - bl) * lost(2 * k) + bl * lost(3 * k)

    jacoby_now = money and state.jacoby and state.cube_owner == "centred"

    def dead(k: int, singles: bool, q: float) -> float:
        return q * win_value(k, singles) + (1 - q) * lose_value(k, singles)

    def line(k: int, mine: bool, theirs: bool, singles: bool = False) -> Segment:
        """My live-cube value with cube k as a clamped line in p; mine/theirs: who may double."""
        seg_lo_p, seg_lo_v = 0.0, lose_value(k, singles)
        seg_hi_p, seg_hi_v = 1.0, win_value(k, singles)
        if mine and k < top:
            cash = won(k)
            up = line(2 * k, False, True)
            if up[3] > cash:
                seg_hi_p, seg_hi_v = line_solve(up, cash), cash
        if theirs and k < top:
            cash = lost(k)
            down = line(2 * k, True, False)
            if down[1] < cash:
                seg_lo_p, seg_lo_v = line_solve(down, cash), cash
        return seg_lo_p, seg_lo_v, seg_hi_p, seg_hi_v

    nd_live = line(c, state.cube_owner != "opponent" and not state.crawford,
                   state.cube_owner != "me" and not state.crawford, jacoby_now)
    mwc_nd = x * line_value(nd_live, p) + (1 - x) * dead(c, jacoby_now, p)
    mwc_dead = dead(c, jacoby_now, p)
    w1, l1 = won(c), lost(c)

    def norm(v: float) -> float:
        """Money: already in cube units; match: gnubg's normalised equity from MWC."""
        return v if money else (2.0 * (v - l1) / (w1 - l1) - 1.0 if w1 > l1 else 0.0)

    money_eq = pr.equity()
    if not state.may_double:
        text = "No double (Crawford game)" if state.crawford else "No double (the opponent owns the cube)"
        return CubeDecision("no double", text, None, norm(mwc_nd), None, None, norm(mwc_dead), money_eq, None,
                            None if money else mwc_nd, None, None, None if money else mwc_dead, x, pr, state)

    dt_live = line(2 * c, False, True)

    w2, l2 = win_value(2 * c), lose_value(2 * c)

    def take_value(q: float) -> float:
        return x * line_value(dt_live, q) + (1 - x) * (q * w2 + (1 - q) * l2)

    mwc_dt = take_value(p)
    mwc_dp = won(c)
    # The opponent's take point: the p at which my double/take value reaches the cash (bisection; rising in p).
    if take_value(1.0) <= mwc_dp:
        p_star = 1.0
    elif take_value(0.0) >= mwc_dp:
        p_star = 0.0
    else:
        lo, hi = 0.0, 1.0
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            if take_value(mid) < mwc_dp:
                lo = mid
            else:
                hi = mid
        p_star = 0.5 * (lo + hi)
    take_point = 1.0 - p_star

    nd, dt, dp = norm(mwc_nd), norm(mwc_dt), norm(mwc_dp)
    if mwc_dt > mwc_dp:
        response, double_value = "pass", dp
    elif money and state.beavers and dt < 0.0:
        response, double_value = "beaver", 2.0 * dt
    else:
        response, double_value = "take", dt
    word = "redouble" if state.cube_owner == "me" else "double"
    if double_value > nd:
        action = f"double, {response}"
        text = f"{word.capitalize()}, {response}"
    elif nd >= dp:
        action = "too good"
        text = f"Too good to {word}, {response}"
    else:
        action = "no double"
        text = f"No {word}, {response}"
    return CubeDecision(action, text, response, nd, dt, dp, norm(mwc_dead), money_eq, take_point,
                        None if money else mwc_nd, None if money else mwc_dt, None if money else mwc_dp,
                        None if money else mwc_dead, x, pr, state)


