"""n-ply lookahead over all 21 rolls with GNU Backgammon-style move filters, batched per level.

Plies are counted the way GNU Backgammon counts them:

* ``evaluate_position(fn, pos, 0)`` is the net's cubeless chances for the side on roll;
* ``evaluate_position(fn, pos, n)`` (n > 0) averages over the 21 rolls of the side on
  roll, weighted 1/36 (doubles) or 2/36: for each roll that side picks its best play
  by the 0-ply value of the afterstate, and the roll is worth the opponent's
  ``n - 1``-ply evaluation of that afterstate, turned round (``Probs.flip``);
* a play ranked at n plies is worth the opponent's n-ply evaluation of its
  afterstate, turned round: 0-ply ranks by the net on the afterstate, 1-ply by the
  opponent's best 0-ply replies to each of his 21 rolls.

A play whose search stops at 1 ply is chosen by ``blend_one_ply``: the mean of its 1-ply and 0-ply values. The
net is fitted to its own deeper searches, so its 0-ply value already holds much of what one more ply adds, while
the 1-ply average brings back the errors of the 21 leaves it averages; the mean of the two chose better plays than
either in duels (docs/BENCHMARKS.md). Positions' own evaluations (``evaluate_boards``, ``evaluate_position``,
labels, cube decisions) and deeper searches are the plain search.

Replies inside the tree are chosen at 0 ply, as gnubg does, which keeps 2-ply to
one move-generation call and one evaluation per level. Each level handles all its
positions at once: one ``generate_plays`` call for every roll of every position,
one evaluator call for every reply, and a segment argmax; there is no Python loop
over rolls or replies. Finished games are scored exactly, never by the net. A level
searches each distinct board of its batch once. With a ``PrunedEvaluator``
(``bgnet.nets.pruning``) the net values only the replies of each roll that its
pruning net ranks highest; the chosen reply is still the net's best of those.

Plays are ranked by cubeless money equity, or, when a match ``MatchState`` is
given, by cubeless match winning chances from the match equity table (gammon
values at the score), reported as a normalised equity (``equity_at_score``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from bgnet.core import _game_kernels as gk
from bgnet.nets.bearoff import DatabaseEvaluator, exact_probs, is_bearoff
from bgnet.nets.pruning import PrunedEvaluator, kept_rows
from bgnet.core.distinct import distinct_boards
from bgnet.core.errors import BgnetError
from bgnet.cube.match import MatchState
from bgnet.core.movegen import afterstate_boards, generate_plays, legal_moves, parse_dice, swap_sides_batch
from bgnet.core.notation import Move
from bgnet.core.position import Position
from bgnet.core.probs import Probs, flip_probs
from bgnet.core.protocols import Evaluator, EvaluatorLike, ProbsFn, as_evaluator

__all__ = ["DEFAULT_FILTERS", "MAX_PLY", "MONEY", "ROLLS", "ROLL_WEIGHTS", "Evaluator", "EvaluatorLike", "MoveFilter",
           "ProbsFn", "RankedMove", "RowUtilities", "SearchError", "SearchScorer", "Utility", "best_move",
           "check_ply", "equity_at_score", "evaluate_boards", "evaluate_position", "leaf_probs",
           "match_winning_chance", "mwc_to_equity", "play_chances_and_values", "play_values", "rank_moves",
           "utility_for", "blend_one_ply", "ONE_PLY_WEIGHT"]

MAX_PLY = 3
"""Deepest search accepted (3-ply is slow on a CPU; 2-ply is the practical limit)."""

ONE_PLY_WEIGHT = 0.5
"""The 1-ply search's share of a play's value when a move choice stops at 1 ply (``blend_one_ply``)."""


def blend_one_ply(zero_ply: np.ndarray, searched: np.ndarray, ply: int) -> np.ndarray:
    """The chances of the plays a move choice that stops at ``ply`` searched, from their 0-ply chances ``zero_ply``
    and their ``ply``-ply ones ``searched`` (same shape, same side): at 1 ply ``ONE_PLY_WEIGHT`` of the search and the
    rest the 0-ply chances, deeper the search's own."""
    if ply != 1:
        return searched
    return ONE_PLY_WEIGHT * np.asarray(searched, np.float64) + (1.0 - ONE_PLY_WEIGHT) * np.asarray(zero_ply, np.float64)

ROLLS: tuple[tuple[int, int], ...] = tuple((a, b) for a in range(1, 7) for b in range(1, a + 1))
"""The 21 distinct rolls, larger die first."""
ROLL_WEIGHTS = np.array([1.0 / 36.0 if a == b else 2.0 / 36.0 for a, b in ROLLS], np.float64)
"""Probability of each of ``ROLLS``."""
_ROLL_DICE = np.array(ROLLS, np.int8)


class SearchError(BgnetError):
    """A search request that cannot be carried out (bad ply, bad filter)."""


@dataclass(frozen=True)
class MoveFilter:
    """Which plays of one level go on to the next, deeper level (GNU Backgammon's move filter)."""

    accept: int = 0
    """Plays kept whatever their equity, best first (the best play is always kept)."""
    extra: int = 8
    """Up to this many more plays are kept when within ``threshold`` of the best."""
    threshold: float = 0.16
    """Equity margin (cubeless points per game) from the best play for the extra plays."""

    def __post_init__(self) -> None:
        if self.accept < 0 or self.extra < 0 or not self.threshold >= 0.0:
            raise SearchError(f"a move filter needs accept >= 0, extra >= 0 and threshold >= 0, got {self}")

    def select(self, values: np.ndarray) -> np.ndarray:
        """Indices of the plays to keep, best first, given their values (higher is better)."""
        order = np.argsort(-values, kind="stable")
        if len(order) == 0:
            return order
        best = values[order[0]]
        keep = max(1, self.accept)
        head, tail = order[:keep], order[keep:]
        near = tail[values[tail] >= best - self.threshold][: self.extra]
        return np.concatenate([head, near])


DEFAULT_FILTERS: tuple[MoveFilter, ...] = (MoveFilter(0, 8, 0.16), MoveFilter(0, 2, 0.04))
"""Filters after 0-ply and after 1-ply (the second is used only by 2-ply and deeper searches)."""


# -- utilities: what each side maximises ----------------------------------------------


@dataclass(frozen=True)
class Utility:
    """A value linear in the five probabilities, for the side they belong to: ``const + weights . probs``."""

    const: float
    weights: tuple[float, float, float, float, float]

    def of(self, probs: np.ndarray) -> np.ndarray:
        """Values (N,) of probability rows (N, 5)."""
        return self.const + np.asarray(probs, np.float64) @ np.asarray(self.weights, np.float64)


MONEY = Utility(-1.0, (2.0, 1.0, 1.0, -1.0, -1.0))
"""Cubeless money equity: 2 win - 1 + gammons + backgammons won - those lost."""


@dataclass(frozen=True, eq=False)
class RowUtilities:
    """A utility per row: ``const[i] + weights[i] . probs[i]`` (the plays of many tables, each at its own match
    score, ranked in one call)."""

    const: np.ndarray
    """(N,) float64."""
    weights: np.ndarray
    """(N, 5) float64."""

    @classmethod
    def per_segment(cls, utilities: Sequence[Utility], offsets: np.ndarray) -> RowUtilities:
        """Segment k's rows (``offsets[k]:offsets[k + 1]``) valued by ``utilities[k]``."""
        counts: np.ndarray = np.diff(np.asarray(offsets, np.int64))
        return cls(np.repeat(np.array([u.const for u in utilities], np.float64), counts),
                   np.repeat(np.array([u.weights for u in utilities], np.float64).reshape(-1, 5), counts, axis=0))

    def of_rows(self, probs: np.ndarray, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Values (M,) of probability rows (M, 5) that belong to ``rows`` (indices, or all rows in order)."""
        return self.const[rows] + (np.asarray(probs, np.float64) * self.weights[rows]).sum(axis=1)


def _mover_values(utility: Utility | RowUtilities, cand_probs: np.ndarray,
                  rows: np.ndarray | slice = slice(None)) -> np.ndarray:
    """The mover's values of replies ``rows`` of a choice from their chances (M, 5) for the side on roll after them."""
    if isinstance(utility, RowUtilities):
        return utility.of_rows(flip_probs(cand_probs), rows)
    return utility.of(flip_probs(cand_probs))


def _outcome_mwc(state: MatchState) -> tuple[list[float], list[float]]:
    """MWC of the side on roll after winning / losing 1, 2, 3 times the cube: (wins, losses)."""
    from bgnet.cube.met import default_met

    met = default_met()
    a, b, done, c = state.away_me, state.away_opp, state.crawford_done, state.cube_value
    wins = [met.after_game(a - k * c, b, done) for k in (1, 2, 3)]
    losses = [met.after_game(a, b - k * c, done) for k in (1, 2, 3)]
    return wins, losses


def utility_for(state: MatchState | None) -> Utility:
    """The ranking value for the side on roll: money equity, or the normalised cubeless equity at the match score."""
    if state is None or state.is_money:
        return MONEY
    (w1, w2, w3), (l1, l2, l3) = _outcome_mwc(state)
    # mwc = L1 + w (W1 - L1) + wg (W2 - W1) + wbg (W3 - W2) + lg (L2 - L1) + lbg (L3 - L2)
    span = w1 - l1
    if span <= 0.0:  # cannot happen with a sane table; rank by raw MWC then
        return Utility(l1, (w1 - l1, w2 - w1, w3 - w2, l2 - l1, l3 - l2))
    s = 2.0 / span
    return Utility(-1.0, (s * (w1 - l1), s * (w2 - w1), s * (w3 - w2), s * (l2 - l1), s * (l3 - l2)))


def match_winning_chance(probs: Probs | Sequence[float], state: MatchState) -> float:
    """Cubeless match winning chance of the side on roll if this game is played out at the current cube."""
    if state.is_money:
        raise SearchError("match winning chances need a match length; this state is money play")
    p = Probs.of(probs)
    (w1, w2, w3), (l1, l2, l3) = _outcome_mwc(state)
    return (l1 + p.win * (w1 - l1) + p.win_gammon * (w2 - w1) + p.win_backgammon * (w3 - w2)
            + p.lose_gammon * (l2 - l1) + p.lose_backgammon * (l3 - l2))


def mwc_to_equity(mwc: float, state: MatchState) -> float:
    """A match winning chance of the side on roll as gnubg's normalised equity (+1 = a single game won at this cube)."""
    (w1, _w2, _w3), (l1, _l2, _l3) = _outcome_mwc(state)
    return 2.0 * (mwc - l1) / (w1 - l1) - 1.0 if w1 > l1 else 0.0


def equity_at_score(probs: Probs | Sequence[float], state: MatchState | None) -> float:
    """Cubeless equity of the side on roll: money equity, or at a match score MWC normalised so that
    winning a single game at the current cube is +1 and losing one -1 (gnubg's normalised equity)."""
    return float(utility_for(state).of(np.array([list(Probs.of(probs))]))[0])


def check_ply(ply: int) -> int:
    """``ply`` as an int from 0 to MAX_PLY, or a SearchError (the one check of the search depth)."""
    if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)) or not 0 <= int(ply) <= MAX_PLY:
        raise SearchError(f"ply must be an integer from 0 to {MAX_PLY}, got {ply!r}")
    return int(ply)


# -- batched evaluation ----------------------------------------------------------------


def leaf_probs(evaluator: EvaluatorLike, boards: np.ndarray) -> np.ndarray:
    """0-ply probabilities (N, 5) float32 of boards for each side on roll: the evaluator's, exact where the game is over.

    The one "boards to probabilities" step of search, self-play and duels: a
    finished game is never scored by the net.
    """
    out = np.zeros((len(boards), 5), np.float32)
    if len(boards):
        boards = np.ascontiguousarray(boards, np.int8)
        out[:] = np.asarray(as_evaluator(evaluator).probs_of_boards(boards), np.float32)
        gk.apply_terminal(gk.terminal_codes(boards), out)
    return out


def _leaf64(evaluator: Evaluator, boards: np.ndarray) -> np.ndarray:
    """``leaf_probs`` in float64, as the search sums them."""
    return leaf_probs(evaluator, boards).astype(np.float64)


def _distinct_leaf64(evaluator: Evaluator, boards: np.ndarray) -> np.ndarray:
    """``_leaf64`` valuing each distinct board once: a search's rolls reach the same positions by many paths (a
    third of a 2-ply search's leaves repeat within one batch). The fused evaluator values each board on its own
    (``bgnet.nets.fastnet``), so its values are the same; a torch net's may move in the last bits, as they do
    with any change of its batch."""
    rows = np.ascontiguousarray(boards, np.int8).reshape(-1, 26)
    first, inverse = distinct_boards(rows)
    if len(first) == len(rows):
        return _leaf64(evaluator, rows)
    return _leaf64(evaluator, rows[first])[inverse]


def _reply_values(evaluator: Evaluator, cand: np.ndarray, offsets: np.ndarray, utility: Utility | RowUtilities,
                  play: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(chances (N, 5) for each reply's side on roll, the mover's value of each reply) of every roll's replies
    ``cand``. A ``PrunedEvaluator`` values only the replies its pruning net keeps (``bgnet.nets.pruning``; its
    ``play_keep`` best for a 0-ply ``play``, else its ``keep``): the others get chances 0 and value -inf, so that no
    segment's best is one of them."""
    if not isinstance(evaluator, PrunedEvaluator):
        cand_probs = _distinct_leaf64(evaluator, cand)
        return cand_probs, _mover_values(utility, cand_probs)
    keep = evaluator.play_keep if play else evaluator.keep
    rows = kept_rows(evaluator.pruning, cand, offsets, keep, lambda p: _mover_values(utility, p),
                     per_row=isinstance(utility, RowUtilities))
    cand_probs = np.zeros((len(cand), 5), np.float64)
    values = np.full(len(cand), -np.inf)
    cand_probs[rows] = _distinct_leaf64(evaluator, cand[rows])
    values[rows] = _mover_values(utility, cand_probs[rows], rows)
    return cand_probs, values


def play_values(evaluator: EvaluatorLike, cand: np.ndarray, offsets: np.ndarray,
                utility: Utility | RowUtilities) -> np.ndarray:
    """The mover's value of each play of a 0-ply choice: ``cand`` the afterstates turned round, one segment of
    ``offsets`` per position, valued by ``utility`` (or a utility per row: positions at different match scores). A
    ``PrunedEvaluator`` values only each position's plays its pruning net keeps (the others -inf, never chosen), as
    a search values the replies to each roll: GNU Backgammon's move filters do the same before a deeper ply. Hints
    value every play (``rank_moves``)."""
    return play_chances_and_values(evaluator, cand, offsets, utility)[1]


def play_chances_and_values(evaluator: EvaluatorLike, cand: np.ndarray, offsets: np.ndarray,
                            utility: Utility | RowUtilities) -> tuple[np.ndarray, np.ndarray]:
    """``play_values`` and the chances (N, 5) behind them, for each play's side on roll (0 where a pruned evaluator
    did not value the play): a rollout reads the chosen play's as the next position's, for its cube."""
    return _reply_values(as_evaluator(evaluator), np.ascontiguousarray(cand, np.int8), offsets, utility, play=True)


LastLevel = Callable[[np.ndarray], np.ndarray]
"""A 1-ply search of unfinished boards (M, 26): chances (M, 5) for each one's side on roll."""


def evaluate_boards(evaluator: EvaluatorLike, boards: np.ndarray, ply: int, utility: Utility = MONEY,
                    opp_utility: Utility | None = None, last_level: LastLevel | None = None) -> np.ndarray:
    """n-ply probabilities (N, 5) for boards (N, 26), each for its side on roll.

    ``utility`` is what the side on roll of ``boards`` maximises when it picks its
    plays, ``opp_utility`` what the other side maximises (default: the same).
    ``last_level``, when given, replaces the search's own last level (the 1-ply search below the upper
    levels), e.g. by one that values fewer plays (``bgnet.trainer.labels.evaluate_pruned``).
    """
    return _evaluate_boards(as_evaluator(evaluator), boards, check_ply(ply), utility, opp_utility, last_level)


def finished_games(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(chances (N, 5) float64, exact where a board's game is over and 0 elsewhere; mask (N,) of those boards)."""
    out = np.zeros((len(boards), 5), np.float64)
    codes = gk.terminal_codes(boards)
    done = codes != 0
    if done.any():
        exact = np.zeros((int(done.sum()), 5), np.float32)
        gk.apply_terminal(codes[done], exact)
        out[done] = exact
    return out, done


def _evaluate_boards(evaluator: Evaluator, boards: np.ndarray, ply: int, utility: Utility,
                     opp_utility: Utility | None, last_level: LastLevel | None = None) -> np.ndarray:
    boards = np.ascontiguousarray(boards, np.int8).reshape(-1, 26)
    opp_utility = utility if opp_utility is None else opp_utility
    if ply == 0:
        return _leaf64(evaluator, boards)
    first, inverse = distinct_boards(boards)  # a level's boards repeat (one reply chosen on many paths): search once
    if len(first) < len(boards):
        return _search_distinct(evaluator, boards[first], ply, utility, opp_utility, last_level)[inverse]
    return _search_distinct(evaluator, boards, ply, utility, opp_utility, last_level)


def _search_distinct(evaluator: Evaluator, boards: np.ndarray, ply: int, utility: Utility, opp_utility: Utility,
                     last_level: LastLevel | None) -> np.ndarray:
    """``_evaluate_boards`` at ``ply`` >= 1 of distinct boards (N, 26) int8."""
    out, done = finished_games(boards)
    database = evaluator.inner if isinstance(evaluator, PrunedEvaluator) else evaluator
    if isinstance(database, DatabaseEvaluator):  # pure bear-offs are exact at any depth: no search below them
        known = is_bearoff(boards) & ~done  # the database is loaded (or built) only once a bear-off is asked
        if known.any():
            out[known] = exact_probs(boards[known])[1]
            done |= known
    live = np.flatnonzero(~done)
    if len(live) == 0:
        return out
    if ply == 1 and last_level is not None:
        out[live] = last_level(boards[live])
        return out
    n = len(live)
    # Every roll of every live board: (n * 21) rows, board-major.
    rolled = np.repeat(boards[live], len(ROLLS), axis=0)
    dice = np.tile(_ROLL_DICE, (n, 1))
    after, _steps, _ns, offsets = generate_plays(rolled, dice)
    cand = swap_sides_batch(after)  # the opponent on roll
    cand_probs, mover_values = _reply_values(evaluator, cand, offsets, utility)
    choice = gk.segment_argmax(mover_values, offsets)
    if ply == 1:
        per_roll = flip_probs(cand_probs[choice])
    else:
        per_roll = flip_probs(_evaluate_boards(evaluator, cand[choice], ply - 1, opp_utility, utility, last_level))
    out[live] = np.einsum("nrk,r->nk", per_roll.reshape(n, len(ROLLS), 5), ROLL_WEIGHTS)
    return out


def evaluate_position(evaluator: EvaluatorLike, pos: Position, ply: int = 0, state: MatchState | None = None) -> Probs:
    """Cubeless chances for the side on roll of ``pos`` at ``ply`` plies (plays chosen by ``state``'s values)."""
    util = utility_for(state)
    opp = utility_for(state.swap_sides()) if state is not None else util
    row = evaluate_boards(evaluator, np.array([pos.board], np.int8), ply, util, opp)[0]
    return Probs(*(float(v) for v in row))


# -- move ranking --------------------------------------------------------------------


@dataclass(frozen=True)
class RankedMove:
    """One play with its evaluation for the mover: probabilities, ranking value and the ply it was searched to."""

    move: Move
    probs: Probs
    equity: float
    """Cubeless equity for the mover (money, or normalised at the match score)."""
    ply: int

    def __iter__(self) -> Iterator[Move | Probs]:
        """Unpacks as ``(move, probs)``: ``for move, probs in rank_moves(...)``."""
        return iter((self.move, self.probs))


def rank_moves(evaluator: EvaluatorLike, pos: Position, dice: Sequence[int] | str, ply: int = 0,
               filter: MoveFilter | Sequence[MoveFilter] | None = None,
               state: MatchState | None = None) -> list[RankedMove]:
    """Every legal play of ``dice`` ranked best first for the side on roll, searched to ``ply`` plies.

    All plays are scored at 0 ply; after each level ``filter`` (one MoveFilter, or
    one per level; default ``DEFAULT_FILTERS``) keeps the plays that go one ply
    deeper. Plays dropped early keep their shallower value and rank below the deeper
    ones, as in GNU Backgammon. ``state`` (a match) ranks by equity at the score. At ``ply`` 1 the searched
    plays' chances are ``blend_one_ply``'s.
    """
    ply = check_ply(ply)
    ev = as_evaluator(evaluator)
    if filter is None:
        filters: tuple[MoveFilter, ...] = DEFAULT_FILTERS
    elif isinstance(filter, MoveFilter):
        filters = (filter,)
    else:
        filters = tuple(filter)
        if not filters or not all(isinstance(f, MoveFilter) for f in filters):
            raise SearchError("filter must be a MoveFilter or a non-empty sequence of them")
    moves = legal_moves(pos, parse_dice(dice))
    util = utility_for(state)
    opp = utility_for(state.swap_sides()) if state is not None else util
    cand = swap_sides_batch(afterstate_boards(moves))
    probs = flip_probs(_leaf64(ev, cand))  # for the mover
    depth = np.zeros(len(moves), np.int64)
    alive = np.arange(len(moves))
    for level in range(1, ply + 1):
        f = filters[min(level - 1, len(filters) - 1)]
        alive = alive[f.select(util.of(probs[alive]))]
        deep = flip_probs(_evaluate_boards(ev, cand[alive], level, opp, util))
        probs[alive] = blend_one_ply(probs[alive], deep, ply)
        depth[alive] = level
    values = util.of(probs)
    order = np.lexsort((-values, -depth))  # deeper first, then by value; a stable sort: ties keep the move order
    rows, vals, plies = probs.tolist(), values.tolist(), depth.tolist()  # Python floats in one pass each
    return [RankedMove(moves[i], Probs(*rows[i]), vals[i], plies[i]) for i in order.tolist()]


def best_move(evaluator: EvaluatorLike, pos: Position, dice: Sequence[int] | str, ply: int = 0,
              state: MatchState | None = None) -> Move:
    """The best play of ``dice`` at ``ply`` plies (the empty move when nothing can be played)."""
    ply = check_ply(ply)
    moves = legal_moves(pos, parse_dice(dice))
    if len(moves) == 1:
        return moves[0]
    if ply == 0:  # the common case in games: skip building Probs objects
        util = utility_for(state)
        cand = swap_sides_batch(afterstate_boards(moves))
        evaluator = as_evaluator(evaluator)
        if isinstance(evaluator, PrunedEvaluator):
            return moves[int(np.argmax(play_values(evaluator, cand, np.array([0, len(cand)]), util)))]
        return moves[int(np.argmax(util.of(flip_probs(_leaf64(evaluator, cand)))))]
    return rank_moves(evaluator, pos, dice, ply, state=state)[0].move


class SearchScorer:
    """A ``BatchScorer`` (``bgnet.core.protocols``) that ranks every game's plays at ``ply`` plies, all games at once.

    It does for a whole batch of games what ``rank_moves`` does for one position
    (cubeless money equity, the same filters), so that n-ply agents can play
    thousands of games together: each level is one move generation and one
    evaluation for every kept play of every game.
    """

    def __init__(self, evaluator: EvaluatorLike, ply: int, filters: Sequence[MoveFilter] = DEFAULT_FILTERS) -> None:
        self.evaluator = as_evaluator(evaluator)
        self.ply = check_ply(ply)
        self.filters = tuple(filters)

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """The mover's money equity of every play, searched to ``ply`` for the plays the filters keep (at 1 ply,
        ``blend_one_ply``'s)."""
        cand = swap_sides_batch(after)
        probs = flip_probs(_leaf64(self.evaluator, cand))
        values = MONEY.of(probs)
        alive = np.arange(len(after))
        for level in range(1, self.ply + 1):
            f = self.filters[min(level - 1, len(self.filters) - 1)]
            seg = np.searchsorted(offsets, alive, side="right") - 1  # the game of each alive play
            kept = []
            for g in np.unique(seg):
                rows = alive[seg == g]
                kept.append(rows[f.select(values[rows])])
            alive = np.sort(np.concatenate(kept)) if kept else alive[:0]
            deep = flip_probs(_evaluate_boards(self.evaluator, cand[alive], level, MONEY, None))
            deep = blend_one_ply(probs[alive], deep, self.ply)
            # Deeper plays rank above shallower ones, as in rank_moves: lift each level by 10 points.
            values[alive] = MONEY.of(deep) + 10.0 * level
        return values
