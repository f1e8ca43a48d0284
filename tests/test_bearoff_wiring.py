"""The bear-off database behind every player: agents, searches, hints, the CLI, the server and self-play
training all give exact chances for pure bear-offs (issue 12's position: gammoned unless a checker is off now)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bgnet.play.agents import load_agent
from bgnet.nets.bearoff import exact_probs, is_bearoff
from bgnet.core.movegen import afterstate_boards, legal_moves, swap_sides_batch
from bgnet.core.position import Position
from bgnet.core.probs import flip_probs
from bgnet.play.search import evaluate_boards, rank_moves

GAMMONED = Position.from_points({6: 15}, {1: 1})
"""15 checkers on the 6-point against one opposing checker: only 6s, 5-1, 4-2, 3-3 and 2-2 (17 of 36) save the gammon."""
EXACT = [0.0, 0.0, 0.0, 19 / 36, 0.0]


@pytest.fixture(scope="module")
def agents():
    return {ply: load_agent("default", ply=ply) for ply in (0, 1, 2)}


@pytest.mark.parametrize("ply", [0, 1, 2])
def test_agent_evaluate_is_exact_at_every_ply(agents, ply: int) -> None:
    assert list(agents[ply].evaluate(GAMMONED)) == pytest.approx(EXACT, abs=1e-6)
    assert list(agents[ply].cube(GAMMONED).decision.probs) == pytest.approx(EXACT, abs=1e-6)


def test_the_bare_net_is_not_exact_there(agents) -> None:
    """The check above can fail: the net alone misjudges the position (issue 12)."""
    raw = agents[0].net.probs_of_boards(np.array([GAMMONED.board], np.int8))[0]
    assert abs(float(raw[3]) - 19 / 36) > 0.05


@pytest.mark.parametrize("ply", [0, 1])
def test_hints_rank_bearoff_plays_by_their_exact_chances(agents, ply: int) -> None:
    pos = Position.from_points({1: 2, 3: 1, 5: 1}, {2: 1, 4: 2})
    hint = agents[ply].hint(pos, "53")
    moves = legal_moves(pos, (5, 3))
    cand = swap_sides_batch(afterstate_boards(moves))
    assert is_bearoff(cand).all()
    exact = flip_probs(exact_probs(cand)[1])
    by_id = {m.after.position_id(): exact[i] for i, m in enumerate(moves)}
    for row in hint.moves:
        assert list(row.probs) == pytest.approx(list(by_id[row.move.after.position_id()]), abs=1e-6)
    assert hint.moves[0].equity == pytest.approx(max(2 * e[0] - 1 for e in exact), abs=1e-6)


def test_search_stops_at_the_database_but_not_for_a_bare_function() -> None:
    boards = np.array([GAMMONED.board], np.int8)
    flat = lambda b: np.full((len(b), 5), 0.25, np.float32)  # noqa: E731
    from bgnet.nets.bearoff import with_database

    assert evaluate_boards(with_database(flat), boards, 2)[0] == pytest.approx(EXACT, abs=1e-6)
    assert evaluate_boards(flat, boards, 0)[0] == pytest.approx([0.25] * 5)  # no database unless asked for
    ranked = rank_moves(with_database(flat), GAMMONED, "61", 1)
    assert all(r.probs.win == pytest.approx(0.0) and r.probs.lose_gammon == pytest.approx(0.0) for r in ranked)


def test_cli_hint_at_zero_ply_is_exact(capsys) -> None:
    from bgnet.cli.main import main

    assert main(["hint", GAMMONED.position_id(), "--ply", "0", "--json"]) == 0
    probs = json.loads(capsys.readouterr().out)["decision"]["probs"]
    assert [probs[k] for k in ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")] == \
        pytest.approx(EXACT, abs=1e-6)


def test_server_answers_exactly() -> None:
    from bgnet.serve.engine import Engine

    out = Engine().cube(GAMMONED.position_id(), ply=0)
    assert out["decision"]["probs"]["lose_gammon"] == pytest.approx(19 / 36, abs=1e-6)


def test_training_targets_end_on_the_exact_chances() -> None:
    from bgnet.sim.selfplay import SelfPlay
    from bgnet.trainer.selfplay import trajectories_to_samples

    def coin(b: np.ndarray) -> np.ndarray:
        return np.tile(np.array([0.5, 0.1, 0.0, 0.1, 0.0], np.float32), (len(b), 1))

    play, done = SelfPlay(16, seed=7), []
    while not any(t.result == 0 for t in done):
        done += play.step(coin)
    stopped = [t for t in done if t.result == 0]
    boards, targets = trajectories_to_samples(stopped, 0.7)
    ends = np.cumsum([len(t.boards) for t in stopped]) - 1
    assert np.allclose(targets[ends], exact_probs(boards[ends])[1], atol=1e-6)


def test_the_config_switch_reaches_local_self_play_and_is_refused_on_ray() -> None:
    from bgnet.trainer.config import ConfigError, build_config

    assert build_config(None, {}).bearoff_database is True
    assert build_config(None, {"bearoff_database": "false"}).bearoff_database is False
    with pytest.raises(ConfigError, match="bearoff_database"):
        build_config(None, {"bearoff_database": "false", "backend": "ray"})
