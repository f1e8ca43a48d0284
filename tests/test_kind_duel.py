"""bench/kind_duel.py: the kinds it sorts positions into, the hybrid's choice of engine, and its duels."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from bgnet import Position


@pytest.fixture(scope="module")
def bench(bench_script) -> ModuleType:
    return bench_script("kind_duel")


def _board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """A board from my checkers by point and the opponent's by my numbering of his points."""
    b = np.zeros(26, np.int8)
    for p, n in mine.items():
        b[p] = n
    for p, n in theirs.items():
        b[p] = -n
    return b


def test_kind_codes_sort_the_stages_of_a_game(bench: ModuleType) -> None:
    kinds = bench.KINDS
    start = np.array(Position.start().board, np.int8)  # pips 167 + 167
    middle = _board({6: 5, 5: 3, 4: 2, 8: 3, 22: 2}, {19: 5, 18: 3, 17: 2, 16: 3, 3: 2})  # pips 121 + 138
    bearing_off = _board({1: 3, 2: 3, 3: 3, 24: 1}, {19: 5, 20: 5, 1: 1})  # I have borne off 5; 11 dead: crashed
    borne_off_contact = _board({1: 1, 4: 3, 5: 3, 6: 3, 24: 2}, {19: 5, 20: 5, 21: 3, 1: 1})
    race = _board({6: 8, 5: 7}, {19: 8, 20: 7})
    codes = bench.kind_codes(np.stack([start, middle, bearing_off, borne_off_contact, race]))
    assert [kinds[c] for c in codes] == ["opening", "middlegame", "crashed", "bearoff-contact", "race"]


class _Constant:
    def __init__(self, value: float) -> None:
        self.value = value
        self.games = 0

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        assert len(offsets) == len(before) + 1 and offsets[-1] == len(after)
        self.games += len(before)
        return np.full(len(after), self.value)


def test_hybrid_gives_each_game_to_the_engine_of_its_kind(bench: ModuleType) -> None:
    start = np.array(Position.start().board, np.int8)
    race = _board({6: 8, 5: 7}, {19: 8, 20: 7})
    before = np.stack([start, race, start])
    after = np.repeat(before, [2, 3, 1], axis=0)
    offsets = np.array([0, 2, 5, 6])
    a, b = _Constant(1.0), _Constant(2.0)
    hybrid = bench.HybridScorer(a, b, "race")
    assert hybrid.score_plays(before, after, offsets).tolist() == [1, 1, 2, 2, 2, 1]
    assert (a.games, b.games) == (2, 1)
    assert hybrid.seen[bench.KINDS.index("opening")] == 2 and hybrid.seen[bench.KINDS.index("race")] == 1
    group = bench.HybridScorer(a, b, "opening+race")
    assert group.score_plays(before, after, offsets).tolist() == [2] * 6


def test_an_engine_against_itself_cancels_in_every_pair(bench: ModuleType) -> None:
    row = bench.duel("pubeval", "pubeval", "middlegame", 40, seed=3, workers=1)
    assert row.ppg == 0.0 and row.differing_pairs == 0.0
    assert 0.2 < row.share < 0.6


def test_random_races_lose_and_workers_do_not_change_the_games(bench: ModuleType, monkeypatch) -> None:
    monkeypatch.setattr(bench, "CHUNK", 10)
    one = bench.duel("pubeval", "random", "race", 80, seed=4, workers=1)
    two = bench.duel("pubeval", "random", "race", 80, seed=4, workers=2)
    assert (one.ppg, one.ci95, one.differing_pairs) == (two.ppg, two.ci95, two.differing_pairs)
    assert one.ppg < 0 and one.differing_pairs > 0  # random play of races gives points away to pubeval's
    assert one.adjusted_ppg is None
    lucky = bench.duel("pubeval", "random", "race", 80, seed=4, workers=1, luck=True)
    assert (lucky.ppg, lucky.ci95) == (one.ppg, one.ci95)  # the same games
    assert lucky.adjusted_ppg is not None and lucky.adjusted_ci95 is not None and lucky.adjusted_ci95 > 0


def test_main_refuses_an_unknown_kind(bench: ModuleType, capsys) -> None:
    assert bench.main(["--kinds", "backgame"]) == 2
    assert bench.main(["--kinds", "race+backgame"]) == 2
    assert "kinds must be among" in capsys.readouterr().err


@pytest.mark.parametrize("spec, words", [("nosuchbot", "nosuchbot"), ("gnubg-filtered", "no batch scorer")])
def test_main_refuses_an_engine_it_cannot_play_in_one_sentence(bench: ModuleType, capsys, spec: str,
                                                               words: str) -> None:
    pytest.importorskip("gnubg_nn")
    assert bench.main(["--a", "pubeval", "--b", spec, "--games", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err
