"""The luck variance reduction's fast path: the fused 21-roll play kernel, skipping decided games."""

from __future__ import annotations

import numpy as np
import pytest

from bgnet.core.movegen import generate_plays, swap_sides_batch
from bgnet.core.position import Position
from bgnet.nets import ranker
from bgnet.nets.pubeval import WIN_SCORE, pubeval_scores, pubeval_tables
from bgnet.sim import _rollout_kernels as rk
from bgnet.sim.rollout import rollout
from bgnet.sim.rollout_candidates import position_candidate
from bgnet.sim.rollout_dice import DICE36
from bgnet.sim.rollout_luck import ROLL_DICE
from bgnet.sim.rollout_play import pubeval_top
from bgnet.sim.rollout_settings import RolloutError, RolloutSettings
from bgnet.sim.rollout_trials import rollout_chunk

MIDGAME = Position.from_position_id("4HPwASik5+ABMA")


@pytest.fixture(scope="module")
def agent():
    from bgnet.play.agents import load_agent

    return load_agent("default", ply=0)


@pytest.fixture(scope="module")
def boards() -> np.ndarray:
    """Varied positions: random games from the opening and the middle game, every side on roll, a few plies deep
    (contact, races, hits and men on the bar, bear-offs)."""
    rng = np.random.default_rng(5)
    out = []
    for start in (Position.start(), MIDGAME):
        for _game in range(12):
            b = np.array(start.board, np.int8)
            for _ply in range(60):
                out.append(b.copy())
                after, _s, _n, off = generate_plays(b[None, :], DICE36[rng.integers(36)][None, :])
                b = swap_sides_batch(after[rng.integers(off[1])][None, :])[0]
                if (b > 0).sum() == 0 or (b < 0).sum() == 0 or np.abs(b[1:25]).sum() == 0:
                    break
    return np.unique(np.array(out, np.int8), axis=0)


def _ranker_arrays(r: ranker.Ranker) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return r.tables, r.extra, r.contact


@pytest.mark.parametrize("k,margin", [(1, np.inf), (2, np.inf), (2, 0.01)])
def test_luck_plays_with_the_ranker_rerank_pubevals_best_few(boards, k: int, margin: float) -> None:
    """The fitted ranker's kept plays: its top k among pubeval's best ``window`` plays of the roll, in the move
    generator's order, worked out here from the move generator, pubeval and the ranker's own scores."""
    tables, extra = pubeval_tables()
    model = ranker.default()
    cand, slot, _owner = rk.luck_plays(boards, ROLL_DICE, k, margin, tables, extra, WIN_SCORE,
                                       *_ranker_arrays(model), model.window)
    n, nr = len(boards), len(ROLL_DICE)
    after, _s, _n, off = generate_plays(np.repeat(boards, nr, axis=0), np.tile(ROLL_DICE, (n, 1)))
    idx, new_off = pubeval_top(after, off, model.window)
    flat = slot.reshape(n * nr, k)
    differs = 0
    for g in range(n * nr):
        window = idx[new_off[g]:new_off[g + 1]]  # pubeval's best, in the move generator's order
        pub_rank = np.argsort(-pubeval_scores(after[window]), kind="stable")  # best first (ties: the first made)
        by_pub = window[pub_rank]
        sc = model.scores(after[by_pub])
        best_first = by_pub[np.argsort(-sc, kind="stable")][:k]
        keep = np.sort([i for i in best_first if model.scores(after[i:i + 1])[0] >= sc.max() - margin])
        got = flat[g][flat[g] >= 0]
        assert np.array_equal(cand[got], swap_sides_batch(after[keep]))
        differs += int(best_first[0] != by_pub[0])
    assert differs > 0.1 * n * nr  # the ranker does re-rank: its top play is often not pubeval's


def test_luck_ranker_is_checked() -> None:
    with pytest.raises(RolloutError, match="luck_ranker"):
        RolloutSettings(luck_ranker="gnubg")


@pytest.mark.parametrize("k,margin", [(1, np.inf), (2, np.inf), (3, np.inf), (2, 1.0), (4, 0.5)])
def test_luck_plays_are_the_move_generators_plays_ranked_by_pubeval(boards, k: int, margin: float) -> None:
    tables, extra = pubeval_tables()
    cand, slot, owner = rk.luck_plays(boards, ROLL_DICE, k, margin, tables, extra, WIN_SCORE,
                                      *_ranker_arrays(ranker.default()), 0)
    n, nr = len(boards), len(ROLL_DICE)
    after, _s, _n, off = generate_plays(np.repeat(boards, nr, axis=0), np.tile(ROLL_DICE, (n, 1)))
    idx, new_off = pubeval_top(after, off, k, margin)
    flat = slot.reshape(n * nr, k)
    kept = (flat >= 0).sum(axis=1)
    assert np.array_equal(kept, np.diff(new_off))  # the same number of plays per roll ...
    assert np.array_equal(cand[flat[flat >= 0]], swap_sides_batch(after[idx]))  # ... the same plays, same order
    assert ((flat >= 0)[:, 1:] <= (flat >= 0)[:, :-1]).all()  # kept slots first
    # Each position's afterstates are stored once, and each row belongs to the position whose rolls made it.
    assert np.array_equal(owner, np.sort(owner))
    rows = np.concatenate([cand, owner[:, None].astype(np.int64).view(np.int8)], axis=1)
    assert len(np.unique(rows, axis=0)) == len(cand)
    per_row_owner = np.repeat(np.arange(n), nr * k).reshape(n, nr, k)
    assert np.array_equal(owner[slot[slot >= 0]], per_row_owner[slot >= 0])
    assert len(cand) < (flat >= 0).sum()  # some afterstates are reached by two rolls (e.g. 4-1 and 3-2)


def test_fused_luck_is_the_nets_luck_and_leaves_the_plays_alone(agent) -> None:
    st = RolloutSettings(trials=108, truncate=6, bearoff=False, luck_decided=0.0, luck_net="net")
    cands = [position_candidate(MIDGAME)]
    fast = rollout_chunk(agent.probs_fn, cands, 0, 108, st, 4)
    slow = rollout_chunk(lambda b: agent.net.dense_probs_of_boards(b), cands, 0, 108, st, 4)  # numpy's dense pass
    plain = rollout_chunk(agent.probs_fn, cands, 0, 108, RolloutSettings(trials=108, truncate=6, bearoff=False,
                                                                         luck_vr=False), 4)
    assert np.array_equal(fast.raw, plain.raw) and np.array_equal(fast.plies, plain.plies)  # same games
    # The fused kernel and numpy's dense pass sum in another order, so a near tie between two plays (equities within
    # about 1e-7) may go the other way in a trial and change its game; every other trial is the same game.
    same_game = (np.abs(fast.raw - slow.raw) < 1e-4).all(axis=-1)
    assert same_game.mean() >= 0.95 and np.array_equal(fast.plies, slow.plies)
    luck_fast, luck_slow = fast.raw - fast.values, slow.raw - slow.values
    assert np.abs(luck_fast).max() > 0.05
    assert np.abs(luck_fast - luck_slow)[same_game].max() < 1e-4


def test_the_students_luck_leaves_the_games_alone_and_removes_as_much_variance(agent) -> None:
    """The release's student values the luck by default: the same games, a different control variate of mean zero,
    and trial values about as spread as with the release's own luck (far less than without any)."""
    assert agent.probs_fn.student is not None, "checkpoints/student.npz is missing or made for another net"
    cands = [position_candidate(MIDGAME)]
    kw = dict(trials=324, truncate=10, bearoff=False)
    student = rollout_chunk(agent.probs_fn, cands, 0, 324, RolloutSettings(**kw), 6)
    own = rollout_chunk(agent.probs_fn, cands, 0, 324, RolloutSettings(luck_net="net", **kw), 6)
    plain = rollout_chunk(agent.probs_fn, cands, 0, 324, RolloutSettings(luck_vr=False, **kw), 6)
    assert np.array_equal(student.raw, own.raw) and np.array_equal(student.plies, own.plies)
    luck = (student.raw - student.values)[0]
    assert not np.array_equal(luck, (own.raw - own.values)[0])
    assert (np.abs(luck.mean(axis=0)) < 4.0 * luck.std(axis=0, ddof=1) / np.sqrt(len(luck)) + 1e-9).all()
    spread = {name: ch.values[0, :, 0].std() for name, ch in (("student", student), ("own", own), ("plain", plain))}
    assert spread["student"] < 1.15 * spread["own"] and spread["student"] < 0.6 * spread["plain"], spread


def test_luck_has_mean_zero_with_decided_games_skipped(agent) -> None:
    # The luck subtracted from each trial (skipping decided games, judged before each roll) averages to zero
    # within its standard error, and skipping only ever removes luck terms: where the luck of a trial differs
    # from the unskipped one, the difference is small (those games are decided).
    # X (on roll) has a closed board and three checkers on his 8-point; O has three on the bar: many games
    # are soon decided.
    st = RolloutSettings(trials=432, truncate=16, bearoff=False, luck_decided=0.02)
    cands = [position_candidate(Position.from_position_id("eO8BAHDbtjkAAA"))]
    ch = rollout_chunk(agent.probs_fn, cands, 0, 432, st, 8)
    luck = (ch.raw - ch.values)[0]
    mean, se = luck.mean(axis=0), luck.std(axis=0, ddof=1) / np.sqrt(len(luck))
    assert (np.abs(mean) < 4.0 * se + 1e-9).all(), (mean, se)
    full = rollout_chunk(agent.probs_fn, cands, 0, 432, RolloutSettings(trials=432, truncate=16, bearoff=False,
                                                                        luck_decided=0.0), 8)
    assert np.array_equal(full.raw, ch.raw)
    moved = np.abs((full.raw - full.values)[0] - luck).max(axis=1)
    assert (moved > 0).mean() > 0.1 and np.quantile(moved, 0.9) < 0.05, (moved > 0).mean()


def test_luck_decided_is_checked() -> None:
    for bad in (-0.1, 0.5, True, "0.1"):
        with pytest.raises(RolloutError):
            RolloutSettings(luck_decided=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("state_args", [dict(match_length=1), dict(match_length=5, score_me=4, crawford=True)])
def test_with_a_dead_cube_the_cubeful_luck_is_the_cubeless_luck(agent, state_args) -> None:
    # Nobody can double, so each trial's cubeful result is its cubeless one in match winning chances; the luck
    # charged to the cube line must then be exactly the cubeless luck, in the same units.
    from bgnet.cube.match import MatchState
    kw = dict(trials=72, truncate=5, seed=4, bearoff_fn=None, state=MatchState(**state_args))
    res = rollout(agent.probs_fn, MIDGAME, "42", plays=["8/4 6/4", "24/20 13/11"], cubeful=True, **kw)
    for c in res.candidates:
        assert c.cubeful_equity == pytest.approx(c.equity, abs=1e-9)
        assert c.cubeful_stderr == pytest.approx(c.equity_stderr, abs=1e-9)


def test_luck_lowers_the_cubeful_standard_errors_without_moving_the_means(agent) -> None:
    kw = dict(trials=432, truncate=6, seed=2, bearoff_fn=None, bearoff=False)
    vr = rollout(agent.probs_fn, MIDGAME, luck_vr=True, **kw)
    plain = rollout(agent.probs_fn, MIDGAME, luck_vr=False, **kw)
    assert [c.label for c in vr.candidates] == ["No double", "Double, take"]
    for a, b in zip(vr.candidates, plain.candidates):
        assert a.cubeful_equity is not None and b.cubeful_equity is not None
        assert a.cubeful_stderr is not None and b.cubeful_stderr is not None
        assert a.cubeful_stderr < 0.5 * b.cubeful_stderr
        # The same trials: the means differ by the mean luck charged, which is of the order of the plain stderr.
        assert abs(a.cubeful_equity - b.cubeful_equity) < 4.0 * b.cubeful_stderr
