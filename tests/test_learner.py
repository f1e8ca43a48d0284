"""The supervised fit: minibatch steps on encoded boards, with an optional per-step learning-rate schedule."""

import numpy as np
import torch

from bgnet.learner import fit
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
