"""A round's labels: the net's own n-ply search or rollouts of its positions, and the files that keep them.

``labels_NNN.npz`` holds round NNN's boards and targets, saved before the fit so an
interrupted round never labels twice; with ``label_chunk`` the positions
(``positions_NNN.npz``) and each part's targets (``labels_NNN_part_KKK.npz``) are
saved as they are made and removed once the whole file is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from bgnet.core.atomic import atomic_write
from bgnet.core.protocols import ProbsFn
from bgnet.nets.model import BgNet, NetSet
from bgnet.play.search import ROLLS
from bgnet.play.search_torch import label_boards_torch
from bgnet.trainer import labels as teacher
from bgnet.sim.backends import LocalBackend
from bgnet.trainer.round_config import LABELS, RoundsConfig, RoundsError, check_label_top, round_seed
from bgnet.trainer.selfplay import resolve_device


def label_positions(probs_fn: ProbsFn, boards: np.ndarray, label: str, seed: int, trials: int = 36,
                    workers: int = 1, top: int = 0, model: BgNet | NetSet | None = None,
                    device: str = "cpu", kernels: str = "torch") -> np.ndarray:
    """Targets (N, 5) for ``boards``: the net's 1-ply or 2-ply search (its last level among pubeval's best
    ``top`` plays of each roll when ``top`` > 0), or its rollouts, in ``workers`` processes. With ``device``
    other than "cpu" the search runs there on ``model`` (the net behind ``probs_fn``;
    ``bgnet.play.search_torch``, its features and bear-off lookups through ``kernels``)."""
    if label not in LABELS:
        raise RoundsError(f"label {label!r} is not one of {', '.join(LABELS)}")
    check_label_top(label, top)
    if device != "cpu":
        if label == "rollout" or model is None:
            raise RoundsError(f"--device {device} computes the search labels of a net only: --label ply1 or ply2")
        return label_boards_torch(model, boards, int(label[-1]), resolve_device(device), top=top,
                                  kernels=kernels).astype(np.float32)
    backend = LocalBackend(workers) if workers > 1 else None
    if label == "rollout":
        _, probs, _ = teacher.label_positions(probs_fn, boards, trials=trials, seed=seed, backend=backend)
    else:
        ply = int(label[-1])
        chunk = 2048 // len(ROLLS) ** (ply - 1)  # each ply multiplies the boards searched by the 21 rolls: bound memory
        _, probs, _ = teacher.label_positions(probs_fn, boards, ply=ply, batch=chunk, backend=backend,
                                              last_level_top=top)
    return np.asarray(probs, np.float32)


def save_npz(path: Path, **arrays: np.ndarray) -> None:
    """Write ``arrays`` to ``path`` atomically (a temporary file renamed into place)."""
    with atomic_write(path) as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]  # numpy's stub matches **arrays against allow_pickle


def round_labels(out_dir: Path, r: int, cfg: RoundsConfig, fn: ProbsFn, positions: Callable[[], np.ndarray],
                 model: BgNet | NetSet | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Round ``r``'s (boards, targets): read from its labels file, or collected, labelled and saved first.
    ``model`` is the net behind ``fn``, which labels on ``cfg.device`` when that is not the CPU.

    With ``cfg.label_chunk`` the positions are saved first (``positions_NNN.npz``) and labelled part by part,
    each part's seed hashed from the round's and the part number, so a resumed round labels only the parts missing.
    """
    labels_path = out_dir / f"labels_{r:03d}.npz"
    if labels_path.is_file():
        with np.load(labels_path, allow_pickle=False) as data:
            return data["boards"], data["targets"]
    seed = round_seed(cfg.seed, r, 1)
    if cfg.label_chunk <= 0:
        boards = positions()
        targets = label_positions(fn, boards, cfg.label, seed, cfg.rollout_trials, cfg.workers, cfg.label_top,
                                  model, cfg.device, cfg.device_kernels)
    else:
        boards_path = out_dir / f"positions_{r:03d}.npz"
        if boards_path.is_file():
            with np.load(boards_path, allow_pickle=False) as data:
                boards = data["boards"]
        else:
            boards = positions()
            save_npz(boards_path, boards=boards)
        parts = []
        for k, s in enumerate(range(0, len(boards), cfg.label_chunk)):
            part_path = out_dir / f"labels_{r:03d}_part_{k:03d}.npz"
            if part_path.is_file():
                with np.load(part_path, allow_pickle=False) as data:
                    parts.append(data["targets"])
                continue
            part_seed = int(np.random.SeedSequence([seed, k]).generate_state(1)[0])
            parts.append(label_positions(fn, boards[s:s + cfg.label_chunk], cfg.label, part_seed, cfg.rollout_trials,
                                         cfg.workers, cfg.label_top, model, cfg.device, cfg.device_kernels))
            save_npz(part_path, targets=parts[-1])
        targets = np.concatenate(parts)
    save_npz(labels_path, boards=boards, targets=targets)
    for stale in [out_dir / f"positions_{r:03d}.npz", *out_dir.glob(f"labels_{r:03d}_part_*.npz")]:
        stale.unlink(missing_ok=True)
    return boards, targets


def window_labels(out_dir: Path, r: int, window: int, boards: np.ndarray,
                  targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Round ``r``'s (boards, targets) with those of the ``window - 1`` rounds before it appended (oldest first).

    Each labels file holds whole groups of siblings, so the concatenation keeps them whole."""
    older = [out_dir / f"labels_{k:03d}.npz" for k in range(max(1, r - window + 1), r)]
    if not older:
        return boards, targets
    all_boards, all_targets = [], []
    for path in older:
        with np.load(path, allow_pickle=False) as data:
            all_boards.append(data["boards"])
            all_targets.append(data["targets"])
    return np.concatenate([*all_boards, boards]), np.concatenate([*all_targets, targets])


def read_labels_file(path: str, board_shape: tuple[int, ...], target_shape: tuple[int, ...],
                     group: int) -> tuple[np.ndarray, np.ndarray]:
    """(boards, targets) of a rounds run's labels file, checked to match a run's labels (shapes, whole groups)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            boards, targets = data["boards"], data["targets"]
    except (OSError, KeyError, ValueError) as exc:
        raise RoundsError(f"{path!r} is not a labels file of a rounds run ({exc})") from None
    if (boards.shape[1:] != board_shape or targets.shape[1:] != target_shape or len(boards) != len(targets)
            or len(boards) % group):
        raise RoundsError(f"{path!r} does not hold labels like the run's (boards {board_shape}, targets "
                          f"{target_shape}, whole groups of {group})")
    return boards, targets
