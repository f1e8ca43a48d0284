"""bgnet.sim.duel_luck: a roll's luck has mean zero over the 36 rolls, does not depend on its batch, and leaves a
duel's games as they were."""

from __future__ import annotations

import numpy as np
import pytest

from bgnet.play.agents import load_agent
from bgnet.sim.duel import play_cubeless, play_games, play_games_with_luck, summarise_outcomes
from bgnet.sim.duel_luck import DuelLuck, default_duel_luck
from bgnet.sim.rollout_dice import DICE36
from bgnet.sim.selfplay import START_BOARD


def _positions() -> np.ndarray:
    """A few positions of a pubeval game against itself, from the opening to the bear-off."""
    scorer = load_agent("pubeval").batch_scorer()
    dice = np.random.default_rng(3).integers(1, 7, size=(1, 120, 2)).astype(np.int8)
    seen = []

    class Recorder:
        def score_plays(self, before, after, offsets):  # type: ignore[no-untyped-def]
            seen.append(before.copy())
            return scorer.score_plays(before, after, offsets)

    play_games((Recorder(), Recorder()), dice, np.zeros(1, np.int64))
    boards = np.concatenate(seen)
    return boards[:: max(1, len(boards) // 8)]


@pytest.fixture(scope="module")
def luck() -> DuelLuck:
    return default_duel_luck()


def test_the_luck_of_the_36_rolls_averages_to_zero(luck: DuelLuck) -> None:
    spreads = []
    for board in _positions():
        values = luck.of_rolls(np.repeat(board[None], 36, axis=0), DICE36)
        assert abs(values.mean()) < 1e-9
        spreads.append(values.std())
    # the rolls differ (a luck of zero everywhere would pass the mean trivially), except in a decided bear-off
    assert sum(s > 1e-3 for s in spreads) >= len(spreads) - 2


def test_the_luck_of_a_board_does_not_depend_on_its_batch(luck: DuelLuck) -> None:
    boards = _positions()
    dice = np.array([[3, 1], [6, 6], [5, 2], [1, 1], [4, 3], [2, 6], [5, 5], [6, 1], [2, 2]][: len(boards)], np.int8)
    together = luck.of_rolls(boards, dice)
    alone = np.array([luck.of_rolls(boards[i: i + 1], dice[i: i + 1])[0] for i in range(len(boards))])
    assert np.array_equal(together, alone)
    assert np.array_equal(luck.of_rolls(boards[:0], dice[:0]), np.zeros(0))


def test_the_judge_is_the_release_student_when_it_ships(luck: DuelLuck) -> None:
    assert luck.value_fn is not None
    plain = DuelLuck(load_agent("default").net)  # a bare net: the judge values the plays itself
    assert plain.value_fn is None
    board = np.array(START_BOARD, np.int8)[None]
    assert abs(plain.of_rolls(board, np.array([[6, 6]], np.int8))[0]) > 0.01  # double sixes are lucky


def test_games_are_unchanged_and_an_engine_against_itself_adjusts_to_zero(luck: DuelLuck) -> None:
    pub = load_agent("pubeval").batch_scorer()
    dice = np.random.default_rng(8).integers(1, 7, size=(6, 600, 2)).astype(np.int8)
    first = np.array([0, 1, 0, 1, 0, 1])
    points, total = play_games_with_luck((pub, pub), dice, first, luck)
    assert np.array_equal(points, play_games((pub, pub), dice, first)) and np.abs(total).max() > 0
    res = summarise_outcomes(play_cubeless(pub, pub, range(6), seed=4, luck=luck))
    assert res.ppg == 0.0 and res.adjusted_ppg == pytest.approx(0.0, abs=1e-12)
    assert summarise_outcomes(play_cubeless(pub, pub, range(6), seed=4)).adjusted_ppg is None

