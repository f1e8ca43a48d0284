"""n-ply search: the lookahead identities checked against slow loops over ``legal_moves``,
batching (one evaluation call per level), exact finished games, move filters and
match-aware ranking."""

from __future__ import annotations

import numpy as np
import pytest

from bgnet import Position, Probs, legal_moves
from bgnet.cube.match import MatchState
from bgnet.cube.met import default_met
from bgnet.core.rules import Result, result_kind, winner
from bgnet.play.search import (
    ROLL_WEIGHTS, ROLLS, MoveFilter, SearchError, best_move, equity_at_score, evaluate_position,
    match_winning_chance, rank_moves, utility_for, ONE_PLY_WEIGHT,
)


def fake_probs(boards: np.ndarray) -> np.ndarray:
    """A deterministic stand-in for the net: a pip-count and blot heuristic with gammons when nothing is off."""
    b = boards.astype(np.float64)
    idx = np.arange(26, dtype=np.float64)
    mine = np.where(b > 0, b, 0.0)
    theirs = np.where(b < 0, -b, 0.0)
    my_pips = (mine * idx).sum(1)
    opp_pips = (theirs * (25.0 - idx)).sum(1)
    blots = (b[:, 1:25] == 1).sum(1) - (b[:, 1:25] == -1).sum(1)
    w = 1.0 / (1.0 + np.exp(-((opp_pips - my_pips + 8.0) / 30.0 - 0.15 * blots)))
    wg = w * 0.3 * (theirs.sum(1) == 15)
    lg = (1.0 - w) * 0.3 * (mine.sum(1) == 15)
    return np.stack([w, wg, 0.1 * wg, lg, 0.1 * lg], axis=1).astype(np.float32)


class Counting:
    """Wraps a probs_fn and records the size of every call."""

    def __init__(self, fn=fake_probs) -> None:
        self.fn = fn
        self.calls: list[int] = []

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        self.calls.append(len(boards))
        return self.fn(boards)


# A middle-game position with a checker of each side on the bar (X on roll):
#   X: 24:2 13:4 8:3 6:4 5:1 3:1        O (own numbering): 24 23 13:5 8:3 6:4, one on the bar
CONTACT = Position.from_points({24: 2, 13: 4, 8: 3, 6: 4, 5: 1, 3: 1}, {24: 1, 23: 1, 13: 5, 8: 3, 6: 4, 25: 1})
CONTACT_NO_BAR = Position.from_points({24: 2, 13: 4, 8: 3, 6: 4, 5: 1, 3: 1}, {24: 1, 23: 1, 13: 5, 8: 3, 6: 5})


def slow_net(pos: Position) -> Probs:
    """0-ply chances for the side on roll, exact (from bgnet.core.rules) when the game is over."""
    who = winner(pos)
    if who is not None:
        k = result_kind(pos)
        mine = Probs(1.0, float(k >= Result.GAMMON), float(k >= Result.BACKGAMMON), 0.0, 0.0)
        return mine if who == 0 else mine.flip()
    return Probs(*(float(v) for v in fake_probs(np.array([pos.board], np.int8))[0]))


def slow_best_after(pos: Position, dice: tuple[int, int]) -> Position:
    """The afterstate of the best 0-ply play by money equity, one move at a time."""
    moves = legal_moves(pos, dice)
    return max(moves, key=lambda m: slow_net(m.after.swap_sides()).flip().equity()).after


def slow_eval(pos: Position, ply: int) -> Probs:
    """gnubg's n-ply: each roll's play chosen at 0 ply, then worth the opponent's (n-1)-ply view, flipped."""
    if ply == 0 or winner(pos) is not None:
        return slow_net(pos)
    total = np.zeros(5)
    for (a, b), w in zip(ROLLS, ROLL_WEIGHTS):
        after = slow_best_after(pos, (a, b))
        total += w * np.array(list(slow_eval(after.swap_sides(), ply - 1).flip()))
    return Probs(*total)


def close(a: Probs, b: Probs, tol: float = 2e-6) -> bool:
    return np.allclose(list(a), list(b), atol=tol)


def test_rolls_cover_all_36() -> None:
    assert len(ROLLS) == 21 and len(set(ROLLS)) == 21
    assert ROLL_WEIGHTS.sum() == pytest.approx(1.0)


def test_zero_ply_is_the_net() -> None:
    for pos in (Position.start(), CONTACT):
        assert close(evaluate_position(fake_probs, pos, 0), slow_net(pos))


@pytest.mark.parametrize("pos", [Position.start(), CONTACT, CONTACT_NO_BAR], ids=["start", "contact", "contact2"])
def test_one_ply_is_the_average_of_best_replies(pos: Position) -> None:
    assert close(evaluate_position(fake_probs, pos, 1), slow_eval(pos, 1))


def test_two_ply_identity() -> None:
    pos = CONTACT
    # 2-ply = average over my rolls of the opponent's 1-ply view of my best 0-ply play, flipped.
    want = np.zeros(5)
    for (a, b), w in zip(ROLLS, ROLL_WEIGHTS):
        after = slow_best_after(pos, (a, b))
        want += w * np.array(list(evaluate_position(fake_probs, after.swap_sides(), 1).flip()))
    assert close(evaluate_position(fake_probs, pos, 2), Probs(*want), 1e-5)


def _opponents_view(after: Position, ply: int) -> Probs:
    """The opponent's ``ply``-ply chances of an afterstate, turned round to the mover's."""
    return evaluate_position(fake_probs, after.swap_sides(), ply).flip()


def test_ranked_plays_are_the_opponents_evaluation_flipped() -> None:
    """At 0 and 2 plies a ranked play is worth the opponent's evaluation at that depth; a choice that stops at 1 ply
    takes the mean of the 1-ply and 0-ply views (``blend_one_ply``)."""
    keep_all = MoveFilter(accept=1000)
    for ply in (0, 1, 2):
        ranked = rank_moves(fake_probs, CONTACT_NO_BAR, (6, 4), ply, filter=keep_all)
        assert {r.ply for r in ranked} == {ply}
        assert len(ranked) == len(legal_moves(CONTACT_NO_BAR, (6, 4)))
        for r in ranked[:6 if ply < 2 else 2]:
            assert r.move.after is not None
            want = _opponents_view(r.move.after, ply)
            if ply == 1:
                zero = _opponents_view(r.move.after, 0)
                want = Probs(*(ONE_PLY_WEIGHT * a + (1.0 - ONE_PLY_WEIGHT) * b for a, b in zip(want, zero)))
                assert not close(want, _opponents_view(r.move.after, 1))  # the mean is not the plain 1-ply
            assert close(r.probs, want)
            assert r.equity == pytest.approx(r.probs.equity())
        values = [r.equity for r in ranked]
        assert values == sorted(values, reverse=True)


def test_each_level_is_one_batched_call() -> None:
    fn = Counting()
    evaluate_position(fn, CONTACT, 1)
    assert len(fn.calls) == 1 and fn.calls[0] > 21
    fn = Counting()
    evaluate_position(fn, CONTACT, 2)
    assert len(fn.calls) == 2
    fn = Counting()
    ranked = rank_moves(fn, CONTACT_NO_BAR, (3, 1), 1, filter=MoveFilter(accept=5, extra=0))
    assert len(fn.calls) == 2  # the root's 0-ply scores, then every roll of every kept play
    assert sum(r.ply == 1 for r in ranked) == 5
    fn = Counting()
    rank_moves(fn, CONTACT_NO_BAR, (3, 1), 2)
    assert len(fn.calls) == 1 + 1 + 2


def test_finished_games_are_exact() -> None:
    # X has one checker left on the ace point; O has all 15 at home and none off: every roll wins a gammon.
    pos = Position.from_points({1: 1}, {1: 5, 2: 5, 3: 5})
    for ply in (1, 2):
        assert close(evaluate_position(fake_probs, pos, ply), Probs(1.0, 1.0, 0.0, 0.0, 0.0), 1e-9)
    ranked = rank_moves(fake_probs, pos, (2, 1), 0)
    assert ranked[0].probs == Probs(1.0, 1.0, 0.0, 0.0, 0.0)
    # A game already over is not searched: the side on roll has lost (O bore off all 15).
    over = Position.from_points({6: 15}, {})
    assert close(evaluate_position(fake_probs, over, 2), Probs(0.0, 0.0, 0.0, 1.0, 0.0))


def test_a_last_level_replaces_the_searchs_own_1ply_level_for_unfinished_boards_only() -> None:
    from bgnet.play.search import evaluate_boards

    over = Position.from_points({6: 15}, {}).board  # the side on roll has lost
    boards = np.array([CONTACT_NO_BAR.board, over, Position.from_points({1: 1}, {1: 5, 2: 5, 3: 5}).board], np.int8)
    seen: list[int] = []

    def half(live: np.ndarray) -> np.ndarray:
        seen.append(len(live))
        return np.full((len(live), 5), 0.5)

    one = evaluate_boards(fake_probs, boards, 1, last_level=half)
    assert seen == [2] and np.allclose(one[[0, 2]], 0.5) and np.allclose(one[1], [0, 0, 0, 1, 0])
    # the search's own 1-ply level as the hook: the plain search, at 2 plies too
    own = lambda live: evaluate_boards(fake_probs, live, 1)  # noqa: E731
    assert np.allclose(evaluate_boards(fake_probs, boards, 2, last_level=own), evaluate_boards(fake_probs, boards, 2))
    assert not np.allclose(evaluate_boards(fake_probs, boards[:1], 2, last_level=half),
                           evaluate_boards(fake_probs, boards[:1], 2))


def test_move_filter() -> None:
    values = np.array([0.0, 0.5, 0.45, -0.2, 0.3, 0.49])
    assert MoveFilter(0, 8, 0.1).select(values).tolist() == [1, 5, 2]
    assert MoveFilter(0, 1, 0.1).select(values).tolist() == [1, 5]
    assert MoveFilter(4, 0, 0.0).select(values).tolist() == [1, 5, 2, 4]
    assert MoveFilter(0, 0, 1.0).select(values).tolist() == [1]
    with pytest.raises(SearchError):
        MoveFilter(-1)


def test_filtered_plays_rank_below_searched_ones() -> None:
    ranked = rank_moves(fake_probs, CONTACT_NO_BAR, (5, 2), 1, filter=MoveFilter(0, 1, 10.0))
    assert [r.ply for r in ranked[:2]] == [1, 1] and all(r.ply == 0 for r in ranked[2:])
    assert best_move(fake_probs, CONTACT_NO_BAR, (5, 2), 1, ) == ranked[0].move


def test_best_move_at_zero_ply_is_the_top_ranked() -> None:
    for dice in ((6, 5), (2, 2), (4, 1)):
        assert best_move(fake_probs, CONTACT, dice, 0) == rank_moves(fake_probs, CONTACT, dice, 0)[0].move


def test_no_legal_play_gives_the_empty_move() -> None:
    # X is on the bar against O's closed board (O's points 1..6 = X's 19..24).
    pos = Position.from_points({25: 1, 6: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3})
    move = best_move(fake_probs, pos, (6, 6), 2)
    assert move.is_empty and move.after == pos
    assert len(rank_moves(fake_probs, pos, (3, 1), 1)) == 1


def test_bad_ply() -> None:
    for ply in (-1, 4, 1.5, True):
        with pytest.raises(SearchError):
            evaluate_position(fake_probs, Position.start(), ply)  # type: ignore[arg-type]


# -- match-aware values -------------------------------------------------------------------


def test_money_utility_is_cubeless_equity() -> None:
    p = Probs(0.6, 0.2, 0.01, 0.1, 0.005)
    assert equity_at_score(p, None) == pytest.approx(p.equity())
    assert equity_at_score(p, MatchState(cube_value=4, cube_owner="me")) == pytest.approx(p.equity())


def test_match_equity_from_the_table_by_hand() -> None:
    met = default_met()
    state = MatchState(7, 4, 4)  # 3-away, 3-away
    p = Probs(0.55, 0.15, 0.01, 0.12, 0.005)
    w1, w2, w3 = met.equity(2, 3), met.equity(1, 3), 1.0  # 1-away after a gammon: the Crawford game
    l1, l2, l3 = met.equity(3, 2), met.equity(3, 1), 0.0
    mwc = ((p.win - p.win_gammon) * w1 + (p.win_gammon - p.win_backgammon) * w2 + p.win_backgammon * w3
           + (p.lose - p.lose_gammon) * l1 + (p.lose_gammon - p.lose_backgammon) * l2 + p.lose_backgammon * l3)
    assert match_winning_chance(p, state) == pytest.approx(mwc)
    assert equity_at_score(p, state) == pytest.approx(2 * (mwc - l1) / (w1 - l1) - 1)


def test_dmp_counts_only_wins() -> None:
    util = utility_for(MatchState(1, 0, 0))
    assert util.weights[0] == pytest.approx(2.0)
    assert np.allclose(util.weights[1:], 0.0)


def test_crawford_leader_gammons_do_not_count_for_him() -> None:
    # 5-point match, X (on roll) trails 3-4 in the Crawford game: the leader O needs one point, so losing a
    # gammon costs X no more than losing a single game, while X's own gammon wins the match.
    util = utility_for(MatchState(5, 3, 4, crawford=True))
    assert util.weights[3] == pytest.approx(0.0) and util.weights[4] == pytest.approx(0.0)
    assert util.weights[1] > 0.0


def lookup_probs(table: dict[bytes, tuple[float, ...]]):
    """A probs_fn that knows chosen boards (by their bytes) and gives an even game elsewhere."""
    def fn(boards: np.ndarray) -> np.ndarray:
        return np.array([table.get(b.tobytes(), (0.5, 0.1, 0.0, 0.1, 0.0)) for b in boards], np.float32)
    return fn


def test_gammon_saving_play_loses_its_value_when_gammons_do_not_count() -> None:
    # Two plays: A is safe from a gammon but wins less, B wins more but risks a gammon.
    pos = CONTACT_NO_BAR
    moves = legal_moves(pos, (6, 5))
    a, b = moves[0], moves[1]
    # Probabilities are for the opponent on roll after the play (the afterstate turned round).
    mover = {a: Probs(0.40, 0.05, 0.0, 0.02, 0.0), b: Probs(0.45, 0.05, 0.0, 0.30, 0.01)}
    table = {np.array(m.after.swap_sides().board, np.int8).tobytes(): tuple(p.flip()) for m, p in mover.items()}
    worst = tuple(Probs(0.1, 0.0, 0.0, 0.0, 0.0).flip())
    for m in moves[2:]:
        table[np.array(m.after.swap_sides().board, np.int8).tobytes()] = worst
    fn = lookup_probs(table)
    assert rank_moves(fn, pos, (6, 5), 0)[0].move == a  # money: -0.17 beats -0.36
    crawford = MatchState(5, 3, 4, crawford=True)  # X trails; O's gammons are worth nothing to O
    assert rank_moves(fn, pos, (6, 5), 0, state=crawford)[0].move == b
    assert rank_moves(fn, pos, (6, 5), 0, state=MatchState(1, 0, 0))[0].move == b  # DMP: wins only
    # At 2-away 2-away gammons count (a gammon loss ends the match), so the safe play stays best.
    assert rank_moves(fn, pos, (6, 5), 0, state=MatchState(5, 3, 3))[0].move == a


def test_one_ply_identity_with_the_shipped_net() -> None:
    from bgnet.play.agents import DEFAULT_CHECKPOINT
    from bgnet.nets.model import NetEvaluator

    net = NetEvaluator.from_checkpoint(DEFAULT_CHECKPOINT).probs_of_boards
    pos = CONTACT_NO_BAR
    want = np.zeros(5)
    for (a, b), w in zip(ROLLS, ROLL_WEIGHTS):
        moves = legal_moves(pos, (a, b))
        after = np.array([m.after.swap_sides().board for m in moves], np.int8)
        theirs = [Probs(*map(float, row)) for row in net(after)]
        best = max(range(len(moves)), key=lambda i: theirs[i].flip().equity())
        want += w * np.array(list(theirs[best].flip()))
    assert close(evaluate_position(net, pos, 1), Probs(*want), 1e-5)


def test_search_scorer_plays_like_best_move_for_many_games_at_once():
    from bgnet.play.agents import DEFAULT_CHECKPOINT
    from bgnet.nets.fastnet import load_numpy_net
    from bgnet.core.movegen import generate_plays
    from bgnet.play.search import SearchScorer

    fn = load_numpy_net(DEFAULT_CHECKPOINT).probs_of_boards
    rng = np.random.default_rng(4)
    positions, pos = [], Position.start()
    while len(positions) < 12:
        moves = legal_moves(pos, tuple(rng.integers(1, 7, 2)))
        pos = moves[rng.integers(len(moves))].after.swap_sides()
        if pos.is_game_over():
            pos = Position.start()
        elif len(positions) < 12 and rng.random() < 0.3:
            positions.append(pos)
    boards = np.array([p.board for p in positions], np.int8)
    dice = rng.integers(1, 7, (len(positions), 2)).astype(np.int8)
    after, _s, _n, offsets = generate_plays(boards, dice)
    for ply in (1, 2):
        scores = SearchScorer(fn, ply).score_plays(boards, after, offsets)
        for g, p in enumerate(positions):
            seg = scores[offsets[g]:offsets[g + 1]]
            chosen = after[offsets[g] + int(np.argmax(seg))]
            expected = best_move(fn, p, tuple(dice[g]), ply).after.board
            assert tuple(chosen.tolist()) == expected


def test_a_search_values_each_distinct_leaf_once_with_the_same_values():
    """Repeated boards in a search's batch are valued once (``_distinct_leaf64``), and the values are the same as
    valuing every row, since the fused evaluator values each board on its own."""
    from bgnet.core.movegen import generate_plays, swap_sides_batch
    from bgnet.core.resources import default_checkpoint
    from bgnet.nets.fastnet import load_evaluator
    from bgnet.play import search

    net = load_evaluator(default_checkpoint())
    start = np.array([Position.start().board], np.int8)
    after, _s, _n, _o = generate_plays(np.repeat(start, 3, axis=0), np.array([[3, 1], [6, 5], [3, 1]], np.int8))
    boards = swap_sides_batch(after)  # the 3-1 plays twice: every one of them repeats
    seen: list[int] = []

    class Counting:
        def probs_of_boards(self, b: np.ndarray) -> np.ndarray:
            seen.append(len(b))
            return net.probs_of_boards(b)

    got = search._distinct_leaf64(Counting(), boards)
    assert np.array_equal(got, search._leaf64(net, boards))
    assert seen == [len(np.unique(boards, axis=0))] and seen[0] < len(boards)


def test_a_board_repeated_in_a_batch_is_searched_once_and_valued_as_alone() -> None:
    """Each level searches a batch's distinct boards once: the batch's values equal each board's own, and the
    evaluator sees no more boards than for the distinct ones."""
    from bgnet.play.search import evaluate_boards

    distinct = np.array([CONTACT.board, CONTACT_NO_BAR.board], np.int8)
    batch = distinct[[0, 1, 0, 0, 1]]
    for ply in (1, 2):
        once, twice = Counting(), Counting()
        alone = evaluate_boards(once, distinct, ply)
        got = evaluate_boards(twice, batch, ply)
        assert np.array_equal(got, alone[[0, 1, 0, 0, 1]])
        assert sum(twice.calls) == sum(once.calls)


def test_play_values_with_a_utility_per_row_value_each_position_as_alone_at_its_own_score():
    # Tables at different match scores ranked in one call (the lockstep duel's match play), pruned and not: each
    # position's values equal those of the call for it alone with its own utility; the pruned call leaves the
    # same plays at -inf.
    from bgnet.core.movegen import generate_plays, swap_sides_batch
    from bgnet.nets.bearoff import with_database
    from bgnet.nets.fastnet import load_evaluator
    from bgnet.nets.pruning import with_pruning
    from bgnet.play.agents import DEFAULT_CHECKPOINT
    from bgnet.play.search import MONEY, RowUtilities, play_values

    plain = with_database(load_evaluator(DEFAULT_CHECKPOINT))
    pruned = with_pruning(plain, DEFAULT_CHECKPOINT)
    states = [None, MatchState(7, 5, 3), MatchState(7, 1, 6), MatchState(5, 2, 2, 2, "opponent")]
    utilities = [utility_for(s) for s in states]
    assert len({u for u in utilities}) == len(states)
    boards = np.array([CONTACT.board, CONTACT_NO_BAR.board, Position.start().board, CONTACT_NO_BAR.board], np.int8)
    dice = np.array([[6, 3], [4, 2], [5, 3], [1, 1]], np.int8)
    after, _s, _n, offsets = generate_plays(boards, dice)
    cand = swap_sides_batch(after)
    assert np.diff(offsets).max() > 8  # some position has plays the pruned call leaves unvalued
    for evaluator in (plain, pruned):
        together = play_values(evaluator, cand, offsets, RowUtilities.per_segment(utilities, offsets))
        for k, utility in enumerate(utilities):
            lo, hi = offsets[k], offsets[k + 1]
            alone = play_values(evaluator, cand[lo:hi], np.array([0, hi - lo]), utility)
            assert np.allclose(together[lo:hi], alone, rtol=0, atol=1e-12)
            assert np.array_equal(np.isinf(together[lo:hi]), np.isinf(alone))
    assert np.isinf(together).any() and np.isfinite(play_values(plain, cand, offsets, MONEY)).all()
