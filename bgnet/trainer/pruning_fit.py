"""The pruning net: a small net fitted to a release's 0-ply values, which picks the few replies a search values fully.

    python -m bgnet.trainer.pruning_fit checkpoints/bgnet.pt checkpoints/pruning.npz [--positions 200000]
        [--hidden 64] [--epochs 12] [--seed 1]          # the command line: bgnet.cli.pruning

Positions come from the release's own self-play (``collect_positions``); each gets one
random roll, and every play of that roll is a training row, valued by the release at
0 ply. The small net learns those values (features version 1: cheap to encode), so
that inside a search it can rank a roll's replies at about a tenth of the release's
cost (``bgnet.nets.pruning``). The file written is stamped with the release's SHA-256:
it is used with that exact checkpoint only. The same seed gives the same net.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bgnet.core.movegen import generate_plays, swap_sides_batch
from bgnet.core.protocols import ProbsFn
from bgnet.nets.pruning import PruningError

if TYPE_CHECKING:  # torch loads inside the fit
    from bgnet.nets.model import BgNet

__all__ = ["PruningFitConfig", "fit_pruning_net", "fit_to_checkpoint", "pruning_rows"]


@dataclass(frozen=True)
class PruningFitConfig:
    """How a pruning net is made: how many positions, its width, the fit."""

    positions: int = 200_000
    """Self-play positions; each gives every play of one random roll (about 16 rows a position)."""
    hidden: tuple[int, ...] = (64,)
    """Hidden widths of the small net (features version 1)."""
    epochs: int = 12
    """Passes over the rows; the learning rate halves every quarter of them."""
    lr: float = 1e-3
    minibatch: int = 512
    seed: int = 1

    def __post_init__(self) -> None:
        if self.positions < 1 or self.epochs < 1 or self.minibatch < 1 or not self.hidden or min(self.hidden) < 1:
            raise PruningError(f"a pruning fit needs positive positions, epochs, minibatch and widths, got {self}")
        if not self.lr > 0.0:
            raise PruningError(f"the learning rate must be positive, got {self.lr}")


def pruning_rows(probs_fn: ProbsFn, positions: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(afterstates, offsets, probs)``: every play of one random roll for each of ``positions`` self-play
    positions, turned round (the replying side on roll), with ``probs_fn``'s 0-ply chances of each."""
    from bgnet.trainer.round_positions import collect_positions

    boards = collect_positions(probs_fn, positions, seed)
    dice = np.random.default_rng([seed, 0xD1CE]).integers(1, 7, (len(boards), 2)).astype(np.int8)
    after, _steps, _n, offsets = generate_plays(boards, dice)
    cand = np.ascontiguousarray(swap_sides_batch(after), np.int8)
    return cand, np.asarray(offsets, np.int64), np.asarray(probs_fn(cand), np.float32)


def fit_pruning_net(boards: np.ndarray, probs: np.ndarray, cfg: PruningFitConfig, log: bool = False) -> "BgNet":
    """A ``BgNet`` (features version 1, ``cfg.hidden``) fitted to ``probs`` of ``boards`` by squared error."""
    import torch

    from bgnet.nets.model import BgNet, ModelConfig
    from bgnet.trainer.learner import fit, fit_inputs

    torch.manual_seed(cfg.seed)
    net = BgNet(ModelConfig.for_features(cfg.hidden, "relu", 1))
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    rng = np.random.default_rng([cfg.seed, 0xF17])
    inputs = fit_inputs(net, boards, torch.device("cpu"))  # encoded once for every epoch
    for epoch in range(cfg.epochs):
        for group in optimizer.param_groups:
            group["lr"] = cfg.lr * 0.5 ** (epoch // max(1, cfg.epochs // 4))
        mse = fit(net, optimizer, boards, probs, cfg.minibatch, 1, rng, torch.device("cpu"), inputs=inputs)
        if log:
            print(f"epoch {epoch + 1}/{cfg.epochs}: squared error {mse:.5f}", file=sys.stderr, flush=True)
    return net


def fit_to_checkpoint(checkpoint: str | os.PathLike[str], out: str | os.PathLike[str], cfg: PruningFitConfig,
                      log: bool = False) -> Path:
    """Fit the pruning net of ``checkpoint`` (its 0-ply values are the targets) and write it to ``out``, stamped with
    the checkpoint's SHA-256."""
    from bgnet.nets.fastnet import load_numpy_net
    from bgnet.nets.pruning import write_pruning_net

    path = Path(checkpoint)
    teacher = load_numpy_net(path)
    t0 = time.perf_counter()
    cand, _offsets, probs = pruning_rows(teacher.probs_of_boards, cfg.positions, cfg.seed)
    if log:
        print(f"{len(cand)} rows from {cfg.positions} positions in {time.perf_counter() - t0:.0f} s",
              file=sys.stderr, flush=True)
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: the same seed gives the same net on any machine
    try:
        net = fit_pruning_net(cand, probs, cfg, log=log)
    finally:
        torch.set_num_threads(threads)
    return write_pruning_net(out, net.numpy_layers(), net.config.activation, path)


if __name__ == "__main__":
    from bgnet.cli.pruning import main

    sys.exit(main())
