"""The recorder: games played by ``play_game`` with the recorder as observer come out as the game loop played them.

``tests/data/recorded/`` holds what ``play_and_record`` wrote for two seeds before it
became an observer of ``play_game`` (when it still ran its own copy of the loop).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bgnet.core.movegen import legal_moves
from bgnet.core.rules import roll_opening
from bgnet.io.formats import read_match, write_match
from bgnet.io.mat import format_mat
from bgnet.io.record import MatchRecord
from bgnet.io.recorder import play_and_record
from bgnet.io.replay import replay_games
from bgnet.play import game as g

RECORDED = Path(__file__).parent / "data" / "recorded"
_ACTION_OF_EVENT = {"play": "move", "double": "double", "take": "take", "pass": "drop", "beaver": "beaver",
                    "raccoon": "raccoon"}
"""The recorded action of each ``GameEvent`` kind that leaves one in a match file."""


class _Random:
    """Plays, doubles and answers at random from its own seed (beavers whenever it picks one)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def choose_move(self, pos, dice, state=None):  # type: ignore[no-untyped-def]
        moves = legal_moves(pos, dice)
        return moves[int(self.rng.integers(0, len(moves)))]

    def offers_double(self, pos, state) -> bool:  # type: ignore[no-untyped-def]
        return bool(self.rng.random() < 0.15)

    def cube_response(self, pos, state) -> str:  # type: ignore[no-untyped-def]
        return ("take", "pass", "beaver")[int(self.rng.integers(0, 3))]

    def offers_raccoon(self, pos, state) -> bool:  # type: ignore[no-untyped-def]
        return bool(self.rng.random() < 0.5)


class _Greedy:
    """Plays the first legal play, doubles whenever it may, takes every double."""

    def choose_move(self, pos, dice, state=None):  # type: ignore[no-untyped-def]
        return legal_moves(pos, dice)[0]

    def offers_double(self, pos, state) -> bool:  # type: ignore[no-untyped-def]
        return True

    def cube_response(self, pos, state) -> str:  # type: ignore[no-untyped-def]
        return "take"

    def offers_raccoon(self, pos, state) -> bool:  # type: ignore[no-untyped-def]
        return False


def _dice(seed: int):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)

    def dice() -> tuple[int, int]:
        a, b = rng.integers(1, 7, 2)
        return int(a), int(b)

    return dice


def _plays(match: MatchRecord) -> list[list[tuple[int, str, str]]]:
    """Per game, each action as (seat, kind, Position ID of a play's afterstate or '')."""
    return [[(s.action.player, s.action.kind, s.move.after.position_id() if s.move else "") for s in rg.steps]
            for rg in replay_games(match)]


def _record(rules: g.Rules, seed: int, games: int = 6) -> MatchRecord:
    return play_and_record([_Random(100 + seed), _Random(200 + seed)], rules, _dice(seed), ("a", "b"), games=games)


@pytest.mark.parametrize("rules, seed, name", [
    (g.Rules(beavers=True, raccoons=True, jacoby=True), 4, "money_beavers_raccoons_seed4.mat"),
    (g.Rules(match_length=5), 4, "match5_seed4.mat"),
])
def test_the_same_seed_records_the_same_games_as_before(rules: g.Rules, seed: int, name: str) -> None:
    assert format_mat(_record(rules, seed)) == (RECORDED / name).read_text()


@pytest.mark.parametrize("rules", [g.Rules(beavers=True, raccoons=True),
                                   g.Rules(beavers=True, raccoons=True, max_cube=8)], ids=["money", "cube-limit"])
@pytest.mark.parametrize("seed", range(4))
def test_a_recorded_game_follows_play_game(rules: g.Rules, seed: int) -> None:
    """Each game recorded holds exactly the actions and result of ``play_game`` with the same players and dice.

    Under a cube limit a beaver the limit forbids is a take in both (the old copy of the loop beavered anyway).
    """
    record = _record(rules, seed)
    players, dice = (_Random(100 + seed), _Random(200 + seed)), _dice(seed)
    match = g.Match(rules)
    kinds: set[str] = set()
    for written, replayed in zip(record.games, replay_games(record), strict=True):
        events: list[g.GameEvent] = []
        opening = roll_opening(dice)
        end = g.play_game(match.start(opening.first, opening.dice), players, dice, observer=events.append)
        assert events[-1].kind == "end" and events[-1].after == end
        acted = [e for e in events if e.kind in _ACTION_OF_EVENT]
        assert [(a.player, a.kind) for a in written.actions] == [(e.seat, _ACTION_OF_EVENT[e.kind]) for e in acted]
        assert [s.move.after for s in replayed.steps if s.move is not None] == \
            [e.after.position if e.after.is_over else e.after.position.swap_sides() for e in acted if e.kind == "play"]
        assert (written.winner, written.points) == (end.result.winner, end.result.points)  # type: ignore[union-attr]
        assert replayed.final.cube == end.cube
        kinds |= {a.kind for a in written.actions}
        match = match.record(end)
    assert len(record.games) == 6 and {"beaver", "double", "take"} <= kinds


def test_beavers_and_raccoons_are_recorded() -> None:
    kinds = {a.kind for seed in range(4) for r in _record(g.Rules(beavers=True, raccoons=True), seed).games
             for a in r.actions}
    assert {"double", "take", "drop", "beaver", "raccoon"} <= kinds


def test_play_and_record_writes_a_match_that_replays(tmp_path: Path) -> None:
    record = play_and_record([_Greedy(), _Greedy()], g.Rules(match_length=3), _dice(4), ("a", "b"), games=10)
    assert record.games and sum(a.kind == "double" for r in record.games for a in r.actions) >= 1
    write_match(record, tmp_path / "duel.mat")
    back = read_match(tmp_path / "duel.mat")
    assert _plays(back) == _plays(record)
    final = [0, 0]
    for r in back.games:
        final[r.winner] += r.points  # type: ignore[index]
    assert max(final) >= 3
