"""The cube inside a rollout's trials (``bgnet.sim.rollout_cube``): lines that double, take, pass and score."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bgnet.core.position import Position
from bgnet.cube.match import MatchState
from bgnet.sim.rollout_candidates import position_candidate
from bgnet.sim.rollout_cube import CubeTracks, cube_units, rolled_cube_action

# A middle game with contact for both sides (X: 24:2 13:4 8:3 6:4 5:1 3:1).
MIDGAME = Position.from_position_id("4HPwASik5+ABMA")


def test_passes_and_takes_are_tracked_per_trial_in_arrays() -> None:
    cands = [replace(position_candidate(MIDGAME), cube_lines=((1, "centred"), (2, "opponent")))]
    tr = CubeTracks(cands, 3, MatchState())
    rows = np.arange(3)
    probs = np.array([[0.95, 0.0, 0.0, 0.0, 0.0], [0.75, 0.1, 0.0, 0.05, 0.0], [0.5, 0.1, 0.0, 0.1, 0.0]])
    boards = np.repeat(np.array(MIDGAME.board, np.int8)[None], 3, axis=0)
    tr.decide(rows, probs, boards, np.ones(3, bool))
    # Line 1 (cube centred): 95% passes (closed at +1), 75% is a double and take (2, owned by the taker),
    # 50% is no double. Line 2 (the opponent owns 2): no access, nothing moves.
    assert tr.done.tolist() == [True, False, False, False, False, False] and tr.value[0] == 1.0
    assert tr.cube.tolist() == [1, 2, 1, 2, 2, 2] and tr.owner.tolist() == [0, -1, 0, -1, -1, -1]
    # A gammon won by the root side with the cube on 2 is worth 4 points per root cube.
    tr.end_game(np.array([1]), np.array([-2], np.int8), np.array([False]))
    assert tr.done[1] and tr.value[1] == 4.0


@pytest.mark.parametrize("jacoby", [False, True])
@pytest.mark.parametrize("root_wins", [False, True])
def test_a_gammon_counts_double_exactly_where_matchstate_gammons_count_says(jacoby: bool, root_wins: bool) -> None:
    # Three lines of one trial: the cube centred, on 2 owned by the root side, on 2 owned by the opponent. The
    # game ends in a gammon: under the Jacoby rule it counts single only while the cube is centred.
    lines = ((1, "centred"), (2, "me"), (2, "opponent"))
    state = MatchState(jacoby=jacoby)
    tr = CubeTracks([replace(position_candidate(MIDGAME), cube_lines=lines)], 1, state)
    # terminal code -2: the side on roll lost a gammon; the root side is on roll when it is the loser
    tr.end_game(np.array([0]), np.array([-2], np.int8), np.array([not root_wins]))
    sign = 1 if root_wins else -1
    for ln, (cube, owner) in enumerate(lines):
        rule = MatchState(jacoby=jacoby, cube_value=cube, cube_owner=owner)
        assert tr.done[ln] and tr.value[ln] == sign * cube * (2 if rule.gammons_count else 1), (ln, tr.value)
    assert tr.value[0] == sign * (1 if jacoby else 2)  # the one place the two rules differ


def test_a_match_line_scores_match_winning_chances_from_the_met() -> None:
    from bgnet.cube.met import default_met

    state = MatchState(match_length=7, score_me=2, score_opp=4)  # 5-away, 3-away
    tr = CubeTracks([replace(position_candidate(MIDGAME), cube_lines=((1, "centred"), (2, "opponent")))], 1, state)
    tr.end_game(np.array([0]), np.array([-1], np.int8), np.array([False]))  # the root side wins a single game
    met = default_met()
    assert tr.value.tolist() == [met.after_game(4, 3, False), met.after_game(3, 3, False)]
    w1, l1 = cube_units(state)
    assert (w1, l1) == (met.after_game(4, 3, False), met.after_game(5, 2, False))


def test_the_rolled_out_cube_action_reads_the_three_lines() -> None:
    money = MatchState()
    assert rolled_cube_action(0.4, 0.6, money)["proper_cube_action"] == "Double, take"
    assert rolled_cube_action(0.4, 1.2, money)["proper_cube_action"] == "Double, pass"
    assert rolled_cube_action(1.3, 1.6, money)["proper_cube_action"] == "Too good to double, pass"
    assert rolled_cube_action(0.5, 0.3, money)["proper_cube_action"] == "No double, take"
    owned = rolled_cube_action(0.5, None, MatchState(cube_value=2, cube_owner="me"))
    assert owned["action"] == "no double" and owned["proper_cube_action"].startswith("No redouble")


def test_the_rolled_out_cube_action_beavers_where_the_rules_allow_it() -> None:
    from bgnet.cube.decision import cube_decision
    from bgnet.cube.match import DEFAULT_MONEY_RULES

    beavers = MatchState(rules=DEFAULT_MONEY_RULES)
    assert rolled_cube_action(0.1, -0.2, beavers)["proper_cube_action"] == "No double, beaver"
    assert rolled_cube_action(0.1, -0.2, beavers)["response"] == "beaver"
    assert rolled_cube_action(0.1, -0.2, MatchState())["proper_cube_action"] == "No double, take"
    assert rolled_cube_action(-0.3, -0.2, beavers)["action"] == "no double"  # a beavered double is worth -0.4
    assert rolled_cube_action(-0.3, -0.2, MatchState())["action"] == "double, take"  # a taken one -0.2
    # the rule is cube_decision's: the same three equities give the same verdict
    d = cube_decision([0.53, 0.15, 0.005, 0.12, 0.004], beavers)
    assert d.equity_double_take is not None
    assert rolled_cube_action(d.equity_no_double, d.equity_double_take, beavers)["proper_cube_action"] == \
        d.proper_cube_action
