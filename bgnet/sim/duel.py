"""Duels between two players with paired (duplicate) dice: cubeless, cubeful money and matches.

Every dice sequence ("deal") is played twice, once from each seat, so luck largely
cancels within a pair; every 95% interval is computed from the per-pair figures.
A deal's dice depend only on the seed and the deal's number, so any split of the
deals (into chunks or worker processes) gives the same games.

The scorers live in ``bgnet.play.scorers`` and the statistics in ``bgnet.sim.duel_stats``
(both re-exported here); this module holds the two engines that play the games:

- ``play_games``/``paired_duel``: cubeless money, fully vectorised; every live
  game advances together and each side scores all its candidates in one call;
- ``play_deals``: the general loop over ``bgnet.play.game`` (the cube, matches, n-ply
  agents), still run in lockstep over many tables so that batch-capable agents
  score all their moves (and cube decisions) in one call per step. The boards of
  all tables sit in one array, and a batched play goes through
  ``game.play_generated``, which trusts the plays generated here instead of
  generating them again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from bgnet.core import _game_kernels as gk
from bgnet.sim.duel_luck import DuelLuck, DuelLuckError
from bgnet.sim.duel_stats import DuelResult, TableOutcome, ratio_ci95, summarise, summarise_outcomes
from bgnet.play.game import (Game, Match, Rules, allowed_answer, double, may_double, may_raccoon, play,
                        play_generated, pre_beaver_state, raccoon, respond, roll, roll_and_play_generated)
from bgnet.core.movegen import generate_plays, swap_sides_batch
from bgnet.core.position import Position
from bgnet.core.probs import Probs
from bgnet.core.protocols import Agent, BatchScorer, Evaluator
from bgnet.core.rules import other_opening_die
from bgnet.play.scorers import NeuralScorer, PubevalScorer, RandomScorer
from bgnet.play.search import RowUtilities, play_values, utility_for
from bgnet.sim.selfplay import START_BOARD

__all__ = ["MAX_PLIES", "BatchScorer", "DuelResult", "NeuralScorer", "PubevalScorer", "RandomScorer",
           "TableOutcome", "deal_dice", "dice_streams", "paired_duel", "play_cubeless", "play_deals", "play_games",
           "play_games_with_luck",
           "ratio_ci95", "summarise", "summarise_outcomes"]

MAX_PLIES = 600
"""Dice rolled per block of a deal's stream; a cubeless vectorised game longer than this counts 0."""


# -- dice ---------------------------------------------------------------------------

def deal_dice(seed: int, deal: int, game: int = 0, block: int = 0, max_plies: int = MAX_PLIES) -> np.ndarray:
    """Dice (max_plies, 2) int8 for game ``game`` of deal ``deal``; block 0 starts with an opening roll.

    Row 0 of block 0 holds the two opening dice (never equal): seat 0's die, then seat 1's.
    """
    rng = np.random.default_rng([int(seed), int(deal), int(game), int(block)])
    dice = rng.integers(1, 7, size=(max_plies, 2), dtype=np.int8)
    if block == 0:
        shift = int(rng.integers(1, 6))
        dice[0, 1] = other_opening_die(int(dice[0, 0]), shift)
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
    return _play_games(scorers, dice, first, None)[0]


def play_games_with_luck(scorers: tuple[BatchScorer, BatchScorer], dice: np.ndarray, first: np.ndarray,
                         luck: DuelLuck) -> tuple[np.ndarray, np.ndarray]:
    """``play_games`` and each game's luck for scorer 0 (``bgnet.sim.duel_luck``: every roll after the opening,
    in cubeless money equity): the same games, and ``result - luck`` has the same mean as the result."""
    return _play_games(scorers, dice, first, luck)


def _play_games(scorers: tuple[BatchScorer, BatchScorer], dice: np.ndarray, first: np.ndarray,
                luck: DuelLuck | None) -> tuple[np.ndarray, np.ndarray]:
    """The games of ``play_games`` and scorer 0's luck in each (zeros without ``luck``)."""
    n_games, max_plies, _ = dice.shape
    boards = np.tile(START_BOARD, (n_games, 1))
    result = np.zeros(n_games, np.int64)
    total = np.zeros(n_games)
    live = np.ones(n_games, bool)
    for ply in range(max_plies):
        idx = np.flatnonzero(live)
        if idx.size == 0:
            break
        on_roll = (first[idx] + ply) % 2
        if luck is not None and ply > 0:  # the opening roll's luck cancels within a pair
            mover_luck = luck.of_rolls(boards[idx], dice[idx, ply])
            total[idx] += np.where(on_roll == 0, mover_luck, -mover_luck)
        after, _s, _n, offsets = generate_plays(boards[idx], dice[idx, ply])
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
        boards[idx] = swap_sides_batch(chosen)
    return result, total


def _cubeless_tables(points: np.ndarray, deals: Sequence[int], luck: np.ndarray | None = None
                     ) -> list[TableOutcome]:
    """Tables from vectorised results: ``points`` (and A's ``luck``) hold A-first games of ``deals``, then B-first
    ones."""
    n = len(deals)
    return [TableOutcome(int(deals[i % n]), i // n, (int(p),), (int(p),),
                         luck=None if luck is None else float(luck[i])) for i, p in enumerate(points)]


def paired_duel(a: BatchScorer, b: BatchScorer, n_pairs: int, seed: int, max_plies: int = MAX_PLIES,
                first_deal: int = 0) -> DuelResult:
    """Play deals ``first_deal ... first_deal + n_pairs - 1`` twice (A first, then B first); A's summary."""
    deals = list(range(first_deal, first_deal + n_pairs))
    return summarise_outcomes(play_cubeless(a, b, deals, seed, max_plies))


def play_cubeless(a: BatchScorer, b: BatchScorer, deals: Sequence[int], seed: int,
                  max_plies: int = MAX_PLIES, luck: DuelLuck | None = None) -> list[TableOutcome]:
    """Vectorised cubeless money games of ``deals``, each twice with sides swapped (A moves first in side 0); with
    ``luck``, each table records A's luck (``TableOutcome.luck``) for a luck-adjusted summary."""
    n = len(deals)
    dice = np.stack([deal_dice(seed, d, max_plies=max_plies) for d in deals]) if n else np.zeros((0, max_plies, 2), np.int8)
    both = np.concatenate([dice, dice])
    first = np.concatenate([np.zeros(n, np.int64), np.ones(n, np.int64)])
    points, total = _play_games((a, b), both, first, luck)
    return _cubeless_tables(points, deals, total if luck is not None else None)


# -- the general engine: bgnet.play.game in lockstep over many tables ------------------------------

@dataclass
class _Table:
    """One deal being played at one table: the match, the game in progress and the dice left."""

    deal: int
    side: int
    match: Match
    game: Game
    game_index: int
    dice: list[int]
    """The current block of the game's dice stream (``deal_dice``'s rows, flattened to ints)."""
    row: int = 0
    """This table's row in the lockstep's board array (``_Lockstep.boards``)."""
    block: int = 0
    next_roll: int = 1
    points: list[int] = field(default_factory=list)
    kinds: list[int] = field(default_factory=list)
    done: bool = False
    seen: Game | None = None
    """The last state shown to the observer of ``play_deals``."""
    rolled: tuple[int, int] | None = None
    """Dice rolled but not yet applied to ``game`` (when nobody observes, the roll and the play are one step)."""
    luck: float = 0.0
    """A's luck so far over the table's games (``play_deals`` with a judge; cubeless money equity)."""

    def agent_of(self, seat: int) -> int:
        """Index of the agent (0 = A, 1 = B) sitting in ``seat``."""
        return seat if self.side == 0 else 1 - seat


Observer = Callable[[int, int, Game], None]
"""Called by ``play_deals`` with (deal, side, game) for each new game and every state a game then passes through."""


class _Lockstep:
    """What ``play_deals`` keeps beside its tables: each game's board as a row of one array.

    ``boards[t.row]`` is always ``t.game.position.board``, so a step gathers the boards
    of many tables with one fancy index instead of one tuple-to-array copy per table.
    """

    def __init__(self, tables: list[_Table], seed: int, observer: Observer | None) -> None:
        self.seed = seed
        self.observer = observer
        self.boards = np.zeros((len(tables), 26), np.int8)
        for i, t in enumerate(tables):
            t.row = i
            self.boards[i] = t.game.position.board

    def start_game(self, t: _Table) -> None:
        """Deal the table's next game: fresh dice; game 0 opens with seat 0, later games with the higher opening die."""
        t.dice = _dice_block(self.seed, t.deal, t.game_index)
        t.block, t.next_roll = 0, 1
        d0, d1 = t.dice[0], t.dice[1]
        first = 0 if t.game_index == 0 or d0 > d1 else 1
        t.game = t.match.start(first, (d0, d1))
        self.boards[t.row] = t.game.position.board
        _observe([t], self.observer)

    def decisions_for(self, tables: list[_Table], evaluator: Evaluator) -> list[tuple[str, str | None]]:
        """Cube ``(action, response)`` (``bgnet.cube.decision.cube_action``) for each table's position on turn, from one
        batched probability call."""
        from bgnet.cube.decision import cube_action, cube_efficiencies

        boards = self.boards[[t.row for t in tables]]
        probs = np.asarray(evaluator.probs_of_boards(boards), np.float64)
        return [cube_action(row, t.game.match_state(), efficiency=x)
                for t, row, x in zip(tables, probs.tolist(), cube_efficiencies(boards).tolist())]


def _observe(tables: list[_Table], observer: Observer | None) -> None:
    """Tell ``observer`` about every table whose game has moved on since it last heard."""
    if observer is None:
        return
    for t in tables:
        if t.game is not t.seen:
            t.seen = t.game
            observer(t.deal, t.side, t.game)


def _dice_block(seed: int, deal: int, game: int, block: int = 0) -> list[int]:
    """``deal_dice``'s block as one flat list of ints (the game loop reads two at a time)."""
    return deal_dice(seed, deal, game, block).ravel().tolist()


def _next_dice(t: _Table, seed: int) -> tuple[int, int]:
    """The table's next roll from its deal's stream (extended block by block if ever needed)."""
    i = 2 * t.next_roll
    if i >= len(t.dice):
        t.block += 1
        t.dice = _dice_block(seed, t.deal, t.game_index, t.block)
        t.next_roll, i = 0, 0
    t.next_roll += 1
    return t.dice[i], t.dice[i + 1]


def play_deals(agents: tuple[Agent, Agent], rules: Rules, deals: Sequence[int], seed: int,
               max_games: int = 0, observer: Observer | None = None, luck: DuelLuck | None = None
               ) -> list[TableOutcome]:
    """Play each deal twice (A in seat 0, then in seat 1) under ``rules`` and return A's tables.

    Money play is one game per table; a match runs until a side wins it. Every step
    handles all tables together: cube offers, answers, rolls, then moves, where a
    batch-capable agent scores the plays (and probabilities) of all its tables at
    once and any other agent is asked table by table. ``max_games`` (money only)
    plays that many games per table instead of one. ``observer`` (see ``Observer``) sees
    every state of every game, so that the games can be recorded (``bgnet.io.recorder``). With ``luck`` (cubeless
    money only) each table records A's luck, every roll after a game's opening judged as ``play_cubeless`` judges
    it, so the same games give the same luck on either engine.
    """
    if luck is not None and not (rules.is_money and not rules.cubeful):
        raise DuelLuckError("a duel's luck is measured in cubeless money games only")
    per_table = max(1, max_games) if rules.is_money else 0
    tables: list[_Table] = []
    for d in deals:
        for side in (0, 1):
            match, dice = Match(rules), _dice_block(seed, int(d), 0)
            first_game = match.start(0, (dice[0], dice[1]))  # game 0 opens with seat 0
            tables.append(_Table(int(d), side, match, first_game, 0, dice))
    _observe(tables, observer)
    state = _Lockstep(tables, seed, observer)
    scorers = (agents[0].batch_scorer(), agents[1].batch_scorer())
    cube_evaluators = (agents[0].cube_evaluator(), agents[1].cube_evaluator())
    live = list(tables)
    while live:
        _cube_offers(live, agents, cube_evaluators, state)
        _observe(live, observer)
        _cube_answers(live, agents, cube_evaluators, state)
        _observe(live, observer)
        for t in live:
            if t.game.phase == "beavered":
                doubler = agents[t.agent_of(t.game.turn)]
                t.game = raccoon(t.game, may_raccoon(t.game)
                                 and doubler.offers_raccoon(t.game.position, pre_beaver_state(t.game)))
        _observe(live, observer)
        rolling = [t for t in live if t.game.phase == "roll"]  # a game's opening roll came with ``start``
        rolls = [_next_dice(t, seed) for t in rolling]
        if luck is not None and rolling:
            _add_luck(rolling, rolls, luck, state)
        for t, rolled in zip(rolling, rolls):
            if observer is None:
                t.rolled = rolled  # applied with the play, in ``_moves``
            else:
                t.game = roll(t.game, rolled)
        _observe(live, observer)
        _moves(live, agents, scorers, cube_evaluators, state)
        _observe(live, observer)
        still: list[_Table] = []
        for t in live:
            if t.game.is_over:
                _finish_game(t, per_table, state)
            if not t.done:
                still.append(t)
        live = still
    return [TableOutcome(t.deal, t.side, tuple(t.points), tuple(t.kinds),
                         None if rules.is_money else _a_won_match(t), None if luck is None else t.luck)
            for t in tables]


def _add_luck(tables: list[_Table], rolls: list[tuple[int, int]], luck: DuelLuck, state: _Lockstep) -> None:
    """Add each table's roll's luck (judged for its side on roll, from one batched call) to A's total."""
    values = luck.of_rolls(state.boards[[t.row for t in tables]], np.array(rolls, np.int8))
    for t, value in zip(tables, values.tolist()):
        t.luck += value if t.agent_of(t.game.turn) == 0 else -value


def _a_won_match(t: _Table) -> bool:
    """Whether agent A won the table's finished match."""
    w = t.match.winner
    return w is not None and t.agent_of(w) == 0


def _finish_game(t: _Table, per_table: int, state: _Lockstep) -> None:
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
        state.start_game(t)


def _by_agent(tables: list[_Table], answering: bool = False) -> tuple[list[_Table], list[_Table]]:
    """``tables`` split by the agent (A, then B) on turn, or with ``answering`` the one not on turn; order kept."""
    groups: tuple[list[_Table], list[_Table]] = ([], [])
    flip = 1 if answering else 0
    for t in tables:
        groups[t.side ^ t.game.turn ^ flip].append(t)  # agent_of(seat): the seat itself at side 0, the other at side 1
    return groups


def _cube_offers(live: list[_Table], agents: tuple[Agent, Agent],
                 cube_evaluators: tuple[Evaluator | None, Evaluator | None], state: _Lockstep) -> None:
    """Ask every side on roll that may double whether it does."""
    asking = [t for t in live if t.game.phase == "roll" and may_double(t.game)]
    for k, mine in enumerate(_by_agent(asking)):
        if not mine:
            continue
        fn = cube_evaluators[k]
        if fn is not None:
            offers = [action.startswith("double") for action, _r in state.decisions_for(mine, fn)]
        else:
            offers = [agents[k].offers_double(t.game.position, t.game.match_state()) for t in mine]
        for t, yes in zip(mine, offers):
            if yes:
                t.game = double(t.game)


def _cube_answers(live: list[_Table], agents: tuple[Agent, Agent],
                  cube_evaluators: tuple[Evaluator | None, Evaluator | None], state: _Lockstep) -> None:
    """Ask every doubled side for its answer (a beaver counts as a take where ``allowed_answer`` says so)."""
    doubled = [t for t in live if t.game.phase == "doubled"]
    for k, mine in enumerate(_by_agent(doubled, answering=True)):
        if not mine:
            continue
        fn = cube_evaluators[k]
        if fn is not None:
            answers = [response or "take" for _a, response in state.decisions_for(mine, fn)]
        else:
            answers = [agents[k].cube_response(t.game.position, t.game.match_state()) for t in mine]
        for t, answer in zip(mine, answers):
            t.game = respond(t.game, allowed_answer(t.game, answer))


def _match_values(tables: list[_Table], evaluator: Evaluator, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each play's cubeless equity at its table's match score (``bgnet.play.search.utility_for``), one forward pass
    (``play_values``: a pruned evaluator values the plays its pruning net keeps for each table)."""
    utilities = RowUtilities.per_segment([utility_for(t.game.match_state()) for t in tables], offsets)
    return play_values(evaluator, swap_sides_batch(after), offsets, utilities)


def _moves(live: list[_Table], agents: tuple[Agent, Agent], scorers: tuple[BatchScorer | None, BatchScorer | None],
           cube_evaluators: tuple[Evaluator | None, Evaluator | None], state: _Lockstep) -> None:
    """Every side with dice plays: batched through the agent's scorer when it has one (at the match score when
    the agent gives probabilities), else one ``choose_move`` per table.

    A batched play comes from the plays generated here, so it goes through
    ``game.play_generated`` (no second move generation to check it).
    """
    moving = [t for t in live if t.rolled is not None or t.game.phase == "move"]
    for k, mine in enumerate(_by_agent(moving)):
        if not mine:
            continue
        scorer = scorers[k]
        fn = cube_evaluators[k]
        if scorer is not None and fn is None and not mine[0].game.rules.is_money and agents[k].ply > 0:
            scorer = None  # n-ply at a match score: the agent's own match-aware search, table by table
        if scorer is None:
            for t in mine:
                if t.rolled is not None:
                    t.game, t.rolled = roll(t.game, t.rolled), None
                assert t.game.dice is not None
                t.game = play(t.game, agents[k].choose_move(t.game.position, t.game.dice, t.game.match_state()))
                state.boards[t.row] = t.game.position.board
            continue
        rows = np.array([t.row for t in mine], np.int64)
        boards = state.boards[rows]
        dice = np.array([t.game.dice if t.rolled is None else t.rolled for t in mine], np.int8)
        after, _s, _n, offsets = generate_plays(boards, dice)
        if fn is not None and not mine[0].game.rules.is_money:
            values = _match_values(mine, fn, after, offsets)
        else:
            values = scorer.score_plays(boards, after, offsets)
        chosen = after[gk.segment_argmax(values, offsets)]
        codes = gk.terminal_codes(chosen)
        turned = swap_sides_batch(chosen)
        state.boards[rows] = np.where((codes != 0)[:, None], chosen, turned)  # each Game's new position
        for t, b, code in zip(mine, Position._trusted_rows(turned.tolist()), codes.tolist()):
            if t.rolled is None:
                t.game = play_generated(t.game, b, code)
            else:
                t.game, t.rolled = roll_and_play_generated(t.game, t.rolled, b, code), None
