"""The learner: fits the evaluator to TD(lambda) targets in shuffled minibatches.

It sees only plain arrays (positions and targets) and a model, so it can run in
another process or machine than the self-play workers (DESIGN.md, "Scaling out").
"""

from __future__ import annotations

import math

import numpy as np
import torch

from bgnet.encoding import encode
from bgnet.model import BgNet


def cosine_lr(lr: float, lr_final: float, progress: float) -> float:
    """Learning rate at ``progress`` (0..1) of a cosine decay from ``lr`` to ``lr_final``."""
    progress = min(max(progress, 0.0), 1.0)
    return lr_final + 0.5 * (lr - lr_final) * (1.0 + math.cos(math.pi * progress))


def fit(net: BgNet, optimizer: torch.optim.Optimizer, boards: np.ndarray, targets: np.ndarray,
        minibatch: int, epochs: int, rng: np.random.Generator, device: torch.device,
        encode_on_device: bool = False, scheduler: torch.optim.lr_scheduler.LRScheduler | None = None) -> float:
    """Train on positions ``boards`` (N, 26) with targets (N, 5); returns the mean training loss seen.
    ``scheduler``, when given, is stepped after every optimizer step.

    The loss of a minibatch is the squared error summed over the five outputs and
    averaged over its positions (a sum, not a mean, over the outputs: five times
    the per-output mean squared error); the value returned is its mean over steps.
    """
    if encode_on_device:
        from bgnet.encoding_torch import encode_torch

        x_all = encode_torch(torch.from_numpy(np.ascontiguousarray(boards, np.int8)).to(device))
    else:
        x_all = torch.from_numpy(encode(boards, version=net.config.feature_version)).to(device)
    y_all = torch.from_numpy(np.ascontiguousarray(targets, np.float32)).to(device)
    n = len(boards)
    net.train()
    total, steps = 0.0, 0
    for _ in range(epochs):
        order = torch.from_numpy(rng.permutation(n)).to(device)
        for start in range(0, n, minibatch):
            idx = order[start:start + minibatch]
            pred = net(x_all[idx])
            loss = ((pred - y_all[idx]) ** 2).sum(dim=1).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            total += float(loss.detach())
            steps += 1
    net.eval()
    return total / max(steps, 1)
