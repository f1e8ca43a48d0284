"""The learner: fits the evaluator to TD(lambda) targets in shuffled minibatches.

It sees only plain arrays (positions and targets) and a model, so it can run in
another process or machine than the self-play workers.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from bgnet.core.errors import BgnetError
from bgnet.core.probs import equities
from bgnet.features.encoding import encode, feature_set
from bgnet.nets.model import BgNet


class FitError(BgnetError):
    """A fit that cannot run as asked: a loss it does not know, rows or minibatches not in whole groups."""


def cosine_lr(lr: float, lr_final: float, progress: float) -> float:
    """Learning rate at ``progress`` (0..1) of a cosine decay from ``lr`` to ``lr_final``."""
    progress = min(max(progress, 0.0), 1.0)
    return lr_final + 0.5 * (lr - lr_final) * (1.0 + math.cos(math.pi * progress))


def sibling_rank_loss(pred: torch.Tensor, target: torch.Tensor, group: int) -> torch.Tensor:
    """Mean squared error of each row's equity relative to its group's mean equity (rows in groups of ``group``).

    A 0-ply move only compares the afterstates of one roll, so an error common to all of them costs
    nothing; this term leaves such an error out and measures only how wrongly the siblings are spread.
    """
    e, t = equities(pred).view(-1, group), equities(target).view(-1, group)
    return (((e - e.mean(dim=1, keepdim=True)) - (t - t.mean(dim=1, keepdim=True))) ** 2).mean()


LOSSES = ("mse", "outcomes")
"""What ``fit`` minimises: the squared error summed over the five chances, or ``outcome_cross_entropy``."""


def check_loss(loss: str) -> None:
    """Refuse a ``loss`` that is not one of ``LOSSES`` (FitError with one sentence)."""
    if loss not in LOSSES:
        raise FitError(f"loss {loss!r} is not one of {', '.join(LOSSES)}")


def outcomes(probs: torch.Tensor) -> torch.Tensor:
    """(N, 5) cumulative chances -> (N, 6) chances of the six results: win single, gammon, backgammon, lose
    single, gammon, backgammon (clamped at 0: a target's rounding may make a difference a hair negative)."""
    win, wg, wbg, lg, lbg = probs.unbind(dim=1)
    return torch.stack((win - wg, wg - wbg, wbg, 1.0 - win - lg, lg - lbg, lbg), dim=1).clamp_min(0.0)


def outcome_cross_entropy(pred: torch.Tensor, target: torch.Tensor, eps: float = 1e-7) -> torch.Tensor:
    """Mean over rows of the Kullback-Leibler divergence from the target's six-result distribution to the net's
    (cross-entropy less the target's own entropy, so a perfect fit scores 0).

    Unlike the squared error, it does not fade where a chance is near 0 or 1 (a sigmoid's gradient does): the
    gammon and backgammon chances of lopsided positions count in proportion to how wrong they are relative to
    their size.
    """
    p, y = outcomes(pred), outcomes(target)
    return (y * (torch.log(y + eps) - torch.log(p + eps))).sum(dim=1).mean()


def fit_inputs(net: BgNet, boards: np.ndarray, device: torch.device, encode_on_device: bool = False) -> torch.Tensor:
    """The net's inputs (N, features) float32 of ``boards`` on ``device`` (encoded there with ``encode_on_device``):
    what ``fit`` trains on, made once by a caller that fits the same boards epoch after epoch."""
    if encode_on_device:
        encode_torch = feature_set(net.config.feature_version).torch_encode_fn()
        return encode_torch(torch.from_numpy(np.ascontiguousarray(boards, np.int8)).to(device))
    return torch.from_numpy(encode(boards, version=net.config.feature_version)).to(device)


def fit(net: BgNet, optimizer: torch.optim.Optimizer, boards: np.ndarray, targets: np.ndarray,
        minibatch: int, epochs: int, rng: np.random.Generator, device: torch.device,
        encode_on_device: bool = False, scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
        group: int = 1, rank_weight: float = 0.0, loss: str = "mse", inputs: torch.Tensor | None = None) -> float:
    """Train on positions ``boards`` (N, 26) with targets (N, 5); returns the mean squared error seen.
    ``scheduler``, when given, is stepped after every optimizer step.

    The squared error of a minibatch is summed over the five outputs and averaged
    over its positions (a sum, not a mean, over the outputs: five times the
    per-output mean squared error); the value returned is its mean over steps.
    With ``group`` > 1 the rows come in consecutive groups of that many siblings (the
    candidate plays of one roll), shuffled as whole groups, and the loss adds
    ``rank_weight`` times ``sibling_rank_loss``. ``loss`` "outcomes" minimises ``outcome_cross_entropy``
    instead of the squared error (the value returned is still the squared error, so fits compare). ``inputs``,
    when given, are ``fit_inputs(net, boards, device)`` made once by the caller (the same numbers, not encoded again).
    """
    check_loss(loss)
    n = len(boards)
    if group > 1 and (n % group or minibatch % group):
        raise FitError(f"{n} rows and minibatch {minibatch} must both be multiples of the group size {group}")
    x_all = fit_inputs(net, boards, device, encode_on_device) if inputs is None else inputs
    if len(x_all) != n:
        raise FitError(f"{len(x_all)} rows of inputs for {n} boards")
    y_all = torch.from_numpy(np.ascontiguousarray(targets, np.float32)).to(device)
    net.train()
    total, steps = 0.0, 0
    for _ in range(epochs):
        if group > 1:
            perm = (rng.permutation(n // group)[:, None] * group + np.arange(group)).ravel()
        else:
            perm = rng.permutation(n)
        order = torch.from_numpy(perm).to(device)
        for start in range(0, n, minibatch):
            idx = order[start:start + minibatch]
            pred, y = net(x_all[idx]), y_all[idx]
            mse = ((pred - y) ** 2).sum(dim=1).mean()
            objective = outcome_cross_entropy(pred, y) if loss == "outcomes" else mse
            if group > 1 and rank_weight:
                objective = objective + rank_weight * sibling_rank_loss(pred, y, group)
            optimizer.zero_grad(set_to_none=True)
            objective.backward()
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            total += float(mse.detach())
            steps += 1
    net.eval()
    return total / max(steps, 1)
