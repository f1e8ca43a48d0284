"""The torch net as an ``Evaluator`` during training: one forward pass, no gradients, features where cheapest."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bgnet.features.encoding import encode, feature_set
from bgnet.nets.fastnet import NumpyNet
from bgnet.nets.model import BgNet


class TorchEvaluator:
    """``probs_of_boards`` of a training net (``bgnet.core.protocols.Evaluator``); also callable as a plain ProbsFn.

    On the CPU with one thread the boards go through ``bgnet.nets.fastnet.NumpyNet``'s fused
    kernel on a copy of the current weights (remade whenever the optimizer has
    changed them): about twice the speed of torch's dense products here, where
    self-play's forward passes are most of a training run. Elsewhere features are
    computed on the device with ``on_device`` (the torch encoder of the net's feature set),
    else on the host with ``threads`` numba threads, and torch runs the net.
    """

    def __init__(self, net: BgNet, device: torch.device, threads: int = 1, on_device: bool = False) -> None:
        self.net = net
        self.device = device
        self.threads = threads
        self.on_device = on_device
        self._numpy: NumpyNet | None = None
        self._numpy_key: Any = None

    @torch.inference_mode()
    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float32 probabilities for boards (N, 26), each for its side on roll."""
        if self.device.type == "cpu" and self.threads == 1 and not self.on_device:
            return self._numpy_net().probs_of_boards(boards)
        if self.on_device:
            encode_torch = feature_set(self.net.config.feature_version).torch_encode_fn()
            x = encode_torch(torch.from_numpy(np.ascontiguousarray(boards, np.int8)).to(self.device, non_blocking=True))
        else:
            x = torch.from_numpy(encode(boards, self.threads, self.net.config.feature_version)).to(
                self.device, non_blocking=True)
        out: np.ndarray = self.net.infer(x).float().cpu().numpy()
        return out

    def _numpy_net(self) -> NumpyNet:
        """A NumpyNet of the net's current weights (each parameter's in-place version counter says when they
        changed)."""
        key = tuple((id(p), p._version) for p in self.net.parameters())
        if self._numpy is None or key != self._numpy_key:
            self._numpy = numpy_net_of(self.net)
            self._numpy_key = key
        return self._numpy

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        return self.probs_of_boards(boards)


def numpy_net_of(net: BgNet) -> NumpyNet:
    """The same net as a ``bgnet.nets.fastnet.NumpyNet`` (a copy of its weights)."""
    return NumpyNet(net.numpy_layers(), net.config.activation, net.config.feature_version)


def make_probs_fn(net: BgNet, device: torch.device, threads: int = 1, on_device: bool = False) -> TorchEvaluator:
    """Boards -> probabilities with one forward pass (no gradients); features on the device when ``on_device``."""
    return TorchEvaluator(net, device, threads, on_device)


def probs_fn_of(net: BgNet) -> TorchEvaluator:
    """Boards -> probabilities of ``net`` on the CPU (its own feature version): how the rounds pipeline asks a net."""
    return make_probs_fn(net, torch.device("cpu"))
