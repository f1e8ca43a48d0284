"""Self-play training that stays on one torch device: ``DeviceSelfPlay`` steps, TD targets from its ring, fits.

``DeviceTrainer.step`` plays one ply of every game; every ``fit_every`` steps it turns the
games that ended since the last fit into samples (``ring_lambda_returns``) and fits the net
on them with a device-side minibatch loop (``bgnet.trainer.device_fit``): the samples are shuffled by a
device generator, and a fixed number of minibatches, about one epoch of the positions played
since the last fit, is drawn from them (cycling when fewer came). Nothing is read back to
Python in a step or a fit: the loss stays a tensor until someone asks for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from bgnet.nets.model import BgNet
from bgnet.sim.device_selfplay import DeviceSelfPlay
from bgnet.trainer.config import ConfigError
from bgnet.trainer.device_fit import GraphedFit, device_adam, fit_samples
from bgnet.trainer.device_td import GraphedRingReturns, ring_lambda_returns

__all__ = ["DeviceLearning", "DeviceTrainer"]


@dataclass(frozen=True)
class DeviceLearning:
    """How ``DeviceTrainer`` learns: TD(lambda) targets, Adam's rate, minibatches, how often it fits."""

    lam: float = 0.7
    """TD(lambda) trace decay (``bgnet.trainer.td``)."""
    lr: float = 1e-3
    minibatch: int = 256
    fit_every: int = 32
    """Steps (plies of every game) between fits."""
    epochs: int = 1
    """Minibatches per fit: about this many passes over the positions played since the last fit."""
    cuda_graphs: bool = False
    """On a CUDA device, each fit's TD sweep over a full ring (``GraphedRingReturns``) and its minibatch loop
    (``GraphedFit``) replayed from CUDA graphs."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.lam <= 1.0:
            raise ConfigError(f"lam must be between 0 and 1, got {self.lam}")
        if min(self.minibatch, self.fit_every, self.epochs) < 1 or self.lr <= 0:
            raise ConfigError("minibatch, fit_every, epochs and lr must be positive")

    def batches(self, n_games: int) -> int:
        """Minibatches of one fit: ``epochs`` passes over the ``n_games * fit_every`` positions of its interval."""
        return max(1, math.ceil(self.epochs * n_games * self.fit_every / self.minibatch))


class DeviceTrainer:
    """A net learning from its own ``DeviceSelfPlay`` games, on the self-play's device."""

    def __init__(self, net: BgNet, play: DeviceSelfPlay, learning: DeviceLearning = DeviceLearning(),
                 seed: int = 0) -> None:
        self.net = net
        self.play = play
        self.learning = learning
        self.optimizer = device_adam(net.parameters(), learning.lr)
        self.generator = torch.Generator(device=play.device)
        self.generator.manual_seed(seed)
        self.learned_to = 0
        """Step from which ended games have not been learnt yet."""
        self.loss = torch.full((), math.nan, device=play.device)
        """The last fit's mean squared error (a device tensor)."""
        self._graphed_returns = GraphedRingReturns(learning.lam) if learning.cuda_graphs else None
        self._fit = GraphedFit() if learning.cuda_graphs else fit_samples

    def step(self, exploration: float = 0.0) -> None:
        """One ply of every game, and a fit when ``fit_every`` steps have passed since the last."""
        self.play.step(self.net, exploration)
        if self.play.steps - self.learned_to >= self.learning.fit_every:
            self.learn()

    def learn(self) -> torch.Tensor:
        """Fit on the games that ended since the last fit; returns the fit's mean squared error (a device tensor)."""
        ring = self.play.ring
        if self._graphed_returns is not None:
            targets, samples = self._graphed_returns(ring, self.learned_to)
        else:
            targets, samples = ring_lambda_returns(ring, self.learning.lam, self.learned_to)
        self.learned_to = self.play.steps
        self.loss = self._fit(self.net, self.optimizer, ring.boards.view(-1, 26), targets.view(-1, 5),
                              samples.view(-1), self.learning.minibatch, self.learning.batches(self.play.n_games),
                              self.generator, self.play.kernels)
        return self.loss

    def state_dict(self) -> dict[str, Any]:
        """The self-play, the optimizer, the shuffling generator and the learnt step: enough to continue exactly."""
        return {"play": self.play.state_dict(), "optimizer": self.optimizer.state_dict(),
                "generator": self.generator.get_state(), "learned_to": self.learned_to}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state_dict()`` output (the net's weights are loaded separately)."""
        self.play.load_state_dict(state["play"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        self.learned_to = int(state["learned_to"])
