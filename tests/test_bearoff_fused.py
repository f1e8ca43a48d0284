"""The fused bear-off lookup (one Triton kernel) gives ``DeviceBearoff.probs``' mask and chances bit for bit, as the
numba lookup does: in Triton's interpreter on the CPU (the suite sets ``TRITON_INTERPRET=1`` without a GPU) and
compiled on CUDA."""

import numpy as np
import pytest
import torch

from test_device_selfplay import bearoff_boards

from bgnet.nets.bearoff import database, is_bearoff
from bgnet.nets.bearoff_torch import DeviceBearoff

pytest.importorskip("triton")

from bgnet.nets import bearoff_fused  # noqa: E402
from bgnet.nets.bearoff_fused import FusedBearoffError, bearoff_probs_fused  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def boards_of_every_kind(game_boards) -> np.ndarray:
    """Pure bear-offs of both tables, boards that are nearly one (a checker out of home, on a bar, the other side's
    checker in my home), and game boards."""
    races = bearoff_boards(3000, 1)
    near = bearoff_boards(300, 2)
    near[:100, 7] = 1
    near[100:200, 0] = -1
    near[200:, 3] = -1
    many = np.zeros((2, 26), np.int8)
    many[0, 1:7], many[0, 19:25] = [3, 3, 3, 2, 2, 2], -np.array([3, 3, 3, 3, 3, 1])  # 15 and 16 checkers
    many[1, 1:7], many[1, 19:25] = [3, 3, 3, 2, 2, 2], -np.array([3, 3, 3, 3, 2, 1])
    return np.concatenate([races, near, many, game_boards(1000, 2), np.zeros((1, 26), np.int8)])


def test_the_fused_lookup_is_the_torch_one_and_the_databases(game_boards) -> None:
    boards = boards_of_every_kind(game_boards)
    codes, want = database().lookup(boards)
    assert (codes == 1).sum() > 1000 and (codes == 2).sum() > 500 and (want[:, 1] > 0).any() and (want[:, 3] > 0).any()
    table = DeviceBearoff(DEVICE)
    dev = torch.from_numpy(boards).to(DEVICE)
    mask, got = bearoff_probs_fused(table, dev, block=512 if DEVICE == "cpu" else bearoff_fused.BLOCK)
    assert mask.dtype == torch.bool and got.dtype == torch.float64 and got.shape == (len(boards), 5)
    assert np.array_equal(mask.cpu().numpy(), is_bearoff(boards)) and np.array_equal(mask.cpu().numpy(), codes != 0)
    assert np.array_equal(got.cpu().numpy(), want)  # float64 bit for bit
    twin_mask, twin = table.probs(dev)
    assert torch.equal(mask, twin_mask) and torch.equal(got, twin)


def test_programs_of_32_boards_with_a_last_one_part_filled(game_boards) -> None:
    boards = np.concatenate([bearoff_boards(50, 3), game_boards(20, 4)])
    mask, got = bearoff_probs_fused(DeviceBearoff(DEVICE), torch.from_numpy(boards).to(DEVICE), block=32)
    codes, want = database().lookup(boards)
    assert np.array_equal(mask.cpu().numpy(), codes != 0) and np.array_equal(got.cpu().numpy(), want)


def test_no_boards_bad_shapes_and_no_triton(monkeypatch) -> None:
    table = DeviceBearoff(DEVICE)
    mask, got = bearoff_probs_fused(table, torch.zeros((0, 26), dtype=torch.int8, device=DEVICE))
    assert mask.shape == (0,) and got.shape == (0, 5)
    with pytest.raises(FusedBearoffError, match=r"\(N, 26\)"):
        bearoff_probs_fused(table, torch.zeros((2, 24), dtype=torch.int8, device=DEVICE))
    monkeypatch.setattr(bearoff_fused, "triton", None)
    with pytest.raises(FusedBearoffError, match="needs Triton"):
        bearoff_probs_fused(table, torch.zeros((1, 26), dtype=torch.int8))


@pytest.mark.cuda
def test_equal_to_the_database_compiled_on_cuda(game_boards) -> None:
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    boards = boards_of_every_kind(game_boards)
    codes, want = database().lookup(boards)
    for block in (bearoff_fused.BLOCK, 64):
        mask, got = bearoff_probs_fused(DeviceBearoff("cuda"), torch.from_numpy(boards).cuda(), block=block)
        assert np.array_equal(mask.cpu().numpy(), codes != 0) and np.array_equal(got.cpu().numpy(), want)


def test_device_bearoff_with_fused_kernels_looks_up_with_it(monkeypatch) -> None:
    """``DeviceBearoff(kernels="fused").probs`` is the fused lookup; the torch one is the default."""
    calls = []
    monkeypatch.setattr(bearoff_fused, "bearoff_probs_fused", lambda tables, boards: calls.append(tables) or "fused")
    fused = DeviceBearoff(DEVICE, kernels="fused")
    assert fused.probs(torch.zeros((1, 26), dtype=torch.int8, device=DEVICE)) == "fused" and calls == [fused]
    mask, probs = DeviceBearoff(DEVICE).probs(torch.zeros((1, 26), dtype=torch.int8, device=DEVICE))
    assert calls == [fused] and mask.shape == (1,) and probs.shape == (1, 5)


@pytest.mark.cuda
def test_on_a_gpu_device_self_play_with_it_plays_selfplays_games() -> None:
    """Games played to their ends on the same dice and evaluator, bear-offs stopped at the database: device self-play
    with its kernels fused (the features' and this lookup's) gives ``SelfPlay``'s games."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from test_device_selfplay import assert_same_games, hashed_probs, play_both

    finished, play = play_both(hashed_probs, "cuda", n_games=48, steps=260, bearoff=True, kernels="fused")
    assert len(finished) > 80 and sum(t.result == 0 for _, t in finished) > 25
    assert_same_games(finished, play)
