"""Duels between two players with paired (duplicate) dice: cubeless, cubeful money and matches.

Every dice sequence ("deal") is played twice, once from each seat, so luck largely
cancels within a pair; every 95% interval is computed from the per-pair figures.
A deal's dice depend only on the seed and the deal's number, so any split of the
deals (into chunks or worker processes) gives the same games.

Two engines play the games:

- ``play_games``/``paired_duel``: cubeless money, fully vectorised; every live
  game advances together and each side scores all its candidates in one call;
- ``play_deals``: the general loop over ``bgnet.game`` (the cube, matches, n-ply
  agents), still run in lockstep over many tables so that batch-capable agents
  score all their moves (and cube decisions) in one call per step.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, Sequence

import numpy as np

from bgnet import _game_kernels as gk
from bgnet import _movegen_kernels as mk
from bgnet.encoding import race_flags
from bgnet.game import (Game, Match, Rules, double, may_double, play, pre_beaver_state, raccoon, respond, roll,
                        wants_raccoon)
from bgnet.probs import equities
from bgnet.movegen import _SCRATCH
from bgnet.position import Position
from bgnet.probs import Probs
from bgnet.selfplay import START_BOARD, ProbsFn

MAX_PLIES = 600
"""Dice rolled per block of a deal's stream; a cubeless vectorised game longer than this counts 0."""


class BatchScorer(Protocol):
    """Scores candidate plays: higher is better for the mover."""

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Scores (N,) for afterstates ``after`` (N, 26) seen from the mover; game i's plays are
        ``offsets[i]:offsets[i + 1]`` and its position before the roll is ``before[i]``."""
        ...


class NeuralScorer:
    """0-ply neural scoring: the mover's cubeless equity of each afterstate (exact when the game ends)."""

    def __init__(self, probs_fn: ProbsFn) -> None:
        self.probs_fn = probs_fn

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        from bgnet.selfplay import score_candidates

        cand = mk.swap_sides_batch(after)
        return -equities(score_candidates(cand, self.probs_fn))


class PubevalScorer:
    """Tesauro's pubeval, with race or contact weights chosen from the position before the move."""

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        from bgnet.pubeval import pubeval_scores

        race = np.repeat(race_flags(before), np.diff(offsets))
        return pubeval_scores(after, race=race)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser, elementwise on uint64 (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _board_hash(boards: np.ndarray, key: np.uint64) -> np.ndarray:
    """A 64-bit hash of each board row (N, 26) int8, keyed."""
    padded = np.zeros((boards.shape[0], 32), np.int8)
    padded[:, :26] = boards
    words = padded.view(np.uint64)
    h = np.full(boards.shape[0], key, np.uint64)
    for k in range(4):
        h = _mix(h ^ words[:, k])
    return h


class RandomScorer:
    """Uniformly random play: a seeded hash of (position, play), so a choice never depends on batching."""

    def __init__(self, seed: int = 0) -> None:
        self.key = np.random.SeedSequence([int(seed), 0x5EED]).generate_state(1, np.uint64)[0]

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        h_before = np.repeat(_board_hash(np.ascontiguousarray(before, np.int8), self.key), np.diff(offsets))
        h = _board_hash(np.ascontiguousarray(after, np.int8), self.key) ^ _mix(h_before)
        return (_mix(h) >> np.uint64(11)).astype(np.float64) / float(1 << 53)


# -- dice ---------------------------------------------------------------------------

def deal_dice(seed: int, deal: int, game: int = 0, block: int = 0, max_plies: int = MAX_PLIES) -> np.ndarray:
    """Dice (max_plies, 2) int8 for game ``game`` of deal ``deal``; block 0 starts with an opening roll.

    Row 0 of block 0 holds the two opening dice (never equal): seat 0's die, then seat 1's.
    """
    rng = np.random.default_rng([int(seed), int(deal), int(game), int(block)])
    dice = rng.integers(1, 7, size=(max_plies, 2), dtype=np.int8)
    if block == 0:
        shift = int(rng.integers(1, 6))
        dice[0, 1] = (int(dice[0, 0]) - 1 + shift) % 6 + 1
    return dice


def dice_streams(seed: int, n_streams: int, max_plies: int = MAX_PLIES, first_deal: int = 0) -> np.ndarray:
    """Dice (n_streams, max_plies, 2) for deals ``first_deal ...``; ply 0 of each is an opening roll."""
    if n_streams == 0:
        return np.zeros((0, max_plies, 2), np.int8)
    return np.stack([deal_dice(seed, first_deal + i, max_plies=max_plies) for i in range(n_streams)])


# -- cubeless vectorised engine ----------------------------------------------------------

def play_games(scorers: tuple[BatchScorer, BatchScorer], dice: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Play one game per dice stream; ``first[g]`` (0 or 1) is the scorer that moves first in game g.

    Returns the signed result for scorer 0 of each game (+-1, 2, 3 points; 0 if unfinished).
    """
    n_games, max_plies, _ = dice.shape
    boards = np.tile(START_BOARD, (n_games, 1))
    result = np.zeros(n_games, np.int64)
    live = np.ones(n_games, bool)
    for ply in range(max_plies):
        idx = np.flatnonzero(live)
        if idx.size == 0:
            break
        on_roll = (first[idx] + ply) % 2
        after, _s, _n, offsets = mk.gen_batch(boards[idx], dice[idx, ply], *_SCRATCH)
        scores = np.empty(after.shape[0])
        counts = np.diff(offsets)
        for side in (0, 1):
            sel = on_roll == side
            if not sel.any():
                continue
            rows = np.repeat(sel, counts)
            sub_off = np.concatenate(([0], np.cumsum(counts[sel])))
            scores[rows] = scorers[side].score_plays(boards[idx[sel]], after[rows], sub_off)
        choice = gk.segment_argmax(scores, offsets)
        chosen = after[choice]
        codes = gk.terminal_codes(chosen)  # seen from the mover: > 0 when the mover just won
        over = codes != 0
        sign = np.where(on_roll == 0, 1, -1)
        result[idx[over]] = sign[over] * codes[over]
        live[idx[over]] = False
        boards[idx] = mk.swap_sides_batch(chosen)
    return result


# -- results ---------------------------------------------------------------------------

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
            if t.match_won is not None:
                mcount[i] += 1
                mwins[i] += int(t.match_won)
    ppg, ci = ratio_ci95(pts, games)
    win, win_ci = ratio_ci95(wins, games)
    gam, gam_ci = ratio_ci95(gammons, games)
    bg, bg_ci = ratio_ci95(backgammons, games)
    matches = int(mcount.sum())
    mwr, mwr_ci = ratio_ci95(mwins, mcount) if matches else (None, None)
    return DuelResult(
        games=int(games.sum()), ppg=ppg, ci95=ci, win_rate=win, gammon_rate=gam, backgammon_rate=bg,
        win_rate_ci95=win_ci, gammon_rate_ci95=gam_ci, backgammon_rate_ci95=bg_ci,
        gammon_win_rate=ratio_ci95(gwin, games)[0], gammon_loss_rate=ratio_ci95(gloss, games)[0],
        pairs=n_units, matches=matches, match_win_rate=mwr, match_win_rate_ci95=mwr_ci, points=all_points)


def summarise(points: np.ndarray, n_pairs: int) -> DuelResult:
    """Summary of cubeless results for A where game i and game i + n_pairs share dice."""
    points = np.asarray(points, np.int64)
    tables = [TableOutcome(i % n_pairs, i // n_pairs, (int(p),), (int(p),)) for i, p in enumerate(points)]
    return summarise_outcomes(tables)


def _cubeless_tables(points: np.ndarray, deals: Sequence[int]) -> list[TableOutcome]:
    """Tables from vectorised results: ``points`` holds A-first games of ``deals``, then B-first ones."""
    n = len(deals)
    return [TableOutcome(int(deals[i % n]), i // n, (int(p),), (int(p),)) for i, p in enumerate(points)]


def paired_duel(a: BatchScorer, b: BatchScorer, n_pairs: int, seed: int, max_plies: int = MAX_PLIES,
                first_deal: int = 0) -> DuelResult:
    """Play deals ``first_deal ... first_deal + n_pairs - 1`` twice (A first, then B first); A's summary."""
    deals = list(range(first_deal, first_deal + n_pairs))
    return summarise_outcomes(play_cubeless(a, b, deals, seed, max_plies))


def play_cubeless(a: BatchScorer, b: BatchScorer, deals: Sequence[int], seed: int,
                  max_plies: int = MAX_PLIES) -> list[TableOutcome]:
    """Vectorised cubeless money games of ``deals``, each twice with sides swapped (A moves first in side 0)."""
    n = len(deals)
    dice = np.stack([deal_dice(seed, d, max_plies=max_plies) for d in deals]) if n else np.zeros((0, max_plies, 2), np.int8)
    both = np.concatenate([dice, dice])
    first = np.concatenate([np.zeros(n, np.int64), np.ones(n, np.int64)])
    return _cubeless_tables(play_games((a, b), both, first), deals)


# -- the general engine: bgnet.game in lockstep over many tables ------------------------------

class DuelAgent(Protocol):
    """What ``play_deals`` needs from a player (``bgnet.agents`` agents fit)."""

    def choose_move(self, pos: Position, dice: Sequence[int], state: Any = None) -> Any: ...
    def offers_double(self, pos: Position, state: Any) -> bool: ...
    def cube_response(self, pos: Position, state: Any) -> str: ...
    def batch_scorer(self) -> BatchScorer | None: ...


def batch_probs(agent: object) -> ProbsFn | None:
    """A batched probability function that gives the agent's own cube decisions, or None.

    Uses ``agent.batch_probs()`` when the agent has it; otherwise the agent's
    ``probs_fn`` when it searches 0 plies (its cube actions then come from those
    probabilities through ``bgnet.cube``, as ``bgnet.agents`` does).
    """
    hook = getattr(agent, "batch_probs", None)
    if hook is not None:
        return hook()  # type: ignore[no-any-return]
    fn = getattr(agent, "probs_fn", None)
    if fn is not None and getattr(agent, "ply", None) == 0:
        return fn  # type: ignore[no-any-return]
    return None


@dataclass
class _Table:
    """One deal being played at one table: the match, the game in progress and the dice left."""

    deal: int
    side: int
    match: Match
    game: Game
    game_index: int
    dice: np.ndarray
    block: int = 0
    next_roll: int = 1
    points: list[int] = field(default_factory=list)
    kinds: list[int] = field(default_factory=list)
    done: bool = False

    def agent_of(self, seat: int) -> int:
        """Index of the agent (0 = A, 1 = B) sitting in ``seat``."""
        return seat if self.side == 0 else 1 - seat


def _start_game(t: _Table, seed: int) -> None:
    """Deal the table's next game: fresh dice; game 0 opens with seat 0, later games with the higher opening die."""
    t.dice = deal_dice(seed, t.deal, t.game_index)
    t.block, t.next_roll = 0, 1
    d0, d1 = int(t.dice[0, 0]), int(t.dice[0, 1])
    first = 0 if t.game_index == 0 or d0 > d1 else 1
    t.game = t.match.start(first, (d0, d1))


def _next_dice(t: _Table, seed: int) -> tuple[int, int]:
    """The table's next roll from its deal's stream (extended block by block if ever needed)."""
    if t.next_roll >= len(t.dice):
        t.block += 1
        t.dice = deal_dice(seed, t.deal, t.game_index, t.block)
        t.next_roll = 0
    d = t.dice[t.next_roll]
    t.next_roll += 1
    return int(d[0]), int(d[1])


def play_deals(agents: tuple[DuelAgent, DuelAgent], rules: Rules, deals: Sequence[int], seed: int,
               max_games: int = 0) -> list[TableOutcome]:
    """Play each deal twice (A in seat 0, then in seat 1) under ``rules`` and return A's tables.

    Money play is one game per table; a match runs until a side wins it. Every step
    handles all tables together: cube offers, answers, rolls, then moves, where a
    batch-capable agent scores the plays (and probabilities) of all its tables at
    once and any other agent is asked table by table. ``max_games`` (money only)
    plays that many games per table instead of one.
    """
    per_table = max(1, max_games) if rules.is_money else 0
    tables: list[_Table] = []
    for d in deals:
        for side in (0, 1):
            t = _Table(int(d), side, Match(rules), None, 0, np.zeros((0, 2), np.int8))  # type: ignore[arg-type]
            _start_game(t, seed)
            tables.append(t)
    scorers = (agents[0].batch_scorer(), agents[1].batch_scorer())
    probs_fns = (batch_probs(agents[0]), batch_probs(agents[1]))
    live = list(tables)
    while live:
        _cube_offers(live, agents, probs_fns)
        _cube_answers(live, agents, probs_fns)
        for t in live:
            if t.game.phase == "beavered":
                doubler = agents[t.agent_of(t.game.turn)]
                t.game = raccoon(t.game, wants_raccoon(doubler, t.game.position, pre_beaver_state(t.game)))
        for t in live:
            if t.game.phase == "roll":
                t.game = roll(t.game, _next_dice(t, seed))
        _moves(live, agents, scorers, probs_fns)
        still: list[_Table] = []
        for t in live:
            if t.game.is_over:
                _finish_game(t, seed, per_table)
            if not t.done:
                still.append(t)
        live = still
    return [TableOutcome(t.deal, t.side, tuple(t.points), tuple(t.kinds),
                         None if rules.is_money else _a_won_match(t)) for t in tables]


def _a_won_match(t: _Table) -> bool:
    """Whether agent A won the table's finished match."""
    w = t.match.winner
    return w is not None and t.agent_of(w) == 0


def _finish_game(t: _Table, seed: int, per_table: int) -> None:
    """Record a finished game at the table and deal the next one, or close the table."""
    res = t.game.result
    assert res is not None
    a_seat = 0 if t.side == 0 else 1
    sign = 1 if res.winner == a_seat else -1
    t.points.append(sign * res.points)
    t.kinds.append(sign * int(res.kind))
    t.match = t.match.record(t.game)
    t.game_index += 1
    if t.match.is_over or (per_table and t.game_index >= per_table):
        t.done = True
    else:
        _start_game(t, seed)


def _decisions(tables: list[_Table], probs_fn: ProbsFn) -> list[Any]:
    """Cube decisions (``bgnet.cube``) for each table's position on turn from one batched probability call."""
    from bgnet.cube import cube_decision

    boards = np.array([t.game.position.board for t in tables], np.int8).reshape(-1, 26)
    probs = np.asarray(probs_fn(boards), np.float64)
    return [cube_decision(Probs(*map(float, row)), t.game.match_state(), t.game.position)
            for t, row in zip(tables, probs)]


def _cube_offers(live: list[_Table], agents: tuple[DuelAgent, DuelAgent],
                 probs_fns: tuple[ProbsFn | None, ProbsFn | None]) -> None:
    """Ask every side on roll that may double whether it does."""
    asking = [t for t in live if t.game.phase == "roll" and may_double(t.game)]
    groups = ([t for t in asking if t.agent_of(t.game.turn) == 0], [t for t in asking if t.agent_of(t.game.turn) == 1])
    for k, mine in enumerate(groups):
        if not mine:
            continue
        fn = probs_fns[k]
        if fn is not None:
            offers = [d.action.startswith("double") for d in _decisions(mine, fn)]
        else:
            offers = [agents[k].offers_double(t.game.position, t.game.match_state()) for t in mine]
        for t, yes in zip(mine, offers):
            if yes:
                t.game = double(t.game)


def _cube_answers(live: list[_Table], agents: tuple[DuelAgent, DuelAgent],
                  probs_fns: tuple[ProbsFn | None, ProbsFn | None]) -> None:
    """Ask every doubled side for its answer (a beaver counts as a take where beavers are off)."""
    doubled = [t for t in live if t.game.phase == "doubled"]
    groups = ([t for t in doubled if t.agent_of(t.game.opponent) == 0],
              [t for t in doubled if t.agent_of(t.game.opponent) == 1])
    for k, mine in enumerate(groups):
        if not mine:
            continue
        fn = probs_fns[k]
        if fn is not None:
            answers = [d.response or "take" for d in _decisions(mine, fn)]
        else:
            answers = [agents[k].cube_response(t.game.position, t.game.match_state()) for t in mine]
        for t, answer in zip(mine, answers):
            if answer == "beaver" and not t.game.rules.beavers:
                answer = "take"
            t.game = respond(t.game, answer)


def _match_values(tables: list[_Table], probs_fn: ProbsFn, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each play's cubeless equity at its table's match score (``bgnet.search.utility_for``), one forward pass."""
    from bgnet.search import utility_for
    from bgnet.selfplay import score_candidates

    opp = score_candidates(mk.swap_sides_batch(after), probs_fn).astype(np.float64)
    mover = np.stack([1.0 - opp[:, 0], opp[:, 3], opp[:, 4], opp[:, 1], opp[:, 2]], axis=1)
    utils = [utility_for(t.game.match_state()) for t in tables]
    counts = np.diff(offsets)
    const = np.repeat([u.const for u in utils], counts)
    weights = np.repeat(np.array([u.weights for u in utils], np.float64), counts, axis=0)
    return const + (mover * weights).sum(axis=1)


def _moves(live: list[_Table], agents: tuple[DuelAgent, DuelAgent], scorers: tuple[BatchScorer | None, BatchScorer | None],
           probs_fns: tuple[ProbsFn | None, ProbsFn | None]) -> None:
    """Every side with dice plays: batched through the agent's scorer when it has one (at the match score when
    the agent gives probabilities), else one ``choose_move`` per table."""
    moving = [t for t in live if t.game.phase == "move"]
    groups = ([t for t in moving if t.agent_of(t.game.turn) == 0], [t for t in moving if t.agent_of(t.game.turn) == 1])
    for k, mine in enumerate(groups):
        if not mine:
            continue
        scorer = scorers[k]
        fn = probs_fns[k]
        if scorer is not None and fn is None and not mine[0].game.rules.is_money and getattr(agents[k], "ply", 0) > 0:
            scorer = None  # n-ply at a match score: the agent's own match-aware search, table by table
        if scorer is None:
            for t in mine:
                assert t.game.dice is not None
                t.game = play(t.game, agents[k].choose_move(t.game.position, t.game.dice, t.game.match_state()))
            continue
        boards = np.array([t.game.position.board for t in mine], np.int8)
        dice = np.array([t.game.dice for t in mine], np.int8)
        after, _s, _n, offsets = mk.gen_batch(boards, dice, *_SCRATCH)
        if fn is not None and not mine[0].game.rules.is_money:
            values = _match_values(mine, fn, after, offsets)
        else:
            values = scorer.score_plays(boards, after, offsets)
        choice = gk.segment_argmax(values, offsets)
        for t, row in zip(mine, after[choice].tolist()):
            t.game = play(t.game, Position._trusted(tuple(row)))
