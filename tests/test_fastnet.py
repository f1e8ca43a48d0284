"""The torch-free forward pass matches the torch net, and its weight cache is safe."""

import numpy as np
import torch

from bgnet.fastnet import NumpyNet, cache_dir, load_numpy_net
from bgnet.model import BgNet, ModelConfig, NetEvaluator, save_checkpoint
from bgnet.position import Position


def boards():
    rng = np.random.default_rng(0)
    pos, out = Position.start(), []
    for _ in range(60):
        moves = pos.legal_moves(tuple(rng.integers(1, 7, 2)))
        pos = moves[rng.integers(len(moves))].after.swap_sides()
        if pos.is_game_over():
            pos = Position.start()
        out.append(pos.board)
    return np.array(out, np.int8)


def test_numpy_net_matches_torch_for_each_activation(tmp_path, monkeypatch):
    monkeypatch.setenv("BGNET_CACHE", str(tmp_path / "cache"))
    b = boards()
    for i, act in enumerate(("relu", "sigmoid", "tanh")):
        torch.manual_seed(i)
        net = BgNet(ModelConfig(hidden=(16, 8), activation=act))
        path = tmp_path / f"{act}.pt"
        save_checkpoint(path, net)
        expected = NetEvaluator(net).probs_of_boards(b)
        first = load_numpy_net(path).probs_of_boards(b)  # through torch, writes the cache
        again = load_numpy_net(path).probs_of_boards(b)  # from the cache
        assert np.allclose(first, expected, atol=1e-5) and np.allclose(again, expected, atol=1e-5)
    assert len(list((tmp_path / "cache").glob("*.npz"))) == 3


def test_damaged_cache_is_rewritten(tmp_path, monkeypatch):
    monkeypatch.setenv("BGNET_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "n.pt"
    save_checkpoint(path, BgNet(ModelConfig(hidden=(8,))))
    load_numpy_net(path)
    (cached,) = cache_dir().glob("*.npz")
    cached.write_bytes(b"garbage")
    net = load_numpy_net(path)
    assert isinstance(net, NumpyNet) and cached.stat().st_size > 100


def test_changed_checkpoint_is_not_served_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BGNET_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "n.pt"
    torch.manual_seed(0)
    save_checkpoint(path, BgNet(ModelConfig(hidden=(8,))))
    a = load_numpy_net(path).probs_of_boards(boards())
    torch.manual_seed(1)
    save_checkpoint(path, BgNet(ModelConfig(hidden=(8,))))
    b = load_numpy_net(path).probs_of_boards(boards())
    assert not np.allclose(a, b)
