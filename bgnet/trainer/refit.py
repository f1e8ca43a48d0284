"""A round of a finished rounds run fitted again: another start, window, width or more labels, nothing relabelled."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from bgnet.nets.model import BgNet, net_from_checkpoint, read_checkpoint
from bgnet.trainer.round_config import RoundsConfig, RoundsError, round_seed
from bgnet.trainer.round_fit import fit_copy, student_widths
from bgnet.trainer.round_labels import read_labels_file, window_labels


def run_config(run: str | os.PathLike[str]) -> RoundsConfig:
    """The settings of the rounds run in folder ``run`` (settings added since it began take their defaults)."""
    state_path = Path(run) / "state.json"
    if not state_path.is_file():
        raise RoundsError(f"{str(run)!r} is not the folder of a rounds run (it has no state.json)")
    try:
        return RoundsConfig(**{**asdict(RoundsConfig()), **json.loads(state_path.read_text())["config"]})
    except (ValueError, KeyError, TypeError) as exc:
        raise RoundsError(f"{str(state_path)!r} is not a rounds run's state ({exc!r})") from None


def refit(run: str | os.PathLike[str], start: str, r: int, fit_window: int | None = None,
          hidden: str | None = None, with_labels: tuple[str, ...] = ()) -> tuple[BgNet, float, int]:
    """Round ``r`` of the rounds run in folder ``run`` fitted again: ``start``'s net fitted to the labels of rounds
    r - fit_window + 1 to r, with the run's settings (``hidden`` and ``fit_window`` may differ) and round r's fit
    seed, as ``run_rounds`` would have; (net, last epoch's squared error, labels fitted). Labels already made are
    reused, so a wider net or window is tried without labelling again; ``with_labels`` are other runs' labels
    files, fitted too (put before the window's, in the order given)."""
    run_dir = Path(run)
    cfg = run_config(run)
    if cfg.kind != "all":
        raise RoundsError("refit works with runs of --kind all only")
    if fit_window is not None:
        cfg.fit_window = fit_window
    if hidden is not None:
        cfg.hidden = hidden
    if cfg.fit_window < 1:
        raise RoundsError("--fit-window must be at least 1")
    paths = [run_dir / f"labels_{k:03d}.npz" for k in range(max(1, r - cfg.fit_window + 1), r + 1)]
    missing = [p.name for p in paths if not p.is_file()]
    if r < 1 or missing:
        raise RoundsError(f"{str(run)!r} has no labels for round {r}" + (f" ({', '.join(missing)})" if missing else ""))
    net = net_from_checkpoint(read_checkpoint(start), f"checkpoint {start!r}")
    student_widths(cfg, net.config.hidden)
    with np.load(paths[-1], allow_pickle=False) as data:
        boards, targets = data["boards"], data["targets"]
    boards, targets = window_labels(run_dir, r, cfg.fit_window, boards, targets)
    if with_labels:
        extra = [read_labels_file(path, boards.shape[1:], targets.shape[1:], cfg.group_size) for path in with_labels]
        boards = np.concatenate([*(b for b, _ in extra), boards])
        targets = np.concatenate([*(t for _, t in extra), targets])
    torch.set_num_threads(1)
    fitted, mse = fit_copy(net, boards, targets, cfg, round_seed(cfg.seed, r, 2))
    return fitted, mse, len(boards)
