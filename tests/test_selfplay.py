"""Vectorised self-play: legal games, the opening roll, finished games restart, reproducibility."""

import numpy as np

from bgnet.core import _game_kernels as gk
from bgnet.nets.bearoff import exact_probs, is_bearoff
from bgnet.core.movegen import legal_moves
from bgnet.core.position import Position
from bgnet.sim.selfplay import START_BOARD, SelfPlay, roll_dice


def random_probs(boards):
    rng = np.random.default_rng(len(boards))
    p = rng.random((len(boards), 5)).astype(np.float32)
    p[:, 1:] *= 0.1
    return p


def test_opening_rolls_are_never_doubles():
    rng = np.random.default_rng(0)
    dice = roll_dice(rng, 5000, np.ones(5000, bool))
    assert np.all(dice[:, 0] != dice[:, 1]) and dice.min() >= 1 and dice.max() <= 6
    pairs = {tuple(d) for d in dice.tolist()}
    assert len(pairs) == 30  # every non-double roll occurs


def test_every_step_is_a_legal_play_and_games_finish():
    play = SelfPlay(32, seed=3)
    finished = []
    for _ in range(400):
        before = play.boards.copy()
        plies_before = play.plies.copy()
        dice_state = play.rng.bit_generator.state
        done = play.step(random_probs)
        finished += done
        # replay the dice to check each game's new position came from a legal play
        rng = np.random.default_rng()
        rng.bit_generator.state = dice_state
        dice = roll_dice(rng, 32, plies_before == 0)
        for g in range(32):  # every game, every step
            pos = Position(before[g].tolist())
            nxt = play.boards[g]
            if np.array_equal(nxt, START_BOARD):
                continue  # restarted (or a new game)
            afters = {m.after.swap_sides().board for m in legal_moves(pos, tuple(dice[g]))}
            assert tuple(nxt.tolist()) in afters
    assert len(finished) > 20
    for t in finished:
        assert t.result in (0, 1, 2, 3)
        assert len(t.boards) == len(t.values) > 0
        assert np.all(gk.terminal_codes(t.boards) == 0)
        bearoff = is_bearoff(t.boards)
        assert not bearoff[:-1].any()  # a game stops at the first pure bear-off
        if t.result == 0:  # ... and ends on its exact chances
            assert bearoff[-1] and np.allclose(t.values[-1], exact_probs(t.boards[-1:])[1][0], atol=1e-6)
        for b in t.boards:
            Position(b.tolist())  # 15 checkers a side at most, no shared points


def test_same_seed_same_games():
    a, b = SelfPlay(16, seed=5), SelfPlay(16, seed=5)
    for _ in range(50):
        a.step(random_probs)
        b.step(random_probs)
    assert np.array_equal(a.boards, b.boards)


def test_state_dict_resume_continues_identically():
    a = SelfPlay(8, seed=9)
    for _ in range(30):
        a.step(random_probs)
    b = SelfPlay(8, seed=0)
    b.load_state_dict(a.state_dict())
    for _ in range(60):
        ra, rb = a.step(random_probs), b.step(random_probs)
        assert [t.result for t in ra] == [t.result for t in rb]
    assert np.array_equal(a.boards, b.boards)


def test_threaded_kernels_play_the_same_games():
    from bgnet.features.encoding import encode
    from bgnet.core.movegen import generate_plays, generate_plays_parallel

    a, b = SelfPlay(64, seed=11), SelfPlay(64, seed=11, threads=2)
    for _ in range(40):
        a.step(random_probs)
        b.step(random_probs)
    assert np.array_equal(a.boards, b.boards)
    dice = np.random.default_rng(1).integers(1, 7, (64, 2))
    serial, parallel = generate_plays(a.boards, dice), generate_plays_parallel(a.boards, dice, 2)
    for x, y in zip(serial, parallel):
        assert np.array_equal(x, y)
    big = np.repeat(serial[0], 8, axis=0)
    assert np.array_equal(encode(big), encode(big, threads=2))


def test_games_stop_at_the_bearoff_database_unless_told_not_to():
    stops, played = SelfPlay(32, seed=4), SelfPlay(32, seed=4, bearoff=False)
    ends: dict[str, list[int]] = {"stop": [], "play": []}
    for _ in range(300):
        ends["stop"] += [t.result for t in stops.step(random_probs)]
        ends["play"] += [t.result for t in played.step(random_probs)]
    assert 0 in ends["stop"] and 0 not in ends["play"]
