"""The fitted play ranker behind the luck's candidate plays: its features, its file, its fit."""

from __future__ import annotations

import numpy as np
import pytest

from bgnet.nets import ranker
from bgnet.core.position import Position


def test_the_ranker_finds_blots_in_reach_and_primes() -> None:
    """Contact features on a hand-made afterstate: my blots on 10 and 20, the opponent's checkers on my 4 and 14 (6
    pips short of each blot) and one on his bar; my points 1, 2, 3 made (a 3-point prime) and 6."""
    row = np.zeros(26, np.int8)
    row[[1, 2, 3, 6]] = 2
    row[10] = row[20] = 1
    row[13] = 5
    row[4] = row[14] = -2
    row[0] = -1
    race, feats = ranker.features(row[None, :])
    assert not race[0]
    d1, pts, shooters, indirect, outer, d1_sq, blots, prime, home_bar = feats[0]
    assert (d1, shooters, d1_sq, blots, prime, outer) == (2, 2, 4, 2, 3, 1)  # 14 -> 20 and 4 -> 10, six pips each
    assert pts == pytest.approx(30 / 24)
    assert indirect == 0  # both blots are in direct range already
    assert home_bar == 4  # points 1, 2, 3, 6 made, one checker on the bar
    row[14] = 0
    row[15] = -2  # 5 pips short of the blot on 20; the blot on 10 is still 6 pips from the point 4
    feats = ranker.features(row[None, :])[1][0]
    assert (feats[0], feats[2]) == (2, 2)
    row[4] = 0
    row[0] = 0  # nothing of the opponent's below 10 now: that blot is out of reach (his checkers move up)
    feats = ranker.features(row[None, :])[1][0]
    assert (feats[0], feats[3], feats[6]) == (1, 0, 2)
    assert ranker.features(np.array(Position.start().board, np.int8)[None, :])[1][0][6] == 0  # no blots


def test_ranker_model_file_round_trips_and_bad_files_are_refused(tmp_path) -> None:
    model = ranker.default()
    path = ranker.save(model, tmp_path / "r.npz")
    again = ranker.load(path)
    assert np.array_equal(again.tables, model.tables) and again.window == model.window
    (tmp_path / "bad.npz").write_bytes(b"not a zip file")
    with pytest.raises(ranker.RankerError, match="cannot read"):
        ranker.load(tmp_path / "bad.npz")
    with pytest.raises(ranker.RankerError, match="shape"):
        ranker.Ranker(np.zeros((2, 24, 30)), model.extra, model.contact, 4)


def test_a_fit_on_a_few_positions_ranks_better_than_pubeval() -> None:
    """Fitted to the released net on a few self-play games, the ranker's top play agrees with the net more often
    than pubeval's on other games (the shipped model's figures are in docs/BENCHMARKS.md)."""
    from bgnet.nets.bearoff import with_database
    from bgnet.nets.fastnet import load_evaluator
    from bgnet.core.resources import default_checkpoint
    from bgnet.trainer import ranker as fitting

    net = with_database(load_evaluator(default_checkpoint()).probs_of_boards)
    train = fitting.self_play_positions(net, 12, seed=1)
    test = fitting.self_play_positions(net, 4, seed=2)[::3]
    model = fitting.fit(net, train, window=4)
    (hit_pub, loss_pub), (hit_fit, loss_fit) = fitting.agreement(net, test, [None, model])
    assert hit_fit > hit_pub and loss_fit < loss_pub


def test_the_rankers_race_flag_is_pubevals() -> None:
    """``ranker._scan`` finds the race flag from bit masks; it must be ``bgnet.nets.pubeval.race_scan``'s own rule."""
    from bgnet.core.movegen import generate_plays
    from bgnet.nets.pubeval import race_scan

    rng = np.random.default_rng(3)
    rows = []
    for start in (Position.start(), Position.from_position_id("4HPwASik5+ABMA"), Position.from_position_id("AAAAgAAAAAAAAA")):
        b = np.array(start.board, np.int8)
        for _ply in range(80):
            after, _s, _n, off = generate_plays(b[None, :], rng.integers(1, 7, size=(1, 2)).astype(np.int8))
            rows.extend(after[:: max(1, off[1] // 5)])
            b = -after[rng.integers(off[1])][::-1].copy()
            if (b > 0).sum() == 0 or (b < 0).sum() == 0:
                break
    rows.append(np.zeros(26, np.int8))
    flags = set()
    for row in rows:
        in_play, race, *_masks = ranker._scan(row)
        assert (in_play, race) == race_scan(row)
        flags.add(race)
    assert flags == {True, False}


def test_the_fitting_command_refuses_a_missing_net_in_one_sentence(tmp_path, capsys) -> None:
    from bgnet.cli import ranker as fitting

    assert fitting.main(["--model", str(tmp_path / "none.pt"), "--out", str(tmp_path / "r.npz")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "Traceback" not in err and not (tmp_path / "r.npz").exists()
    assert fitting.main(["--games", "0"]) == 2


def test_the_module_still_runs_as_the_fitting_command() -> None:
    """``python -m bgnet.trainer.ranker`` starts ``bgnet.cli.ranker``: a bad count is one sentence and status 2."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "bgnet.trainer.ranker", "--games", "0"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 2
    assert r.stderr == "python -m bgnet.trainer.ranker: error: --games and --window must be positive\n"
