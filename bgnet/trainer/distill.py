"""Distillation: a fresh, narrower net fitted to a release's own search labels, to replace it at less cost.

    python -m bgnet.trainer.labels label CANDIDATES.npz LABELS.npz --ply 1 --prune   # the release's 1-ply search
    python -m bgnet.trainer.distill OUT.pt LABELS.npz [MORE.npz ...] [--hidden 384,128] [--epochs 12] [--seed 1]

A release's cost a position is its first layer's width times its non-zero inputs (the
fused kernel, ``bgnet.nets._net_kernels``): a net half as wide costs about half. The
student starts from fresh weights, or from a release shrunk to its widths (``--start``:
``shrink``), and learns the labels' chances (squared error summed over the five outputs,
Adam with a cosine schedule to zero): labels of the release's own
searches (``bgnet.trainer.labels``, the rounds pipeline, ``bench/device_labels.py`` on a
GPU), never another program's. A held-out slice measures the fit. The same seed and
files give the same net. docs/TRAINING.md's ablation table has what such students
measured against the release.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from bgnet.core.errors import BgnetError
from bgnet.features.registry import FEATURE_VERSIONS
from bgnet.trainer.labels import dequantize_probs

if TYPE_CHECKING:  # torch loads inside the fit
    from bgnet.nets.model import BgNet

__all__ = ["SHRINK_SAMPLE", "DistillConfig", "DistillError", "distill", "fit_student", "holdout_split", "read_labels",
           "shrink"]

SHRINK_SAMPLE = 60_000
"""Labelled boards whose activations rank a release's hidden units when it is shrunk (``shrink``)."""


class DistillError(BgnetError):
    """Distillation that cannot run as asked (no labels, a file that holds none, widths below 1)."""


@dataclass(frozen=True)
class DistillConfig:
    """The student's shape and its fit."""

    hidden: tuple[int, ...] = (384, 128)
    """Hidden widths (ReLU), usually narrower than the release's 768-192."""
    features: int = 2
    """Feature version of the student's inputs (``bgnet.features.registry``): 1 is the cheapest to encode."""
    epochs: int = 12
    lr: float = 1e-3
    """Adam's learning rate at the start; a cosine schedule takes it to 0 over the whole fit."""
    minibatch: int = 1024
    holdout: int = 50_000
    """Labels kept out of the fit to measure it (at most a tenth of them)."""
    seed: int = 1
    threads: int = 1
    """Torch threads of the fit."""
    group: int = 1
    """Labels come in consecutive groups of this many siblings (the candidate plays of one roll:
    ``rounds candidates --grouped``), shuffled and held out whole."""
    rank_weight: float = 0.0
    """Weight of the sibling-ranking term (``bgnet.trainer.learner.sibling_rank_loss``) with groups."""
    start: str = ""
    """A checkpoint (a release) to shrink to ``hidden`` and start from (``shrink``); empty: fresh weights."""

    def __post_init__(self) -> None:
        if (not self.hidden or min(self.hidden) < 1 or self.epochs < 1 or self.minibatch < 1 or self.threads < 1
                or self.group < 1):
            raise DistillError(f"a student needs positive widths, epochs, minibatch, threads and group, got {self}")
        if self.features not in FEATURE_VERSIONS:
            raise DistillError(f"features version {self.features} is not one of {FEATURE_VERSIONS}")
        if not self.lr > 0.0 or self.holdout < 0 or self.rank_weight < 0.0:
            raise DistillError(f"the learning rate must be positive, the holdout and rank weight not negative, "
                               f"got {self}")
        if self.minibatch % self.group or (self.rank_weight and self.group < 2):
            raise DistillError(f"the minibatch ({self.minibatch}) must hold whole groups ({self.group}), and a rank "
                               "weight needs groups of two or more")


def read_labels(paths: Sequence[str | os.PathLike[str]], group: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(boards (N, 26) int8, chances (N, 5) float32) of label files, in order: each holds ``boards`` and
    ``targets`` (a rounds run), ``probs`` as float (``bgnet.trainer.labels.save_targets``) or as uint16
    (``quantize_probs``: ``bench/device_labels.py``); each file holds whole groups of ``group`` siblings."""
    if not paths:
        raise DistillError("distillation needs at least one labels file")
    all_boards, all_targets = [], []
    for path in paths:
        try:
            with np.load(os.fspath(path), allow_pickle=False) as data:
                boards = np.asarray(data["boards"])
                key = "targets" if "targets" in data else "probs"
                raw = np.asarray(data[key])
        except (OSError, KeyError, ValueError) as exc:
            raise DistillError(f"{str(path)!r} is not a labels file with boards and targets or probs "
                               f"({type(exc).__name__})") from None
        if boards.ndim != 2 or boards.shape[1] != 26 or raw.shape != (len(boards), 5) or len(boards) % group:
            raise DistillError(f"{str(path)!r} holds boards {boards.shape} and {key} {raw.shape}; labels are "
                               f"(N, 26) boards with (N, 5) chances, N a multiple of the group ({group})")
        chances = dequantize_probs(raw) if raw.dtype == np.uint16 else raw.astype(np.float64)
        if not np.isfinite(chances).all() or chances.min() < 0.0 or chances.max() > 1.0:
            raise DistillError(f"{str(path)!r} has {key} outside [0, 1]")
        all_boards.append(boards.astype(np.int8))
        all_targets.append(chances.astype(np.float32))
    return np.concatenate(all_boards), np.concatenate(all_targets)


def holdout_split(n: int, group: int, holdout: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(held-out rows, training rows) of ``n`` rows in consecutive groups of ``group``: whole groups shuffled, the
    first of them (up to ``holdout`` rows, at most a tenth) held out; every row in one of the two."""
    perm = (rng.permutation(n // group)[:, None] * group + np.arange(group)).ravel()
    held = min(holdout, n // 10) // group * group
    return perm[:held], perm[held:]


def shrink(release: BgNet, hidden: Sequence[int], inputs: np.ndarray) -> BgNet:
    """``release`` cut to the hidden widths ``hidden`` (one per hidden layer, none wider than the release's): in each
    layer the units whose outputs on ``inputs`` (the encoded boards, (N, features)) vary most times the size of
    their outgoing weights are kept; each dropped unit's mean output is folded into the next layer's bias, so that
    the cut net starts near the release. A width equal to the release's keeps that layer as it is."""
    import torch

    from bgnet.nets.model import BgNet, ModelConfig

    old = release.linears()
    if len(hidden) != len(old) - 1 or any(h < 1 or h > o.out_features for h, o in zip(hidden, old)):
        raise DistillError(f"a release with hidden widths {[o.out_features for o in old[:-1]]} cannot be shrunk to "
                           f"{list(hidden)}: give one width per hidden layer, none wider than the release's")
    if release.config.activation != "relu":
        raise DistillError("only a ReLU release can be shrunk (a dropped unit's mean output is folded into a bias)")
    cfg = release.config
    net = BgNet(ModelConfig(hidden=tuple(hidden), activation="relu", num_features=cfg.num_features,
                            feature_version=cfg.feature_version))
    new = net.linears()
    with torch.no_grad():
        x = torch.from_numpy(np.ascontiguousarray(inputs, np.float32))
        weight, bias = old[0].weight.clone(), old[0].bias.clone()  # the next layer to cut, its inputs already cut
        for li, width in enumerate(hidden):
            h = torch.relu(x @ weight.T + bias)
            nxt = old[li + 1]
            keep = torch.argsort(h.std(0) * nxt.weight.norm(dim=0), descending=True, stable=True)[:width]
            keep = keep.sort().values
            dropped = torch.ones(h.shape[1], dtype=torch.bool)
            dropped[keep] = False
            new[li].weight.copy_(weight[keep])
            new[li].bias.copy_(bias[keep])
            bias = nxt.bias + nxt.weight[:, dropped] @ h[:, dropped].mean(0)
            weight = nxt.weight[:, keep]
            x = h[:, keep]
        new[-1].weight.copy_(weight)
        new[-1].bias.copy_(bias)
    return net


def fit_student(boards: np.ndarray, targets: np.ndarray, cfg: DistillConfig,
                log: bool = False) -> tuple[BgNet, float]:
    """A net of ``cfg.hidden`` (fresh, or ``cfg.start`` shrunk: ``shrink``) fitted to (boards, targets); (net,
    held-out squared error summed over the five chances, NaN without a holdout). The rows are shuffled by
    ``cfg.seed`` before the holdout is cut."""
    import torch

    from bgnet.features.registry import encode
    from bgnet.nets.model import BgNet, ModelConfig
    from bgnet.trainer.learner import fit, fit_inputs

    n, g = len(boards), cfg.group
    if n < 2 * g or len(targets) != n or n % g:
        raise DistillError(f"a student needs at least two groups of {g} labels, whole, with one target each (got "
                           f"{n} boards and {len(targets)} targets)")
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    hold, train = holdout_split(n, g, cfg.holdout, rng)
    if cfg.start:
        from bgnet.nets.model import load_net

        release = load_net(cfg.start)
        if release.config.feature_version != cfg.features:
            raise DistillError(f"{cfg.start!r} reads features version {release.config.feature_version}, not "
                               f"--features {cfg.features}")
        sample = boards[train[:SHRINK_SAMPLE]]
        net = shrink(release, cfg.hidden, encode(sample, version=cfg.features))
    else:
        net = BgNet(ModelConfig.for_features(cfg.hidden, "relu", cfg.features))
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    steps = cfg.epochs * -(-len(train) // cfg.minibatch)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(steps, 1))
    x_hold = torch.from_numpy(encode(boards[hold], version=cfg.features))
    y_hold = torch.from_numpy(np.ascontiguousarray(targets[hold], np.float32))
    train_boards, train_targets = boards[train], targets[train]  # gathered once, not every epoch
    train_inputs = fit_inputs(net, train_boards, torch.device("cpu"))  # and encoded once
    held_mse = float("nan")
    t0 = time.perf_counter()
    for epoch in range(cfg.epochs):
        mse = fit(net, optimizer, train_boards, train_targets, cfg.minibatch, 1, rng, torch.device("cpu"),
                  scheduler=scheduler, group=g, rank_weight=cfg.rank_weight, inputs=train_inputs)
        if len(hold):
            net.eval()
            with torch.no_grad():
                held_mse = float(((net(x_hold) - y_hold) ** 2).sum(1).mean())
        if log:
            print(f"epoch {epoch + 1}/{cfg.epochs}: train {mse:.6f}, held out {held_mse:.6f}, "
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    net.eval()
    return net, held_mse


def distill(paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], cfg: DistillConfig,
            log: bool = False) -> float:
    """Fit a student to the label files ``paths`` and write it as a checkpoint at ``out`` (atomically), with how
    it was made; the held-out squared error."""
    from bgnet.nets.model import save_checkpoint

    boards, targets = read_labels(paths, cfg.group)
    net, held_mse = fit_student(boards, targets, cfg, log)
    files = ", ".join(Path(p).name for p in paths)
    save_checkpoint(out, net, distill={**asdict(cfg), "hidden": list(cfg.hidden)}, labels=len(boards),
                    held_out_mse=held_mse,
                    recipe=f"a {'-'.join(map(str, cfg.hidden))} net "
                           f"({'shrunk from ' + Path(cfg.start).name if cfg.start else 'fresh'}) distilled from "
                           f"{len(boards)} labels ({files}) by python -m bgnet.trainer.distill")
    return held_mse


if __name__ == "__main__":
    from bgnet.cli.distill import main

    sys.exit(main())
