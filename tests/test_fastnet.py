"""The torch-free forward pass matches the torch net, and its weight cache is safe."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bgnet.core.resources import cache_dir
from bgnet.nets.fastnet import NumpyNet, load_numpy_net
from bgnet.nets.model import BgNet, ModelConfig, NetEvaluator, save_checkpoint
from bgnet.core.position import Position


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


def cached_checkpoint(tmp_path, monkeypatch):
    """A small checkpoint loaded once, so that the weight cache holds one file: (checkpoint, cache file)."""
    monkeypatch.setenv("BGNET_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "n.pt"
    save_checkpoint(path, BgNet(ModelConfig(hidden=(8,))))
    load_numpy_net(path)
    (cached,) = cache_dir().glob("*.npz")
    return path, cached


def test_damaged_cache_is_rewritten(tmp_path, monkeypatch):
    path, cached = cached_checkpoint(tmp_path, monkeypatch)
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


def test_a_checkpoint_with_nets_by_kind_scores_each_board_with_its_own_net(tmp_path, monkeypatch):
    from bgnet.features.encoding import position_kinds
    from bgnet.nets.fastnet import NumpyNetSet, load_evaluator
    from bgnet.nets.model import NetSet, save_netset

    monkeypatch.setenv("BGNET_CACHE", str(tmp_path / "cache"))
    torch.manual_seed(3)
    contact, race = BgNet(ModelConfig(hidden=(16,))), BgNet(ModelConfig(hidden=(12, 6)))
    path = tmp_path / "set.pt"
    save_netset(path, NetSet({"contact": contact, "race": race}, bearoff=False))
    race_board = np.zeros(26, np.int8)
    race_board[1:4], race_board[20:23] = 3, -3  # mine on my 1-3 points, his on his 1-3 points: no contact
    race_board[4], race_board[23] = 6, -6
    b = np.concatenate([boards(), race_board[None, :]])
    kinds = position_kinds(b)
    assert (kinds == 2).any() and (kinds != 2).any()
    expected = NetSet({"contact": contact, "race": race}, bearoff=False).probs_of_boards(b)
    for _ in range(2):  # through torch (writes the cache), then from the cache
        ev = load_evaluator(path)
        assert isinstance(ev, NumpyNetSet) and set(ev.nets) == {"contact", "race"}
        assert np.allclose(ev.probs_of_boards(b), expected, atol=1e-5)
    assert np.allclose(load_numpy_net(path).probs_of_boards(b), NetEvaluator(contact).probs_of_boards(b), atol=1e-5)
    single = tmp_path / "one.pt"
    save_checkpoint(single, contact)
    assert isinstance(load_evaluator(single), NumpyNet)


def test_a_cache_file_of_an_older_layout_is_rewritten(tmp_path, monkeypatch):
    path, cached = cached_checkpoint(tmp_path, monkeypatch)
    with cached.open("wb") as fh:  # the layout before nets by kind: no "format" entry
        np.savez(fh, n_layers=0, activation=np.array("relu"), feature_version=1, num_features=214)
    assert isinstance(load_numpy_net(path), NumpyNet)
    with np.load(cached) as data:
        assert int(data["format"]) == 2


def test_the_fused_kernel_gives_the_dense_chances_for_every_kind_of_net():
    """``probs_of_boards`` (the fused kernel) against numpy's dense products, for each activation, feature
    version and depth; a board's chances do not depend on the other boards of its batch (more boards than
    the kernel's block)."""
    from bgnet.nets._net_kernels import BLOCK

    b = boards()
    assert len(b) > BLOCK  # a batch of more than one block
    rng = np.random.default_rng(2)
    for act, version, sizes in (("relu", 2, (246, 32, 16, 5)), ("tanh", 1, (214, 40, 5)),
                                ("sigmoid", 2, (246, 24, 16, 5)), ("relu", 1, (214, 5))):
        layers = [(rng.normal(0, 0.3, (o, i)).astype(np.float32), rng.normal(0, 0.3, o).astype(np.float32))
                  for i, o in zip(sizes[:-1], sizes[1:])]
        net = NumpyNet(layers, act, version)
        got = net.probs_of_boards(b)
        assert got.dtype == np.float32 and got.shape == (len(b), 5)
        assert np.abs(got - net.dense_probs_of_boards(b)).max() < 1e-5, act
        assert np.array_equal(net.probs_of_boards(b[7:9]), got[7:9])  # the same bits in a batch of two,
        alone = np.concatenate([net.probs_of_boards(b[i:i + 1]) for i in range(len(b))])
        assert np.array_equal(alone, got)  # alone, and in another block of the kernel
        assert np.array_equal(net.probs_of_boards(b[::-1])[::-1], got)
        assert net.probs_of_boards(b[:0]).shape == (0, 5)


def test_weight_cache_and_bearoff_database_share_one_cache_folder(tmp_path, monkeypatch):
    """``$BGNET_CACHE`` (``bgnet.core.resources.cache_dir``) holds both the weight cache and the bear-off database."""
    from bgnet.nets import bearoff

    db = bearoff.database()  # the suite's copy, before the folder moves
    monkeypatch.setenv("BGNET_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("BGNET_CACHE_DIR", str(tmp_path / "old"))  # the deprecated name loses to BGNET_CACHE
    path = tmp_path / "n.pt"
    save_checkpoint(path, BgNet(ModelConfig(hidden=(8,))))
    load_numpy_net(path)
    bearoff.save(db)
    assert sorted(p.name.startswith("bearoff-") for p in (tmp_path / "cache").iterdir()) == [False, True]
    assert not (tmp_path / "old").exists()


def test_cache_folder_falls_back_to_xdg_then_the_deprecated_name(tmp_path, monkeypatch):
    monkeypatch.delenv("BGNET_CACHE", raising=False)
    monkeypatch.delenv("BGNET_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "bgnet"
    monkeypatch.setenv("BGNET_CACHE_DIR", str(tmp_path / "old"))
    with pytest.warns(DeprecationWarning, match="BGNET_CACHE"):
        assert cache_dir() == tmp_path / "old"


def test_the_shipped_numpy_weights_are_the_released_nets():
    """``checkpoints/bgnet.npz`` (shipped as ``bgnet/data/bgnet.npz``) holds exactly the released checkpoint's
    weights, stamped with its digest: rerun ``export_weights`` with each release or this fails."""
    from bgnet.core.resources import REPOSITORY_WEIGHTS
    from bgnet.nets import fastnet

    checkpoint = Path(__file__).resolve().parents[1] / "checkpoints" / "bgnet.pt"
    shipped = fastnet._from_cache(REPOSITORY_WEIGHTS, fastnet.file_digest(checkpoint))
    assert shipped is not None
    torch_layers = fastnet._torch_layers(checkpoint)
    assert set(shipped) == set(torch_layers)
    for kind, net in shipped.items():
        layers, activation, version = torch_layers[kind]
        assert (net.activation, net.feature_version) == (activation, version)
        for (w, b), (tw, tb) in zip(net.layers, layers):
            assert np.array_equal(w, np.ascontiguousarray(tw.T)) and np.array_equal(b, tb)


def test_weights_stamped_for_another_checkpoint_are_not_used(tmp_path):
    from bgnet.nets import fastnet

    checkpoint = Path(__file__).resolve().parents[1] / "checkpoints" / "bgnet.pt"
    out = fastnet.export_weights(checkpoint, tmp_path / "w.npz")
    assert fastnet._from_cache(out, fastnet.file_digest(checkpoint)) is not None
    assert fastnet._from_cache(out, "0" * 64) is None


def test_a_first_run_reads_the_released_net_without_torch(tmp_path):
    """With an empty cache the released net loads from its shipped numpy weights: torch is never imported."""
    code = ("import sys; from bgnet.core.resources import default_checkpoint; "
            "from bgnet.nets.fastnet import load_evaluator; load_evaluator(default_checkpoint()); "
            "print('torch' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "BGNET_CACHE": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").glob("*.npz"))


def test_an_identity_layer_passes_relu_units_on_and_is_refused_elsewhere(game_boards):
    """``IDENTITY`` after a ReLU layer is the same function as no layer, through the fused kernel and numpy's pass;
    after a sigmoid or tanh layer it is not, and is refused."""
    from bgnet.nets.fastnet import IDENTITY, NumpyNetError

    rng = np.random.default_rng(5)
    hidden = (rng.normal(0, 0.2, (16, 246)).astype(np.float32), rng.normal(0, 0.1, 16).astype(np.float32))
    out = (rng.normal(0, 0.3, (5, 16)).astype(np.float32), rng.normal(0, 0.1, 5).astype(np.float32))
    shallow = NumpyNet([hidden, out], "relu", 2)
    padded = NumpyNet([hidden, (IDENTITY, np.zeros(0, np.float32)), out], "relu", 2)
    b = game_boards(300, 4)
    assert np.array_equal(padded.probs_of_boards(b), shallow.probs_of_boards(b))
    assert np.array_equal(padded.dense_probs_of_boards(b), shallow.dense_probs_of_boards(b))
    with pytest.raises(NumpyNetError, match="ReLU"):
        NumpyNet([hidden, (IDENTITY, np.zeros(0, np.float32)), out], "tanh", 2)


def test_a_shallower_relu_net_runs_on_the_kernel_compiled_for_the_release_s_depth(game_boards):
    """A one-hidden-layer ReLU net (a quick training run's, the pruning net) is handed to the fused kernel padded to
    ``KERNEL_LAYERS`` with identity layers: numba compiles no kernel for its depth, and its chances are those of
    numpy's dense pass over its own layers."""
    from bgnet.nets import _net_kernels
    from bgnet.nets.fastnet import KERNEL_LAYERS

    rng = np.random.default_rng(8)
    deep = NumpyNet([(rng.normal(0, 0.3, (o, i)).astype(np.float32), rng.normal(0, 0.1, o).astype(np.float32))
                     for i, o in ((246, 24), (24, 12), (12, 5))], "relu", 2)
    shallow = NumpyNet([(rng.normal(0, 0.3, (o, i)).astype(np.float32), rng.normal(0, 0.1, o).astype(np.float32))
                        for i, o in ((246, 40), (40, 5))], "relu", 2)
    assert len(deep.layers) == KERNEL_LAYERS and len(shallow.layers) == 2
    b = game_boards(200, 9)
    deep.probs_of_boards(b)
    compiled = len(_net_kernels.net_probs.signatures)
    got = shallow.probs_of_boards(b)
    assert len(_net_kernels.net_probs.signatures) == compiled  # the release-depth kernel served it
    assert np.abs(got - shallow.dense_probs_of_boards(b)).max() < 1e-5
