"""Pruning nets: a small, cheap net that picks the few replies inside a search that the release then values.

A 1-ply or 2-ply search values every reply to every roll (about 8,000 positions for
one 2-ply play); only the best reply of each roll counts. The pruning net (features
version 1, one small hidden layer: about a tenth of the release's cost a position)
ranks each roll's replies, and the release values only its best ``keep`` of them,
plus every reply that ends the game or is a pure bear-off (those are exact and
cheap). GNU Backgammon prunes its deeper plies the same way. The pruning net is
fitted to one release's 0-ply values (``bgnet.trainer.pruning_fit``) and stamped
with that checkpoint's SHA-256, so it is never used with another net.

Each board is valued on its own by both nets, so a search's result still does not
depend on its batch, and the same search gives the same bits.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, TypeVar

import numpy as np

from bgnet.core import _game_kernels as gk
from bgnet.core.distinct import distinct_boards
from bgnet.core.errors import BgnetError
from bgnet.core.protocols import Evaluator, EvaluatorLike, as_evaluator
from bgnet.core.resources import shipped_pruning_nets, shipped_student_nets
from bgnet.nets import _pruning_kernels
from bgnet.nets.bearoff import DatabaseEvaluator, is_bearoff, with_database
from bgnet.nets.bf16net import with_precision
from bgnet.nets.companion import (COMPANION_FORMAT, CompanionError, load_companion_net, read_companion_net,
                                   write_companion_net)
from bgnet.nets.fastnet import KERNEL_LAYERS, NumpyNet, load_evaluator

__all__ = ["DEFAULT_KEEP", "DEFAULT_PLAY_KEEP", "PRUNING_FORMAT", "PrunedEvaluator", "PruningError", "kept_rows",
           "KERNEL_LAYERS", "load_exact_evaluator", "load_pruning_net", "load_student_net", "read_pruning_net",
           "with_pruning", "write_pruning_net"]

DEFAULT_KEEP = 5
"""Replies of each roll the release values after the pruning net has ranked them (docs/BENCHMARKS.md: pruned
search)."""
DEFAULT_PLAY_KEEP = 8
"""Plays of a 0-ply choice the release values after the pruning net has ranked them: more than a search's replies,
because each choice is played (keeping 5 lost about 0.007 points a game to the full 0-ply, keeping 8 none;
docs/BENCHMARKS.md: pruned 0-ply play)."""


class PruningError(BgnetError):
    """A pruning net that cannot be used or fitted as asked (a keep below 1, a fit without rows or epochs)."""


PRUNING_FORMAT = COMPANION_FORMAT
"""Version of the pruning net file's layout (a companion net's, ``bgnet.nets.companion``)."""


def write_pruning_net(out: str | os.PathLike[str], layers: list[tuple[np.ndarray, np.ndarray]], activation: str,
                      checkpoint: str | os.PathLike[str]) -> Path:
    """Write a pruning net (layers as (out, in) weights and biases, features version 1) stamped with the SHA-256 of
    the ``checkpoint`` it serves; written to a temporary file, then renamed."""
    try:
        return write_companion_net(out, layers, activation, checkpoint, "pruning", 1)
    except CompanionError as exc:
        raise PruningError(str(exc)) from exc


def read_pruning_net(path: str | os.PathLike[str]) -> tuple[NumpyNet, str] | None:
    """``(net, checkpoint digest)`` of a pruning net file, or None when it is missing, damaged or of another
    format."""
    return read_companion_net(path, "pruning")


def load_pruning_net(checkpoint: str | os.PathLike[str]) -> NumpyNet | None:
    """The shipped pruning net fitted to this exact checkpoint file, or None (another net has none)."""
    return load_companion_net(checkpoint, "pruning", shipped_pruning_nets())


def load_student_net(checkpoint: str | os.PathLike[str]) -> NumpyNet | None:
    """The shipped student distilled from this exact checkpoint file (``bgnet.nets.companion``), or None."""
    return load_companion_net(checkpoint, "student", shipped_student_nets())


def kept_rows(pruning: NumpyNet, boards: np.ndarray, offsets: np.ndarray, keep: int,
              values_of_probs: Callable[[np.ndarray], np.ndarray], per_row: bool = False) -> np.ndarray:
    """Sorted indices of the rows of ``boards`` kept for the full net. Each segment holds one roll's plays as
    afterstates turned round (the other side on roll); kept are each segment's best ``keep`` by ``values_of_probs``
    (the mover's value of chances) of the pruning net's chances, and every finished game and pure bear-off.
    ``values_of_probs`` is given the chances of each distinct board once, or with ``per_row`` those of every row in
    order (for values that weigh rows differently, as a match's scores do)."""
    boards = np.ascontiguousarray(boards, np.int8).reshape(-1, 26)
    offsets = np.asarray(offsets, np.int64)
    mask = (gk.terminal_codes(boards) != 0) | is_bearoff(boards)
    # A search's rolls reach the same boards by many paths: each distinct board is valued once by the net, and only
    # if a row of it must be ranked (segments of ``keep`` rows or fewer are kept whole).
    first, inverse = distinct_boards(boards)
    counts = np.diff(offsets)
    ranked = np.repeat(counts > keep, counts) & ~mask
    needed = np.zeros(len(first), bool)
    needed[inverse[ranked]] = True
    wanted = np.flatnonzero(needed)
    probs = np.zeros((len(first), 5), np.float64)
    if len(wanted):
        probs[wanted] = pruning.probs_of_boards(boards[first[wanted]])
    if per_row:
        values = np.asarray(values_of_probs(probs[inverse]), np.float64)
    else:
        values = np.asarray(values_of_probs(probs), np.float64)[inverse]  # rows not ranked: values never read
    _pruning_kernels.keep_top(values, offsets, np.int64(keep), mask)
    return np.flatnonzero(mask)


class PrunedEvaluator:
    """An Evaluator (the release's values, unchanged) that also carries its pruning net, for searches to use, and
    its student, when one ships, for values that need not be its own.

    ``probs_of_boards`` is the inner evaluator's; ``bgnet.play.search`` finds ``pruning``
    and ``keep`` and values only the kept replies inside its lookahead, and the best ``play_keep``
    plays of a 0-ply choice (``bgnet.play.search.play_values``). ``student`` (an Evaluator, exact at
    bear-offs like the inner one, or None) values a rollout's luck (``bgnet.sim.rollout_luck``).
    """

    def __init__(self, inner: EvaluatorLike, pruning: NumpyNet, keep: int = DEFAULT_KEEP,
                 play_keep: int = DEFAULT_PLAY_KEEP, student: EvaluatorLike | None = None) -> None:
        for name, value in (("keep", keep), ("play_keep", play_keep)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise PruningError(f"a pruned search keeps at least one reply a roll, got {name}={value!r}")
        self.inner: Evaluator = as_evaluator(inner)
        self.pruning = pruning
        self.keep = int(keep)
        self.play_keep = int(play_keep)
        self.student: Evaluator | None = None if student is None else as_evaluator(student)

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        """The inner evaluator's chances (N, 5) of boards, each for its side on roll."""
        return self.inner.probs_of_boards(boards)

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        return self.probs_of_boards(boards)

    def __repr__(self) -> str:
        student = "" if self.student is None else ", student"
        return f"pruned({self.inner!r}, keep={self.keep}, play_keep={self.play_keep}{student})"


E = TypeVar("E", bound=EvaluatorLike)


def with_pruning(evaluator: E, checkpoint: str | os.PathLike[str], keep: int = DEFAULT_KEEP,
                 precision: str = "float32") -> E | PrunedEvaluator:
    """``evaluator`` with the pruning net (and the student, when one ships) of ``checkpoint`` when one ships for that
    exact file, else itself; ``keep`` 0 turns pruning off. ``precision`` is the student's arithmetic
    (``bgnet.nets.bf16net``: it values only a rollout's luck, whose mean is zero whatever net values it); the
    pruning net, which decides which plays are valued, stays float32."""
    pruning = load_pruning_net(checkpoint) if keep else None
    if pruning is None:
        return evaluator
    student = load_student_net(checkpoint)
    return PrunedEvaluator(evaluator, pruning, keep,
                           student=None if student is None else with_database(with_precision(student, precision)))


def load_exact_evaluator(checkpoint: str | os.PathLike[str], precision: str = "float32") -> DatabaseEvaluator:
    """The net of ``checkpoint`` as labels, rankers and agents value boards (before any pruning): its nets by kind of
    position (``bgnet.nets.fastnet.load_evaluator``), in ``precision`` (``bgnet.nets.bf16net``), with exact answers
    for pure bear-offs."""
    return with_database(with_precision(load_evaluator(checkpoint), precision))
