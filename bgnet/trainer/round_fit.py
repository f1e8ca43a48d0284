"""A round's fit: a copy of the current net (widened first when asked) fitted to the round's labels on the CPU."""

from __future__ import annotations

import numpy as np
import torch

from bgnet.nets.model import BgNet
from bgnet.trainer.learner import fit, fit_inputs
from bgnet.trainer.round_config import RoundsConfig, parse_widths


def student_widths(cfg: RoundsConfig, current: tuple[int, ...]) -> tuple[int, ...]:
    """The hidden widths a round fits into a net of widths ``current``: ``cfg.hidden``, or ``current`` when it
    is empty; an error when the net cannot be widened to them (checked before a round labels anything)."""
    from bgnet.nets.model import check_widening

    widths = parse_widths(cfg.hidden)
    if not widths:
        return tuple(current)
    check_widening(current, widths)
    return widths


def fit_copy(net: BgNet, boards: np.ndarray, targets: np.ndarray, cfg: RoundsConfig, seed: int) -> tuple[BgNet, float]:
    """A copy of ``net`` (widened to ``cfg.hidden`` if asked) fitted to (boards, targets); the last epoch's mean
    squared error."""
    torch.manual_seed(seed)
    cand = BgNet(net.config)
    cand.load_state_dict(net.state_dict())
    widths = student_widths(cfg, net.config.hidden)
    if widths != net.config.hidden:
        from bgnet.nets.model import widen_hidden

        cand = widen_hidden(cand, widths, seed=seed)
    optimizer = torch.optim.Adam(cand.parameters(), lr=cfg.lr)
    steps = cfg.epochs * -(-len(boards) // cfg.minibatch)
    scheduler = (torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(steps, 1))
                 if cfg.schedule == "cosine" else None)
    rng = np.random.default_rng(seed)
    mse = float("nan")
    inputs = fit_inputs(cand, boards, torch.device("cpu"))  # encoded once for every epoch
    for _ in range(cfg.epochs):
        mse = fit(cand, optimizer, boards, targets, cfg.minibatch, 1, rng, torch.device("cpu"), scheduler=scheduler,
                  group=cfg.group_size, rank_weight=cfg.rank_weight, loss=cfg.loss, inputs=inputs)
    return cand, mse
