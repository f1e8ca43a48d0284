"""The training net as an evaluator: the fused numpy copy on one CPU thread follows the weights as they learn."""

import numpy as np
import torch

from bgnet.nets.model import BgNet, ModelConfig
from bgnet.core.position import Position
from bgnet.trainer.inference import TorchEvaluator, numpy_net_of


def _boards() -> np.ndarray:
    rng = np.random.default_rng(4)
    pos, out = Position.start(), []
    for _ in range(80):
        moves = pos.legal_moves(tuple(int(d) for d in rng.integers(1, 7, 2)))
        pos = moves[rng.integers(len(moves))].after.swap_sides()
        if pos.is_game_over():
            pos = Position.start()
        out.append(pos.board)
    return np.array(out, np.int8)


def _torch_probs(net: BgNet, boards: np.ndarray, version: int) -> np.ndarray:
    from bgnet.features.encoding import encode

    with torch.no_grad():
        return net(torch.from_numpy(encode(boards, version=version))).numpy()


def test_the_cpu_evaluator_gives_the_torch_nets_chances_and_follows_each_update() -> None:
    torch.manual_seed(5)
    net = BgNet(ModelConfig.for_features([32, 16], "relu", 2))
    ev = TorchEvaluator(net, torch.device("cpu"))
    b = _boards()
    assert np.abs(ev.probs_of_boards(b) - _torch_probs(net, b, 2)).max() < 1e-5
    first = ev._numpy_net()
    assert ev._numpy_net() is first  # kept while the weights stay
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    loss = net(torch.rand(8, net.config.num_features)).sum()
    loss.backward()
    opt.step()
    assert ev._numpy_net() is not first  # the optimizer's in-place step is seen
    assert np.abs(ev.probs_of_boards(b) - _torch_probs(net, b, 2)).max() < 1e-5
    net.load_state_dict(BgNet(net.config).state_dict())  # so is a load
    assert np.abs(ev.probs_of_boards(b) - _torch_probs(net, b, 2)).max() < 1e-5


def test_numpy_net_of_keeps_activation_and_feature_version() -> None:
    torch.manual_seed(6)
    net = BgNet(ModelConfig(hidden=(12,), activation="tanh"))
    copy = numpy_net_of(net)
    assert copy.activation == "tanh" and copy.feature_version == net.config.feature_version
    b = _boards()
    assert np.abs(copy.probs_of_boards(b) - _torch_probs(net, b, net.config.feature_version)).max() < 1e-5
