"""Duel statistics: per-table outcomes, the paired summary and its 95% intervals (delta method over deals).

A deal's two tables (A in seat 0, then in seat 1) form one independent unit, so
luck shared by the pair cancels and every interval is computed from the pairs.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["DuelResult", "TableOutcome", "ratio_ci95", "summarise", "summarise_outcomes"]


@dataclass(frozen=True)
class TableOutcome:
    """What happened at one table: deal ``deal`` played with A in seat ``side`` (0: A is seat 0)."""

    deal: int
    side: int
    points: tuple[int, ...]
    """A's signed points in each game (cube included)."""
    kinds: tuple[int, ...]
    """A's signed result kind of each game: +-1 single (or passed double), +-2 gammon, +-3 backgammon, 0 unfinished."""
    match_won: bool | None = None
    """Match play: whether A won the match (None in money play)."""
    luck: float | None = None
    """A's luck over the table's games (``bgnet.sim.duel_luck``, cubeless money equity), None when not measured."""


@dataclass
class DuelResult:
    """Outcome of a paired duel, all figures for A, each rate with its 95% half-width from the pairs."""

    games: int
    ppg: float
    ci95: float
    win_rate: float
    gammon_rate: float
    """Share of games ending in a gammon or backgammon, won by either side."""
    backgammon_rate: float
    win_rate_ci95: float = math.inf
    gammon_rate_ci95: float = math.inf
    backgammon_rate_ci95: float = math.inf
    gammon_win_rate: float = 0.0
    """Share of games A won with a gammon or backgammon."""
    gammon_loss_rate: float = 0.0
    """Share of games A lost with a gammon or backgammon."""
    pairs: int = 0
    matches: int = 0
    match_win_rate: float | None = None
    match_win_rate_ci95: float | None = None
    points: list[int] = field(default_factory=list)
    """A's points per game, deal by deal (A in seat 0, then in seat 1)."""
    adjusted_ppg: float | None = None
    """A's points per game less A's luck (``bgnet.sim.duel_luck``): the same expectation as ``ppg``, a narrower
    interval; None when the luck was not measured."""
    adjusted_ci95: float | None = None

    def summary(self) -> dict[str, float | int | None]:
        """Every figure but the per-game points, JSON-ready."""
        d = asdict(self)
        d.pop("points")
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


def ratio_ci95(numer: np.ndarray, denom: np.ndarray) -> tuple[float, float]:
    """Ratio estimate sum(numer)/sum(denom) over independent units and its 95% half-width (delta method).

    With every denominator equal this is the mean of numer/denom and 1.96 standard errors of it.
    """
    x = np.asarray(numer, np.float64)
    g = np.asarray(denom, np.float64)
    n = len(x)
    if n == 0 or g.sum() == 0:
        return 0.0, math.inf
    r = float(x.sum() / g.sum())
    if n < 2:
        return r, math.inf
    resid = x - r * g
    se = math.sqrt(float((resid ** 2).sum()) / (n * (n - 1))) / float(g.mean())
    return r, 1.96 * se


def summarise_outcomes(outcomes: Sequence[TableOutcome]) -> DuelResult:
    """Summary for A of tables grouped into pairs by deal (a deal's two tables form one unit)."""
    ordered = sorted(outcomes, key=lambda t: (t.deal, t.side))
    units: dict[int, list[TableOutcome]] = {}
    for t in ordered:
        units.setdefault(t.deal, []).append(t)
    keys = list(units)
    n_units = len(keys)
    games = np.zeros(n_units)
    pts = np.zeros(n_units)
    wins = np.zeros(n_units)
    gammons = np.zeros(n_units)
    backgammons = np.zeros(n_units)
    gwin = np.zeros(n_units)
    gloss = np.zeros(n_units)
    mwins = np.zeros(n_units)
    mcount = np.zeros(n_units)
    luck = np.zeros(n_units)
    lucky = bool(outcomes) and all(t.luck is not None for t in outcomes)
    all_points: list[int] = []
    for i, k in enumerate(keys):
        for t in units[k]:
            kinds = np.asarray(t.kinds, np.int64)
            games[i] += len(t.points)
            pts[i] += sum(t.points)
            wins[i] += int((kinds > 0).sum())
            gammons[i] += int((np.abs(kinds) >= 2).sum())
            backgammons[i] += int((np.abs(kinds) >= 3).sum())
            gwin[i] += int((kinds >= 2).sum())
            gloss[i] += int((kinds <= -2).sum())
            all_points.extend(t.points)
            luck[i] += t.luck or 0.0
            if t.match_won is not None:
                mcount[i] += 1
                mwins[i] += int(t.match_won)
    ppg, ci = ratio_ci95(pts, games)
    win, win_ci = ratio_ci95(wins, games)
    gam, gam_ci = ratio_ci95(gammons, games)
    bg, bg_ci = ratio_ci95(backgammons, games)
    adjusted, adjusted_ci = ratio_ci95(pts - luck, games) if lucky else (None, None)
    matches = int(mcount.sum())
    mwr, mwr_ci = ratio_ci95(mwins, mcount) if matches else (None, None)
    return DuelResult(
        games=int(games.sum()), ppg=ppg, ci95=ci, win_rate=win, gammon_rate=gam, backgammon_rate=bg,
        win_rate_ci95=win_ci, gammon_rate_ci95=gam_ci, backgammon_rate_ci95=bg_ci,
        gammon_win_rate=ratio_ci95(gwin, games)[0], gammon_loss_rate=ratio_ci95(gloss, games)[0],
        pairs=n_units, matches=matches, match_win_rate=mwr, match_win_rate_ci95=mwr_ci, points=all_points,
        adjusted_ppg=adjusted, adjusted_ci95=adjusted_ci)


def summarise(points: np.ndarray, n_pairs: int) -> DuelResult:
    """Summary of cubeless results for A where game i and game i + n_pairs share dice."""
    points = np.asarray(points, np.int64)
    tables = [TableOutcome(i % n_pairs, i // n_pairs, (int(p),), (int(p),)) for i, p in enumerate(points)]
    return summarise_outcomes(tables)
