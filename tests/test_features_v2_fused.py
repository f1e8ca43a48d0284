"""The fused version-2 encoder (one Triton kernel) equals the numba encoder bit for bit: in Triton's interpreter on
the CPU (the suite sets ``TRITON_INTERPRET=1`` without a GPU) and compiled on CUDA."""

import numpy as np
import pytest
import torch

from test_device_selfplay import small_net, sync_places
from test_features_v2 import all_boards, made_boards

from bgnet.features.registry import FEATURE_SETS, encode
from bgnet.sim.device_selfplay import DeviceSelfPlay
from bgnet.trainer.device_selfplay import DeviceLearning, DeviceTrainer

pytest.importorskip("triton")

from bgnet.features import v2_fused  # noqa: E402
from bgnet.features.v2_fused import FusedFeaturesError, encode_v2_fused  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
BIG_BLOCK = 1024
"""Boards a program in the interpreter, where each op costs about the same for 32 boards as for 1,024."""


def assert_equal_to_numba(boards: np.ndarray, device: str, block: int) -> None:
    want = encode(boards, version=2)
    got = encode_v2_fused(torch.from_numpy(boards).to(device), block=block)
    assert got.device.type == device and got.dtype == torch.float32 and got.shape == want.shape
    got = got.cpu().numpy()
    assert np.array_equal(got, want), np.argwhere(got != want)[:5]  # (board, input)


def test_every_input_of_every_kind_of_board_is_numbas(game_boards) -> None:
    assert_equal_to_numba(all_boards(game_boards), DEVICE, BIG_BLOCK if DEVICE == "cpu" else v2_fused.BLOCK)


def test_the_block_size_changes_nothing(game_boards) -> None:
    """Programs of 32 boards (the GPU's) and of 64, with a last program only partly filled."""
    boards = np.concatenate([made_boards(), game_boards(70, 5)])
    assert len(boards) % 32 != 0
    for block in (32, 64):
        assert_equal_to_numba(boards, DEVICE, block)


def test_no_boards_and_bad_shapes() -> None:
    assert encode_v2_fused(torch.zeros((0, 26), dtype=torch.int8, device=DEVICE)).shape == (0, 246)
    with pytest.raises(FusedFeaturesError, match=r"\(N, 26\)"):
        encode_v2_fused(torch.zeros((3, 25), dtype=torch.int8, device=DEVICE))


def test_without_triton_it_says_so(monkeypatch) -> None:
    monkeypatch.setattr(v2_fused, "triton", None)
    with pytest.raises(FusedFeaturesError, match="needs Triton"):
        encode_v2_fused(torch.zeros((1, 26), dtype=torch.int8))


@pytest.mark.cuda
def test_equal_to_numba_compiled_on_cuda(game_boards) -> None:
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    for block in (v2_fused.BLOCK, 64):
        assert_equal_to_numba(all_boards(game_boards), "cuda", block)


def same_games_and_weights(device: str) -> DeviceTrainer:
    """A few steps of self-play with learning on ``device``, with the torch ops and then with the device kernels
    fused (this encoder, the fused bear-off lookup): the same games and the same weights. Returns the fused run's
    trainer."""
    games, steps = (64, 20) if device == "cuda" else (6, 6)

    def run(kernels: str) -> DeviceTrainer:
        trainer = DeviceTrainer(small_net(2).to(device), DeviceSelfPlay(games, seed=1, device=device, kernels=kernels),
                                DeviceLearning(fit_every=3, minibatch=32), seed=3)
        for _ in range(steps):
            trainer.step(0.1)
        return trainer

    torch_ops = run("torch")
    fused = run("fused")
    assert torch.equal(torch_ops.play.boards, fused.play.boards)
    assert torch.equal(torch_ops.play.ring.boards, fused.play.ring.boards)
    assert torch_ops.learned_to == fused.learned_to > 0
    for a, b in zip(torch_ops.net.parameters(), fused.net.parameters()):
        assert torch.equal(a, b)
    return fused


def test_feature_set_2_names_it_as_its_fused_encoder() -> None:
    assert FEATURE_SETS[2].torch_encode_fn("fused") is encode_v2_fused
    assert FEATURE_SETS[2].torch_encode_fn() is FEATURE_SETS[2].torch_encode_fn("torch") is not encode_v2_fused
    assert FEATURE_SETS[1].torch_encode_fn("fused") is FEATURE_SETS[1].torch_encode_fn()  # none of its own: torch ops


def test_device_self_play_with_it_plays_and_learns_as_with_the_torch_ops() -> None:
    same_games_and_weights(DEVICE)


@pytest.mark.cuda
def test_on_a_gpu_it_plays_the_same_games_and_waits_for_nothing() -> None:
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    assert sync_places(same_games_and_weights("cuda"), 6) <= {"movegen_torch.py"}
