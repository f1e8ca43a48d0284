"""Match analysis: every play and cube action of a replayed match rated at n plies, per-player error rates and luck.

Units follow GNU Backgammon. A loss is the best option's equity minus the
chosen one's, for the player who chose: cubeless money equity per unit cube in
money play, and in a match the match winning chance normalised at the score and
cube (``bgnet.play.search.utility_for``: +1 = winning a single game at this cube),
i.e. EMG. Cube actions are valued by ``bgnet.cube.decision.cube_decision`` on the n-ply
cubeless chances of the position before the roll. Marks: doubtful from 0.04,
bad from 0.08, very bad from 0.16. Error rates are mEMG: checker play = checker
loss per unforced move, cube = cube loss per close-or-actual cube decision
(close: doubling costs less than 0.16), overall = both losses over both counts.
PR (XG's performance rating) is taken as 500 x overall loss per decision, i.e.
half the overall rate. Luck of a roll = the 0-ply equity of its best play minus
the 1-ply equity of the position before it (the average over all rolls). Results
are match winning chances in a match (``+12.3% MWC``) and points per game in money
play (``ppg``), as gnubg shows them; they count finished games only, and a game a
record leaves unfinished is named in the report. Moves are numbered as the lines of
a ``.mat`` (``N)`` holds both players' N-th turns; "1)" the first roll), whatever the
file's format. Each decision lists its options as gnubg does: deeper evaluations
first, each depth best first by equity, the played one marked where it falls.

The search is batched per game: one 0-ply pass over every candidate of every
decision of the game, then per ply one ``search.evaluate_boards`` call per
utility (score and cube) for the plays kept by the move filters (the played move
always kept, with the first ``SHOWN`` plays ranked above it), and one call for all
cube positions and one for all luck positions.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import numpy as np

from bgnet.play import game as g
from bgnet.play.hint import pruned_replies
from bgnet.cube.decision import cube_decision
from bgnet.cube.match import MatchState
from bgnet.io.record import MatchRecord
from bgnet.io.replay import ReplayedGame, replay_games
from bgnet.core.movegen import legal_moves, roll_text
from bgnet.core.notation import Move
from bgnet.core.position import Position
from bgnet.core.probs import Probs, flip_probs
from bgnet.play.search import (DEFAULT_FILTERS, MoveFilter, ProbsFn, Utility, blend_one_ply, evaluate_boards,
                               utility_for)

SHOWN = 5
"""Options listed per decision, besides the played one when it ranks lower (gnubg's default)."""
MARKS: tuple[tuple[float, str], ...] = ((0.16, "very bad"), (0.08, "bad"), (0.04, "doubtful"))
"""Loss thresholds (EMG) of GNU Backgammon's marks, worst first."""
CLOSE_CUBE = 0.16
"""A cube decision is close when doubling costs less than this (gnubg)."""
_SCREEN = CLOSE_CUBE + 0.08
"""Cube positions where, searched one ply less, doubling is worse than not by more than this (and the player
did not double) are not searched to the full ply: their loss is zero and they are not close."""


def mark_of(loss: float) -> str:
    """gnubg's mark for an equity loss: "very bad", "bad", "doubtful" or ""."""
    for limit, name in MARKS:
        if loss >= limit - 1e-9:
            return name
    return ""


def count_of(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless ``n`` is 1: "1 game", "2 games"."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def format_result(value: float, money: bool) -> str:
    """A result as gnubg shows it: MWC over the 50% start in percent (``+12.3% MWC``), or ``+0.123 ppg``."""
    return f"{value:+.3f} ppg" if money else f"{100.0 * value:+.1f}% MWC"


@dataclass(frozen=True)
class Alternative:
    """One option of a decision as listed: its rank (1 = best), text, equity (EMG) and the depth it was rated at."""

    rank: int
    choice: str
    equity: float
    ply: int
    played: bool = False


@dataclass(frozen=True)
class Decision:
    """One rated decision."""

    game: int
    move_number: int
    """The move number in the file (``N)`` of a .mat)."""
    player: int
    kind: str
    """"move" (checker play), "cube" (double or not) or "response" (take, pass or beaver)."""
    position_id: str
    """The position before the decision, seen by the player deciding (for a response: by the doubler)."""
    dice: tuple[int, int] | None
    played: str
    best: str
    loss: float
    """Equity lost against the best choice (EMG, >= 0)."""
    mark: str
    unforced: bool = True
    """Checker play: more than one legal play; cube: close or actual."""
    equity: float = 0.0
    """Equity of the played choice for the player (EMG), at the ply of the analysis."""
    luck: float = 0.0
    """Luck of the roll (moves only), EMG."""
    alternatives: tuple[Alternative, ...] = ()
    """The best ``SHOWN`` options in rank order, and the played one (marked) where it falls below them."""
    played_rank: int = 1
    """Rank of the played option among all options (1 = the best)."""


@dataclass
class PlayerStats:
    """Per-player totals of an analysis."""

    name: str
    total_moves: int = 0
    unforced_moves: int = 0
    cube_decisions: int = 0
    close_cube_decisions: int = 0
    checker_loss: float = 0.0
    cube_loss: float = 0.0
    luck: float = 0.0
    """Total luck, EMG."""
    luck_points: float = 0.0
    """Total luck of the finished games in result units: match winning chance in a match, points in money play."""
    rolls: int = 0
    marks: dict[str, int] = field(default_factory=lambda: {"doubtful": 0, "bad": 0, "very bad": 0})
    result: float = 0.0
    """Actual result of the finished games: MWC gained over the 50% start in a match, points per game in money."""

    @property
    def checker_error_rate_memg(self) -> float:
        """Checker-play loss per unforced move, mEMG."""
        return 1000.0 * self.checker_loss / self.unforced_moves if self.unforced_moves else 0.0

    @property
    def cube_error_rate_memg(self) -> float:
        """Cube loss per close or actual cube decision, mEMG."""
        return 1000.0 * self.cube_loss / self.close_cube_decisions if self.close_cube_decisions else 0.0

    @property
    def overall_error_rate_memg(self) -> float:
        """Checker and cube loss per unforced move or close cube decision, mEMG."""
        n = self.unforced_moves + self.close_cube_decisions
        return 1000.0 * (self.checker_loss + self.cube_loss) / n if n else 0.0

    @property
    def pr(self) -> float:
        """XG-style performance rating: 500 x equity lost per unforced decision."""
        return self.overall_error_rate_memg / 2.0

    @property
    def luck_rate_memg(self) -> float:
        """Luck per roll, mEMG."""
        return 1000.0 * self.luck / self.rolls if self.rolls else 0.0


@dataclass(frozen=True)
class MatchAnalysis:
    """The analysis of a whole match: decisions in order and per-player statistics."""

    match: MatchRecord
    ply: int
    decisions: tuple[Decision, ...]
    players: tuple[PlayerStats, PlayerStats]
    equity_curves: tuple[tuple[float, ...], ...]
    """Per game: player 0's equity after each play (EMG at the score)."""
    luck_adjusted: tuple[float, float]
    """Actual result minus own luck plus the opponent's (MWC in a match, points per game in money)."""
    pruned: int = 0
    """Replies of each roll the searches valued (``bgnet.nets.pruning``); 0 when they valued every one."""

    @property
    def unfinished_games(self) -> tuple[int, ...]:
        """Numbers of the games the record leaves without a result (a file cut off, a game quit)."""
        return tuple(rec.number for rec in self.match.games if rec.winner is None)

    def warning(self) -> str:
        """One sentence on the unfinished games, or "" when every game has a result."""
        numbers = self.unfinished_games
        if not numbers:
            return ""
        one = len(numbers) == 1
        games = ("game " if one else "games ") + ", ".join(map(str, numbers))
        return (f"Warning: {games} {'is' if one else 'are'} unfinished (the record ends before a result): "
                f"{'its' if one else 'their'} decisions are rated, but the results count finished games only.")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: per player the summary fields and his decisions; results carry their unit in the key."""
        unit = "ppg" if self.match.match_length == 0 else "mwc_percent"
        scale = 1.0 if self.match.match_length == 0 else 100.0
        out: dict[str, Any] = {"match_length": self.match.match_length, "ply": self.ply,
                               "pruned": self.pruned,
                               "games": len(self.match.games), "unfinished_games": list(self.unfinished_games),
                               "players": []}
        for seat, p in enumerate(self.players):
            out["players"].append({
                "name": p.name, "total_moves": p.total_moves, "unforced_moves": p.unforced_moves,
                "cube_decisions": p.cube_decisions, "close_cube_decisions": p.close_cube_decisions,
                "checker_error_total_emg": round(p.checker_loss, 6), "cube_error_total_emg": round(p.cube_loss, 6),
                "checker_error_rate_memg": round(p.checker_error_rate_memg, 2),
                "cube_error_rate_memg": round(p.cube_error_rate_memg, 2),
                "overall_error_rate_memg": round(p.overall_error_rate_memg, 2), "pr": round(p.pr, 2),
                "marks": dict(p.marks), "luck_total_emg": round(p.luck, 6),
                "luck_rate_memg": round(p.luck_rate_memg, 2), f"actual_result_{unit}": round(scale * p.result, 6),
                f"luck_adjusted_result_{unit}": round(scale * self.luck_adjusted[seat], 6),
                "decisions": [_decision_dict(d) for d in self.decisions if d.player == seat],
            })
        return out

    def format(self) -> str:
        """A text summary in the manner of gnubg's match statistics, and the marked decisions."""
        a, b = self.players
        money = self.match.match_length == 0
        rows = [("Total moves", a.total_moves, b.total_moves), ("Unforced moves", a.unforced_moves, b.unforced_moves),
                ("Close or actual cube decisions", a.close_cube_decisions, b.close_cube_decisions),
                ("Moves marked doubtful", a.marks["doubtful"], b.marks["doubtful"]),
                ("Marked bad", a.marks["bad"], b.marks["bad"]), ("Marked very bad", a.marks["very bad"], b.marks["very bad"]),
                ("Checker error rate mEMG", f"{a.checker_error_rate_memg:.1f}", f"{b.checker_error_rate_memg:.1f}"),
                ("Cube error rate mEMG", f"{a.cube_error_rate_memg:.1f}", f"{b.cube_error_rate_memg:.1f}"),
                ("Overall error rate mEMG", f"{a.overall_error_rate_memg:.1f}", f"{b.overall_error_rate_memg:.1f}"),
                ("PR", f"{a.pr:.1f}", f"{b.pr:.1f}"),
                ("Luck rate mEMG", f"{a.luck_rate_memg:+.1f}", f"{b.luck_rate_memg:+.1f}"),
                ("Actual result", format_result(a.result, money), format_result(b.result, money)),
                ("Luck adjusted result", format_result(self.luck_adjusted[0], money),
                 format_result(self.luck_adjusted[1], money))]
        what = "money session" if money else f"{self.match.match_length}-point match"
        lines = [f"Analysis of a {what}, {count_of(len(self.match.games), 'game')}, at {self.ply} ply"
                 + (f", pruned to {self.pruned} replies a roll" if self.pruned else "")]
        lines += [self.warning()] if self.unfinished_games else []
        lines += ["", f"{'':34}{a.name:>16}{b.name:>16}"]
        lines += [f"{label:34}{x!s:>16}{y!s:>16}" for label, x, y in rows]
        marked = [d for d in self.decisions if d.mark]
        if marked:
            lines += ["", "Marked decisions:"]
            for d in marked:
                dice = f" {roll_text(d.dice, sep='')}" if d.dice else ""
                lines.append(f"  game {d.game}, move {d.move_number}, {self.players[d.player].name}{dice}: "
                             f"played {d.played or '(no play)'}, best {d.best or '(no play)'}, "
                             f"-{d.loss:.3f} ({d.mark})  {d.position_id}")
        return "\n".join(lines)


def _decision_dict(d: Decision) -> dict[str, Any]:
    out = asdict(d)
    out["dice"] = list(d.dice) if d.dice else None
    out["loss"] = round(d.loss, 6)
    out["equity"] = round(d.equity, 6)
    out["luck"] = round(d.luck, 6)
    key = "move" if d.kind == "move" else "action"  # the names of every --json: a play's move, a cube action
    out["alternatives"] = [{"rank": a.rank, key: a.choice, "equity": round(a.equity, 6), "ply": a.ply,
                            "played": a.played} for a in d.alternatives]
    return out


# -- the batched search ---------------------------------------------------------------


@dataclass
class _Checker:
    """A checker decision being searched."""

    step_index: int
    pos: Position
    dice: tuple[int, int]
    state: MatchState
    moves: list[Move]
    played: int
    """Index of the played move in ``moves``."""
    lo: int = 0
    """First row of its candidates in the game's candidate array."""


def _util_pair(state: MatchState) -> tuple[Utility, Utility]:
    """What the mover and his opponent maximise at ``state``."""
    if state.is_money:
        u = utility_for(None)
        return u, u
    return utility_for(state), utility_for(state.swap_sides())


def _rank_game(fn: ProbsFn, items: list[_Checker], ply: int,
               filters: Sequence[MoveFilter]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per decision (probs for the mover, values, depth) of every candidate, searched to ``ply`` with filters."""
    from bgnet.core import _movegen_kernels as mk

    if not items:
        return []
    boards = []
    row = 0
    for it in items:
        it.lo = row
        row += len(it.moves)
        boards.append(np.array([m.after.board for m in it.moves], np.int8))  # type: ignore[union-attr]
    cand = mk.swap_sides_batch(np.concatenate(boards))
    probs = flip_probs(evaluate_boards(fn, cand, 0))
    keys = [(it.state.match_length, it.state.score_me, it.state.score_opp, it.state.cube_value,
             it.state.crawford, it.state.crawford_done) for it in items]
    utils = {k: _util_pair(it.state) for k, it in zip(keys, items)}
    values = np.zeros(row)
    for k, it in zip(keys, items):
        sl = slice(it.lo, it.lo + len(it.moves))
        values[sl] = utils[k][0].of(probs[sl])
    depth = np.zeros(row, np.int64)
    for level in range(1, ply + 1):
        f = filters[min(level - 1, len(filters) - 1)]
        by_util: dict[Any, list[int]] = {}
        for k, it in zip(keys, items):
            if len(it.moves) == 1:
                continue
            idx = np.arange(it.lo, it.lo + len(it.moves))
            alive = idx[depth[idx] == level - 1]
            keep = set((alive[f.select(values[alive])]).tolist())
            played = it.lo + it.played
            keep.add(played)
            # The played move goes deeper whatever its rank: so do the listed plays ranked above it, which then
            # compare with it at one depth (its rank in the list is where it falls).
            top = alive[np.argsort(-values[alive], kind="stable")[:SHOWN]]
            keep.update(top[values[top] > values[played]].tolist())
            by_util.setdefault(k, []).extend(sorted(keep))
        for k, rows in by_util.items():
            mover, opp = utils[k]
            r = np.array(rows, np.int64)
            deep = flip_probs(evaluate_boards(fn, cand[r], level, opp, mover))
            probs[r] = blend_one_ply(probs[r], deep, ply)
            values[r] = mover.of(probs[r])
            depth[r] = level
    return [(probs[it.lo:it.lo + len(it.moves)], values[it.lo:it.lo + len(it.moves)],
             depth[it.lo:it.lo + len(it.moves)]) for it in items]


def _state(before: g.Game) -> MatchState:
    return before.match_state()


def analyse_game(fn: ProbsFn, replayed: ReplayedGame, ply: int = 2,
                 filters: Sequence[MoveFilter] = DEFAULT_FILTERS) -> tuple[list[Decision], list[float]]:
    """Rate every decision of one replayed game; returns the decisions and player 0's equity after each play."""
    number = replayed.record.number
    checkers: list[_Checker] = []
    cube_items: list[tuple[int, g.Game, str]] = []  # (step index, roll-phase game, what the player did)
    responses: list[tuple[int, g.Game, str]] = []
    steps = replayed.steps
    for i, st in enumerate(steps):
        a, before = st.action, st.before
        if a.kind == "move":
            assert st.move is not None and a.dice is not None
            pos = before.position
            moves = legal_moves(pos, a.dice)
            played = next(j for j, m in enumerate(moves) if m.after == st.move.after)
            checkers.append(_Checker(i, pos, a.dice, _state(before), moves, played))
            if before.phase == "roll" and g.may_double(before):
                cube_items.append((i, before, "no double"))
        elif a.kind == "double":
            cube_items.append((i, before, "double"))
        elif a.kind in ("take", "drop", "beaver"):
            responses.append((i, before, a.kind))
    ranked = _rank_game(fn, checkers, ply, filters)

    # Luck: 0-ply best of the roll against the 1-ply value before it, one call per utility.
    before_vals = np.zeros(len(checkers))
    groups: dict[Any, list[int]] = {}
    for j, it in enumerate(checkers):
        groups.setdefault((it.state.score_me, it.state.score_opp, it.state.cube_value, it.state.crawford), []).append(j)
    for _k, js in groups.items():
        mover, opp = _util_pair(checkers[js[0]].state)
        pre = evaluate_boards(fn, np.array([checkers[j].pos.board for j in js], np.int8), 1, mover, opp)
        before_vals[js] = mover.of(pre)

    decisions: dict[tuple[int, int], Decision] = {}
    curve: list[float] = []
    for j, (it, (probs, values, depth)) in enumerate(zip(checkers, ranked)):
        order = sorted(range(len(it.moves)), key=lambda r: (-depth[r], -values[r]))
        best = order[0]
        loss = max(0.0, float(values[best] - values[it.played])) if len(it.moves) > 1 else 0.0
        mover, _ = _util_pair(it.state)
        luck = float(mover.of(flip_probs(evaluate_boards(fn, _swapped(it.moves), 0))).max() - before_vals[j])
        st = steps[it.step_index]
        alternatives = tuple(Alternative(k + 1, it.moves[r].text, float(values[r]), int(depth[r]), r == it.played)
                             for k, r in enumerate(order) if k < SHOWN or r == it.played)
        decisions[(it.step_index, 1)] = Decision(
            game=number, move_number=st.action.number, player=st.action.player, kind="move",
            position_id=it.pos.position_id(), dice=it.dice, played=it.moves[it.played].text,
            best=it.moves[best].text, loss=loss, mark=mark_of(loss) if len(it.moves) > 1 else "",
            unforced=len(it.moves) > 1, equity=float(values[it.played]), luck=luck,
            alternatives=alternatives, played_rank=order.index(it.played) + 1)
        eq = float(values[it.played])
        curve.append(eq if st.action.player == 0 else -eq)

    # Cube decisions: n-ply chances before the roll for the positions worth searching.
    if cube_items or responses:
        items = cube_items + responses
        states = [b.match_state() for _, b, _ in items]
        pos_list = [b.position for _, b, _ in items]
        shallow = np.zeros((len(items), 5))
        by_state: dict[Any, list[int]] = {}
        for r, s in enumerate(states):
            by_state.setdefault((s.score_me, s.score_opp, s.cube_value, s.cube_owner, s.crawford), []).append(r)
        for _k, rows in by_state.items():
            mover, opp = _util_pair(states[rows[0]])
            shallow[rows] = evaluate_boards(fn, np.array([pos_list[r].board for r in rows], np.int8),
                                            max(0, ply - 1), mover, opp)
        deep_rows = []
        for r, ((_i, _b, did), s, p) in enumerate(zip(items, states, pos_list)):
            cd = cube_decision(Probs(*shallow[r]), s, p)
            dv = _double_value(cd)
            if did != "no double" or dv > cd.equity_no_double - _SCREEN:
                deep_rows.append(r)
        probs_rows = shallow.copy()
        if ply > 0 and deep_rows:
            by: dict[Any, list[int]] = {}
            for r in deep_rows:
                s = states[r]
                by.setdefault((s.score_me, s.score_opp, s.cube_value, s.cube_owner, s.crawford), []).append(r)
            for _k, rows in by.items():
                mover, opp = _util_pair(states[rows[0]])
                probs_rows[rows] = evaluate_boards(fn, np.array([pos_list[r].board for r in rows], np.int8), ply,
                                                   mover, opp)
        deep = set(deep_rows)
        for r, ((i, before, did), s, p) in enumerate(zip(items, states, pos_list)):
            cd = cube_decision(Probs(*probs_rows[r]), s, p)
            nd, dv = cd.equity_no_double, _double_value(cd)
            st = steps[i]
            word = "redouble" if s.cube_owner == "me" else "double"
            dt, dp = cd.equity_double_take or 0.0, cd.equity_double_pass or 0.0
            if did in ("no double", "double"):
                best_word = word if dv > nd else f"no {word}"
                optimal = max(nd, dv)
                chosen = dv if did == "double" else nd
                loss = max(0.0, optimal - chosen)
                close = did == "double" or (r in deep and optimal - dv < CLOSE_CUBE)
                choice = word if did == "double" else f"no {word}"
                # gnubg's order: no double and the double as answered best, by value; the other answers last.
                answer = cd.response if cd.response == "beaver" else "take" if dt <= dp else "pass"
                lines = {"take": dt, "pass": dp, "beaver": dv}
                first = sorted([(f"no {word}", nd), (f"{word}, {answer}", dv)], key=lambda o: -o[1])
                rest = [(f"{word}, {a}", lines[a]) for a in ("take", "pass") if a != answer]
                mine = f"{word}, {answer}" if did == "double" else f"no {word}"
                alts = [(c, e, c == mine) for c, e in first + rest] if math.isfinite(dv) else [(mine, nd, True)]
                kind = "cube"
            else:
                took = did in ("take", "beaver")
                best_word = "take" if dt <= dp else "pass"
                loss = max(0.0, (dt - dp) if took else (dp - dt))
                close, choice, kind = True, {"take": "take", "drop": "pass", "beaver": "beaver"}[did], "response"
                alts = sorted([("take", -dt, took), ("pass", -dp, not took)], key=lambda o: -o[1])
                chosen = -dt if took else -dp
            at = ply if r in deep else max(0, ply - 1)
            decisions[(i, 0)] = Decision(
                game=number, move_number=st.action.number, player=st.action.player, kind=kind,
                position_id=p.position_id(), dice=None, played=choice, best=best_word, loss=float(loss),
                mark=mark_of(loss) if close else "", unforced=bool(close), equity=float(chosen),
                alternatives=tuple(Alternative(k, c, float(e), at, mine) for k, (c, e, mine) in enumerate(alts, 1)),
                played_rank=next(k for k, (_c, _e, mine) in enumerate(alts, 1) if mine))
    # A "no double" decision comes before its roll: order by step, the cube first.
    ordered = [decisions[k] for k in sorted(decisions)]
    return ordered, curve


def _swapped(moves: list[Move]) -> np.ndarray:
    from bgnet.core import _movegen_kernels as mk

    return mk.swap_sides_batch(np.array([m.after.board for m in moves], np.int8))  # type: ignore[union-attr]


def _double_value(cd: Any) -> float:
    """What doubling is worth after the opponent's best answer (-inf when no double is possible)."""
    if cd.equity_double_take is None or cd.equity_double_pass is None:
        return -math.inf
    if cd.response == "beaver":
        return 2.0 * cd.equity_double_take
    return min(cd.equity_double_take, cd.equity_double_pass)


def analyse_match(fn: ProbsFn, match: MatchRecord, ply: int = 2,
                  filters: Sequence[MoveFilter] = DEFAULT_FILTERS) -> MatchAnalysis:
    """Rate every decision of ``match`` at ``ply`` plies with the 0-ply chances ``fn`` (boards -> (N, 5))."""
    from bgnet.cube.met import default_met

    replayed = replay_games(match)
    players = (PlayerStats(match.players[0]), PlayerStats(match.players[1]))
    all_decisions: list[Decision] = []
    curves: list[tuple[float, ...]] = []
    for rg in replayed:
        decisions, curve = analyse_game(fn, rg, ply, filters)
        all_decisions += decisions
        curves.append(tuple(curve))
        for d in decisions:
            p = players[d.player]
            if d.kind == "move":
                p.total_moves += 1
                p.unforced_moves += int(d.unforced)
                p.checker_loss += d.loss if d.unforced else 0.0
                p.rolls += 1
                p.luck += d.luck
            else:
                p.cube_decisions += 1
                p.close_cube_decisions += int(d.unforced)
                p.cube_loss += d.loss if d.unforced else 0.0
            if d.mark:
                p.marks[d.mark] += 1
        if rg.record.winner is None:
            continue  # the results (and their luck) count finished games only
        # Luck in result units, with the state of each roll.
        for st, d in zip([s for s in rg.steps if s.action.kind == "move"], [d for d in decisions if d.kind == "move"]):
            s = st.before.match_state()
            if s.is_money:
                scale = float(s.cube_value)
            else:
                met = default_met()
                w1 = met.after_game(s.away_me - s.cube_value, s.away_opp, s.crawford_done)
                l1 = met.after_game(s.away_me, s.away_opp - s.cube_value, s.crawford_done)
                scale = (w1 - l1) / 2.0
            players[d.player].luck_points += d.luck * scale
    # Actual results, of the finished games.
    n = match.match_length
    finished = max(1, sum(1 for rec in match.games if rec.winner is not None))
    if n:
        final = [0, 0]
        for rec in match.games:
            final = list(rec.score)
            if rec.winner is not None:
                final[rec.winner] += rec.points
        met = default_met()
        mwc0 = 1.0 if final[0] >= n else 0.0 if final[1] >= n else met.equity(n - final[0], n - final[1])
        players[0].result, players[1].result = mwc0 - 0.5, 0.5 - mwc0
    else:
        pts = [0.0, 0.0]
        for rec in match.games:
            if rec.winner is not None:
                pts[rec.winner] += rec.points
                pts[1 - rec.winner] -= rec.points
        players[0].result, players[1].result = pts[0] / finished, pts[1] / finished
    per = 1.0 if n else 1.0 / finished
    adj0 = players[0].result - per * (players[0].luck_points - players[1].luck_points)
    return MatchAnalysis(match, ply, tuple(all_decisions), players, tuple(curves), (adj0, -adj0),
                         pruned_replies(fn) if ply > 0 else 0)
