"""The supervised fit: minibatch steps on encoded boards, with an optional per-step learning-rate schedule."""

import numpy as np
import pytest
import torch

from bgnet.features.encoding import encode
from bgnet.trainer.learner import FitError, fit, fit_inputs, outcome_cross_entropy, outcomes, sibling_rank_loss
from bgnet.nets.model import BgNet, ModelConfig


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


def test_outcomes_split_the_cumulative_chances_into_six_results_that_sum_to_one():
    probs = torch.tensor([[0.7, 0.2, 0.01, 0.1, 0.005]])
    six = outcomes(probs)[0].tolist()
    assert six == pytest.approx([0.5, 0.19, 0.01, 0.2, 0.095, 0.005]) and sum(six) == pytest.approx(1.0)


def test_outcome_cross_entropy_is_zero_at_the_target_and_weighs_small_chances_by_their_size():
    """KL from the target's six results: 0 for a perfect fit; the same 0.01 error in a backgammon chance costs
    more when the chance is 0.01 than when it is 0.3, where the squared error cannot tell them apart."""
    target = torch.tensor([[0.7, 0.2, 0.01, 0.1, 0.005]])
    assert float(outcome_cross_entropy(target, target)) == pytest.approx(0.0, abs=1e-6)
    small, large = target.clone(), torch.tensor([[0.7, 0.5, 0.3, 0.1, 0.005]])
    small[0, 2] += 0.01
    large_off = large.clone()
    large_off[0, 2] += 0.01
    assert float(outcome_cross_entropy(small, target)) > 3 * float(outcome_cross_entropy(large_off, large)) > 0
    assert float(((small - target) ** 2).sum()) == pytest.approx(float(((large_off - large) ** 2).sum()), rel=1e-4)


def test_a_fit_by_outcome_cross_entropy_lowers_it():
    torch.manual_seed(0)
    net = BgNet(ModelConfig.for_features([8], "relu", 2))
    boards, targets = _boards(64), np.tile(np.array([0.7, 0.2, 0.01, 0.1, 0.005], np.float32), (64, 1))
    x, y = torch.from_numpy(encode(boards, version=2)), torch.from_numpy(targets)
    before = float(outcome_cross_entropy(net(x).detach(), y))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    fit(net, opt, boards, targets, 16, 20, np.random.default_rng(0), torch.device("cpu"), loss="outcomes")
    assert float(outcome_cross_entropy(net(x).detach(), y)) < 0.1 * before
    with pytest.raises(ValueError, match="not one of"):
        fit(net, opt, boards, targets, 16, 1, np.random.default_rng(0), torch.device("cpu"), loss="hinge")


def test_inputs_encoded_once_fit_as_the_boards_do():
    """``fit_inputs`` made once and given to every epoch's ``fit``: the same weights as encoding each time."""
    rng_boards = np.random.default_rng(3)
    boards = _boards(48)
    boards[:, 24] = rng_boards.integers(0, 3, 48)  # some different boards
    boards[:, 6] = 7 - boards[:, 24]
    targets = rng_boards.random((48, 5)).astype(np.float32)
    nets = []
    for given in (False, True):
        torch.manual_seed(1)
        net = BgNet(ModelConfig.for_features([8], "relu", 2))
        opt = torch.optim.Adam(net.parameters(), lr=1e-2)
        rng = np.random.default_rng(2)
        inputs = fit_inputs(net, boards, torch.device("cpu")) if given else None
        for _ in range(3):
            fit(net, opt, boards, targets, 16, 1, rng, torch.device("cpu"), inputs=inputs)
        nets.append(net)
    for a, b in zip(nets[0].parameters(), nets[1].parameters()):
        assert torch.equal(a, b)
    with pytest.raises(FitError, match="rows of inputs"):
        fit(nets[0], opt, boards, targets, 16, 1, rng, torch.device("cpu"), inputs=fit_inputs(nets[0], boards[:8],
                                                                                                torch.device("cpu")))
