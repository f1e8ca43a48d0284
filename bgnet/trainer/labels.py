"""The teacher: supervised training targets for many positions, from rollouts or n-ply search.

``label_positions`` rolls many positions out at once (their trials advancing
together through ``bgnet.sim.rollout_trials``) or evaluates them at n plies
(``evaluate_pruned``: a cheaper last level that values only pubeval's best plays of
each roll); ``save_targets`` writes them atomically and ``load_targets`` reads them
back. ``python -m bgnet.trainer.labels label IN.npz OUT.npz`` is the command
(``bgnet.cli.labels``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from bgnet.core.atomic import atomic_write
from bgnet.core.dice import counter_hash
from bgnet.core.protocols import ProbsFn
from bgnet.play.search import MONEY, evaluate_boards
from bgnet.sim.rollout_candidates import Candidate
from bgnet.sim.rollout_luck import roll_values
from bgnet.sim.rollout_settings import RolloutError, RolloutSettings
from bgnet.sim.rollout_stats import clamp_probs, trial_stats
from bgnet.sim.rollout_trials import BearoffFn, default_bearoff, rollout_chunk

if TYPE_CHECKING:
    from bgnet.sim.backends import Backend


@dataclass(frozen=True)
class Targets:
    """Supervised targets: boards (N, 26) int8, chances (N, 5) for each board's side on roll, standard errors."""

    boards: np.ndarray
    """(N, 26) int8, each seen from its side on roll."""
    probs: np.ndarray
    """(N, 5) float32 chances of each board's side on roll."""
    stderr: np.ndarray
    """(N, 5) float32 standard errors of ``probs`` (0 for n-ply evaluations)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """How they were made (``save_targets``' keywords, as text)."""


def label_positions(probs_fn: ProbsFn, boards: np.ndarray, *, trials: int = 0, ply: int = 0, seed: int = 0,
                    settings: RolloutSettings | None = None, bearoff_fn: BearoffFn | None | str = "auto",
                    batch: int = 4096, backend: Backend | None = None,
                    last_level_top: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Targets for many positions: ``(boards, probs (N, 5), stderr (N, 5))`` for each board's side on roll.

    ``trials > 0`` rolls every position out, the trials of up to ``batch // trials``
    positions advancing together (they share dice; each group hashes its own seed
    from ``seed`` and its first index); ``trials == 0`` evaluates at ``ply`` plies
    (stderr 0), the last level choosing among pubeval's best ``last_level_top`` plays of each roll when it
    is above 0 (``evaluate_pruned``). Only the caller's own net should make these targets. ``backend``
    (``bgnet.sim.backends``) runs the groups (or batches) elsewhere, the net sent once; the targets are the same.
    """
    boards = np.ascontiguousarray(boards, np.int8).reshape(-1, 26)
    n = len(boards)
    if trials <= 0:
        out = np.zeros((n, 5), np.float64)
        parts = [boards[s:s + batch] for s in range(0, n, batch)]
        evals = (backend.imap(_eval_task, parts, (probs_fn, ply, last_level_top)) if backend is not None
                 else (_eval_task((probs_fn, ply, last_level_top), part, 0) for part in parts))
        for s, ev in zip(range(0, n, batch), evals):
            out[s:s + batch] = ev
        return boards, out.astype(np.float32), np.zeros((n, 5), np.float32)
    base = settings or RolloutSettings()
    st = replace(base, trials=trials, ply=ply, chunk_size=trials)
    bo: BearoffFn | None = default_bearoff() if bearoff_fn == "auto" else bearoff_fn  # type: ignore[assignment]
    probs = np.zeros((n, 5), np.float64)
    stderr = np.zeros((n, 5), np.float64)
    per = max(1, batch // trials)  # positions whose trials advance together
    groups = [(s, boards[s:s + per], int(counter_hash(seed, 0x7EAC4E5, s)) & 0x7FFFFFFFFFFFFFFF)
              for s in range(0, n, per)]
    shared = (probs_fn, st, bo)
    labelled = (backend.imap(_label_task, groups, shared) if backend is not None
                else (_label_task(shared, g, 0) for g in groups))
    for (s, group, _gs), (p, se) in zip(groups, labelled):
        probs[s:s + len(group)] = p
        stderr[s:s + len(group)] = se
    return boards, probs.astype(np.float32), stderr.astype(np.float32)


def _eval_task(shared: tuple[Any, int, int], boards: np.ndarray, _seed: int) -> np.ndarray:
    """``bgnet.sim.backends`` chunk function: n-ply chances (N, 5) of a batch of boards."""
    probs_fn, ply, top = shared
    return evaluate_pruned(probs_fn, boards, ply, top) if top > 0 else evaluate_boards(probs_fn, boards, ply)


def evaluate_pruned(probs_fn: ProbsFn, boards: np.ndarray, ply: int, top: int) -> np.ndarray:
    """n-ply chances (N, 5) for each board's side on roll, as ``bgnet.play.search.evaluate_boards`` (money play) but
    with the last level's play for each roll chosen by the net among pubeval's best ``top`` plays only.

    The upper levels still value every play. At 2 plies with ``top`` 10 this costs about a quarter of the full
    search (the last level is 21 times the rest) and differs from it by about 0.005 equity (RMS, the release's
    candidates): cheaper labels from a deeper search. Finished games get their exact value.
    """
    if ply < 1 or top < 1:
        raise RolloutError(f"evaluate_pruned needs ply >= 1 and top >= 1, got ply {ply}, top {top}")

    def pruned_1ply(live: np.ndarray) -> np.ndarray:
        n = len(live)
        return roll_values(probs_fn, live, np.zeros(n, np.int64), np.ones(n, bool), top, 0, MONEY, MONEY)[1]

    return evaluate_boards(probs_fn, boards, ply, last_level=pruned_1ply)


def _label_task(shared: tuple[Any, ...], job: tuple[int, np.ndarray, int], _seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``bgnet.sim.backends`` chunk function: one group of positions rolled out together; (means, standard errors)."""
    probs_fn, st, bo = shared
    s, group, group_seed = job
    cands = [Candidate(str(s + i), tuple(int(x) for x in b), True) for i, b in enumerate(group)]
    ch = rollout_chunk(probs_fn, cands, 0, st.trials, st, group_seed, None, bo)
    probs = np.zeros((len(group), 5), np.float64)
    stderr = np.zeros((len(group), 5), np.float64)
    for i in range(len(group)):
        mean, se, _cov = trial_stats(ch.values[i])
        probs[i] = np.asarray(clamp_probs(mean).as_list())
        stderr[i] = se
    return probs, stderr


U16_SCALE = 65535
"""Chances stored compactly as uint16 (``quantize_probs``) are steps of 1 / U16_SCALE."""


def quantize_probs(probs: np.ndarray) -> np.ndarray:
    """Chances (N, 5) in [0, 1] as uint16 steps of 1 / ``U16_SCALE``: half the bytes of float32, an error below 8e-6
    (far under a label's own)."""
    return np.rint(np.clip(probs, 0.0, 1.0) * U16_SCALE).astype(np.uint16)


def dequantize_probs(steps: np.ndarray) -> np.ndarray:
    """The float32 chances of ``quantize_probs``' steps."""
    return (np.asarray(steps).astype(np.float64) / U16_SCALE).astype(np.float32)


def save_targets(path: str | os.PathLike[str], boards: np.ndarray, probs: np.ndarray, stderr: np.ndarray,
                 **meta: Any) -> None:
    """Write targets to ``path`` (.npz) atomically: a temporary file in the same folder, then a rename."""
    with atomic_write(path, parents=True) as fh:
        np.savez(fh, boards=np.asarray(boards, np.int8), probs=np.asarray(probs, np.float32),
                 stderr=np.asarray(stderr, np.float32), meta=np.array([f"{k}={v}" for k, v in sorted(meta.items())]))


def load_targets(path: str | os.PathLike[str]) -> Targets:
    """Targets written by ``save_targets`` (read with ``allow_pickle=False``)."""
    with np.load(os.fspath(path), allow_pickle=False) as data:
        meta = dict(str(x).split("=", 1) for x in data["meta"]) if "meta" in data else {}
        return Targets(data["boards"].astype(np.int8), data["probs"].astype(np.float32),
                       data["stderr"].astype(np.float32), meta)


if __name__ == "__main__":
    import sys

    from bgnet.cli.labels import main

    sys.exit(main())
