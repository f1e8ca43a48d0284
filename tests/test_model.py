"""The evaluator: consistent outputs, Probs, and self-describing, safely loaded checkpoints."""

import numpy as np
import pytest
import torch

from bgnet.model import BgNet, CheckpointError, ModelConfig, NetEvaluator, load_net, read_checkpoint, save_checkpoint
from bgnet.position import Position
from bgnet.probs import Probs


def test_outputs_are_consistent_probabilities():
    torch.manual_seed(0)
    net = BgNet(ModelConfig(hidden=(16,)))
    with torch.no_grad():
        for layer in net.modules():
            if isinstance(layer, torch.nn.Linear):
                layer.weight.mul_(20)  # push the sigmoids towards their extremes
        out = net(torch.randn(500, net.config.num_features))
    win, wg, wbg, lg, lbg = out.T
    assert torch.all((out >= 0) & (out <= 1))
    assert torch.all(wbg <= wg) and torch.all(wg <= win)
    assert torch.all(lbg <= lg) and torch.all(lg <= 1 - win + 1e-6)


def test_probs_equity_and_flip():
    p = Probs(0.6, 0.2, 0.05, 0.1, 0.01)
    assert p.equity() == pytest.approx(2 * 0.6 - 1 + 0.2 - 0.1 + 0.05 - 0.01)
    assert p.flip() == Probs(0.4, 0.1, 0.01, 0.2, 0.05)
    assert p.flip().equity() == pytest.approx(-p.equity())
    assert p.flip().flip() == p
    assert Probs.of([0.5, 0, 0, 0, 0]).equity() == 0.0
    with pytest.raises(ValueError):
        Probs.of([0.5, 0.1])


def test_checkpoint_round_trip(tmp_path):
    torch.manual_seed(1)
    net = BgNet(ModelConfig(hidden=(12, 6), activation="tanh"))
    path = tmp_path / "n.pt"
    save_checkpoint(path, net, games=123, config={"lam": 0.7}, buffer=np.arange(4))
    ckpt = read_checkpoint(path)
    assert ckpt["games"] == 123 and ckpt["config"] == {"lam": 0.7}
    assert np.array_equal(np.asarray(ckpt["buffer"]), np.arange(4))
    assert "git_sha" in ckpt
    again = load_net(path)
    assert again.config == net.config
    x = torch.randn(7, net.config.num_features)
    with torch.no_grad():
        assert torch.equal(again(x), net(x))
    assert not list(tmp_path.glob("*.tmp"))  # the temp file was renamed away


def test_evaluator_scores_positions(tmp_path):
    net = BgNet(ModelConfig(hidden=(8,)))
    ev = NetEvaluator(net)
    probs = ev.evaluate([Position.start(), Position.start().swap_sides()])
    assert len(probs) == 2 and probs[0] == probs[1]  # the opening is symmetric


@pytest.mark.parametrize("content", [b"", b"not a checkpoint at all", b"PK\x03\x04garbage"])
def test_corrupt_checkpoint_gives_one_sentence(tmp_path, content):
    path = tmp_path / "bad.pt"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match="corrupt or not a bgnet checkpoint"):
        load_net(path)


def test_truncated_checkpoint(tmp_path):
    path = tmp_path / "n.pt"
    save_checkpoint(path, BgNet(ModelConfig(hidden=(8,))))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError):
        load_net(path)


def test_missing_and_mismatched_checkpoints(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_net(tmp_path / "nope.pt")
    path = tmp_path / "n.pt"
    save_checkpoint(path, BgNet(ModelConfig(hidden=(8,))))
    ckpt = torch.load(path, weights_only=True)
    ckpt["model_config"]["feature_version"] = 99
    torch.save(ckpt, path)
    with pytest.raises(CheckpointError, match="features version 99"):
        load_net(path)
    ckpt["model_config"]["feature_version"] = 1
    ckpt["model_config"]["hidden"] = [9]
    torch.save(ckpt, path)
    with pytest.raises(CheckpointError, match="do not match"):
        load_net(path)
    torch.save({"something": 1}, path)
    with pytest.raises(CheckpointError, match="not a bgnet checkpoint"):
        load_net(path)
