"""Cube decisions checked against theory: take points, Crawford, post-Crawford, monotonicity."""

from __future__ import annotations

import json
from dataclasses import replace
import time

import numpy as np
import pytest

from bgnet.cube.decision import InvalidProbsError, cube_decision, cube_efficiency
from bgnet.cube.match import DEFAULT_MONEY_RULES, CubeRules, MatchState
from bgnet.cube.met import default_met
from bgnet.core.position import Position
from bgnet.core.probs import Probs

MONEY = MatchState()


def gammonless(p: float) -> list[float]:
    """Five probabilities with no gammons."""
    return [p, 0.0, 0.0, 0.0, 0.0]


# -- money ---------------------------------------------------------------------

def test_dead_cube_money_take_point_is_25_percent() -> None:
    d = cube_decision(gammonless(0.7), MONEY, efficiency=0.0)
    assert d.take_point == pytest.approx(0.25, abs=1e-6)


def test_fully_live_money_take_point_is_20_percent() -> None:
    d = cube_decision(gammonless(0.7), MONEY, efficiency=1.0)
    assert d.take_point == pytest.approx(0.20, abs=1e-6)


@pytest.mark.parametrize("x", [0.6, 0.68, 0.7, 0.75])
def test_usual_efficiencies_give_20_to_22_percent(x: float) -> None:
    # Janowski: take point (L - 1/2) / (W + L + x/2) with W = L = 1.
    d = cube_decision(gammonless(0.7), MONEY, efficiency=x)
    assert d.take_point == pytest.approx(0.5 / (2 + x / 2), abs=1e-6)
    assert 0.20 <= d.take_point <= 0.22


def test_default_efficiency_and_position_dependent_efficiency() -> None:
    assert 0.20 <= cube_decision(gammonless(0.7), MONEY).take_point <= 0.22
    race = Position.from_points({6: 5, 5: 5, 4: 5}, {6: 5, 5: 5, 4: 5})
    assert race.is_race()
    assert cube_efficiency(race) < cube_efficiency(Position.start())
    assert 0.6 <= cube_efficiency(race) <= 0.7


def test_gammonish_positions_raise_the_take_point() -> None:
    plain = cube_decision(gammonless(0.7), MONEY).take_point
    gammonish = cube_decision([0.7, 0.25, 0.02, 0.05, 0.0], MONEY).take_point
    assert gammonish > plain + 0.03


def test_money_cash_is_one_and_equities_scale_to_the_cube() -> None:
    probs = [0.74, 0.12, 0.01, 0.06, 0.0]
    d1 = cube_decision(probs, MONEY)
    d4 = cube_decision(probs, MatchState(cube_value=4, cube_owner="me"))
    assert d1.equity_double_pass == 1.0 and d4.equity_double_pass == 1.0
    d4c = cube_decision(probs, MatchState(cube_value=4, cube_owner="me"))
    assert d4c.equity_double_take == pytest.approx(cube_decision(probs, MatchState(cube_value=2, cube_owner="me")).equity_double_take)
    assert d1.mwc_no_double is None


def test_owning_the_cube_is_worth_something() -> None:
    probs = [0.55, 0.1, 0.0, 0.08, 0.0]
    owned = cube_decision(probs, MatchState(cube_value=2, cube_owner="me")).equity_no_double
    centred = cube_decision(probs, MONEY).equity_no_double
    theirs = cube_decision(probs, MatchState(cube_value=2, cube_owner="opponent")).equity_no_double
    assert owned > centred > theirs


def test_money_actions_by_strength() -> None:
    assert cube_decision(gammonless(0.55), MONEY).action == "no double"
    assert cube_decision(gammonless(0.74), MONEY).action == "double, take"
    assert cube_decision(gammonless(0.85), MONEY).action == "double, pass"
    too_good = cube_decision([0.9, 0.6, 0.05, 0.0, 0.0], MONEY)
    assert too_good.action == "too good" and too_good.proper_cube_action == "Too good to double, pass"
    assert too_good.equity_no_double > too_good.equity_double_pass


def test_redouble_wording() -> None:
    d = cube_decision(gammonless(0.74), MatchState(cube_value=2, cube_owner="me"))
    assert d.proper_cube_action == "Redouble, take"


def test_no_double_when_the_opponent_owns_the_cube() -> None:
    d = cube_decision(gammonless(0.9), MatchState(cube_value=2, cube_owner="opponent"))
    assert d.action == "no double" and d.equity_double_take is None and d.take_point is None


def test_jacoby_makes_gammons_worthless_with_a_centred_cube() -> None:
    probs = [0.6, 0.3, 0.02, 0.05, 0.0]
    jacoby = cube_decision(probs, MatchState(jacoby=True))
    plain = cube_decision(probs, MONEY)
    assert jacoby.cubeless_equity == pytest.approx(2 * 0.6 - 1)
    assert jacoby.equity_no_double < plain.equity_no_double
    assert jacoby.equity_double_take == pytest.approx(plain.equity_double_take)   # cube turned: gammons count
    # Gammonish but not yet a double: Jacoby pushes towards doubling (no "too good").
    strong = [0.82, 0.55, 0.03, 0.01, 0.0]
    assert cube_decision(strong, MONEY).action == "too good"
    assert cube_decision(strong, MatchState(jacoby=True)).action.startswith("double")


def test_beaver_is_offered_to_a_doubled_favourite() -> None:
    d = cube_decision(gammonless(0.35), MatchState(beavers=True))
    assert d.response == "beaver" and d.action == "no double"
    assert d.proper_cube_action == "No double, beaver"
    assert cube_decision(gammonless(0.35), MONEY).response == "take"


# -- match -----------------------------------------------------------------------

def _dead_take_point(win_after: float, lose_after: float, cash: float) -> float:
    """Opponent's take point with a dead cube: the p at which p*win + (1-p)*lose = cash, as his chance."""
    p_star = (cash - lose_after) / (win_after - lose_after)
    return 1.0 - p_star


def test_take_point_2_away_4_away_by_hand() -> None:
    met = default_met()
    state = MatchState(7, 5, 3)                   # me 2-away, opponent 4-away
    # Pass: I win 1 point and go to the Crawford game at 1-away vs 4-away.
    # Take: cube 2 and my win ends the match, so the trailer loses nothing by redoubling
    # to 4 at once (I take while I am the favourite): a dead 4-cube, worth p to me.
    hand = 1.0 - met.equity(1, 4)
    for x in (0.0, 0.68):
        d = cube_decision(gammonless(0.7), state, efficiency=x)
        assert d.take_point == pytest.approx(hand, abs=1e-6)
        assert d.mwc_double_pass == pytest.approx(met.equity(1, 4))
    # Without that redouble (the dead 2-cube) the trailer would need far more to take.
    assert hand < _dead_take_point(1.0, met.equity(2, 2), met.equity(1, 4))


def test_take_point_4_away_2_away_by_hand() -> None:
    met = default_met()
    state = MatchState(7, 3, 5)                   # me 4-away, opponent 2-away
    # Pass: 3-away vs 2-away. Take: cube 2, dead for the taker (it covers his 2 points).
    hand = _dead_take_point(met.equity(2, 2), 0.0, met.equity(3, 2))
    for x in (0.0, 0.68, 1.0):                    # a dead cube: efficiency does not matter
        assert cube_decision(gammonless(0.75), state, efficiency=x).take_point == pytest.approx(hand, abs=1e-6)


def test_take_point_3_away_3_away_by_hand() -> None:
    met = default_met()
    state = MatchState(5, 2, 2)
    hand = _dead_take_point(met.equity(1, 3), met.equity(3, 1), met.equity(2, 3))
    assert cube_decision(gammonless(0.72), state, efficiency=0.0).take_point == pytest.approx(hand, abs=1e-6)
    assert hand == pytest.approx(1 - (met.equity(2, 3) - met.equity(3, 1)) / (met.equity(1, 3) - met.equity(3, 1)))


def test_gammons_after_the_cube_covers_the_match_do_not_count() -> None:
    # 2-away doubling 4-away: after the take my gammons win nothing extra.
    state = MatchState(7, 5, 3)
    a = cube_decision([0.7, 0.0, 0.0, 0.0, 0.0], state, efficiency=0.0)
    b = cube_decision([0.7, 0.3, 0.05, 0.0, 0.0], state, efficiency=0.0)
    assert a.mwc_double_take == pytest.approx(b.mwc_double_take)
    assert b.mwc_no_double > a.mwc_no_double


def test_no_double_in_the_crawford_game() -> None:
    for probs in (gammonless(0.5), gammonless(0.9), [0.8, 0.5, 0.1, 0.0, 0.0]):
        for state in (MatchState(5, 4, 1, crawford=True), MatchState(5, 1, 4, crawford=True)):
            d = cube_decision(probs, state)
            assert d.action == "no double" and d.equity_double_take is None
    # Cubeless MWC is the cubeful one: no cube in the Crawford game.
    d = cube_decision([0.6, 0.2, 0.0, 0.1, 0.0], MatchState(5, 1, 4, crawford=True))
    assert d.mwc_no_double == pytest.approx(d.mwc_cubeless)


def test_post_crawford_trailer_doubles_at_once() -> None:
    for score_me in (0, 1, 2, 3):                 # trailer 5..2-away, leader 1-away
        state = MatchState(5, score_me, 4)
        assert state.post_crawford
        for p in (0.2, 0.35, 0.45):
            d = cube_decision([p, 0.1 * p, 0.0, 0.1 * (1 - p), 0.0], state)
            assert d.action.startswith("double"), (score_me, p, d)


def test_post_crawford_free_drop_at_2_away() -> None:
    # Trailer 2-away: the leader passes once the trailer is a favourite (1-away/1-away is 50%).
    state = MatchState(5, 3, 4)
    assert cube_decision(gammonless(0.45), state).action == "double, take"
    d = cube_decision(gammonless(0.55), state)
    assert d.action == "double, pass" and d.take_point == pytest.approx(0.5, abs=1e-6)


def test_post_crawford_leader_never_doubles() -> None:
    d = cube_decision(gammonless(0.7), MatchState(5, 4, 2))
    assert d.action in ("no double", "too good")


def test_decisions_move_monotonically_with_winning_chances() -> None:
    order = {"no double": 0, "double, take": 1, "double, pass": 2, "too good": 3}
    for state in (MONEY, MatchState(7, 0, 0), MatchState(7, 3, 5), MatchState(7, 5, 3), MatchState(9, 2, 2, 2, "me")):
        last_rank, last_nd, last_dt = -1, -2.0, -9.0
        for i in range(1, 100):
            p = i / 100
            d = cube_decision([p, 0.2 * p, 0.01 * p, 0.15 * (1 - p), 0.005 * (1 - p)], state)
            assert order[d.action] >= last_rank, (state, p, d.action)
            assert d.equity_no_double >= last_nd - 1e-12 and d.equity_double_take >= last_dt - 1e-12
            last_rank, last_nd, last_dt = order[d.action], d.equity_no_double, d.equity_double_take


def test_match_equities_are_normalised_like_gnubg() -> None:
    met = default_met()
    d = cube_decision([0.6, 0.1, 0.0, 0.05, 0.0], MatchState(7, 2, 2))
    win, lose = met.equity(4, 5), met.equity(5, 4)
    assert d.mwc_double_pass == pytest.approx(win) and d.equity_double_pass == pytest.approx(1.0)
    assert d.equity_no_double == pytest.approx(2 * (d.mwc_no_double - lose) / (win - lose) - 1)


def test_output_forms() -> None:
    d = cube_decision(Probs(0.72, 0.2, 0.01, 0.1, 0.01), MatchState(7, 2, 4))
    data = json.loads(json.dumps(d.to_dict()))
    assert data["action"] == d.action and data["probs"]["win"] == 0.72 and data["match"]["match_length"] == 7 and "state" not in data
    text = d.format()
    for words in ("Cubeless equity", "Cubeful equities", "No double", "Double, take", "Double, pass",
                  "Proper cube action: " + d.proper_cube_action):
        assert words in text


def test_bad_probabilities_are_rejected() -> None:
    for bad in ([0.5, 0.6, 0.0, 0.0, 0.0], [1.2, 0, 0, 0, 0], [0.5, 0.1, 0.2, 0, 0], [0.5] * 4,
                [0.9, 0.0, 0.0, 0.2, 0.0], [float("nan")] * 5):
        with pytest.raises(InvalidProbsError):
            cube_decision(bad, MONEY)
    with pytest.raises(ValueError):
        cube_decision(gammonless(0.5), MONEY, efficiency=1.5)


def test_decision_is_fast() -> None:
    probs, state = [0.7, 0.2, 0.01, 0.1, 0.01], MatchState(11, 3, 6, 2, "me")
    cube_decision(probs, state)
    n = 200
    start = time.perf_counter()
    for _ in range(n):
        cube_decision(probs, state)
    assert (time.perf_counter() - start) / n < 1e-3


# -- issue 11: the play-on lines, dead cubes, free redoubles, bear-offs ------------------------

def test_too_good_money_value_follows_the_play_on_line() -> None:
    # Beyond my cash point the live value runs from (CP, +1) to (1, W): playing on for the gammon.
    probs = [0.9, 0.3, 0.0, 0.0, 0.0]
    w, l = 1 + 0.3 / 0.9, 1.0
    cp = (l + 1) / (w + l + 0.5)
    live = 1 + (w - 1) * (0.9 - cp) / (1 - cp)
    d = cube_decision(probs, MONEY, efficiency=1.0)
    assert d.equity_no_double == pytest.approx(live, abs=1e-9)
    assert d.action == "too good" and d.equity_no_double > 1.0
    # Jacoby with a centred cube: gammons are worthless until the cube is turned, so the line is flat.
    assert cube_decision(probs, MatchState(jacoby=True), efficiency=1.0).equity_no_double == pytest.approx(1.0)


def test_money_cash_and_take_points_come_from_the_average_win_and_loss() -> None:
    # Janowski with gammons: the opponent's take point is (W - 1/2) / (W + L + x/2) in his terms.
    probs = [0.7, 0.21, 0.0, 0.06, 0.0]
    w, l = 1 + 0.21 / 0.7, 1 + 0.06 / 0.3
    for x in (0.0, 0.5, 0.68, 1.0):
        d = cube_decision(probs, MONEY, efficiency=x)
        assert d.take_point == pytest.approx((w - 0.5) / (w + l + x / 2), abs=1e-9)


@pytest.mark.parametrize("state, words", [
    (MatchState(1, 0, 0), "double match point"),
    (MatchState(5, 4, 4), "double match point"),
    (MatchState(5, 4, 2), "post-Crawford leader"),
    (MatchState(5, 3, 0, 2, "me"), "already wins the match"),
])
def test_dead_cubes_are_never_offered(state: MatchState, words: str) -> None:
    for p in (0.55, 0.8, 0.97):
        d = cube_decision([p, 0.3 * p, 0.0, 0.0, 0.0], state)
        assert d.action == "no double" and d.equity_double_take is None and d.take_point is None
        assert d.dead_cube is not None and words in d.dead_cube and "dead cube" in d.proper_cube_action


def test_trailer_redoubles_at_once_when_it_costs_him_nothing() -> None:
    # 2-away doubling 4-away: after the take any win of mine ends the match, so the trailer
    # redoubles to 4 at once; double/take is then the dead 4-cube, p for either efficiency.
    state = MatchState(5, 3, 1)
    for x in (0.0, 0.68, 1.0):
        d = cube_decision(gammonless(0.75), state, efficiency=x)
        assert d.mwc_double_take == pytest.approx(0.75, abs=1e-9)
        assert d.take_point == pytest.approx(1 - d.mwc_double_pass, abs=1e-9)


def test_cube_efficiency_by_kind_of_position() -> None:
    from bgnet.cube.decision import bearoff_rolls, position_kind

    contact = Position.start()
    race = Position.from_points({12: 5, 6: 5, 5: 5}, {12: 5, 6: 5, 5: 5})
    long_bearoff = Position.from_points({6: 5, 5: 5, 4: 5}, {6: 5, 5: 5, 4: 5})
    last_roll = Position.from_points({2: 1, 1: 1}, {1: 2})
    assert [position_kind(p) for p in (contact, race, long_bearoff, last_roll)] == ["contact", "race", "bear-off",
                                                                                    "bear-off"]
    assert cube_efficiency(contact) == 0.68
    assert cube_efficiency(race) == pytest.approx(min(0.7, max(0.6, 0.55 + 0.00125 * race.pips()[0])))
    assert cube_efficiency(long_bearoff) == pytest.approx(0.6)
    assert bearoff_rolls(last_roll) == (1, 1) and cube_efficiency(last_roll) == 0.0
    from bgnet.cube.decision import bearoff_efficiency
    assert [bearoff_efficiency(r) for r in (1, 2, 3, 4, 9)] == pytest.approx([0.0, 0.4, 0.5, 0.6, 0.6])
    # Last roll: a dead cube, so the take point is the dead-cube 25%.
    assert cube_decision(gammonless(0.7), MONEY, last_roll).take_point == pytest.approx(0.25)


def test_action_strings_and_beaver_fields_stay_stable() -> None:
    d = cube_decision(gammonless(0.35), MatchState(beavers=True), efficiency=0.68)
    assert d.beaver and d.response == "beaver" and d.double_value == pytest.approx(2 * d.equity_double_take)
    for p in [i / 50 for i in range(1, 50)]:
        for state in (MONEY, MatchState(beavers=True, jacoby=True), MatchState(5, 1, 3)):
            assert cube_decision([p, 0.3 * p, 0.0, 0.1 * (1 - p), 0.0], state).action in (
                "no double", "double, take", "double, pass", "too good")


def test_every_cube_text_states_its_rules() -> None:
    text = cube_decision(gammonless(0.7), MatchState(jacoby=True, beavers=True)).format()
    assert "Rules assumed: money game, Jacoby rule on, beavers allowed, no raccoons" in text
    assert "Jacoby rule off, no beavers" in cube_decision(gammonless(0.7), MONEY).format()
    assert "post-Crawford, no Holland rule" in cube_decision(gammonless(0.4), MatchState(5, 2, 4)).format()
    limited = cube_decision(gammonless(0.7), MatchState(rules=DEFAULT_MONEY_RULES.choose({"max_cube": 64}, True)))
    assert "Rules assumed: money game, Jacoby rule on, beavers and raccoons allowed, cube limit 64" in limited.format()
    rules = cube_decision(gammonless(0.7), MONEY).to_dict()["rules"]
    assert rules == {"jacoby": False, "beavers": False, "raccoons": False, "holland": False, "max_cube": 0,
                     "text": "money game, Jacoby rule off, no beavers"}


def test_the_cube_limit_takes_the_double_away() -> None:
    at_limit = MatchState(0, 0, 0, 4, "me", rules=CubeRules(max_cube=4))
    assert not at_limit.may_double and replace(at_limit, rules=CubeRules(max_cube=8)).may_double
    assert cube_decision(gammonless(0.8), at_limit).equity_double_take is None


def test_matches_beyond_the_table_get_one_sentence() -> None:
    from bgnet.cube.met import InvalidMETError

    with pytest.raises(InvalidMETError, match="beyond this table's reach"):
        cube_decision(gammonless(0.7), MatchState(100, 0, 0))
    assert cube_decision(gammonless(0.7), MatchState(40, 0, 0)).action in ("double, take", "no double")


def test_cli_cube_hint_defaults_to_gnubg_money_rules_and_says_so() -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "bgnet", "cube", "4HPwATDgc/ABMA", "--ply", "0", *args],
                              capture_output=True, text=True, cwd=root, timeout=300)

    out = run().stdout
    assert "Rules assumed: money game, Jacoby rule on, beavers and raccoons allowed" in out
    assert "Proper cube action: No double, beaver" in out      # the opening: a double would be beavered
    off = run("--no-jacoby", "--no-beavers").stdout
    assert "Rules assumed: money game, Jacoby rule off, no beavers" in off
    bad = run("--match", "MAGgAAAAAAAE", "--jacoby")               # a 5-point match score
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


# -- one exchange of look-ahead ------------------------------------------------------------

def test_without_volatility_waiting_ties_with_doubling() -> None:
    """Leaves that all equal the chances now: the same double is there next turn, so waiting ties with doubling."""
    from bgnet.cube.lookahead import lookahead_decision

    probs = [0.74, 0.05, 0.0, 0.02, 0.0]
    plain = cube_decision(probs, MONEY)
    assert plain.action == "double, take"
    d = lookahead_decision(probs, MONEY, None, np.array([probs] * 4), np.full(4, 0.25))
    assert d.equity_no_double == pytest.approx(plain.equity_double_take)
    assert d.equity_no_double > plain.equity_no_double
    assert d.equity_double_take == plain.equity_double_take and d.take_point == plain.take_point


def test_market_losers_ahead_make_the_double_right() -> None:
    """Half the next turns lose the market (a cash), half fall back: doubling now beats the model's no double."""
    from bgnet.cube.lookahead import lookahead_decision

    probs = gammonless(0.66)
    assert cube_decision(probs, MONEY).action == "no double"
    leaves = np.array([gammonless(0.97), gammonless(0.35)])
    d = lookahead_decision(probs, MONEY, None, leaves, np.array([0.5, 0.5]))
    assert d.action == "double, take" and d.equity_no_double < d.equity_double_take


def test_post_crawford_trailer_doubles_a_take_at_once() -> None:
    """Doubled stakes cost the post-Crawford trailer nothing when he loses: a taken double is made even without volatility."""
    from bgnet.cube.lookahead import lookahead_decision

    state = MatchState(5, 2, 4)  # 3-away trailer against the 1-away leader
    probs = [0.6, 0.1, 0.0, 0.08, 0.0]
    d = lookahead_decision(probs, state, None, np.array([probs] * 3), np.full(3, 1 / 3))
    assert d.response == "take" and d.action == "double, take"


def test_exchange_leaves_average_to_the_two_ply_chances() -> None:
    from bgnet.play.agents import DEFAULT_CHECKPOINT
    from bgnet.play.cube_search import exchange_leaves, searched_decision
    from bgnet.nets.fastnet import load_numpy_net
    from bgnet.play.search import evaluate_position

    fn = load_numpy_net(DEFAULT_CHECKPOINT).probs_of_boards
    pos = Position.from_position_id("4HPwATDgc/ABMA")
    state = MatchState(5, 1, 3)
    leaves, weights = exchange_leaves(fn, pos, state)
    assert leaves.shape == (441, 5) and weights.sum() == pytest.approx(1.0)
    assert weights @ leaves == pytest.approx(np.array(list(evaluate_position(fn, pos, 2, state=state))), abs=1e-5)
    d = searched_decision(fn, pos, state, ply=2)
    assert d.probs.win == pytest.approx(float(weights @ leaves[:, 0]), abs=1e-6)


def test_the_opponents_cube_turn_inside_the_exchange_only_lowers_my_values() -> None:
    """He doubles at his turn only when that is worse for me: grouped leaves never value more than a flat set."""
    from bgnet.cube.lookahead import lookahead_decision

    rng = np.random.default_rng(5)
    for _ in range(20):
        p = rng.uniform(0.05, 0.98, size=8)
        leaves = np.array([[q, 0.1 * q, 0.0, 0.1 * (1 - q), 0.0] for q in p])
        probs = leaves.mean(axis=0)
        for state in (MONEY, MatchState(7, 2, 3), MatchState(cube_value=2, cube_owner="me")):
            flat = lookahead_decision(probs, state, None, leaves, np.full(8, 1 / 8))
            grouped = lookahead_decision(probs, state, None, leaves, np.full(8, 1 / 8), replies=4)
            if flat.equity_double_take is None:
                continue
            assert grouped.equity_no_double <= flat.equity_no_double + 1e-12
            assert grouped.equity_double_take is not None
            assert grouped.equity_double_take <= flat.equity_double_take + 1e-12


def test_a_lost_market_for_the_opponent_is_his_double_and_my_pass() -> None:
    """After one of my rolls he is far ahead at every reply: he doubles me out there, so that roll is worth -1 to me."""
    from bgnet.cube.lookahead import lookahead_decision

    bad, good = gammonless(0.05), gammonless(0.70)
    leaves = np.array([bad, bad, good, good])
    probs = leaves.mean(axis=0)
    grouped = lookahead_decision(probs, MONEY, None, leaves, np.full(4, 0.25), replies=2)
    at_good = cube_decision(good, MONEY).equity
    assert grouped.equity_no_double == pytest.approx(0.5 * (-1.0) + 0.5 * at_good)
    flat = lookahead_decision(probs, MONEY, None, leaves, np.full(4, 0.25))
    assert flat.equity_no_double == pytest.approx(0.5 * cube_decision(bad, MONEY).equity + 0.5 * at_good)
    with pytest.raises(InvalidProbsError):
        lookahead_decision(probs, MONEY, None, leaves, np.full(4, 0.25), replies=3)


def test_with_the_jacoby_rule_playing_on_never_beats_the_cash() -> None:
    """Gammons count single until the cube is turned, so no double is worth at most the cash: never "too good"."""
    from bgnet.cube.lookahead import lookahead_decision

    jacoby = MatchState(jacoby=True)
    rng = np.random.default_rng(8)
    for _ in range(30):
        p = rng.uniform(0.6, 0.99, size=6)
        leaves = np.array([[q, rng.uniform(0.3, 0.8) * q, 0.0, 0.0, 0.0] for q in p])
        probs = [0.9, rng.uniform(0.4, 0.85), 0.02, 0.0, 0.0]
        for d in (cube_decision(probs, jacoby),
                  lookahead_decision(probs, jacoby, None, leaves, np.full(6, 1 / 6), replies=3)):
            assert d.equity_double_pass is not None and d.equity_no_double <= d.equity_double_pass
            assert d.action != "too good"
    assert cube_decision([0.9, 0.6, 0.02, 0.0, 0.0], MONEY).action == "too good"


def test_cube_action_is_cube_decisions_action_and_response() -> None:
    """The game loops' lean paths give exactly the full decision's action, response and equity (``cube_equity``,
    the rollouts' truncated trials), in money and matches, for random and for edge chances (no gammons, certain
    wins, probabilities that need clamping)."""
    from bgnet.cube.decision import cube_action, cube_equity

    rng = np.random.default_rng(12)
    states = [MatchState(), MatchState(jacoby=True, beavers=True), MatchState(cube_value=2, cube_owner="me"),
              MatchState(cube_value=4, cube_owner="opponent", beavers=True), MatchState(5, 0, 0), MatchState(5, 3, 1),
              MatchState(7, 2, 4, 2, "me"), MatchState(5, 4, 2, crawford=True), MatchState(3, 2, 2)]
    rows = [[1.0, 0.3, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.6, 0.1],
            [0.7 + 1e-7, 0.2, 0.01, 0.3, 0.0]]
    for _ in range(300):
        p = float(rng.uniform(0.2, 1.0))
        wg, lg = p * float(rng.uniform(0, 0.5)), (1 - p) * float(rng.uniform(0, 0.4))
        rows.append([p, wg, wg * float(rng.uniform(0, 0.2)), lg, lg * float(rng.uniform(0, 0.2))])
    positions = [None, Position.start(), Position.from_position_id("4HPwASik5+ABMA")]
    seen = set()
    for i, row in enumerate(rows):
        for s in states:
            pos = positions[i % 3]
            d = cube_decision(row, s, pos)
            assert cube_action(row, s, pos) == (d.action, d.response), (row, s)
            assert cube_equity(row, s, pos) == d.equity, (row, s)
            seen.add(d.action)
    assert seen == {"no double", "double, take", "double, pass", "too good"}
    beavered = cube_decision([0.4, 0.05, 0.0, 0.05, 0.0], MatchState(beavers=True))
    assert beavered.response == "beaver"
    assert cube_equity([0.4, 0.05, 0.0, 0.05, 0.0], MatchState(beavers=True)) == beavered.equity
    with pytest.raises(InvalidProbsError, match="five values"):
        cube_action([0.5, 0.1], MatchState())
    with pytest.raises(InvalidProbsError, match="between 0 and 1"):
        cube_action([float("nan"), 0.1, 0.0, 0.1, 0.0], MatchState())


def test_cube_efficiencies_of_a_batch_are_those_of_each_position() -> None:
    # The game loops ask the kernel for every table at once; hints ask one position at a time.
    from bgnet.cube.decision import cube_efficiencies, position_kind
    from bgnet.core.movegen import generate_plays, swap_sides_batch

    rng = np.random.default_rng(3)
    boards = [np.array(Position.start().board, np.int8)]
    for p in (Position.from_points({6: 5, 5: 5, 4: 5}, {6: 5, 5: 5, 4: 5}), Position.from_points({2: 1, 1: 1}, {1: 2}),
              Position.from_points({12: 5, 6: 5, 5: 5}, {12: 5, 6: 5, 5: 5})):
        boards.append(np.array(p.board, np.int8))
    b = np.array(boards, np.int8)
    for _ in range(40):  # random plays from these, both ways round
        after, _s, _n, offsets = generate_plays(b, rng.integers(1, 7, size=(len(b), 2)).astype(np.int8))
        pick = offsets[:-1] + (rng.random(len(b)) * np.diff(offsets)).astype(np.int64)
        b = np.concatenate([after[pick], swap_sides_batch(after[pick])])[:64]
        boards.extend(b)
    arr = np.array(boards, np.int8)
    positions = [Position(row.tolist()) for row in arr]
    assert cube_efficiencies(arr).tolist() == [cube_efficiency(p) for p in positions]
    assert {position_kind(p) for p in positions} == {"contact", "race", "bear-off"}


# -- the cube rules: the decision follows the state's rule set ----------------------------------------------------


@pytest.mark.parametrize("jacoby", [False, True])
@pytest.mark.parametrize("owner", ["centred", "me", "opponent"])
def test_the_decisions_gammon_count_agrees_with_the_state(jacoby: bool, owner: str) -> None:
    probs = Probs(0.6, 0.3, 0.02, 0.05, 0.0)
    cube = 1 if owner == "centred" else 2
    state = MatchState(cube_value=cube, cube_owner=owner, jacoby=jacoby)  # type: ignore[arg-type]
    d = cube_decision(probs, state)
    expected = probs.equity() if state.gammons_count else 2 * probs.win - 1
    assert d.cubeless_equity == pytest.approx(expected)


def test_the_beaver_answer_follows_the_cube_limit() -> None:
    from bgnet.cube.match import CubeRules

    for max_cube in (0, 2, 4, 8):
        rules = CubeRules(beavers=True, max_cube=max_cube)
        d = cube_decision(gammonless(0.35), MatchState(rules=rules))
        assert (d.response == "beaver") == rules.may_beaver(1), max_cube
        assert d.response in ("beaver", "take")


def test_to_dict_gives_the_state_flat_as_match() -> None:
    data = cube_decision(gammonless(0.6), MatchState(jacoby=True, beavers=True)).to_dict()
    assert data["match"] == MatchState(jacoby=True, beavers=True).to_dict() and data["match"]["jacoby"] is True
    assert "state" not in data  # the shared name of docs/JSON.md
