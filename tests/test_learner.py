"""The supervised fit: minibatch steps on encoded boards, with an optional per-step learning-rate schedule."""

import numpy as np
import pytest
import torch

from bgnet.encoding import encode
from bgnet.learner import fit, sibling_rank_loss
from bgnet.model import BgNet, ModelConfig


def _boards(n: int) -> np.ndarray:
    board = np.zeros(26, np.int8)
    board[[6, 8, 13, 24]] = [5, 3, 5, 2]
    board[[19, 17, 12, 1]] = [-5, -3, -5, -2]
    return np.repeat(board[None], n, axis=0)


def test_fit_lowers_the_loss_and_steps_the_schedule_once_per_minibatch():
    """Fitting constant targets lowers the squared error; a cosine schedule over the steps ends at a rate of 0."""
    torch.manual_seed(0)
    net = BgNet(ModelConfig.for_features([8], "relu", 2))
    boards, targets = _boards(64), np.tile(np.array([0.7, 0.2, 0.01, 0.1, 0.005], np.float32), (64, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    steps = 3 * (64 // 16)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    rng = np.random.default_rng(0)
    first = fit(net, opt, boards, targets, 16, 1, rng, torch.device("cpu"), scheduler=sched)
    last = fit(net, opt, boards, targets, 16, 2, rng, torch.device("cpu"), scheduler=sched)
    assert last < first
    assert sched.last_epoch == steps and opt.param_groups[0]["lr"] < 1e-9


def test_sibling_rank_loss_ignores_an_error_common_to_the_group():
    """An equity error shared by both siblings costs nothing; swapping them costs their spread squared."""
    target = torch.tensor([[0.6, 0.1, 0.0, 0.1, 0.0], [0.4, 0.1, 0.0, 0.2, 0.0]])  # equities +0.2 and -0.3
    shifted = target.clone()
    shifted[:, 0] += 0.05  # both equities +0.1
    assert float(sibling_rank_loss(shifted, target, 2)) == pytest.approx(0.0, abs=1e-12)
    assert float(sibling_rank_loss(target.flip(0), target, 2)) == pytest.approx(0.25)  # deviations +-0.25 -> -+0.25


def test_a_rank_weighted_fit_spreads_siblings_as_their_targets():
    """Groups of two boards with targets of opposite equity: a fit with the rank term ends with a smaller
    sibling error than it started with; rows or a minibatch not in whole groups are refused."""
    torch.manual_seed(0)
    net = BgNet(ModelConfig.for_features([8], "relu", 2))
    boards = _boards(32)
    boards[1::2, 24], boards[1::2, 23] = 1, 1  # the second sibling has split its back checkers
    targets = np.tile(np.array([[0.7, 0.2, 0.01, 0.1, 0.005], [0.3, 0.1, 0.0, 0.3, 0.02]], np.float32), (16, 1))
    y = torch.from_numpy(targets)
    before = float(sibling_rank_loss(net(torch.from_numpy(encode(boards, version=2))).detach(), y, 2))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    fit(net, opt, boards, targets, 8, 20, np.random.default_rng(0), torch.device("cpu"), group=2, rank_weight=1.0)
    after = float(sibling_rank_loss(net(torch.from_numpy(encode(boards, version=2))).detach(), y, 2))
    assert after < 0.1 * before
    with pytest.raises(ValueError, match="multiples of the group size"):
        fit(net, opt, boards[:31], targets[:31], 8, 1, np.random.default_rng(0), torch.device("cpu"), group=2)
    with pytest.raises(ValueError, match="multiples of the group size"):
        fit(net, opt, boards, targets, 7, 1, np.random.default_rng(0), torch.device("cpu"), group=2)
