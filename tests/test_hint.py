"""Move and cube hints as data, JSON and text, with a deterministic stand-in for the net."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bgnet import Move, Position, Probs, legal_moves
from bgnet.cube.decision import cube_decision
from bgnet.play.hint import HintError, cube_hint, cubeful_after, move_hint
from bgnet.cube.match import MatchState
from bgnet.play.search import equity_at_score, evaluate_position, match_winning_chance, mwc_to_equity


def pip_probs(boards: np.ndarray) -> np.ndarray:
    """Chances from the pip difference alone, with some gammons: enough to rank plays deterministically."""
    b = boards.astype(np.float64)
    idx = np.arange(26, dtype=np.float64)
    my_pips = (np.where(b > 0, b, 0) * idx).sum(1)
    opp_pips = (np.where(b < 0, -b, 0) * (25 - idx)).sum(1)
    w = 1 / (1 + np.exp(-(opp_pips - my_pips) / 25.0))
    return np.stack([w, 0.25 * w, 0.02 * w, 0.25 * (1 - w), 0.02 * (1 - w)], 1).astype(np.float32)


START = Position.start()


def test_move_hint_ranks_all_plays() -> None:
    hint = move_hint(pip_probs, START, "31", ply=0)
    assert hint.legal_plays == len(hint.moves) == len(legal_moves(START, (3, 1)))
    equities = [m.equity for m in hint.moves]
    assert equities == sorted(equities, reverse=True)
    assert [m.rank for m in hint.moves] == list(range(1, len(hint.moves) + 1))
    assert hint.moves[0].diff == 0.0 and all(m.diff <= 0.0 for m in hint.moves)
    for m in hint.moves:
        assert m.diff == pytest.approx(m.equity - hint.moves[0].equity)
        assert m.equity == pytest.approx(m.probs.equity())
        assert m.mwc is None
        after = Position.from_position_id(m.position_id)
        assert isinstance(m.move, Move) and m.move.after == after  # the play itself, with its afterstate
        assert m.text == m.move.text and START.parse_move(m.text, (3, 1)) == m.move


def test_top_and_bad_top() -> None:
    assert len(move_hint(pip_probs, START, (6, 4), top=3).moves) == 3
    with pytest.raises(HintError):
        move_hint(pip_probs, START, (6, 4), top=0)


def test_move_hint_json_shape() -> None:
    data = json.loads(json.dumps(move_hint(pip_probs, START, (6, 5), ply=1).to_dict()))
    assert data["dice"] == [6, 5] and data["ply"] == 1 and data["position_id"] == START.position_id()
    first = data["moves"][0]
    assert {"move", "position_id", "equity", "probs", "diff", "ply", "rank"} <= set(first)
    assert isinstance(first["move"], str) and first["move"] == str(move_hint(pip_probs, START, (6, 5), ply=1).best.move)
    assert set(first["probs"]) == {"win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"}


def test_text_form() -> None:
    hint = move_hint(pip_probs, START, "43", ply=0, top=2)
    text = hint.format()
    lines = text.splitlines()
    assert "dice 4-3" in lines[0] and "0-ply" in lines[0]
    assert lines[1].lstrip().startswith("1.") and hint.moves[0].text in lines[1] and "Eq.:" in lines[1]
    assert f"({hint.moves[1].diff:+.3f})" in lines[3]
    p = hint.moves[0].probs
    assert f"{p.win:.3f}" in lines[2] and f"{p.lose:.3f}" in lines[2]


def test_match_hint_reports_mwc_and_score_equity() -> None:
    state = MatchState(7, 2, 4)
    hint = move_hint(pip_probs, START, "52", state=state)
    for m in hint.moves:
        assert m.mwc == pytest.approx(match_winning_chance(m.probs, state))
        assert m.equity == pytest.approx(equity_at_score(m.probs, state))
    assert "7-point match" in hint.format() and "MWC" in hint.format()
    assert hint.to_dict()["match"]["match_length"] == 7


def test_cube_hint_matches_cube_decision() -> None:
    state = MatchState(5, 0, 2)
    for ply in (0, 1):
        hint = cube_hint(pip_probs, START, state, ply=ply)
        want = cube_decision(evaluate_position(pip_probs, START, ply, state=state), state, START)
        assert hint.decision.action == want.action
        assert hint.decision.equity_no_double == pytest.approx(want.equity_no_double)
        data = json.loads(json.dumps(hint.to_dict()))
        assert data["action"] == want.action and data["ply"] == ply
    assert "Proper cube action" in cube_hint(pip_probs, START).format()


def test_cube_hint_far_ahead_is_a_double() -> None:
    # X bears off nine checkers from the 1..3 points while O still has 210 pips to go.
    pos = Position.from_points({1: 3, 2: 3, 3: 3}, {13: 5, 14: 5, 15: 5})
    decision = cube_hint(pip_probs, pos, MatchState(), ply=0).decision
    assert decision.action in ("double, pass", "too good")
    assert decision.probs.win > 0.9


def test_cube_hint_money_default() -> None:
    hint = cube_hint(pip_probs, START)
    assert hint.decision.state == MatchState()
    assert hint.decision.probs == Probs(*evaluate_position(pip_probs, START, 0))


def test_cubeful_equity_of_a_play_from_cube_theory() -> None:
    # After the play the opponent wins 98% with no gammons: with access to the cube he doubles and the
    # mover must pass, so the play is worth exactly -1 cube; when the mover owns the cube the opponent
    # cannot double and the mover keeps a little more than the cubeless -0.96.
    probs = Probs(0.02, 0.0, 0.0, 0.0, 0.0)
    after = START
    centred, mwc = cubeful_after(probs, after, MatchState())
    assert centred == pytest.approx(-1.0) and mwc is None
    owned, _ = cubeful_after(probs, after, MatchState(cube_value=2, cube_owner="me"))
    assert owned > probs.equity()
    # An even game at 3-away 3-away: the cubeful MWC lies near 50% and matches the normalised equity.
    state = MatchState(5, 2, 2)
    eq, mwc = cubeful_after(Probs(0.5, 0.1, 0.0, 0.1, 0.0), after, state)
    assert mwc is not None and 0.4 < mwc < 0.6
    assert eq == pytest.approx(mwc_to_equity(mwc, state))


def test_cubeful_move_hint() -> None:
    hint = move_hint(pip_probs, START, "62", cubeful=True)
    assert hint.cubeful and "Cubeful 0-ply" in hint.format()
    equities = [m.equity for m in hint.moves]
    assert equities == sorted(equities, reverse=True)
    for m in hint.moves:
        want, _ = cubeful_after(m.probs, Position.from_position_id(m.position_id), MatchState())
        assert m.equity == pytest.approx(want)
        assert m.cubeless_equity == pytest.approx(m.probs.equity())


def test_the_roll_is_high_die_first_and_afterstates_are_given_both_ways() -> None:
    """GNU Backgammon prints 3-1, never 1-3, and shows the position after a play with the opponent on roll."""
    low, high = move_hint(pip_probs, START, "13"), move_hint(pip_probs, START, (3, 1))
    assert low.dice == high.dice == (3, 1) and "dice 3-1," in low.format()
    assert [m.text for m in low.moves] == [m.text for m in high.moves]
    for m in low.moves:
        row = m.to_dict()
        assert row["position_id"] == m.move.after.position_id()
        assert row["position_id_opponent_on_roll"] == m.move.after.swap_sides().position_id()
        assert Position.from_position_id(row["position_id_opponent_on_roll"]).swap_sides() == m.move.after
