"""Rollouts: dice streams, exactness against the bear-off database, variance reduction, chunking, cubeful trials."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bgnet.core.position import Position
from bgnet.core.probs import Probs
from bgnet.sim.rollout import combine, rollout, thread_map
from bgnet.sim.rollout_candidates import Candidate, position_candidate
from bgnet.sim.rollout_dice import DICE36, dice_for
from bgnet.sim.rollout_settings import RolloutError, RolloutSettings
from bgnet.sim.rollout_trials import ChunkStopped, ChunkTask, chunk_plan, rollout_chunk
from bgnet.sim.rollout_play import net_probs

START = Position.start()
# A middle game with contact for both sides (X: 24:2 13:4 8:3 6:4 5:1 3:1), X to play 4-2.
MIDGAME = Position.from_position_id("4HPwASik5+ABMA")


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


def test_dice_are_the_numbers_they_were_before_the_hash_moved_to_bgnet_core_dice() -> None:
    # Seeds name rollouts in results and docs: the same seed must keep giving the same dice (computed with the
    # rollout's own SplitMix64 copy before bgnet.core.dice became its one owner).
    trials = np.arange(12)
    assert dice_for(1, trials, 0).tolist() == [17, 29, 0, 27, 16, 31, 19, 28, 30, 7, 2, 3]
    assert dice_for(1, trials, 5).tolist() == [0, 16, 12, 30, 8, 9, 6, 28, 35, 34, 17, 24]
    assert dice_for(1, trials, 3, quasi_random=False).tolist() == [27, 7, 3, 33, 13, 4, 4, 20, 14, 34, 29, 21]


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
    chunks = [rollout_chunk(net, cands, first, n, st, 4) for first, n in ((0, 40), (40, 40), (80, 20))]
    a = combine(chunks, cands, position_id="x", dice=(1, 2), settings=st, seed=4)
    b = combine(chunks[::-1], cands, position_id="x", dice=(1, 2), settings=st, seed=4)
    assert a == b
    assert a.trials_done == 100
    # Without trial 0 nothing can be folded in (a partial result is always trials 0 to trials_done - 1).
    with pytest.raises(RolloutError):
        combine(chunks[1:], cands, position_id="x", dice=(1, 2), settings=st, seed=4)
    head = combine([chunks[0], chunks[2]], cands, position_id="x", dice=(1, 2), settings=st, seed=4)
    assert head.trials_done == 40 and head.candidates[0] == combine(
        chunks[:1], cands, position_id="x", dice=(1, 2), settings=st, seed=4).candidates[0]


def test_the_chunk_plan_is_lazy_small_first_and_covers_every_trial_once() -> None:
    from itertools import islice

    plan = chunk_plan(RolloutSettings(trials=10**12, chunk_size=324))
    first = list(islice(plan, 6))  # a trillion trials: made as asked for, never as a list
    assert first == [(0, 36), (36, 108), (144, 324), (468, 324), (792, 324), (1116, 324)]
    chunks = list(chunk_plan(RolloutSettings(trials=1000, chunk_size=100)))
    assert chunks[:2] == [(0, 36), (36, 100)] and sum(n for _f, n in chunks) == 1000
    assert all(f + n == g for (f, n), (g, _m) in zip(chunks, chunks[1:]))
    assert list(chunk_plan(RolloutSettings(trials=10, chunk_size=4))) == [(0, 4), (4, 4), (8, 2)]


def test_moments_match_the_statistics_of_all_rows_at_once() -> None:
    from bgnet.sim.rollout_stats import Moments, trial_stats

    rows = np.random.default_rng(3).normal(0.5, 0.2, size=(1000, 5)) + 1e4  # an offset: the shift keeps digits
    m = Moments(5)
    for lo in range(0, 1000, 37):
        m.add(rows[lo:lo + 37])
    mean, se, cov = m.stats()
    want = trial_stats(rows)
    assert m.n == 1000 and np.allclose(mean, want[0], rtol=0, atol=1e-9)
    assert np.allclose(se, want[1], rtol=1e-9) and np.allclose(cov, want[2], rtol=1e-7, atol=0)
    one = Moments(5)
    one.add(rows[:1])
    assert np.array_equal(one.stats()[1], np.zeros(5))


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


def test_a_chunk_asked_to_stop_stops_at_its_next_ply(net) -> None:
    asked: list[int] = []

    def should_stop() -> bool:
        asked.append(1)
        return len(asked) > 2
    with pytest.raises(ChunkStopped):
        rollout_chunk(net, [position_candidate(MIDGAME)], 0, 36, RolloutSettings(trials=36, truncate=8), 1,
                      should_stop=should_stop)
    assert len(asked) == 3


def test_closing_a_thread_map_stops_its_running_chunks_at_once(net) -> None:
    import time

    calls: list[float] = []

    def slow(boards: np.ndarray) -> np.ndarray:
        time.sleep(0.005)  # long chunks: without the stop flag, closing would wait seconds for them
        calls.append(time.monotonic())
        return net(boards)
    st = RolloutSettings(trials=10**9, luck_vr=False, bearoff=False)
    results = thread_map(2)(ChunkTask(slow, (position_candidate(MIDGAME),), st, 2), chunk_plan(st))
    assert next(results).values.shape[1] == 36
    start = time.monotonic()
    results.close()  # what Ctrl-C in the rollout does
    stopped = time.monotonic()
    assert stopped - start < 1.0 and len(calls) > 0
    time.sleep(0.2)
    assert all(t <= stopped for t in calls)  # no chunk goes on in the background


def test_a_rollout_stopped_before_its_first_chunk_raises_keyboard_interrupt(net) -> None:
    def stop_at_once(func, items):
        raise KeyboardInterrupt
        yield  # pragma: no cover - a generator that stops before its first result

    with pytest.raises(KeyboardInterrupt):
        rollout(net, START, "31", plays=["8/5 6/5"], trials=72, truncate=2, map_fn=stop_at_once, bearoff_fn=None)


def test_play_rows_use_the_hints_names(net) -> None:
    from bgnet.play.hint import move_hint

    res = rollout(net, START, "31", plays=["24/23 13/10", "8/5 6/5"], trials=36, truncate=2, bearoff_fn=None)
    d = res.to_dict()
    hint = {m["move"]: m for m in move_hint(net, START, "31").to_dict()["moves"]}
    assert [m["move"] for m in d["moves"]] == ["24/23 13/10", "8/5 6/5"] and "candidates" not in d
    for m, c in zip(d["moves"], res.candidates):
        assert m["position_id"] == hint[m["move"]]["position_id"] == c.position_id
        assert m["equity"] == c.equity == m["cubeless_equity"] and m["probs"] == c.probs.to_dict()
    assert sorted(m["rank"] for m in d["moves"]) == [1, 2]
    assert next(m for m in d["moves"] if m["rank"] == 1)["diff"] == 0.0 and d["partial"] is False


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
    assert d["trials_done"] == 72 and d["decision"]["proper_cube_action"] and d["action"] == res.cube["action"]
    assert "moves" not in d and [line["action"] for line in d["lines"]] == ["no double", "double, take"]
    assert [line["equity"] for line in d["lines"]] == [nd.cubeful_equity, dt.cubeful_equity]
    assert d["lines"][0]["cubeless_equity"] == nd.equity and d["equity"] == "cubeful money"


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


def test_dice_table_matches_outcome_indices() -> None:
    assert DICE36.shape == (36, 2) and len({tuple(r) for r in DICE36.tolist()}) == 36
    assert DICE36[6 * (3 - 1) + (1 - 1)].tolist() == [3, 1]
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

    st = RolloutSettings(trials=40, truncate=2, chunk_size=20, bearoff=False)
    task = ChunkTask(net, (position_candidate(MIDGAME),), st, 3)
    clone = pickle.loads(pickle.dumps(task))
    a, b = task((20, 20)), clone((20, 20))
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
    from bgnet.sim.rollout_luck import ROLL_DICE
    from bgnet.sim.rollout_play import pubeval_top

    boards = np.array([START.board, MIDGAME.board, MIDGAME.swap_sides().board], np.int8)
    after, _s, _n, offsets = generate_plays(np.repeat(boards, 21, axis=0), np.tile(ROLL_DICE, (3, 1)))
    scores = pubeval_scores(after)
    for keep, margin in ((1, np.inf), (2, np.inf), (3, 0.5)):
        idx, new_off = pubeval_top(after, offsets, keep, margin)
        for i in range(len(offsets) - 1):
            seg = scores[offsets[i]:offsets[i + 1]]
            want = np.sort(np.argsort(-seg, kind="stable")[:keep])
            want = want[seg[want] >= seg.max() - margin] + offsets[i]
            assert idx[new_off[i]:new_off[i + 1]].tolist() == want.tolist()


# -- an evaluator that carries a pruning net -------------------------------------------


@pytest.fixture(scope="module")
def pruned_net():
    """The shipped net with its shipped pruning net, as ``bgnet rollout`` loads it."""
    from bgnet.play.agents import DEFAULT_CHECKPOINT, NeuralAgent

    return NeuralAgent(DEFAULT_CHECKPOINT, 0).probs_fn


def test_a_pruned_evaluator_plays_the_kept_plays_best_and_records_it(net, pruned_net) -> None:
    from bgnet.nets.pruning import PrunedEvaluator
    from bgnet.play.search import MONEY, play_values
    from bgnet.sim.rollout_play import play
    from bgnet.core.movegen import generate_plays, swap_sides_batch
    from bgnet.core import _game_kernels as gk

    assert isinstance(pruned_net, PrunedEvaluator)
    rng = np.random.default_rng(4)
    boards = np.repeat(np.array([MIDGAME.board, START.board], np.int8), 20, axis=0)
    dice = DICE36[rng.integers(0, 36, len(boards))]
    root = rng.random(len(boards)) < 0.5
    got, got_probs = play(pruned_net, boards, dice, root, 0, 0, MONEY, MONEY)
    after, _s, _n, offsets = generate_plays(boards, dice)
    cand = swap_sides_batch(after)
    want = cand[gk.segment_argmax(play_values(pruned_net, cand, offsets, MONEY), offsets)]
    assert np.array_equal(got, want)
    assert np.array_equal(got_probs, net_probs(pruned_net, got))  # what the cube would value the next position at
    # at a match score each side maximises its own utility: the root side's rows by one, the other's by the other
    from bgnet.cube.match import MatchState
    from bgnet.play.search import RowUtilities, utility_for

    state = MatchState(match_length=7, score_me=2, score_opp=5)
    util, opp = utility_for(state), utility_for(state.swap_sides())
    assert util != opp
    got, _probs = play(pruned_net, boards, dice, root, 0, 0, util, opp)
    per_row = RowUtilities.per_segment([util if r else opp for r in root], offsets)
    assert np.array_equal(got, cand[gk.segment_argmax(play_values(pruned_net, cand, offsets, per_row), offsets)])
    assert RolloutSettings().pruned_play  # the default where a pruning net ships
    assert not rollout(net, MIDGAME, trials=36, truncate=2).settings.pruned_play  # none here: recorded as such
    assert rollout(pruned_net, MIDGAME, trials=36, truncate=2).settings.pruned_play


def test_a_pruned_rollout_gives_the_same_numbers_whatever_the_workers(pruned_net) -> None:
    base = dict(trials=144, truncate=6, seed=5, bearoff_fn=None, bearoff=False)
    one = rollout(pruned_net, START, "31", chunk_size=144, **base)
    two = rollout(pruned_net, START, "31", chunk_size=36, map_fn=thread_map(2), **base)
    for a, b in zip(one.candidates, two.candidates):
        assert np.allclose(list(a.probs), list(b.probs), rtol=0, atol=1e-6)
        assert abs(a.equity_stderr - b.equity_stderr) < 1e-6
    full = rollout(pruned_net, START, "31", chunk_size=144, pruned_play=False, **base)
    assert all(a.label == b.label for a, b in zip(one.candidates, full.candidates))
    assert abs(one.candidates[0].equity - full.candidates[0].equity) < 0.1  # same dice, nearly the same plays


def test_the_luck_valued_by_the_pruning_net_leaves_the_plays_and_the_mean(pruned_net) -> None:
    st = RolloutSettings(trials=216, truncate=8, bearoff=False)
    cands = [position_candidate(MIDGAME)]
    by_net = rollout_chunk(pruned_net, cands, 0, 216, st, 2)
    by_pruning = rollout_chunk(pruned_net, cands, 0, 216, replace(st, luck_net="pruning"), 2)
    assert np.array_equal(by_net.raw, by_pruning.raw)  # the luck never moves a play
    assert not np.allclose(by_net.values, by_pruning.values)  # but it is another control variate
    luck_net = (by_net.raw - by_net.values)[0, :, 0]
    luck_pruning = (by_pruning.raw - by_pruning.values)[0, :, 0]
    assert np.corrcoef(luck_net, luck_pruning)[0, 1] > 0.8  # the same luck, nearly
    with pytest.raises(RolloutError):
        RolloutSettings(luck_net="pubeval")


def test_a_one_ply_checker_play_is_the_hints_one_ply_choice(net) -> None:
    """A rollout's 1-ply play (``rollout_play.choose``) is ``rank_moves``' best at 1 ply, the mean of the 1-ply and
    0-ply values (``blend_one_ply``) included: on these positions that mean changes some choices."""
    from bgnet.core.movegen import generate_plays, legal_moves, swap_sides_batch
    from bgnet.core.probs import flip_probs
    from bgnet.play.search import MONEY, evaluate_boards, rank_moves
    from bgnet.sim.rollout_play import choose

    rng = np.random.default_rng(7)
    positions, pos = [], START
    while len(positions) < 40:
        moves = legal_moves(pos, tuple(int(d) for d in rng.integers(1, 7, 2)))
        pos = moves[rng.integers(len(moves))].after.swap_sides()
        if pos.is_game_over():
            pos = START
        elif rng.random() < 0.3:
            positions.append(pos)
    dice = rng.integers(1, 7, (len(positions), 2)).astype(np.int8)
    after, _s, _n, offsets = generate_plays(np.array([p.board for p in positions], np.int8), dice)
    pick, pick_probs = choose(net, swap_sides_batch(after), offsets, np.ones(len(positions), bool), 1, MONEY, MONEY)
    assert np.array_equal(pick_probs, net_probs(net, swap_sides_batch(after)[pick]))  # the chosen play's 0-ply chances
    plain_differs = 0
    for g, p in enumerate(positions):
        ranked = rank_moves(net, p, tuple(int(d) for d in dice[g]), 1)
        assert tuple(after[pick[g]].tolist()) == ranked[0].move.after.board
        searched = [r.move.after for r in ranked if r.ply == 1 and r.move.after is not None]
        turned = np.array([a.swap_sides().board for a in searched], np.int8)
        plain = MONEY.of(flip_probs(evaluate_boards(net, turned, 1)))  # the plain 1-ply values of the same plays
        plain_differs += int(np.argmax(plain) != 0)
    assert plain_differs > 0
