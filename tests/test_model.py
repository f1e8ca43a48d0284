"""The evaluator: consistent outputs, Probs, and self-describing, safely loaded checkpoints."""

import numpy as np
import pytest
import torch

from bgnet.nets.model import BgNet, CheckpointError, ModelConfig, NetEvaluator, load_net, read_checkpoint, save_checkpoint
from bgnet.core.position import Position
from bgnet.core.probs import Probs


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
    """Each position is scored for its own side on roll, the same alone as in a batch.

    An asymmetric position (X has escaped a back checker, O has not) is scored
    differently from the same board turned round: the net is told whose turn it is.
    """
    torch.manual_seed(1)
    net = BgNet(ModelConfig(hidden=(8,)))
    ev = NetEvaluator(net)
    pos = Position.from_points({24: 1, 16: 1, 13: 4, 8: 3, 6: 5, 5: 1}, {24: 2, 13: 5, 8: 3, 6: 5})
    assert pos != pos.swap_sides()
    probs = ev.evaluate([pos, pos.swap_sides(), Position.start()])
    assert len(probs) == 3 and all(isinstance(p, Probs) for p in probs)
    assert probs[0] != probs[1]
    alone = ev.evaluate([pos.swap_sides()])[0]
    assert alone.as_list() == pytest.approx(probs[1].as_list(), abs=1e-6)
    assert ev.evaluate([Position.start().swap_sides()])[0].as_list() == pytest.approx(probs[2].as_list(), abs=1e-6)


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


def test_widening_the_hidden_layers_keeps_the_function():
    """Net2Net: new units copy old ones and the next layer shares their weight, so the outputs barely move."""
    import numpy as np
    import pytest

    from bgnet.nets.model import BgNet, ModelConfig, widen_hidden

    torch.manual_seed(2)
    net = BgNet(ModelConfig.for_features([16, 8], "relu", 2)).eval()
    wide = widen_hidden(net, [40, 20], seed=1)
    assert wide.config.hidden == (40, 20) and wide.config.feature_version == 2
    x = torch.rand(200, net.config.num_features)
    with torch.no_grad():
        a, b = net(x).numpy(), wide(x).numpy()
    assert np.abs(a - b).max() < 1e-3
    with torch.no_grad():
        exact = widen_hidden(net, [40, 20], noise=0.0)(x).numpy()
    assert np.allclose(exact, a, atol=1e-5)
    with pytest.raises(ValueError):
        widen_hidden(net, [8, 8])


def test_average_nets_is_the_mean_of_the_weights():
    """Two nets average weight by weight; a different shape is refused with a sentence."""
    import pytest

    from bgnet.nets.model import BgNet, ModelConfig, average_nets

    torch.manual_seed(3)
    cfg = ModelConfig.for_features([16, 8], "relu", 2)
    a, b = BgNet(cfg), BgNet(cfg)
    mean = average_nets([a, b])
    for k, v in mean.state_dict().items():
        assert torch.allclose(v, (a.state_dict()[k] + b.state_dict()[k]) / 2)
    assert average_nets([a]).state_dict()["head.weight"].equal(a.state_dict()["head.weight"])
    with pytest.raises(ValueError, match="share one config"):
        average_nets([a, BgNet(ModelConfig.for_features([8, 8], "relu", 2))])
    with pytest.raises(ValueError, match="no nets"):
        average_nets([])


def test_committee_net_averages_the_members_heads_before_the_sigmoids():
    """Three nets of different widths join into one whose head output is the mean of theirs, on any input;
    a net of another depth or activation is refused with a sentence."""
    import pytest

    from bgnet.nets.model import BgNet, ModelConfig, committee_net

    torch.manual_seed(4)
    members = [BgNet(ModelConfig.for_features(h, "relu", 2)) for h in ([12, 6], [8, 4], [5, 3])]
    joined = committee_net(members)
    assert joined.config.hidden == (25, 13)
    x = torch.randn(50, members[0].config.num_features)
    with torch.no_grad():
        mean_logits = sum(m.head(m.body(x)) for m in members) / 3
        assert torch.allclose(joined.head(joined.body(x)), mean_logits, atol=1e-5)
        one = committee_net(members[:1])
        assert torch.allclose(one(x), members[0](x), atol=1e-6)
        # the committee is not the weight average: it differs from every member on these inputs
        assert all((joined(x) - m(x)).abs().max() > 1e-3 for m in members)
    with pytest.raises(ValueError, match="share inputs, depth and activation"):
        committee_net([members[0], BgNet(ModelConfig.for_features([8], "relu", 2))])
    with pytest.raises(ValueError, match="share inputs, depth and activation"):
        committee_net([members[0], BgNet(ModelConfig.for_features([8, 4], "tanh", 2))])
    with pytest.raises(ValueError, match="no nets"):
        committee_net([])


_DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.cuda, pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU")])]


@pytest.mark.parametrize("device", _DEVICES)
@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_infer_gives_the_forward_pass_chances(device, activation):
    torch.manual_seed(3)
    net = BgNet(ModelConfig(hidden=(64, 32), activation=activation)).to(device).eval()
    x = torch.rand(300, net.config.num_features, device=device)
    with torch.no_grad():
        want = net(x)
    got = net.infer(x)
    assert not got.requires_grad
    if device == "cpu":  # the fused product is the product and then the activation there
        assert torch.equal(got, want)
    else:  # cuBLASLt may sum in another order
        assert torch.allclose(got, want, atol=1e-5)
