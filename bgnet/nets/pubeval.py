"""Tesauro's pubeval: the public-domain linear evaluator used as a benchmark opponent.

The score rates an afterstate: a board in bgnet's layout (see ``bgnet.core.position``)
seen from the side that has just moved, whose checkers are still positive.
Higher is better for that side; a player picks the legal play whose afterstate
scores highest. Scores have no units and no probabilistic meaning.

Two 122-weight vectors exist, one for contact positions and one for races; the
weights are published data, carried in ``bgnet/data/pubeval_weights.json``.
Tesauro's instructions (and gnubg) choose the vector from the position *before*
the move; ``pubeval_scores`` decides per afterstate unless a ``race`` flag is
given, so a move chooser should pass ``race=position.is_race()`` to rank all
plays on one scale and match gnubg's pubeval player. Per row, a race means no
contact: every checker of mine (bar included) has passed every opposing checker
(his bar included), as ``bgnet.core.race`` decides.

Inputs, per board location (points 24 down to 1, five each): opponent blot,
one checker of mine, at least two, exactly three, and ``(n - 3) / 2`` for
``n >= 4``; then the opponent's bar count / 2 and my borne-off count / 15.
My own bar is not an input.
"""

from __future__ import annotations

import functools
import json

import numba
import numpy as np

from bgnet.core.errors import BgnetError
from bgnet.core.position import CHECKERS, NUM_SLOTS, Position
from bgnet.core.race import race_scan
from bgnet.core.resources import DATA_DIR

__all__ = ["PubevalInputError", "PubevalWeightsError", "WEIGHTS_FILE", "WIN_SCORE", "pubeval_score", "pubeval_scores",
           "pubeval_tables"]

WIN_SCORE = 99999999.0
"""Score of an afterstate in which the mover has borne off all 15 checkers."""

WEIGHTS_FILE = DATA_DIR / "pubeval_weights.json"
"""Tesauro's published weights: {"race": [122 floats], "contact": [122 floats], ...}."""

_NUM_INPUTS = 122


class PubevalInputError(BgnetError):
    """An afterstate array or race flag that pubeval cannot score."""


class PubevalWeightsError(BgnetError):
    """A damaged ``pubeval_weights.json`` in the package data."""


def _load_weights() -> tuple[np.ndarray, np.ndarray]:
    """Read the (race, contact) weight vectors from the package data file."""
    doc = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    race = np.asarray(doc["race"], dtype=np.float64)
    contact = np.asarray(doc["contact"], dtype=np.float64)
    if race.shape != (_NUM_INPUTS,) or contact.shape != (_NUM_INPUTS,):
        raise PubevalWeightsError(f"pubeval_weights.json must hold two vectors of {_NUM_INPUTS} weights")
    race.flags.writeable = False
    contact.flags.writeable = False
    return race, contact


RACE_WEIGHTS, CONTACT_WEIGHTS = _load_weights()


@numba.njit(cache=True, nogil=True)
def _scores_kernel(
    after: np.ndarray, race_flag: np.ndarray, w_race: np.ndarray, w_contact: np.ndarray, out: np.ndarray
) -> None:
    """Fill ``out[i]`` with the pubeval score of row ``i``; race_flag -1 means decide from the row."""
    for i in range(after.shape[0]):
        row = after[i]
        in_play, row_is_race = race_scan(row)
        off = CHECKERS - in_play
        if off == CHECKERS:
            out[i] = WIN_SCORE
            continue
        flag = race_flag[i]
        if flag < 0:
            is_race = row_is_race
        else:
            is_race = flag == 1
        w = w_race if is_race else w_contact
        score = 0.0
        for block in range(24):
            n = row[24 - block]
            base = 5 * block
            if n == -1:
                score += w[base]
            elif n == 1:
                score += w[base + 1]
            elif n >= 2:
                score += w[base + 2]
                if n == 3:
                    score += w[base + 3]
                elif n >= 4:
                    score += w[base + 4] * (n - 3) / 2.0
        score += w[120] * (-row[0]) / 2.0
        score += w[121] * off / 15.0
        out[i] = score


def _race_flags(race: bool | np.ndarray | None, rows: int) -> np.ndarray:
    """The per-row int8 race flags for the kernel: -1 decide, 0 contact, 1 race."""
    if race is None:
        return np.full(rows, -1, dtype=np.int8)
    if isinstance(race, (bool, np.bool_)):
        return np.full(rows, 1 if race else 0, dtype=np.int8)
    flags = np.asarray(race)
    if flags.dtype != np.bool_ or flags.shape != (rows,):
        raise PubevalInputError(f"race must be None, a bool, or a bool array of shape ({rows},)")
    return flags.astype(np.int8)


def pubeval_scores(after: np.ndarray, race: bool | np.ndarray | None = None) -> np.ndarray:
    """Pubeval scores (float64, shape (N,)) of N afterstates, each seen from the side that just moved.

    ``after`` is an integer array of shape (N, 26) in bgnet's board layout.
    ``race`` picks the weight vector: None decides per row (no contact means race),
    a bool applies to every row, a bool array of shape (N,) gives one flag per row.
    """
    arr = np.asarray(after)
    if arr.ndim != 2 or arr.shape[1] != NUM_SLOTS:
        raise PubevalInputError(f"afterstates must be an array of shape (N, {NUM_SLOTS}), got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise PubevalInputError(f"afterstates must hold integer checker counts, got dtype {arr.dtype}")
    boards = np.ascontiguousarray(arr, dtype=np.int8)
    flags = _race_flags(race, boards.shape[0])
    out = np.empty(boards.shape[0], dtype=np.float64)
    _scores_kernel(boards, flags, RACE_WEIGHTS, CONTACT_WEIGHTS, out)
    return out


def pubeval_score(position: Position, race: bool | None = None) -> float:
    """Pubeval score of one afterstate seen from the side that just moved (see ``pubeval_scores``)."""
    if not isinstance(position, Position):
        raise PubevalInputError(f"pubeval_score needs a Position, got {type(position).__name__}")
    return float(pubeval_scores(position.array()[None, :], race)[0])


@functools.lru_cache(maxsize=1)
def pubeval_tables() -> tuple[np.ndarray, np.ndarray]:
    """Pubeval's weights as lookup tables: (2, 24, 31) the term of each point's count (-15..15) and (2, 2) the
    opponent's bar and my borne-off weights; index 0 is the race vector, 1 the contact one.

    The table form of the inputs above: a point's term is one table read instead of
    pubeval's branches, for the numba kernels that rank many plays (the rollout's
    pruning and luck, ``bgnet.nets.ranker.table_score``). Built once, read-only.
    """
    tables = np.zeros((2, 24, 31), np.float64)
    extra = np.zeros((2, 2), np.float64)
    for v, w in enumerate((RACE_WEIGHTS, CONTACT_WEIGHTS)):
        for block in range(24):
            base = 5 * block
            for n in range(-15, 16):
                t = 0.0
                if n == -1:
                    t = w[base]
                elif n == 1:
                    t = w[base + 1]
                elif n >= 2:
                    t = w[base + 2]
                    if n == 3:
                        t += w[base + 3]
                    elif n >= 4:
                        t += w[base + 4] * (n - 3) / 2.0
                tables[v, block, n + 15] = t
        extra[v] = (w[120], w[121])
    tables.flags.writeable = False
    extra.flags.writeable = False
    return tables, extra
