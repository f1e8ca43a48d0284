"""Match analysis: error rates against gnubg's own analysis of its games, and against players built to err.

Fast: the analysis runs at 0 or 1 ply here (bench/analyze.py does 2 ply and the correlation with gnubg).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bgnet.play import game as g
from bgnet.app.analysis import MARKS, SHOWN, MatchAnalysis, analyse_match, count_of, format_result, mark_of
from bgnet.io.formats import read_match
from bgnet.io.record import GameRecord, MatchRecord
from bgnet.io.recorder import MatchRecorder
from bgnet.core.movegen import legal_moves
from bgnet.play.search import MONEY, evaluate_boards, utility_for

DATA = Path(__file__).parent / "data" / "matches"
FIXTURES = sorted(p for p in DATA.glob("*.mat") if p.with_suffix(".gnubg.json").exists())
SGF = DATA / "gnubg_5pt_noise.sgf"


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
            best_eq = max(a.equity for a in d.alternatives if a.ply == d.alternatives[0].ply)
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
    unit = "ppg" if rules.is_money else "mwc_percent"
    assert ("ppg" if rules.is_money else "% MWC") in a.format().split("Luck adjusted result", 1)[1].splitlines()[0]
    out = a.to_dict()
    assert all(f"luck_adjusted_result_{unit}" in p and f"actual_result_{unit}" in p for p in out["players"])
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


def test_mat_and_sgf_of_one_match_number_and_rate_the_moves_alike(fn) -> None:  # type: ignore[no-untyped-def]
    """Moves are numbered as gnubg numbers them, by the lines of the .mat, whatever the file's format."""
    mat, sgf = (analyse_match(fn, read_match(p), ply=0) for p in (SGF.with_suffix(".mat"), SGF))

    def key(d):  # type: ignore[no-untyped-def]
        return d.game, d.move_number, d.player, d.kind, d.dice, d.position_id, d.played, d.best, d.played_rank

    assert [key(d) for d in sgf.decisions] == [key(d) for d in mat.decisions]
    assert [d.loss for d in sgf.decisions] == pytest.approx([d.loss for d in mat.decisions])
    # Line "2)" of game 1 holds gnubg's 62 and root's 51; line "4)" gnubg's double and root's take.
    for a in (mat, sgf):
        assert [(d.player, d.dice) for d in a.decisions if d.game == 1 and d.move_number == 2 and d.kind == "move"] \
            == [(0, (6, 2)), (1, (5, 1))]
        assert [(d.player, d.kind, d.played) for d in a.decisions if d.game == 1 and d.move_number == 4] \
            == [(0, "cube", "double"), (1, "response", "take")]
    assert sgf.to_dict() == mat.to_dict()


def test_options_are_listed_best_first_with_the_played_one_where_it_falls(fn) -> None:  # type: ignore[no-untyped-def]
    match = read_match(SGF.with_suffix(".mat"))
    shallow, deep = analyse_match(fn, match, ply=0), analyse_match(fn, match, ply=1)
    assert len(shallow.decisions) == len(deep.decisions)
    for d0, d in zip(shallow.decisions, deep.decisions):
        alts = d.alternatives
        assert [a.rank for a in alts[:SHOWN]] == list(range(1, min(SHOWN, len(alts)) + 1))
        (played,) = [a for a in alts if a.played]
        assert played.rank == d.played_rank and (played.rank <= SHOWN or played is alts[-1])
        if d.kind == "move":
            # Deeper ratings first, each depth best first by equity; the best and the played move at full depth.
            assert [(-a.ply, -a.equity) for a in alts] == sorted((-a.ply, -a.equity) for a in alts)
            assert alts[0].choice == d.best and alts[0].ply == played.ply == (1 if d.unforced else 0)
            assert played.choice == d.played and d.loss == pytest.approx(alts[0].equity - played.equity)
            # The plays that beat the played one at 0 ply (the first few) are rated as deep as it is.
            assert sum(a.ply == played.ply for a in alts) >= min(SHOWN, d0.played_rank)
            assert [a.ply for a in d0.alternatives] == [0] * len(d0.alternatives)
        elif d.kind == "cube":
            assert alts[0].choice.split(",")[0] == d.best and len(alts) in (1, 3)  # 1: no double possible
            assert len(alts) == 1 or alts[0].equity >= alts[1].equity or "beaver" in alts[0].choice + alts[1].choice
        else:
            assert [a.choice for a in alts] == (["take", "pass"] if d.best == "take" else ["pass", "take"])
            assert alts[0].equity >= alts[1].equity


def test_an_unfinished_game_is_named_and_left_out_of_the_results(fn) -> None:  # type: ignore[no-untyped-def]
    full = read_match(FIXTURES[0])
    cut = replace(full, games=full.games[:1] + (GameRecord(2, full.games[1].score, full.games[1].actions[:9]),))
    a, b = analyse_match(fn, full, ply=0), analyse_match(fn, cut, ply=0)
    assert a.unfinished_games == () and a.warning() == "" and "Warning" not in a.format()
    assert b.unfinished_games == (2,) and b.to_dict()["unfinished_games"] == [2]
    assert b.format().splitlines()[1] == b.warning() and "game 2 is unfinished" in b.warning()
    # The result is the one after game 1; the luck of the unfinished game does not adjust it.
    one = analyse_match(fn, replace(full, games=full.games[:1]), ply=0)
    assert b.players[0].result == pytest.approx(one.players[0].result)
    assert b.luck_adjusted[0] == pytest.approx(one.luck_adjusted[0])
    assert b.players[0].rolls > one.players[0].rolls
    assert "1 game," in one.format().splitlines()[0]


def test_counts_and_results_read_as_gnubg_writes_them() -> None:
    assert [count_of(n, "game") for n in (0, 1, 2)] == ["0 games", "1 game", "2 games"]
    assert format_result(0.123, money=False) == "+12.3% MWC" and format_result(-0.5, money=False) == "-50.0% MWC"
    assert format_result(0.1234, money=True) == "+0.123 ppg"
