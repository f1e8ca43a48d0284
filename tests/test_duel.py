"""Paired duels: dice pairing, confidence intervals, baselines, engines agreeing, reproducibility, workers."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from bgnet import Position, legal_moves
from bgnet.play.agents import BaseAgent, load_agent
from bgnet.sim.duel import (PubevalScorer, RandomScorer, TableOutcome, deal_dice, paired_duel, play_cubeless,
                        play_deals, ratio_ci95, summarise, summarise_outcomes)
from bgnet.play.game import Rules
from bgnet.sim.duel_luck import DuelLuckError, default_duel_luck


def test_deal_dice_are_reproducible_and_open_with_two_different_dice() -> None:
    a = deal_dice(7, 3)
    assert np.array_equal(a, deal_dice(7, 3))
    assert not np.array_equal(a, deal_dice(7, 4))
    assert not np.array_equal(a, deal_dice(8, 3))
    assert a.min() >= 1 and a.max() <= 6
    openings = np.array([deal_dice(1, d)[0] for d in range(300)])
    assert (openings[:, 0] != openings[:, 1]).all()
    later = np.concatenate([deal_dice(1, d)[1:] for d in range(20)])
    assert (later[:, 0] == later[:, 1]).mean() == pytest.approx(1 / 6, abs=0.03)


def test_paired_games_are_mirrored() -> None:
    # The same deterministic player on both sides: each deal played from either seat is
    # the same game with the roles swapped, so A's two results cancel exactly.
    res = paired_duel(PubevalScorer(), PubevalScorer(), 40, seed=11)
    pts = np.array(res.points).reshape(40, 2)
    assert (pts[:, 0] == -pts[:, 1]).all()
    assert res.ppg == 0.0 and res.ci95 == 0.0
    assert len(set(pts[:, 0].tolist())) > 1  # the deals themselves differ


def test_paired_cubeful_games_are_mirrored_through_the_game_loop() -> None:
    pub = load_agent("pubeval")
    out = play_deals((pub, pub), Rules(), range(12), seed=2)
    for t0, t1 in zip(out[0::2], out[1::2]):
        assert t0.deal == t1.deal and (t0.side, t1.side) == (0, 1)
        assert t0.points == tuple(-p for p in t1.points)


def test_ratio_ci_with_equal_pairs_is_the_textbook_interval() -> None:
    pair_means = [0.5, -1.0, 2.0, 0.0, 1.5, -0.5, 1.0, 3.0]
    r, ci = ratio_ci95(np.array(pair_means) * 2, np.full(len(pair_means), 2.0))
    assert r == pytest.approx(statistics.mean(pair_means))
    assert ci == pytest.approx(1.96 * statistics.stdev(pair_means) / math.sqrt(len(pair_means)))


def test_summarise_uses_pairs_not_games() -> None:
    # Deal i's two games are points[i] and points[i + 4]; every pair sums to 2, so the
    # pair means are all equal and the interval is zero although the games vary a lot.
    points = np.array([3, -1, 2, 1, -1, 3, 0, 1])
    res = summarise(points, 4)
    assert res.ppg == pytest.approx(points.mean()) and res.ci95 == pytest.approx(0.0)
    assert res.win_rate == pytest.approx(5 / 8)
    assert res.gammon_rate == pytest.approx(3 / 8) and res.backgammon_rate == pytest.approx(2 / 8)
    assert res.gammon_win_rate == pytest.approx(3 / 8) and res.gammon_loss_rate == 0.0


def test_ci_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    values, probs = [-2, -1, 1, 2], [0.15, 0.3, 0.35, 0.2]
    true = sum(v * p for v, p in zip(values, probs))
    rng = np.random.default_rng(1)
    trials, hits = 400, 0
    for _ in range(trials):
        draws = rng.choice(values, size=(60, 2), p=probs)
        outcomes = [TableOutcome(d, s, (int(draws[d, s]),), (int(draws[d, s]),)) for d in range(60) for s in (0, 1)]
        res = summarise_outcomes(outcomes)
        hits += abs(res.ppg - true) <= res.ci95
    assert 0.91 <= hits / trials <= 0.985


def test_match_win_rate_and_ratio_over_unequal_matches() -> None:
    tables = [TableOutcome(0, 0, (1, 2, -1), (1, 1, -1), True), TableOutcome(0, 1, (-2, -1), (-1, -1), False),
              TableOutcome(1, 0, (2,), (2,), True), TableOutcome(1, 1, (1, 1, 1), (1, 1, 1), True)]
    res = summarise_outcomes(tables)
    assert res.games == 9 and res.matches == 4 and res.match_win_rate == pytest.approx(0.75)
    assert res.ppg == pytest.approx(4 / 9)
    assert res.gammon_rate == pytest.approx(1 / 9)


def test_random_against_random_is_near_zero() -> None:
    res = paired_duel(RandomScorer(1), RandomScorer(2), 150, seed=3)
    assert abs(res.ppg) < max(3 * res.ci95, 0.25)
    assert 0.35 < res.win_rate < 0.65


def test_pubeval_beats_random_clearly() -> None:
    res = paired_duel(PubevalScorer(), RandomScorer(5), 60, seed=4)
    assert res.ppg > 1.0 and res.ppg - res.ci95 > 0.5
    assert res.win_rate > 0.9


def test_random_scorer_does_not_depend_on_batching() -> None:
    whole = play_cubeless(PubevalScorer(), RandomScorer(9), range(0, 20), seed=6)
    split = (play_cubeless(PubevalScorer(), RandomScorer(9), range(0, 7), seed=6)
             + play_cubeless(PubevalScorer(), RandomScorer(9), range(7, 20), seed=6))
    key = lambda t: (t.deal, t.side)  # noqa: E731
    assert sorted(whole, key=key) == sorted(split, key=key)


def test_reproducible_for_the_same_seed() -> None:
    a = paired_duel(PubevalScorer(), RandomScorer(1), 30, seed=12)
    b = paired_duel(PubevalScorer(), RandomScorer(1), 30, seed=12)
    c = paired_duel(PubevalScorer(), RandomScorer(1), 30, seed=13)
    assert a.points == b.points and a.summary() == b.summary()
    assert a.points != c.points


class _NoBatch:
    """An agent that has to play through ``choose_move`` (like an n-ply agent)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def batch_scorer(self) -> None:
        return None


def test_game_loop_engine_matches_the_vectorised_engine() -> None:
    pub, rnd = load_agent("pubeval"), load_agent("random", seed=4)
    vec = paired_duel(pub.batch_scorer(), rnd.batch_scorer(), 15, seed=21)
    loop = summarise_outcomes(play_deals((pub, rnd), Rules(cubeful=False), range(15), seed=21))
    per_game = summarise_outcomes(play_deals((_NoBatch(pub), rnd), Rules(cubeful=False), range(15), seed=21))
    assert vec.points == loop.points == per_game.points


def test_the_game_loop_judges_the_same_luck_as_the_vectorised_engine() -> None:
    pub, rnd, luck = load_agent("pubeval"), load_agent("random", seed=4), default_duel_luck()
    vectorised = sorted(play_cubeless(pub.batch_scorer(), rnd.batch_scorer(), range(5), seed=9, luck=luck),
                        key=lambda t: (t.deal, t.side))
    loop = sorted(play_deals((_NoBatch(pub), rnd), Rules(cubeful=False), range(5), seed=9,  # type: ignore[arg-type]
                             luck=luck), key=lambda t: (t.deal, t.side))
    assert [(t.deal, t.side, t.points) for t in loop] == [(t.deal, t.side, t.points) for t in vectorised]
    assert [t.luck for t in loop] == pytest.approx([t.luck for t in vectorised], abs=1e-12)
    assert all(t.luck is not None and t.luck != 0.0 for t in loop)
    assert all(t.luck is None for t in play_deals((pub, rnd), Rules(cubeful=False), range(2), seed=9))
    with pytest.raises(DuelLuckError, match="cubeless money"):
        play_deals((pub, rnd), Rules(), range(1), seed=9, luck=luck)


class _Doubler(BaseAgent):
    """Pubeval moves; doubles whenever it may and answers every double with ``answer``."""

    def __init__(self, doubles: bool, answer: str) -> None:
        self.pub = load_agent("pubeval")
        self.doubles, self.answer = doubles, answer

    def choose_move(self, pos: Position, dice: tuple[int, int], state: object = None):  # type: ignore[no-untyped-def]
        return self.pub.choose_move(pos, dice, state)

    def offers_double(self, pos: Position, state: object) -> bool:
        return self.doubles

    def cube_response(self, pos: Position, state: object) -> str:  # type: ignore[override]
        return self.answer


def test_cubeful_money_scores_passed_doubles() -> None:
    # A doubles at its first chance and B always passes: A wins exactly one point per game.
    out = play_deals((_Doubler(True, "take"), _Doubler(False, "pass")), Rules(), range(5), seed=1)
    res = summarise_outcomes(out)
    assert res.games == 10 and res.ppg == 1.0 and res.win_rate == 1.0
    # Every table: one game, A doubled before any gammon could happen and B passed (one point, counted single).
    assert [(t.points, t.kinds) for t in out] == [((1,), (1,))] * 10
    took = play_deals((_Doubler(True, "take"), _Doubler(False, "take")), Rules(), range(5), seed=1)
    assert all(abs(p) >= 2 for t in took for p in t.points)  # taken: every game is played out at cube 2 or more


def test_matches_end_at_the_match_length() -> None:
    out = play_deals((_Doubler(True, "take"), load_agent("random", seed=2)), Rules(match_length=3), range(4), seed=5)
    for t in out:
        won = sum(p for p in t.points if p > 0)
        lost = -sum(p for p in t.points if p < 0)
        assert (won >= 3) == bool(t.match_won) and (lost >= 3) == (not t.match_won)
        assert max(won, lost) >= 3 and min(won, lost) < 3


class _Plain(BaseAgent):
    """An agent seen only through its per-position methods (no batch scorer, no cube evaluator)."""

    def __init__(self, inner: BaseAgent) -> None:
        self.inner = inner
        self.name = f"plain {inner.name}"

    def choose_move(self, pos: Position, dice: tuple[int, int], state: object = None):  # type: ignore[no-untyped-def]
        return self.inner.choose_move(pos, dice, state)  # type: ignore[attr-defined]

    def offers_double(self, pos: Position, state: object) -> bool:
        return self.inner.offers_double(pos, state)  # type: ignore[attr-defined,no-any-return]

    def cube_response(self, pos: Position, state: object) -> str:  # type: ignore[override]
        return self.inner.cube_response(pos, state)  # type: ignore[arg-type]

    def offers_raccoon(self, pos: Position, state: object) -> bool:
        return self.inner.offers_raccoon(pos, state)  # type: ignore[arg-type]

    def batch_scorer(self) -> None:
        return None


def test_batched_neural_play_matches_the_agent_itself_in_a_match() -> None:
    # The lockstep engine scores a 0-ply net's plays (at the match score) and cube
    # decisions in batches; the agent asked position by position must play the same.
    from pathlib import Path

    net = load_agent(str(Path(__file__).resolve().parent.parent / "checkpoints" / "bgnet.pt"))
    pub = load_agent("pubeval")
    rules = Rules(match_length=3)
    batched = play_deals((net, pub), rules, range(2), seed=8)
    single = play_deals((_Plain(net), pub), rules, range(2), seed=8)
    assert batched == single
    assert any(p != k for t in batched for p, k in zip(t.points, t.kinds))  # the cube was turned


def test_every_batched_play_is_one_the_public_play_accepts() -> None:
    # The lockstep engine keeps each table's board in an array and plays through
    # ``game.play_generated`` (no legality check): replay every move it made, as the
    # observer saw it, through the public ``play``, which regenerates the legal plays.
    from pathlib import Path

    from bgnet.play.game import Game, play

    net = load_agent(str(Path(__file__).resolve().parent.parent / "checkpoints" / "bgnet.pt"))
    pub = load_agent("pubeval")
    states: dict[tuple[int, int], list[Game]] = {}
    moves = 0
    for rules, deals in ((Rules(jacoby=True, beavers=True), range(4)), (Rules(match_length=3), range(2))):
        states.clear()
        out = play_deals((net, pub), rules, deals, seed=6,
                         observer=lambda deal, side, g: states.setdefault((deal, side), []).append(g))
        assert len(out) == 2 * len(deals)
        for seq in states.values():
            for before, nxt in zip(seq, seq[1:]):
                if before.phase != "move":
                    continue
                after = nxt.position if nxt.is_over else nxt.position.swap_sides()
                assert play(before, after) == nxt
                moves += 1
    assert moves > 200


def test_observed_and_unobserved_games_are_the_same() -> None:
    # Without an observer the loop applies a table's roll and its play in one step
    # (``game.roll_and_play_generated``); with one, every rolled state is shown first.
    from pathlib import Path

    from bgnet.play.game import Game

    net = load_agent(str(Path(__file__).resolve().parent.parent / "checkpoints" / "bgnet.pt"))
    pub = load_agent("pubeval")
    for rules in (Rules(jacoby=True, beavers=True), Rules(match_length=5)):
        seen: list[Game] = []
        watched = play_deals((net, pub), rules, range(6), seed=12, observer=lambda d, s, g: seen.append(g))
        assert play_deals((net, pub), rules, range(6), seed=12) == watched
        assert sum(1 for g in seen if g.phase == "move") > 100
