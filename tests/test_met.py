"""Match equity tables: the built-in Kazaross-XG2 table, loading, extrapolation and the generator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bgnet.cube.met import InvalidMETError, MatchEquityTable, default_met, generate_met

GNUBG_XML = next(Path(__file__).resolve().parents[1].glob(".venv/lib/python3*/site-packages/gnubg/data/met/Kazaross-XG2.xml"), None)


def test_default_table_is_kazaross_and_cached() -> None:
    met = default_met()
    assert met is default_met()
    assert "Kazaross" in met.name and met.size >= 15 and met.post_size >= 15


def test_symmetric_and_even_at_equal_scores() -> None:
    met = default_met()
    for a in range(1, met.size + 1):
        assert met.equity(a, a) == pytest.approx(0.5)
        for b in range(1, met.size + 1):
            assert met.equity(a, b) + met.equity(b, a) == pytest.approx(1.0, abs=1e-6)


def test_monotone_in_both_aways() -> None:
    met = default_met()
    for a in range(1, met.size + 1):
        for b in range(1, met.size):
            assert met.equity(a, b + 1) > met.equity(a, b)      # the opponent needing more helps me
            assert met.equity(b + 1, a) < met.equity(b, a)      # me needing more hurts me


def test_post_crawford_falls_with_the_trailers_away() -> None:
    met = default_met()
    assert met.post_crawford(1) == pytest.approx(0.5)           # double match point
    values = [met.post_crawford(a) for a in range(1, met.post_size + 1)]
    assert all(x > y for x, y in zip(values, values[1:]))
    # The free drop: 2-away against 1-away is a little worse than a coin toss.
    assert 0.47 < met.post_crawford(2) < 0.5
    # Crawford game at 2-away: the trailer must win it (a coin toss) and then, unless that
    # win was a gammon, also win double match point, so his chances lie between 1/4 and 1/2.
    assert 0.25 < met.equity(2, 1) < 0.5


def test_match_over_values() -> None:
    met = default_met()
    assert met.equity(0, 5) == 1.0 and met.equity(-2, 3) == 1.0
    assert met.equity(4, 0) == 0.0
    assert met.post_crawford(0) == 1.0
    with pytest.raises(InvalidMETError):
        met.equity(0, 0)


def test_after_game_uses_post_crawford_once_crawford_is_done() -> None:
    met = default_met()
    assert met.after_game(3, 1, crawford_done=True) == met.post_crawford(3)
    assert met.after_game(1, 4, crawford_done=True) == pytest.approx(1 - met.post_crawford(4))
    assert met.after_game(3, 1, crawford_done=False) == met.equity(3, 1)    # next game is the Crawford game
    assert met.after_game(0, 2, crawford_done=False) == 1.0


def test_extrapolation_beyond_the_table_is_continuous_and_sane() -> None:
    met = default_met()
    n = met.size
    for a, b in ((n + 1, n), (n + 5, n + 2), (n + 10, n + 10), (n + 3, n + 9)):
        e = met.equity(a, b)
        assert 0.0 < e < 1.0
        assert e + met.equity(b, a) == pytest.approx(1.0, abs=1e-9)
    assert met.equity(n + 4, n + 4) == pytest.approx(0.5)
    assert abs(met.equity(n + 1, n) - met.equity(n, n - 1)) < 0.02
    assert met.equity(n + 2, n) < met.equity(n + 1, n)
    assert 0.0 < met.post_crawford(n + 3) < met.post_crawford(n + 1) < met.post_crawford(n - 1)
    assert met.equity(1, n + 3) > met.equity(1, n)


def test_json_round_trip_and_gnubg_xml(tmp_path: Path) -> None:
    met = default_met()
    path = tmp_path / "copy.json"
    path.write_text(json.dumps(met.to_json()))
    again = MatchEquityTable.load(path)
    assert again.equity(7, 4) == met.equity(7, 4) and again.post_crawford(6) == met.post_crawford(6)
    if GNUBG_XML is None:
        pytest.skip("gnubg package data not installed")
    xml = MatchEquityTable.load(GNUBG_XML)
    assert all(xml.equity(a, b) == met.equity(a, b) for a in range(1, 26) for b in range(1, 26))
    assert all(xml.post_crawford(a) == met.post_crawford(a) for a in range(1, 26))


def test_bad_tables_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(InvalidMETError, match="square"):
        MatchEquityTable([[0.5, 0.6], [0.4]], [0.5, 0.49])
    with pytest.raises(InvalidMETError, match="between 0 and 1"):
        MatchEquityTable([[0.5, 1.6], [0.4, 0.5]], [0.5, 0.49])
    bad = tmp_path / "bad.json"
    bad.write_text('{"pre": []}')
    with pytest.raises(InvalidMETError):
        MatchEquityTable.load(bad)
    garbage = tmp_path / "bad.xml"
    garbage.write_text("<met><oops")
    with pytest.raises(InvalidMETError):
        MatchEquityTable.load(garbage)


def test_generated_table_has_the_theoretical_shape() -> None:
    gen = generate_met(10)
    for a in range(1, 11):
        for b in range(1, 11):
            assert gen.equity(a, b) + gen.equity(b, a) == pytest.approx(1.0)
            if b < 10:
                assert gen.equity(a, b + 1) > gen.equity(a, b)
    # Without gammons and without the free drop the post-Crawford trailer needs one win per two points.
    plain = generate_met(8, gammon_rate=0.0, backgammon_rate=0.0, free_drop_spread=0.0)
    for a in range(1, 8):
        wins_needed = (a + 1) // 2 if a > 1 else 1
        assert plain.post_crawford(a) == pytest.approx(0.5 ** wins_needed)
    # Crawford game, no gammons: the leader wins it, or wins the post-Crawford game after.
    assert plain.equity(1, 3) == pytest.approx(0.5 + 0.5 * (1 - plain.post_crawford(2)))


def test_generated_table_is_close_to_kazaross() -> None:
    gen, ref = generate_met(15), default_met()
    worst = max(abs(gen.equity(a, b) - ref.equity(a, b)) for a in range(1, 16) for b in range(1, 16))
    worst_post = max(abs(gen.post_crawford(a) - ref.post_crawford(a)) for a in range(1, 16))
    assert worst < 0.02 and worst_post < 0.02      # docs/CUBE.md reports the measured figures


def test_generator_rejects_bad_parameters() -> None:
    with pytest.raises(InvalidMETError):
        generate_met(1)
    with pytest.raises(InvalidMETError):
        generate_met(gammon_rate=0.1, backgammon_rate=0.2)


def test_table_stays_monotone_past_its_edge() -> None:
    met = default_met()
    assert met.equity(4, 26) > met.equity(4, 25)           # was below it before the extrapolation was anchored
    assert met.equity(26, 4) < met.equity(25, 4)
    for a in range(1, 40):
        for b in range(1, 40):
            assert met.equity(a, b + 1) >= met.equity(a, b) - 1e-12, (a, b)
            assert met.equity(a + 1, b) <= met.equity(a, b) + 1e-12, (a, b)
    for a in range(1, 40):
        assert met.post_crawford(a + 1) <= met.post_crawford(a)


def test_matches_beyond_the_tables_reach_get_one_sentence() -> None:
    from bgnet.cube.met import MAX_AWAY

    met = default_met()
    assert 0.0 < met.equity(MAX_AWAY, MAX_AWAY - 1) < 0.5
    with pytest.raises(InvalidMETError, match=r"beyond this table's reach") as err:
        met.equity(MAX_AWAY + 1, 3)
    assert "\n" not in str(err.value)
    with pytest.raises(InvalidMETError):
        met.post_crawford(MAX_AWAY + 1)
