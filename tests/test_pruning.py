"""Pruning nets (bgnet.nets.pruning): which replies they keep, searches that use them, the shipped file, the fit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bgnet.core.errors import BgnetError
from bgnet.core.position import Position
from bgnet.nets import _pruning_kernels
from bgnet.nets.fastnet import NumpyNet, load_numpy_net
from bgnet.nets.pruning import (PrunedEvaluator, PruningError, kept_rows, load_pruning_net, read_pruning_net,
                                with_pruning, write_pruning_net)
from bgnet.play.search import MONEY, evaluate_boards, rank_moves

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "checkpoints" / "bgnet.pt"


def _v1_net(seed: int, hidden: int = 8) -> NumpyNet:
    rng = np.random.default_rng(seed)
    return NumpyNet([(rng.normal(0, 0.2, (hidden, 214)).astype(np.float32), rng.normal(0, 0.1, hidden).astype(np.float32)),
                     (rng.normal(0, 0.3, (5, hidden)).astype(np.float32), rng.normal(0, 0.1, 5).astype(np.float32))],
                    "relu", 1)


def test_keep_top_marks_each_segments_best_k_ties_to_the_earlier_row():
    values = np.array([5.0, 1.0, 3.0, 3.0, 0.0, 9.0, 2.0, 2.0, 2.0])
    offsets = np.array([0, 1, 5, 9], np.int64)
    keep = np.zeros(9, bool)
    _pruning_kernels.keep_top(values, offsets, np.int64(2), keep)
    # segment 1 (rows 1-4): 3.0 and 3.0 (rows 2, 3); segment 2 (rows 5-8): 9.0, then the first 2.0 (row 6)
    assert np.flatnonzero(keep).tolist() == [0, 2, 3, 5, 6]


def test_rows_marked_before_do_not_count_towards_k():
    values = np.array([1.0, 4.0, 3.0, 2.0])
    keep = np.array([True, False, False, False])
    _pruning_kernels.keep_top(values, np.array([0, 4], np.int64), np.int64(1), keep)
    assert np.flatnonzero(keep).tolist() == [0, 1]


def test_kept_rows_always_keep_finished_games_and_bear_offs(game_boards):
    from bgnet.core import _game_kernels as gk
    from bgnet.nets.bearoff import is_bearoff

    boards = game_boards(400, 3)
    offsets = np.arange(0, 401, 20, dtype=np.int64)
    rows = kept_rows(_v1_net(1), boards, offsets, 1, MONEY.of)
    forced = np.flatnonzero((gk.terminal_codes(boards) != 0) | is_bearoff(boards))
    assert set(forced) <= set(rows.tolist())
    assert len(rows) >= len(offsets) - 1 and np.all(np.diff(rows) > 0)


def _positions(game_boards, n: int, seed: int) -> np.ndarray:
    """Boards with the side to move on roll and the game not over."""
    from bgnet.core import _game_kernels as gk
    from bgnet.core.movegen import swap_sides_batch

    boards = swap_sides_batch(game_boards(4 * n, seed))
    return boards[gk.terminal_codes(boards) == 0][:n]


def test_pruning_with_the_evaluator_itself_changes_nothing(game_boards):
    """When the pruning net is the evaluator, its best reply is the evaluator's: any keep gives the full search's
    bits, at 1 and 2 plies."""
    inner = _v1_net(2, 16)
    boards = _positions(game_boards, 6, 4)
    for ply in (1, 2):
        full = evaluate_boards(inner, boards, ply)
        for keep in (1, 3):
            assert np.array_equal(evaluate_boards(PrunedEvaluator(inner, inner, keep), boards, ply), full)


def test_pruning_keeping_every_reply_changes_nothing(game_boards):
    inner, pruning = _v1_net(2, 16), _v1_net(5)
    boards = _positions(game_boards, 6, 5)
    assert np.array_equal(evaluate_boards(PrunedEvaluator(inner, pruning, 10_000), boards, 1),
                          evaluate_boards(inner, boards, 1))


def test_a_pruned_search_values_fewer_plays_and_can_only_miss_the_best(game_boards):
    """With a pruning net unlike the evaluator, the play of a roll that the evaluator prefers may be left out: at
    1 ply the side on roll then gets no more from that roll, so the position is worth no more to it, and the
    evaluator is asked about fewer boards."""
    inner, pruning = _v1_net(2, 16), _v1_net(6)
    asked = []

    def counting(boards: np.ndarray) -> np.ndarray:
        asked.append(len(boards))
        return inner.probs_of_boards(boards)

    boards = _positions(game_boards, 8, 6)
    full = evaluate_boards(counting, boards, 1)
    n_full, asked[:] = sum(asked), []
    pruned = evaluate_boards(PrunedEvaluator(counting, pruning, 2), boards, 1)
    assert sum(asked) < n_full
    assert np.all(MONEY.of(pruned) <= MONEY.of(full) + 1e-12)
    assert not np.array_equal(pruned, full)


def test_prune_refuses_a_keep_below_one():
    with pytest.raises(PruningError, match="at least one reply"):
        PrunedEvaluator(_v1_net(1), _v1_net(1), 0)
    with pytest.raises(PruningError, match="play_keep=0"):
        PrunedEvaluator(_v1_net(1), _v1_net(1), 5, play_keep=0)
    assert isinstance(PruningError("x"), BgnetError)


def test_a_pruning_net_file_round_trips_and_serves_its_checkpoint_only(tmp_path, tiny_v2_checkpoint):
    net = _v1_net(7)
    file = write_pruning_net(tmp_path / "p.npz", [(w.T, b) for w, b in net.layers], "relu", tiny_v2_checkpoint)
    back, digest = read_pruning_net(file)
    boards = np.array([Position.start().board], np.int8)
    assert np.array_equal(back.probs_of_boards(boards), net.probs_of_boards(boards))
    import hashlib

    assert digest == hashlib.sha256(tiny_v2_checkpoint.read_bytes()).hexdigest()
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    assert read_pruning_net(tmp_path / "bad.npz") is None
    assert load_pruning_net(tiny_v2_checkpoint) is None  # the shipped one serves the release only
    plain = with_pruning(net, tiny_v2_checkpoint)
    assert not isinstance(plain, PrunedEvaluator)


def test_the_release_ships_its_pruning_net_and_agents_search_with_it():
    from bgnet.core.resources import REPOSITORY_PRUNING
    from bgnet.play.agents import NeuralAgent

    found = read_pruning_net(REPOSITORY_PRUNING)
    assert found is not None, "checkpoints/pruning.npz is missing or damaged"
    import hashlib

    assert found[1] == hashlib.sha256(RELEASE.read_bytes()).hexdigest(), \
        "checkpoints/pruning.npz was fitted to another net: rerun bgnet.trainer.pruning_fit for this release"
    assert isinstance(NeuralAgent(RELEASE, 2).probs_fn, PrunedEvaluator)
    assert not isinstance(NeuralAgent(RELEASE, 2, prune=False).probs_fn, PrunedEvaluator)


def test_the_release_s_pruned_2_ply_choice_is_close_to_the_full_search(net):
    """The shipped pruning net keeps the release's 2-ply choice within a small equity of the full search's."""
    pruned = with_pruning(net, RELEASE)
    assert isinstance(pruned, PrunedEvaluator)
    pos = Position.from_position_id("4HPwATDgc/ABMA")
    full = {str(m.move): m.equity for m in rank_moves(net, pos, (6, 2), 2)}
    best = rank_moves(pruned, pos, (6, 2), 2)[0]
    assert max(full.values()) - full[str(best.move)] < 0.01
    assert abs(best.equity - full[str(best.move)]) < 0.01


def test_the_fit_is_seeded_and_writes_a_usable_file(tmp_path, tiny_v2_checkpoint, one_torch_thread):
    from bgnet.cli.pruning import main

    outs = []
    for name in ("a.npz", "b.npz"):
        assert main([str(tiny_v2_checkpoint), str(tmp_path / name), "--positions", "60", "--hidden", "8",
                     "--epochs", "1", "--seed", "3"]) == 0
        outs.append(read_pruning_net(tmp_path / name)[0])
    for (wa, ba), (wb, bb) in zip(outs[0].layers, outs[1].layers):
        assert np.array_equal(wa, wb) and np.array_equal(ba, bb)
    assert main([str(tiny_v2_checkpoint), str(tmp_path / "c.npz"), "--positions", "0"]) == 2


def test_the_default_teacher_is_a_plain_net():
    """The fit reads its teacher with ``load_numpy_net``: the release's 0-ply values, never a pruned search."""
    assert isinstance(load_numpy_net(RELEASE), NumpyNet)


def test_distinct_boards_is_exact_and_keeps_first_appearance_order(game_boards):
    from bgnet.core.distinct import distinct_boards

    boards = game_boards(300, 8)
    batch = np.concatenate([boards, boards[::3], boards[7::5]])
    first, inverse = distinct_boards(batch)
    assert np.array_equal(batch[first][inverse], batch)
    assert len(first) == len(np.unique(batch, axis=0)) and np.all(np.diff(first) > 0)
    empty_first, empty_inverse = distinct_boards(np.zeros((0, 26), np.int8))
    assert len(empty_first) == 0 and len(empty_inverse) == 0


def test_a_one_hidden_layer_pruning_net_is_read_as_the_same_function_with_the_release_s_depth(tmp_path, game_boards):
    """A one-hidden-layer pruning net reads back as itself (the fused kernel pads it to the release's depth,
    ``bgnet.nets.fastnet.KERNEL_LAYERS``); the values are the same bits as the net's own."""
    from bgnet.nets.pruning import KERNEL_LAYERS

    net = _v1_net(11, 32)
    file = write_pruning_net(tmp_path / "p.npz", [(w.T, b) for w, b in net.layers], "relu", RELEASE)
    back, _digest = read_pruning_net(file)
    assert len(back.layers) == len(net.layers) == 2 < KERNEL_LAYERS
    boards = game_boards(500, 12)
    assert np.array_equal(back.probs_of_boards(boards), net.probs_of_boards(boards))
    assert np.array_equal(back.dense_probs_of_boards(boards), net.dense_probs_of_boards(boards))


# -- the pruned 0-ply choice -------------------------------------------------------------------------------------


def _plays(game_boards, n: int, seed: int):
    """(boards, afterstates, offsets) of ``n`` game positions with a random roll each."""
    from bgnet.core.movegen import generate_plays

    boards = _positions(game_boards, n, seed)
    dice = np.random.default_rng(seed).integers(1, 7, size=(len(boards), 2)).astype(np.int8)
    after, _s, _n, offsets = generate_plays(boards, dice)
    return boards, after, offsets


def test_a_pruned_0_ply_player_values_each_position_s_kept_plays_only(game_boards):
    """``NeuralScorer`` of a ``PrunedEvaluator``: the kept plays get the evaluator's own values, the others -inf;
    the choice is the evaluator's best among the pruning net's top ``keep``."""
    from bgnet.core.movegen import swap_sides_batch
    from bgnet.core.probs import flip_probs
    from bgnet.play.scorers import NeuralScorer

    inner, pruning = _v1_net(2, 16), _v1_net(6)
    boards, after, offsets = _plays(game_boards, 40, 7)
    full = NeuralScorer(inner).score_plays(boards, after, offsets)
    pruned = NeuralScorer(PrunedEvaluator(inner, pruning, 5, play_keep=2)).score_plays(boards, after, offsets)
    kept = np.isfinite(pruned)
    assert np.allclose(pruned[kept], full[kept], rtol=0, atol=1e-6)
    rows = kept_rows(pruning, swap_sides_batch(after), offsets, 2, lambda p: MONEY.of(flip_probs(p)))
    assert np.array_equal(np.flatnonzero(kept), rows)
    counts = np.diff(offsets)
    per_position = np.add.reduceat(kept, offsets[:-1])
    assert np.all(per_position >= np.minimum(counts, 1)) and np.any(per_position < counts)
    assert np.array_equal(NeuralScorer(PrunedEvaluator(inner, pruning, 1, 10_000)).score_plays(boards, after, offsets)
                          > -np.inf, np.ones(len(after), bool))


def test_pruned_0_ply_choices_agree_position_by_position_and_in_a_batch(game_boards):
    """``best_move`` of one position and the batched scorer pick the same play (the lockstep duel relies on it)."""
    from bgnet.core import _game_kernels as gk
    from bgnet.core.movegen import afterstate_boards
    from bgnet.play.scorers import NeuralScorer
    from bgnet.play.search import best_move

    evaluator = PrunedEvaluator(_v1_net(2, 16), _v1_net(6), 5, play_keep=2)
    boards, after, offsets = _plays(game_boards, 30, 8)
    dice = np.random.default_rng(8).integers(1, 7, size=(len(boards), 2)).astype(np.int8)
    choice = gk.segment_argmax(NeuralScorer(evaluator).score_plays(boards, after, offsets), offsets)
    for i, board in enumerate(boards):
        pos, roll = Position(board), (int(dice[i][0]), int(dice[i][1]))
        assert np.array_equal(afterstate_boards([best_move(evaluator, pos, roll)])[0], after[choice[i]])


def test_kept_rows_value_only_the_rows_they_rank_and_keep_what_ranking_every_row_keeps(game_boards):
    """Segments of ``keep`` rows or fewer are kept whole without asking the pruning net; the rows kept are those of
    ranking every row (the kernel's own rule), and the pruning net sees only rows of larger segments."""
    from bgnet.core import _game_kernels as gk
    from bgnet.core.movegen import swap_sides_batch
    from bgnet.nets.bearoff import is_bearoff

    pruning = _v1_net(6)
    boards, after, offsets = _plays(game_boards, 60, 9)
    cand = swap_sides_batch(after)
    seen = []

    class Counting:
        def probs_of_boards(self, b: np.ndarray) -> np.ndarray:
            seen.append(len(b))
            return pruning.probs_of_boards(b)

    for keep in (1, 3, 8):
        seen.clear()
        rows = kept_rows(Counting(), cand, offsets, keep, lambda p: MONEY.of(p))  # type: ignore[arg-type]
        mask = (gk.terminal_codes(cand) != 0) | is_bearoff(cand)
        _pruning_kernels.keep_top(MONEY.of(pruning.probs_of_boards(cand).astype(np.float64)), offsets.astype(np.int64),
                                  np.int64(keep), mask)
        assert np.array_equal(rows, np.flatnonzero(mask))
        counts = np.diff(offsets)
        assert sum(seen) <= int(counts[counts > keep].sum())


def test_the_exact_evaluator_answers_bear_offs_from_the_database_and_the_rest_from_the_net():
    from bgnet.nets.bearoff import database
    from bgnet.nets.fastnet import load_evaluator
    from bgnet.nets.pruning import load_exact_evaluator

    path = RELEASE
    bearoff = Position.from_points({1: 3, 2: 2}, {1: 2, 3: 1}).board
    boards = np.array([Position.start().board, bearoff], np.int8)
    got = load_exact_evaluator(path).probs_of_boards(boards)
    net = load_evaluator(path).probs_of_boards(boards)
    assert np.allclose(got[0], net[0])
    assert np.allclose(got[1], database().lookup(boards[1:])[1][0]) and not np.allclose(got[1], net[1], atol=1e-4)
