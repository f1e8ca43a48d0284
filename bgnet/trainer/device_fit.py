"""The device engine's fit: Adam steps on minibatches of the self-play's samples, all on the net's device.

``fit_samples`` launches each minibatch's forward pass, backward pass and Adam step op by op from Python: about 72
ops a minibatch with the release's net (counted on a CPU), small kernels which on a GPU take less time to run than
the host takes to launch them (the fifth GPU run's profile: 16 minibatches a step, the Adam step alone 180 µs of
host time against 71 µs on the GPU).
``GraphedFit`` records a whole fit's minibatch loop once as a CUDA graph and replays it with one launch: the same
kernels on the same shapes, its inputs copied into the graph's own tensors, the learning rate a device scalar.
"""

from __future__ import annotations

from typing import Iterable

import torch

from bgnet.features.registry import feature_set
from bgnet.nets.model import BgNet, placement

__all__ = ["GraphedFit", "device_adam", "fit_inputs", "fit_loop", "fit_samples"]


def device_adam(params: Iterable[torch.nn.Parameter], lr: float) -> torch.optim.Optimizer:
    """Adam with its fused kernel where this torch has one for the parameters' device (no host reads in a step),
    else the plain one."""
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, fused=True)
    except RuntimeError:  # no fused Adam for this device or dtype in this torch
        return torch.optim.Adam(params, lr=lr)


def fit_inputs(net: BgNet, boards: torch.Tensor, targets: torch.Tensor, samples: torch.Tensor, minibatch: int,
               batches: int, generator: torch.Generator,
               kernels: str = "torch") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(inputs (batches * minibatch, F), targets (batches * minibatch, 5), weight) of one fit: the rows ``samples``
    marks among ``boards`` (R, 26) and ``targets`` (R, 5) in a random order, cycling when fewer; ``weight`` is 0.0
    (a device scalar) when there is no sample at all, so that the steps see zero gradients, else 1.0. The inputs
    come from the net's feature set's torch encoder, or its Triton kernel with ``kernels`` "fused"."""
    dev = boards.device
    count = samples.sum()
    order = (torch.rand(len(samples), generator=generator, device=dev) + (~samples).float()).argsort()
    picks = order.index_select(0, torch.arange(batches * minibatch, device=dev) % count.clamp(min=1))
    encode = feature_set(net.config.feature_version).torch_encode_fn(kernels)
    x = encode(boards.index_select(0, picks)).to(placement(net)[1])
    return x, targets.index_select(0, picks), (count > 0).float()


def fit_loop(net: BgNet, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, weight: torch.Tensor,
             minibatch: int) -> torch.Tensor:
    """One Adam step a ``minibatch`` of ``x`` and ``y``, in order; the mean squared error (summed over the five
    outputs) of the minibatches seen, a device tensor. Nothing is read back, so a CUDA graph can record it."""
    batches = len(x) // minibatch
    total = torch.zeros((), device=x.device)
    for start in range(0, batches * minibatch, minibatch):
        pred = net(x[start:start + minibatch])
        mse = ((pred - y[start:start + minibatch]) ** 2).sum(dim=1).mean()
        optimizer.zero_grad(set_to_none=True)
        (mse * weight).backward()
        optimizer.step()
        total += mse.detach()
    return total / batches


def fit_samples(net: BgNet, optimizer: torch.optim.Optimizer, boards: torch.Tensor, targets: torch.Tensor,
                samples: torch.Tensor, minibatch: int, batches: int, generator: torch.Generator,
                kernels: str = "torch") -> torch.Tensor:
    """``batches`` Adam steps on minibatches of the rows ``samples`` marks among ``boards`` (R, 26) and ``targets``
    (R, 5), shuffled (``fit_inputs``); returns the mean squared error (summed over the five outputs) seen, as a
    device tensor."""
    x, y, weight = fit_inputs(net, boards, targets, samples, minibatch, batches, generator, kernels)
    net.train()
    loss = fit_loop(net, optimizer, x, y, weight, minibatch)
    net.eval()
    return loss


def _graph_key(optimizer: torch.optim.Optimizer, x: torch.Tensor, minibatch: int) -> tuple[object, ...]:
    """What a recorded fit depends on: the addresses of the optimizer's parameters and state tensors (what the graph
    reads and writes), the inputs' shape and type, the minibatch."""
    ptrs: list[int] = []
    for group in optimizer.param_groups:
        for p in group["params"]:
            ptrs.append(p.data_ptr())
            ptrs.extend(v.data_ptr() for _, v in sorted(optimizer.state.get(p, {}).items())
                        if isinstance(v, torch.Tensor))
    return tuple(ptrs), tuple(x.shape), x.dtype, minibatch


class GraphedFit:
    """``fit_samples`` with the minibatch loop replayed from one CUDA graph on a CUDA device (eager elsewhere).

    The loop is recorded at the first fit (and again when the net's or the optimizer's tensors, the fit's shape or
    the minibatch change, as after loading a checkpoint); that fit itself runs eagerly on a side stream first, which
    also warms up cuBLAS and autograd before the capture. A replay copies the fit's inputs and each parameter
    group's current learning rate into the graph's tensors: the optimizer's groups keep a float ``lr`` that the
    training loop may change between fits, and a replay reads no value back. A replay's results equal the eager
    loop's up to the Adam step's rounding of a device learning rate instead of a host one.
    """

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._graph: torch.cuda.CUDAGraph | None = None
        self._inputs: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None
        self._lrs: list[torch.Tensor] = []
        self._loss: torch.Tensor | None = None

    def __call__(self, net: BgNet, optimizer: torch.optim.Optimizer, boards: torch.Tensor, targets: torch.Tensor,
                 samples: torch.Tensor, minibatch: int, batches: int, generator: torch.Generator,
                 kernels: str = "torch") -> torch.Tensor:
        """The same fit as ``fit_samples(...)`` with these arguments; its loss, a fresh device tensor."""
        if boards.device.type != "cuda":
            return fit_samples(net, optimizer, boards, targets, samples, minibatch, batches, generator, kernels)
        x, y, weight = fit_inputs(net, boards, targets, samples, minibatch, batches, generator, kernels)
        net.train()
        if _graph_key(optimizer, x, minibatch) != self._key or self._graph is None:
            loss = self._fit_and_record(net, optimizer, x, y, weight, minibatch)
            self._key = _graph_key(optimizer, x, minibatch)  # a first fit has just created the optimizer's state
        else:
            assert self._inputs is not None and self._loss is not None
            for static, value in zip(self._inputs, (x, y, weight)):
                static.copy_(value)
            for lr, group in zip(self._lrs, optimizer.param_groups):
                lr.fill_(float(group["lr"]))
            self._graph.replay()
            loss = self._loss.clone()
        net.eval()
        return loss

    def _fit_and_record(self, net: BgNet, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor,
                        weight: torch.Tensor, minibatch: int) -> torch.Tensor:
        """Run this fit eagerly on a side stream (it creates the optimizer's state on a first fit), then record the
        loop on copies of its inputs, each group's ``lr`` a device scalar while recording."""
        dev = x.device
        side = torch.cuda.Stream(device=dev)
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            loss = fit_loop(net, optimizer, x, y, weight, minibatch)
        torch.cuda.current_stream(dev).wait_stream(side)
        inputs = (x.clone(), y.clone(), weight.clone())
        groups = optimizer.param_groups
        saved = [(group["lr"], group["capturable"]) for group in groups]
        lrs = [torch.tensor(float(group["lr"]), dtype=torch.float32, device=dev) for group in groups]
        graph = torch.cuda.CUDAGraph()
        try:
            for group, lr in zip(groups, lrs):
                group["lr"], group["capturable"] = lr, True
            with torch.cuda.graph(graph):
                out = fit_loop(net, optimizer, *inputs, minibatch)
        finally:
            for group, (lr_value, capturable) in zip(groups, saved):
                group["lr"], group["capturable"] = lr_value, capturable
        self._graph, self._inputs, self._lrs, self._loss = graph, inputs, lrs, out
        return loss
