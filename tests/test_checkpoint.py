"""The shipped checkpoint knows what a strong player knows."""

from pathlib import Path

import pytest

from bgnet.play.agents import DEFAULT_CHECKPOINT, load_agent
from bgnet.nets.model import read_checkpoint
from bgnet.core.position import Position

START = Position.start()

# Standard opening plays on which every strong bot and book agree.
OPENINGS = {
    (3, 1): "8/5 6/5",
    (4, 2): "8/4 6/4",
    (6, 1): "13/7 8/7",
    (5, 3): "8/3 6/3",
}


@pytest.fixture(scope="module")
def agent():
    return load_agent(str(DEFAULT_CHECKPOINT), ply=0)


def test_shipped_checkpoint_is_small_and_described():
    assert DEFAULT_CHECKPOINT.stat().st_size < 3_000_000
    ckpt = read_checkpoint(DEFAULT_CHECKPOINT)
    assert ckpt["games"] > 0 and "config" in ckpt and "model_config" in ckpt
    assert "optimizer" not in ckpt and "selfplay" not in ckpt  # a release, not a run state


@pytest.mark.parametrize("dice,play", list(OPENINGS.items()))
def test_standard_opening_plays(agent, dice, play):
    assert str(agent.choose_move(START, dice)) == play


def test_opening_is_about_even(agent):
    p = agent.evaluate(START)
    assert 0.45 < p.win < 0.58 and abs(p.equity()) < 0.15


def test_simple_bear_offs():
    agent = load_agent(str(DEFAULT_CHECKPOINT), ply=0)
    # Two checkers on my ace point against fifteen on his 6-point: I win unless... I always bear off next roll.
    sure = Position.from_points({1: 2}, {6: 15})
    assert agent.evaluate(sure).win > 0.9
    # My 15 are still in the outfield, he has one checker left on his ace point: I cannot bear off
    # this turn and he bears off next turn, so I lose a gammon.
    lost = Position.from_points({7: 5, 8: 5, 9: 5}, {1: 1})
    p = agent.evaluate(lost)
    assert p.win < 0.05 and p.lose_gammon > 0.9 and p.lose_backgammon < 0.1
    # A closer race: more pips behind means fewer chances.
    ahead = agent.evaluate(Position.from_points({1: 3, 2: 3}, {5: 3, 6: 3})).win
    behind = agent.evaluate(Position.from_points({5: 3, 6: 3}, {1: 3, 2: 3})).win
    assert ahead > 0.8 and behind < ahead
