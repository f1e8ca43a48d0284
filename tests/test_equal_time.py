"""bench/equal_time.py: a row's figures (luck-adjusted with ``--luck``, on the game loop too) and its table."""

from __future__ import annotations

from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def bench(bench_script) -> ModuleType:
    pytest.importorskip("gnubg_nn")
    return bench_script("equal_time")


def test_a_row_is_timed_and_luck_adjusted_on_either_engine(bench: ModuleType) -> None:
    plain = bench.play_row("pubeval", 0, "pubeval", 4, seed=3)
    assert plain["adjusted_ppg"] is None and plain["games"] == 4 and plain["decisions"] > 0
    lucky = bench.play_row("pubeval", 0, "pubeval", 4, seed=3, luck=True)
    assert (lucky["ppg"], lucky["ci95"]) == (plain["ppg"], plain["ci95"])  # the same games
    assert lucky["adjusted_ppg"] is not None and lucky["adjusted_ppg"] != plain["ppg"]
    looped = bench.play_row("gnubg", 0, "gnubg-filtered@0", 4, seed=3, luck=True)
    assert looped["duel_engine"] == "game loop" and looped["adjusted_ppg"] == pytest.approx(0.0, abs=1e-12)
    table = bench.markdown([plain, lucky]).splitlines()
    assert "luck-adjusted" in table[0] and len(table) == 4 and table[2].count("|") == table[3].count("|")
    assert "luck-adjusted" not in bench.markdown([plain])
