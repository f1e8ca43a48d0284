"""The settings of a rounds run (``bgnet.trainer.rounds``), its stored progress, and the checks made before it labels.

A run's settings are stored in its ``state.json``; a resumed run must use the same
ones, except ``rounds``, ``workers`` and ``fit_window`` (``FREE_SETTINGS``). Every
round's seeds come from ``seed`` and the round number (``round_seed``), so the same
settings give the same rounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bgnet.core.device_kernels import kernels_problem
from bgnet.core.errors import BgnetError
from bgnet.features.encoding import KINDS
from bgnet.nets.bf16net import check_precision
from bgnet.trainer.learner import check_loss
from bgnet.trainer.training_run import resolve_device

LABELS = ("ply1", "ply2", "rollout")
"""How a round labels its positions: the net's own 1-ply or 2-ply search, or its rollouts."""
ROUND_KINDS = ("all", *KINDS)
"""The nets a round may fit: one net for every position, or one kind's net of a NetSet."""
FREE_SETTINGS = ("rounds", "workers", "fit_window", "device", "device_kernels", "precision")
"""Settings that may change between sittings of one run: rounds, workers and device_kernels change nothing a round
computes, fit_window only the fits of rounds still to run, device the search labels by float rounding only,
precision them by about 0.0005."""


class RoundsError(BgnetError):
    """A rounds run that cannot go on as asked: bad settings, another run's folder, labels that are not a run's."""


@dataclass
class RoundsConfig:
    """The knobs of a rounds run (stored in state.json; a resumed run must use the same)."""

    rounds: int = 4
    positions: int = 20_000
    label: str = "ply1"
    epochs: int = 3
    lr: float = 1e-4
    minibatch: int = 256
    exploration: float = 0.05
    batch_games: int = 256
    duel_pairs: int = 2000
    keep: str = "mean"
    seed: int = 1
    rollout_trials: int = 36
    label_chunk: int = 0
    """Label a round's positions in parts of this many, each saved as it is done (``labels_NNN_part_KKK.npz``),
    so a long labelling (rollouts) interrupted loses at most one part; 0: all at once."""
    workers: int = 1
    """Processes that label at once (``bgnet.sim.backends.LocalBackend``); the labels do not depend on it."""
    hidden: str = ""
    """Hidden widths of the fitted net, e.g. "512,256": the copy is widened to them (Net2Net,
    ``bgnet.nets.model.widen_hidden``) before it is fitted, so that it can follow its teacher's search more
    closely; empty: the current net's widths. Later rounds keep the wider net."""
    candidates: int = 0
    """0: label the self-play positions themselves. k > 0: label instead the afterstates of each self-play
    position's k best plays at 0-ply for a random roll (``candidate_positions``), the positions a 0-ply
    move must tell apart."""
    schedule: str = "constant"
    """The fit's learning rate: "constant" (``lr`` throughout) or "cosine" (from ``lr`` down to 0 over the
    fit's steps)."""
    rank_weight: float = 0.0
    """0: fit the candidates' labels by squared error alone. w > 0 (needs ``candidates`` of 2 or more): keep
    each position's k candidates together (``candidate_positions(grouped=True)``: ``positions`` // k whole
    groups) and add w times the error of each candidate's equity relative to its siblings'
    (``bgnet.trainer.learner.sibling_rank_loss``), the part of the error that changes which play a 0-ply move picks."""
    label_top: int = 0
    """With ``label`` ply1 or ply2: 0 values every play of every level; k > 0 lets the last level choose each
    roll's play among pubeval's best k only (``bgnet.trainer.labels.evaluate_pruned``), about 4x cheaper at 2-ply with
    k = 10."""
    loss: str = "mse"
    """What the fit minimises (``bgnet.trainer.learner.LOSSES``): "mse", the squared error summed over the five
    chances, or "outcomes", the cross-entropy of the six results' distribution
    (``bgnet.trainer.learner.outcome_cross_entropy``)."""
    fit_window: int = 1
    """Fit round r on the labels of rounds r - fit_window + 1 to r (kept or dropped: a dropped round's labels
    came from the same current net), so the training set grows across rounds instead of being replaced; 1: the
    round's own labels only. With ``kind`` other than "all" it must be 1."""
    kind: str = "all"
    """"all": one net for every position; "contact", "crashed" or "race": the positions of that kind
    only, fitted into that kind's net of a NetSet (a copy of the contact net the first time)."""
    device: str = "cpu"
    """Where the search labels (``label`` ply1 or ply2, with any ``label_top``) are computed: "cpu", the numba search
    (``bgnet.play.search.evaluate_boards``), or "cuda" / "cuda:N", its torch twin in large device batches
    (``bgnet.play.search_torch``; the same values to float rounding). The fit and the duel stay on the CPU."""
    device_kernels: str = "torch"
    """With ``device`` cuda: the search's features and bear-off lookups as whole-batch torch ops ("torch") or each
    one Triton kernel ("fused", ``bgnet.core.device_kernels``; the same bits, so the same labels)."""
    precision: str = "float32"
    """The arithmetic of the net in the CPU search labels (``bgnet.nets.bf16net``): "float32", or "bfloat16", on
    CPUs with AMX about 1.6-2 times the labels a second, each within about 0.0005 equity (RMS) of float32's (``kind``
    all, ``device`` cpu). The positions, the fit and the duel stay float32."""

    @property
    def group_size(self) -> int:
        """Rows per group of siblings in a round's labels and fit: ``candidates`` with a rank weight, else 1."""
        return self.candidates if self.rank_weight > 0 else 1

    def check(self) -> None:
        """RoundsError (one sentence) for settings that cannot work, before anything is labelled."""
        if self.label not in LABELS:
            raise RoundsError(f"label {self.label!r} is not one of {', '.join(LABELS)}")
        if self.keep not in ("mean", "significant"):
            raise RoundsError("keep must be mean or significant")
        if self.kind not in ROUND_KINDS:
            raise RoundsError(f"kind {self.kind!r} is not one of {', '.join(ROUND_KINDS)}")
        if self.workers < 1 or self.label_chunk < 0:
            raise RoundsError("--workers must be at least 1 and --label-chunk 0 or more")
        check_label_top(self.label, self.label_top)
        if self.candidates < 0:
            raise RoundsError("--candidates must be 0 or more")
        if self.candidates and self.kind != "all":
            raise RoundsError("--candidates works with --kind all only")
        if self.rank_weight < 0 or (self.rank_weight > 0 and (self.candidates < 2 or self.minibatch % self.candidates)):
            raise RoundsError("--rank-weight must be 0, or above 0 with --candidates 2 or more that divides "
                              "--minibatch")
        if self.schedule not in ("constant", "cosine"):
            raise RoundsError(f"schedule {self.schedule!r} is not constant or cosine")
        check_loss(self.loss)  # before any labelling, not after it when the fit starts
        if self.fit_window < 1 or (self.fit_window > 1 and self.kind != "all"):
            raise RoundsError("--fit-window must be at least 1, and 1 with --kind")
        parse_widths(self.hidden)
        check_precision(self.precision)
        if self.precision != "float32" and (self.device != "cpu" or self.kind != "all" or self.label == "rollout"):
            raise RoundsError(f"--precision {self.precision} applies to the CPU search labels of --kind all: "
                              "--device cpu and --label ply1 or ply2")
        if self.device != "cpu":
            resolve_device(self.device)  # one sentence when this machine lacks it
            if self.label == "rollout":
                raise RoundsError(f"--device {self.device} computes the search labels only: --label ply1 or ply2")
        if self.device_kernels != "torch" and self.device == "cpu":
            raise RoundsError(f"--device-kernels {self.device_kernels} serves the search labels on a GPU: add "
                              "--device cuda")
        problem = kernels_problem(self.device_kernels, self.device)
        if problem is not None:
            raise RoundsError(problem)


@dataclass
class RoundResult:
    """One round's outcome as stored in state.json."""

    round: int
    positions: int
    label_seconds: float
    fit_seconds: float
    fit_mse: float
    duel_ppg: float
    duel_ci95: float
    kept: bool


@dataclass
class State:
    """Progress of a rounds run."""

    config: dict[str, Any]
    init: str
    done: list[dict[str, Any]] = field(default_factory=list)


def round_seed(seed: int, round_no: int, stream: int) -> int:
    """The seed of one stream (0 self-play, 1 labels, 2 fit, 3 duel, 4 candidate rolls) of one round."""
    return int(np.random.SeedSequence([seed, round_no, stream]).generate_state(1)[0])


def check_label_top(label: str, top: int) -> None:
    """RoundsError unless ``top`` (``--label-top``) is 0, or above 0 with a search label (ply1, ply2)."""
    if top < 0 or (top > 0 and label == "rollout"):
        raise RoundsError("--label-top must be 0, or above 0 with --label ply1 or ply2")


def parse_widths(text: str) -> tuple[int, ...]:
    """``--hidden`` as widths ("512,256" -> (512, 256)); () when empty; RoundsError for anything else."""
    if not text.strip():
        return ()
    try:
        widths = tuple(int(w) for w in text.split(","))
    except ValueError:
        raise RoundsError(f"--hidden {text!r} is not a list of widths such as 512,256") from None
    if any(w < 1 for w in widths):
        raise RoundsError(f"--hidden {text!r} has a width below 1")
    return widths
