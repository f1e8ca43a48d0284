"""Rollouts: dice streams, exactness against the bear-off database, variance reduction, chunking, the teacher."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bgnet.core.position import Position
from bgnet.core.probs import Probs
from bgnet.sim.rollout import (
    Candidate, RolloutError, RolloutSettings, _DICE36, chunk_plan, combine, dice_for, evaluate_pruned, label_positions,
    load_targets, position_candidate, rollout, rollout_chunk, save_targets, thread_map,
)

START = Position.start()
# A middle game with contact for both sides (X: 24:2 13:4 8:3 6:4 5:1 3:1), X to play 4-2.
MIDGAME = Position.from_position_id("4HPwASik5+ABMA")


@pytest.fixture(scope="module")
def net():
    from bgnet.play.agents import load_agent

    return load_agent("default", ply=0).probs_fn


@pytest.fixture(scope="module")
def exact():
    """The bear-off database as an evaluator: exact chances for pure bear-offs (every board asked must be one)."""
    bearoff = pytest.importorskip("bgnet.nets.bearoff")

    def probs_fn(boards: np.ndarray) -> np.ndarray:
        mask, probs = bearoff.exact_probs(boards)
        assert np.asarray(mask).all(), "the exact evaluator was asked about a board that is not a pure bear-off"
        return np.asarray(probs, np.float32)
    return probs_fn


def bearoff_position(mine: dict[int, int], theirs: dict[int, int]) -> Position:
    """A pure bear-off: my checkers on my points, the opponent's on his own points (his numbering)."""
    return Position.from_points(mine, theirs)


# -- dice -------------------------------------------------------------------------------


def test_quasi_random_dice_stratify_the_first_two_rolls_and_every_block_of_36() -> None:
    trials = np.arange(1296)
    first, second = dice_for(7, trials, 0), dice_for(7, trials, 1)
    assert len(set(zip(first.tolist(), second.tolist()))) == 1296  # every pair of the first two rolls once
    for ply in (0, 1, 2, 5, 9):
        d = dice_for(7, trials, ply).reshape(36, 36)
        assert all(sorted(row) == list(range(36)) for row in d.tolist()), ply  # each 36 trials: each outcome once
    assert not np.array_equal(dice_for(7, trials, 2), dice_for(7, trials, 3))
    assert not np.array_equal(dice_for(7, trials, 2), dice_for(8, trials, 2))


def test_plain_dice_are_uniform_and_depend_only_on_seed_trial_and_ply() -> None:
    trials = np.arange(36_000)
    d = dice_for(3, trials, 4, quasi_random=False)
    counts = np.bincount(d, minlength=36)
    chi2 = float(((counts - 1000.0) ** 2 / 1000.0).sum())
    assert chi2 < 80.0  # 35 degrees of freedom: p < 1e-4 beyond this
    # A trial's dice do not depend on which other trials are asked for.
    assert np.array_equal(dice_for(3, trials[5000:5100], 4, quasi_random=False), d[5000:5100])
    assert np.array_equal(dice_for(3, trials[::7], 2), dice_for(3, trials, 2)[::7])
    # Successive rolls of one trial are not correlated.
    a, b = dice_for(3, trials, 4, quasi_random=False), dice_for(3, trials, 5, quasi_random=False)
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.03


# -- exactness ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rollout_of_a_pure_bearoff_converges_to_the_database_value(exact, seed: int) -> None:
    # X (on roll): 6:2 5:1 4:1; O: 6:1 5:1 3:1 2:1 (his points). Played with the exact evaluator (optimal
    # play), trials run to the end (no truncation at the database): the mean must cover the exact value.
    pos = bearoff_position({6: 2, 5: 1, 4: 1}, {6: 1, 5: 1, 3: 1, 2: 1})
    want = float(exact(np.array([pos.board], np.int8))[0, 0])
    assert 0.2 < want < 0.8
    res = rollout(exact, pos, trials=1296, seed=seed, luck_vr=False, bearoff=False, bearoff_fn=None)
    c = res.candidates[0]
    assert c.trials == 1296
    assert abs(c.probs.win - want) < 3.3 * c.probs_stderr[0], (c.probs.win, want, c.probs_stderr[0])
    assert c.probs_stderr[0] > 0.005  # the trials really were played (not scored at once)


def test_luck_reduction_with_an_exact_evaluator_removes_all_variance(exact) -> None:
    # With the evaluator exact and the luck judged on every play, result - luck is the root's exact value
    # in every trial (a strong check of the luck bookkeeping and of whose point of view each term is).
    pos = bearoff_position({6: 2, 4: 1, 1: 2}, {5: 2, 4: 1, 2: 1})
    want = exact(np.array([pos.board], np.int8))[0]
    cand = position_candidate(pos)
    st = RolloutSettings(trials=72, luck_vr=True, luck_candidates=0, bearoff=False)
    ch = rollout_chunk(exact, [cand], 0, 72, st, seed=5)
    assert ch.raw[0, :, 0].std() > 0.2  # the plain results vary
    assert np.allclose(ch.values[0], want, atol=2e-5)


def test_truncation_at_the_database_scores_a_bearoff_at_once(exact) -> None:
    pos = bearoff_position({6: 3, 2: 1}, {5: 2, 1: 2})
    want = exact(np.array([pos.board], np.int8))[0]
    ch = rollout_chunk(lambda b: pytest.fail("the net must not be asked"), [position_candidate(pos)], 0, 36,
                       RolloutSettings(trials=36), seed=0, bearoff_fn=lambda b: (np.ones(len(b), bool), exact(b)))
    assert np.allclose(ch.values[0], want)
    assert (ch.plies == 0).all()


def test_a_fake_database_stops_trials_where_it_says(net) -> None:
    # A fake "database" that knows only races (no contact): every trial must stop there, scored by it.
    seen = []

    def fake(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from bgnet.core.position import Position as P

        mask = np.array([P.from_array(b).is_race() for b in boards], bool)
        seen.append(int(mask.sum()))
        return mask, np.tile(np.array([0.25, 0.0, 0.0, 0.0, 0.0]), (len(boards), 1))
    ch = rollout_chunk(net, [position_candidate(MIDGAME)], 0, 36, RolloutSettings(trials=36, luck_vr=False), 1,
                       bearoff_fn=fake)
    assert sum(seen) > 0
    stopped = ch.raw[0][np.isclose(ch.raw[0, :, 0], 0.25) | np.isclose(ch.raw[0, :, 0], 0.75)]
    assert len(stopped) > 0
    assert set(np.round(stopped[:, 1:], 6).ravel().tolist()) == {0.0}


# -- variance reduction -----------------------------------------------------------------------


def test_luck_reduction_lowers_the_standard_error_without_moving_the_mean(net) -> None:
    kw = dict(trials=648, truncate=6, seed=11, bearoff_fn=None)
    plain = rollout(net, MIDGAME, "42", plays=["8/4 6/4"], luck_vr=False, **kw).candidates[0]
    vr = rollout(net, MIDGAME, "42", plays=["8/4 6/4"], luck_vr=True, **kw).candidates[0]
    assert vr.equity_stderr < plain.equity_stderr / 2.0, (vr.equity_stderr, plain.equity_stderr)
    both = (plain.equity_stderr ** 2 + vr.equity_stderr ** 2) ** 0.5
    assert abs(vr.equity - plain.equity) < 3.0 * both
    # Same dice, same plays: the plain results of the VR run equal the plain run's.
    cand = rollout(net, MIDGAME, "42", plays=["8/4 6/4"], luck_vr=False, trials=36, truncate=6, seed=11,
                   bearoff_fn=None)
    assert cand.trials_done == 36


def test_quasi_random_dice_do_not_move_the_mean(net) -> None:
    kw = dict(trials=648, truncate=4, seed=3, bearoff_fn=None, luck_vr=False)
    q = rollout(net, MIDGAME, **kw).candidates[0]
    p = rollout(net, MIDGAME, quasi_random=False, **kw).candidates[0]
    assert abs(q.equity - p.equity) < 3.0 * (q.equity_stderr ** 2 + p.equity_stderr ** 2) ** 0.5


# -- reproducibility ---------------------------------------------------------------------------


def test_same_seed_same_numbers_whatever_the_chunking(net) -> None:
    # Every trial plays the same plays; the net's values at the truncation point and in the luck terms agree
    # to float32 rounding (its matrix products round differently with the batch size).
    base = dict(trials=150, truncate=5, luck_vr=True, bearoff=False)
    ref = rollout(net, START, "31", seed=9, chunk_size=150, bearoff_fn=None, **base)
    cands = [position_candidate(MIDGAME)]
    st = RolloutSettings(trials=150, truncate=5, bearoff=False, chunk_size=150)
    whole = rollout_chunk(net, cands, 0, 150, st, 9)
    for size, mapper in ((36, None), (64, thread_map(2)), (7, None)):
        other = rollout(net, START, "31", seed=9, chunk_size=size, map_fn=mapper, bearoff_fn=None, **base)
        for a, b in zip(other.candidates, ref.candidates):
            assert a.label == b.label and a.trials == b.trials == 150
            assert np.allclose(list(a.probs), list(b.probs), rtol=0, atol=1e-6), size
            assert abs(a.equity_stderr - b.equity_stderr) < 1e-6
        small = replace(st, chunk_size=size)
        parts = [rollout_chunk(net, cands, k, n, small, 9) for k, n in chunk_plan(small)]
        assert np.allclose(np.concatenate([p.raw for p in parts], axis=1), whole.raw, rtol=0, atol=1e-6)
        assert np.array_equal(np.concatenate([p.plies for p in parts], axis=1), whole.plies)
    different = rollout(net, START, "31", seed=10, chunk_size=150, bearoff_fn=None, **base)
    assert abs(different.candidates[0].probs.win - ref.candidates[0].probs.win) > 1e-4


def test_chunks_combine_in_any_order(net) -> None:
    st = RolloutSettings(trials=100, truncate=3, chunk_size=40, bearoff=False)
    cands = [position_candidate(MIDGAME)]
    chunks = [rollout_chunk(net, cands, k, n, st, 4) for k, n in ((0, 40), (1, 40), (2, 20))]
    a = combine(chunks, cands, position_id="x", dice=(1, 2), settings=st, seed=4)
    b = combine(chunks[::-1], cands, position_id="x", dice=(1, 2), settings=st, seed=4)
    assert a == b
    assert a.trials_done == 100


def test_interrupted_rollout_returns_what_was_done(net) -> None:
    calls = []

    def stopping_map(func, items):
        for i, item in enumerate(items):
            if i == 2:
                raise KeyboardInterrupt
            calls.append(item)
            yield func(item)
    res = rollout(net, START, "31", plays=["8/5 6/5"], trials=100, chunk_size=20, truncate=2, map_fn=stopping_map,
                  bearoff_fn=None)
    assert res.interrupted and res.trials_done == 40
    assert "stopped early" in res.format()


# -- candidates, results, errors ------------------------------------------------------------------


def test_candidates_from_the_filter_and_from_plays(net) -> None:
    res = rollout(net, START, "31", trials=36, truncate=1, bearoff_fn=None)
    assert res.candidates[0].label in {c.label for c in res.candidates}
    assert {"8/5 6/5"} <= {c.label for c in res.candidates}
    two = rollout(net, START, "31", plays=["24/23 13/10", "8/5 6/5"], trials=36, truncate=1, bearoff_fn=None)
    assert [c.label for c in two.candidates] == ["24/23 13/10", "8/5 6/5"]
    with pytest.raises(ValueError):
        rollout(net, START, "31", plays=["24/21 13/12"], trials=36)
    with pytest.raises(RolloutError):
        rollout(net, START, trials=0)
    with pytest.raises(RolloutError):
        rollout(net, START, "31", ply=2, trials=36)


def test_a_play_that_wins_at_once_is_scored_exactly(net) -> None:
    # X has one checker left on his 2-point against O's 15 still home: 2-1 bears it off, a gammon.
    pos = Position.from_points({2: 1}, {6: 5, 5: 5, 4: 5})
    res = rollout(net, pos, "21", trials=36, bearoff_fn=None)
    c = res.candidates[0]
    assert c.probs == Probs(1.0, 1.0, 0.0, 0.0, 0.0) and c.equity == 2.0 and c.equity_stderr == 0.0


def test_cube_rollout_reports_no_double_and_double_take(net) -> None:
    res = rollout(net, MIDGAME, trials=72, truncate=3, seed=2, bearoff_fn=None)
    labels = [c.label for c in res.candidates]
    assert labels == ["No double", "Double, take"]
    nd, dt = res.candidates
    assert nd.probs == dt.probs and nd.cubeful_equity is not None and dt.cubeful_equity is not None
    assert res.cube is not None and res.cube["action"] in {"no double", "double, take", "double, pass", "too good"}
    d = res.to_dict()
    assert d["trials_done"] == 72 and d["cube"]["proper_cube_action"]


def test_cubeful_play_equity_and_its_interval(net) -> None:
    res = rollout(net, START, "31", plays=["8/5 6/5"], cubeful=True, trials=72, truncate=2, bearoff_fn=None)
    c = res.candidates[0]
    assert c.cubeful_equity is not None and c.cubeful_stderr is not None and c.cubeful_stderr > 0
    lo, hi = c.equity_interval
    assert lo < c.equity < hi and abs((hi - lo) / 2 - 1.96 * c.equity_stderr) < 1e-6


def test_one_ply_checker_play_runs_and_differs_from_zero_ply(net) -> None:
    kw = dict(trials=36, truncate=2, seed=1, luck_vr=False, bearoff_fn=None)
    zero = rollout(net, MIDGAME, **kw).candidates[0]
    one = rollout(net, MIDGAME, ply=1, **kw).candidates[0]
    assert one.trials == 36 and abs(one.equity - zero.equity) < 0.5


# -- the teacher ------------------------------------------------------------------------------------


def test_label_positions_evaluates_and_rolls_out(net, exact, tmp_path) -> None:
    from bgnet.play.search import evaluate_boards

    boards = np.array([MIDGAME.board, START.board], np.int8)
    b, p, se = label_positions(net, boards, trials=0, ply=1)
    assert np.allclose(p, evaluate_boards(net, boards, 1), atol=1e-6) and not se.any()
    races = np.array([bearoff_position({6: 2, 5: 1}, {4: 2, 1: 1}).board,
                      bearoff_position({3: 3}, {6: 1, 2: 2}).board], np.int8)
    b, p, se = label_positions(exact, races, trials=324, seed=1, settings=RolloutSettings(luck_vr=False, bearoff=False),
                               bearoff_fn=None)
    want = exact(races)
    assert (np.abs(p[:, 0] - want[:, 0]) < 3.3 * se[:, 0] + 1e-6).all() and (se[:, 0] > 0).all()
    again = label_positions(exact, races, trials=324, seed=1, settings=RolloutSettings(luck_vr=False, bearoff=False),
                            bearoff_fn=None)
    assert np.array_equal(again[1], p)
    out = tmp_path / "targets.npz"
    save_targets(out, b, p, se, trials=324)
    t = load_targets(out)
    assert np.array_equal(t.boards, b) and np.array_equal(t.probs, p) and t.meta["trials"] == "324"
    assert [x.name for x in tmp_path.iterdir()] == ["targets.npz"]  # no temporary file left behind


def test_label_cli_writes_targets(tmp_path) -> None:
    import subprocess
    import sys

    inp, out = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(inp, boards=np.array([MIDGAME.board, START.board], np.int8))
    res = subprocess.run([sys.executable, "-m", "bgnet.sim.rollout", "label", str(inp), str(out), "--ply", "0"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert load_targets(out).probs.shape == (2, 5)
    bad = subprocess.run([sys.executable, "-m", "bgnet.sim.rollout", "label", str(out) + ".missing", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_dice_table_matches_outcome_indices() -> None:
    assert _DICE36.shape == (36, 2) and len({tuple(r) for r in _DICE36.tolist()}) == 36
    assert isinstance(Candidate("x", tuple(START.board), True), Candidate)


def test_pruning_limits_the_plays_the_net_judges(net) -> None:
    asked = []

    def counting(boards: np.ndarray) -> np.ndarray:
        asked.append(len(boards))
        return net(boards)
    st = RolloutSettings(trials=72, truncate=3, luck_vr=False, prune=3, bearoff=False)
    ch = rollout_chunk(counting, [position_candidate(MIDGAME)], 0, 72, st, 1)
    assert max(asked[:-1]) <= 3 * 72  # each ply: at most 3 plays per live trial (the last call: the truncation)
    full = rollout_chunk(net, [position_candidate(MIDGAME)], 0, 72, RolloutSettings(trials=72, truncate=3,
                         luck_vr=False, bearoff=False), 1)
    assert abs(ch.raw[0, :, 0].mean() - full.raw[0, :, 0].mean()) < 0.1  # same dice; plays differ where pubeval errs
    with pytest.raises(RolloutError):
        RolloutSettings(prune=-1)


def test_chunk_tasks_pickle_for_other_processes(net) -> None:
    import pickle

    from bgnet.sim.rollout import ChunkTask

    st = RolloutSettings(trials=40, truncate=2, chunk_size=20, bearoff=False)
    task = ChunkTask(net, (position_candidate(MIDGAME),), st, 3)
    clone = pickle.loads(pickle.dumps(task))
    a, b = task((1, 20)), clone((1, 20))
    assert a.first_trial == 20 and np.allclose(a.values, b.values, atol=1e-6)


# -- cubeful trials: the cube played inside every trial ---------------------------------

def constant(win: float, win_gammon: float = 0.0):
    """An evaluator that gives every side on roll the same chances (``win``, ``win_gammon``, no backgammons)."""
    def probs_fn(boards: np.ndarray) -> np.ndarray:
        return np.tile(np.array([win, win_gammon, 0.0, 0.0, 0.0], np.float32), (len(boards), 1))
    return probs_fn


def test_a_trial_doubled_out_and_passed_scores_exactly_the_cube_value() -> None:
    # Every side on roll reads 90% with no gammons: the opponent, on roll after the play, doubles and the
    # mover passes; with a 2-cube owned by the opponent he redoubles and the root side passes 2 points.
    res = rollout(constant(0.9), START, "31", plays=["8/5 6/5"], cubeful=True, trials=36, truncate=4,
                  bearoff_fn=None)
    c = res.candidates[0]
    assert c.cubeful_equity == -1.0 and c.cubeful_stderr == 0.0
    cube = rollout(constant(0.9), MIDGAME, trials=36, truncate=4, bearoff_fn=None)
    nd, dt = cube.candidates
    # No double: the opponent doubles me out at his first turn; double/take: he redoubles to 4 and I pass 2.
    assert nd.cubeful_equity == -1.0 and dt.cubeful_equity == -2.0
    assert cube.cube is not None and cube.cube["method"] == "cubeful trials"


def test_passes_and_takes_are_tracked_per_trial_in_arrays(net) -> None:
    from bgnet.cube.match import MatchState
    from bgnet.sim.rollout import _CubeTracks

    cands = [replace(position_candidate(MIDGAME), cube_lines=((1, "centred"), (2, "opponent")))]
    tr = _CubeTracks(cands, 3, MatchState())
    rows = np.arange(3)
    probs = np.array([[0.95, 0.0, 0.0, 0.0, 0.0], [0.75, 0.1, 0.0, 0.05, 0.0], [0.5, 0.1, 0.0, 0.1, 0.0]])
    boards = np.repeat(np.array(MIDGAME.board, np.int8)[None], 3, axis=0)
    tr.decide(rows, probs, boards, np.ones(3, bool))
    # Line 1 (cube centred): 95% passes (closed at +1), 75% is a double and take (2, owned by the taker),
    # 50% is no double. Line 2 (the opponent owns 2): no access, nothing moves.
    assert tr.done.tolist() == [True, False, False, False, False, False] and tr.value[0] == 1.0
    assert tr.cube.tolist() == [1, 2, 1, 2, 2, 2] and tr.owner.tolist() == [0, -1, 0, -1, -1, -1]
    # A gammon won by the root side with the cube on 2 is worth 4 points per root cube.
    tr.end_game(np.array([1]), np.array([-2], np.int8), np.array([False]))
    assert tr.done[1] and tr.value[1] == 4.0


def test_a_position_far_ahead_with_gammons_is_too_good_to_double(net) -> None:
    # X has a closed board and three checkers to come in; O has three on the bar and the rest at home.
    pos = Position.from_points({6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2, 8: 3}, {25: 3, 6: 4, 5: 4, 4: 4})
    res = rollout(net, pos, trials=72, truncate=6, seed=1, bearoff_fn=None)
    nd, dt = res.candidates
    assert nd.cubeful_equity is not None and dt.cubeful_equity is not None
    assert nd.probs.win_gammon > 0.5
    assert nd.cubeful_equity - 2 * nd.cubeful_stderr > 1.0  # playing on beats cashing the game
    assert dt.cubeful_equity > nd.cubeful_equity  # a take would be a blunder by the opponent
    assert res.cube is not None and res.cube["action"] == "too good" and res.cube["response"] == "pass"


@pytest.mark.parametrize("state_args", [dict(match_length=1), dict(match_length=5, score_me=4, crawford=True)])
def test_a_dead_cube_makes_the_cubeful_rollout_the_cubeless_one(net, state_args) -> None:
    from bgnet.cube.match import MatchState

    state = MatchState(**state_args)
    kw = dict(trials=36, truncate=5, seed=4, luck_vr=False, bearoff_fn=None, state=state)
    res = rollout(net, MIDGAME, "42", plays=["8/4 6/4", "24/20 13/11"], cubeful=True, **kw)
    for c in res.candidates:
        assert c.cubeful_equity is not None and c.cubeful_mwc is not None
        assert c.cubeful_equity == pytest.approx(c.equity, abs=1e-9)
        assert c.cubeful_stderr == pytest.approx(c.equity_stderr, abs=1e-9)
    cube = rollout(net, MIDGAME, **kw)
    assert [c.label for c in cube.candidates] == ["No double"]
    assert cube.candidates[0].cubeful_equity == pytest.approx(cube.candidates[0].equity, abs=1e-9)


def test_cubeful_trials_keep_the_cubeless_numbers_and_do_not_depend_on_chunking(net) -> None:
    kw = dict(plays=["8/5 6/5", "24/23 13/10"], trials=72, truncate=5, seed=3, bearoff_fn=None)
    plain = rollout(net, START, "31", **kw)
    a = rollout(net, START, "31", cubeful=True, chunk_size=72, **kw)
    b = rollout(net, START, "31", cubeful=True, chunk_size=20, **kw)
    again = rollout(net, START, "31", cubeful=True, chunk_size=72, **kw)
    for p, x, y, z in zip(plain.candidates, a.candidates, b.candidates, again.candidates):
        assert p.probs == x.probs and p.equity == x.equity  # the cube does not touch the cubeless trials
        # Same seed, same numbers; another chunking agrees to the net's float32 rounding with the batch size.
        assert x.cubeful_equity == z.cubeful_equity and x.cubeful_stderr == z.cubeful_stderr
        assert x.cubeful_equity == pytest.approx(y.cubeful_equity, abs=1e-6)
        assert x.cubeful_stderr == pytest.approx(y.cubeful_stderr, abs=1e-6)
    c = rollout(net, MIDGAME, trials=72, truncate=5, seed=3, bearoff_fn=None, chunk_size=72)
    d = rollout(net, MIDGAME, trials=72, truncate=5, seed=3, bearoff_fn=None, chunk_size=30)
    assert c.cube is not None and d.cube is not None and c.cube["action"] == d.cube["action"]
    for e, f in zip(c.candidates, d.candidates):
        assert e.cubeful_equity == pytest.approx(f.cubeful_equity, abs=1e-6)


def test_fused_pubeval_top_picks_what_pubeval_scores_rank_highest() -> None:
    from bgnet.core.movegen import generate_plays
    from bgnet.nets.pubeval import pubeval_scores
    from bgnet.sim.rollout import _ROLL_DICE, _pubeval_top

    boards = np.array([START.board, MIDGAME.board, MIDGAME.swap_sides().board], np.int8)
    after, _s, _n, offsets = generate_plays(np.repeat(boards, 21, axis=0), np.tile(_ROLL_DICE, (3, 1)))
    scores = pubeval_scores(after)
    for keep, margin in ((1, np.inf), (2, np.inf), (3, 0.5)):
        idx, new_off = _pubeval_top(after, offsets, keep, margin)
        for i in range(len(offsets) - 1):
            seg = scores[offsets[i]:offsets[i + 1]]
            want = np.sort(np.argsort(-seg, kind="stable")[:keep])
            want = want[seg[want] >= seg.max() - margin] + offsets[i]
            assert idx[new_off[i]:new_off[i + 1]].tolist() == want.tolist()


def test_pruned_search_is_the_full_search_when_nothing_is_pruned_and_never_better_for_the_last_mover(net) -> None:
    from bgnet.core.probs import equities
    from bgnet.play.search import evaluate_boards

    boards = np.array([MIDGAME.board, START.board, bearoff_position({6: 2, 5: 1}, {4: 2, 1: 1}).board], np.int8)
    # no roll has 1,000 plays: the pruned search is then the full one, level by level
    assert np.allclose(evaluate_pruned(net, boards, 1, 1000), evaluate_boards(net, boards, 1), atol=1e-5)
    assert np.allclose(evaluate_pruned(net, boards[:1], 2, 1000), evaluate_boards(net, boards[:1], 2), atol=1e-5)
    # at 1 ply the side on roll chooses among fewer plays: its equity can only fall, and with 1 play it does
    full = equities(evaluate_boards(net, boards, 1))
    one, ten = (equities(evaluate_pruned(net, boards, 1, k)) for k in (1, 10))
    assert (ten <= full + 1e-6).all() and (one <= ten + 1e-6).all() and (one < full - 1e-3).any()
    # the labelling path gives the same; a finished game its exact value; bad arguments an error
    _, p, _ = label_positions(net, boards, trials=0, ply=1, last_level_top=10)
    assert np.allclose(equities(p), ten, atol=1e-5)
    won = np.zeros((1, 26), np.int8)
    won[0, 1] = -15  # the side on roll has no checkers left: a finished game
    assert np.allclose(evaluate_pruned(net, won, 2, 10), evaluate_boards(net, won, 2))
    with pytest.raises(ValueError, match="ply >= 1"):
        evaluate_pruned(net, boards, 0, 10)
