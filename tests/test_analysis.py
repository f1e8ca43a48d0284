"""Match analysis: error rates against gnubg's own analysis of its games, and against players built to err.

Fast: the analysis runs at 0 or 1 ply here (bench/analyze.py does 2 ply and the correlation with gnubg).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bgnet.play import game as g
from bgnet.app.analysis import MARKS, MatchAnalysis, analyse_match, mark_of
from bgnet.io.matchfile import MatchRecord, MatchRecorder, read_match
from bgnet.core.movegen import legal_moves
from bgnet.play.search import MONEY, evaluate_boards, utility_for

DATA = Path(__file__).parent / "data" / "matches"
FIXTURES = sorted(p for p in DATA.glob("*.mat") if p.with_suffix(".gnubg.json").exists())


@pytest.fixture(scope="module")
def fn():  # type: ignore[no-untyped-def]
    from bgnet.play.agents import DEFAULT_CHECKPOINT
    from bgnet.nets.fastnet import load_numpy_net

    return load_numpy_net(DEFAULT_CHECKPOINT).probs_of_boards


def test_marks_follow_gnubg_thresholds() -> None:
    assert [m for _, m in MARKS] == ["very bad", "bad", "doubtful"]
    assert [mark_of(x) for x in (0.0, 0.039, 0.04, 0.079, 0.08, 0.159, 0.16, 1.0)] == \
           ["", "", "doubtful", "doubtful", "bad", "bad", "very bad", "very bad"]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_error_rates_rank_players_as_gnubg_does(fn, path: Path) -> None:  # type: ignore[no-untyped-def]
    gnubg = json.loads(path.with_suffix(".gnubg.json").read_text())["players"]
    a = analyse_match(fn, read_match(path), ply=1)
    ours = [p.overall_error_rate_memg for p in a.players]
    theirs = [p["overall_error_rate_memg"] for p in gnubg]
    noisy = int(np.argmax(json.loads(path.with_suffix(".gnubg.json").read_text())["noise"]))
    assert np.argmax(theirs) == noisy  # gnubg itself sees the noisy player as the weaker one
    assert np.argmax(ours) == noisy
    assert ours[noisy] > 3 * ours[1 - noisy]
    # Unforced moves are a property of the positions and dice alone: the same count as gnubg's.
    assert [p.unforced_moves for p in a.players] == [int(p["unforced_moves"]) for p in gnubg]
    assert [p.total_moves for p in a.players] == [int(p["total_moves"]) for p in gnubg]


def test_decisions_are_consistent(fn) -> None:  # type: ignore[no-untyped-def]
    a = analyse_match(fn, read_match(FIXTURES[0]), ply=0)
    assert a.decisions
    for d in a.decisions:
        assert d.loss >= 0.0
        assert d.mark == (mark_of(d.loss) if d.unforced else "")
        if d.kind == "move":
            best_eq = max(e for _, e in d.alternatives)
            assert d.equity == pytest.approx(best_eq - d.loss, abs=1e-9)
            assert (d.played == d.best) == (d.loss == 0.0) or d.loss < 1e-12
    for seat, p in enumerate(a.players):
        mine = [d for d in a.decisions if d.player == seat]
        assert p.checker_loss == pytest.approx(sum(d.loss for d in mine if d.kind == "move" and d.unforced))
        assert p.overall_error_rate_memg == pytest.approx(
            1000 * (p.checker_loss + p.cube_loss) / (p.unforced_moves + p.close_cube_decisions))
        assert p.pr == pytest.approx(p.overall_error_rate_memg / 2)
        assert sum(p.marks.values()) == sum(1 for d in mine if d.mark)
    assert a.luck_adjusted[0] == pytest.approx(-a.luck_adjusted[1])


def _play(fn, rules: g.Rules, seed: int, worst: int, games: int = 2) -> MatchRecord:  # type: ignore[no-untyped-def]
    """Seat 1 - worst plays the 0-ply best play, seat ``worst`` the 0-ply worst; nobody doubles."""
    rng = np.random.default_rng(seed)
    rec = MatchRecorder(("best", "worst") if worst == 1 else ("worst", "best"), rules)
    match = g.Match(rules)
    for _ in range(games):
        if match.is_over:
            break
        a, b = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        while a == b:
            b = int(rng.integers(1, 7))
        game = match.start(int(rng.integers(0, 2)), (a, b))
        rec.start(game)
        while not game.is_over:
            if game.phase == "roll":
                game = g.roll(game, (int(rng.integers(1, 7)), int(rng.integers(1, 7))))
            else:
                assert game.dice is not None
                moves = legal_moves(game.position, game.dice)
                util = MONEY if rules.is_money else utility_for(game.match_state())
                from bgnet.core import _movegen_kernels as mk
                from bgnet.core.probs import flip_probs

                after = mk.swap_sides_batch(np.array([m.after.board for m in moves], np.int8))
                values = util.of(flip_probs(evaluate_boards(fn, after, 0)))
                pick = int(np.argmin(values)) if game.turn == worst else int(np.argmax(values))
                game = g.play(game, moves[pick])
            rec.observe(game)
        match = match.record(game)
    return rec.record()


@pytest.mark.parametrize("rules", [g.Rules(), g.Rules(match_length=5)], ids=["money", "match"])
def test_a_player_of_the_analysers_own_best_plays_makes_no_checker_error(fn, rules: g.Rules) -> None:  # type: ignore[no-untyped-def]
    record = _play(fn, rules, seed=5, worst=1)
    a: MatchAnalysis = analyse_match(fn, record, ply=0)
    best, worst = a.players
    assert best.unforced_moves > 5 and worst.unforced_moves > 5
    assert best.checker_loss == pytest.approx(0.0, abs=1e-9)
    assert worst.checker_error_rate_memg > 100.0  # the worst play loses a lot, per move
    assert worst.marks["very bad"] > 0
    # Money: a result in points per game, and the luck-adjusted results are opposite.
    assert a.luck_adjusted[0] == pytest.approx(-a.luck_adjusted[1])
    out = a.to_dict()
    assert [p["name"] for p in out["players"]] == ["best", "worst"]
    for p in out["players"]:
        for key in ("unforced_moves", "checker_error_rate_memg", "cube_error_rate_memg", "overall_error_rate_memg",
                    "pr", "luck_rate_memg", "decisions"):
            assert key in p
        d = p["decisions"][0]
        for key in ("game", "move_number", "position_id", "dice", "played", "best", "loss", "mark"):
            assert key in d


def test_cube_errors_are_charged_to_the_player_who_made_them(fn) -> None:  # type: ignore[no-untyped-def]
    """A player who doubles at once in a 5-point match and an opponent who always passes: both decisions rated."""
    rules = g.Rules(match_length=5)
    rec = MatchRecorder(("doubler", "passer"), rules)
    game = g.new_game(rules, 0, (3, 1))
    rec.start(game)
    game = g.play(game, legal_moves(game.position, (3, 1))[0])
    rec.observe(game)
    game = g.roll(game, (2, 1))
    rec.observe(game)
    game = g.play(game, legal_moves(game.position, (2, 1))[0])
    rec.observe(game)
    game = g.double(game)  # seat 0 doubles in an even opening position: a big error
    rec.observe(game)
    game = g.respond(game, "pass")  # and seat 1 passes: an even bigger one
    rec.observe(game)
    a = analyse_match(fn, rec.record(), ply=0)
    cube = [d for d in a.decisions if d.kind == "cube" and d.played == "double"]
    resp = [d for d in a.decisions if d.kind == "response"]
    assert len(cube) == 1 and cube[0].player == 0 and cube[0].best == "no double" and cube[0].loss > 0.1
    assert len(resp) == 1 and resp[0].player == 1 and resp[0].best == "take" and resp[0].loss > 0.3
    assert a.players[0].cube_loss == pytest.approx(cube[0].loss)
    assert a.players[1].cube_loss == pytest.approx(resp[0].loss)
    assert a.players[1].cube_error_rate_memg > a.players[0].cube_error_rate_memg > 0
