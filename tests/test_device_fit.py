"""The device engine's fit: it learns, its pieces make the eager fit, and on a GPU the graphed fit replays it with
the current learning rate, records again after a checkpoint is loaded and never waits for the host."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from bgnet.nets.model import BgNet, ModelConfig
from bgnet.sim.device_selfplay import DeviceSelfPlay
from bgnet.sim.selfplay import START_BOARD
from bgnet.trainer.device_fit import GraphedFit, device_adam, fit_inputs, fit_loop, fit_samples

def small_net(seed: int = 0, device: str = "cpu") -> BgNet:
    torch.manual_seed(seed)
    return BgNet(ModelConfig.for_features([24], "tanh", 2)).to(device)


def played_samples(device: str, seed: int = 1) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Boards (R, 26) of a short random self-play on ``device``, made-up targets (R, 5) and a mask of samples."""
    play = DeviceSelfPlay(16, seed=seed, device=device)
    boards = []
    for _ in range(6):
        play.step(lambda b: torch.rand((len(b), 5), device=b.device) * 0.5)
        boards.append(play.boards.clone())
    rows = torch.cat(boards)
    gen = torch.Generator(device=device).manual_seed(seed)
    targets = torch.rand((len(rows), 5), generator=gen, device=device) * 0.5
    samples = torch.rand(len(rows), generator=gen, device=device) < 0.7
    return rows, targets, samples


def test_fitting_the_samples_lowers_their_error():
    net = small_net()
    boards = torch.from_numpy(np.tile(START_BOARD, (64, 1)))
    targets = torch.full((64, 5), 0.25)
    samples = torch.arange(64) % 2 == 0
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(0)
    first = fit_samples(net, opt, boards, targets, samples, 16, 4, gen)
    for _ in range(5):
        last = fit_samples(net, opt, boards, targets, samples, 16, 4, gen)
    assert float(last) < 0.5 * float(first)


def test_the_inputs_cycle_through_the_samples_only_and_the_loop_takes_one_step_a_minibatch():
    boards, targets, samples = played_samples("cpu")
    net = small_net()
    x, y, weight = fit_inputs(net, boards, targets, samples, 16, 5, torch.Generator().manual_seed(3))
    assert x.shape == (80, net.config.num_features) and y.shape == (80, 5) and float(weight) == 1.0
    sample_targets = {tuple(t) for t in targets[samples].tolist()}
    assert all(tuple(t) in sample_targets for t in y.tolist())
    opt = device_adam(net.parameters(), 1e-3)
    fit_loop(net, opt, x, y, weight, 16)
    assert all(int(s["step"]) == 5 for s in opt.state.values())
    none = fit_inputs(net, boards, targets, torch.zeros_like(samples), 16, 2, torch.Generator().manual_seed(3))[2]
    assert float(none) == 0.0  # no sample at all: the steps see zero gradients


def test_off_a_gpu_the_graphed_fit_is_the_eager_fit():
    boards, targets, samples = played_samples("cpu")
    nets = [small_net(), small_net()]
    opts = [device_adam(n.parameters(), 1e-3) for n in nets]
    gens = [torch.Generator().manual_seed(4) for _ in nets]
    graphed = GraphedFit()
    for _ in range(3):
        a = fit_samples(nets[0], opts[0], boards, targets, samples, 16, 4, gens[0])
        b = graphed(nets[1], opts[1], boards, targets, samples, 16, 4, gens[1])
        assert torch.equal(a, b)
    assert graphed._graph is None
    for p, q in zip(nets[0].parameters(), nets[1].parameters()):
        assert torch.equal(p, q)


@pytest.mark.cuda
@pytest.mark.cuda_graphs
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_replays_follow_the_eager_fit_and_its_learning_rate():
    boards, targets, samples = played_samples("cuda")
    nets = [small_net(device="cuda"), small_net(device="cuda")]
    opts = [device_adam(n.parameters(), 1e-3) for n in nets]
    gens = [torch.Generator(device="cuda").manual_seed(4) for _ in nets]
    graphed = GraphedFit()
    for i, lr in enumerate((1e-3, 1e-3, 3e-3, 0.0, 1e-4)):
        for opt in opts:
            for group in opt.param_groups:
                group["lr"] = lr
        before = [p.detach().clone() for p in nets[1].parameters()]
        a = fit_samples(nets[0], opts[0], boards, targets, samples, 16, 4, gens[0])
        b = graphed(nets[1], opts[1], boards, targets, samples, 16, 4, gens[1])
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-7)
        for p, q in zip(nets[0].parameters(), nets[1].parameters()):
            assert torch.allclose(p, q, rtol=1e-4, atol=1e-6)
        if lr == 0.0:  # a replay reads the rate of this fit, not the one it was recorded with
            assert all(torch.equal(p, q) for p, q in zip(before, nets[1].parameters()))
        if i == 0:
            recorded = graphed._graph
        assert graphed._graph is recorded is not None  # recorded once, then replayed
    assert all(isinstance(g["lr"], float) and not g["capturable"] for g in opts[1].param_groups)

    # A checkpoint's optimizer state replaces the state tensors: the loop is recorded again, from that state.
    state = copy.deepcopy(opts[0].state_dict())
    opts[1].load_state_dict(state)
    nets[1].load_state_dict(nets[0].state_dict())
    for opt in opts:
        for group in opt.param_groups:
            group["lr"] = 1e-3
    for _ in range(2):
        a = fit_samples(nets[0], opts[0], boards, targets, samples, 16, 4, gens[0])
        b = graphed(nets[1], opts[1], boards, targets, samples, 16, 4, gens[1])
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-7)
    assert graphed._graph is not recorded
    for p, q in zip(nets[0].parameters(), nets[1].parameters()):
        assert torch.allclose(p, q, rtol=1e-4, atol=1e-6)
