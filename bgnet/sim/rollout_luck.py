"""The luck of each roll, a control variate that a rollout subtracts from every trial (variance reduction).

At every ply the value (0-ply, for the mover) after the best play of each of the 21
rolls is computed: by default the play ``bgnet.nets.ranker``'s fitted ranker puts
first among pubeval's best few (``RolloutSettings.luck_ranker``), or the best of
pubeval's top ``luck_candidates``; 0 judges every play. The luck of the roll that
came is its value minus the probability-weighted average over the 21 rolls. The
expected luck is exactly zero, so subtracting it leaves the mean where it was and
the plays unchanged. The 21 rolls' plays come from one fused kernel
(``bgnet.sim._rollout_kernels.luck_plays``: generated, ranked by pubeval and the
ranker, each distinct afterstate kept once per position), valued by the evaluator
in one batch.
"""

from __future__ import annotations

import math

import numpy as np

from bgnet.core.movegen import generate_plays, swap_sides_batch
from bgnet.core.probs import flip_probs
from bgnet.core.protocols import ProbsFn
from bgnet.nets import ranker as _ranker
from bgnet.nets.pubeval import WIN_SCORE, pubeval_tables
from bgnet.play.search import ROLLS, Utility
from bgnet.sim import _rollout_kernels as _rk
from bgnet.sim.rollout_dice import DICE36
from bgnet.sim.rollout_play import choose, mover_values, net_probs, pruned, unique_rows

ROLL_DICE = np.array(ROLLS, np.int8)
"""The 21 distinct rolls (high die first), in ``bgnet.play.search.ROLLS``'s order."""
ROLL_WEIGHTS = np.array([1.0 / 36.0 if a == b else 2.0 / 36.0 for a, b in ROLLS], np.float64)
"""Each of the 21 rolls' probability."""
ROLL_OF36 = np.array([ROLLS.index((max(a, b), min(a, b))) for a, b in DICE36.tolist()], np.int64)
"""For each of the 36 outcomes, its index in ``ROLLS``."""
FLIP_LINEAR = np.array([[-1, 0, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0]],
                       np.float64)
"""``flip_probs(a) - flip_probs(b) == (a - b) @ FLIP_LINEAR``: a difference of chances seen by the other side."""
_NO_RANKER = _ranker.Ranker(np.zeros((2, 24, 31)), np.zeros((2, 2)), np.zeros(_ranker.N_CONTACT), 1)
"""Placeholder arrays for ``luck_plays`` when pubeval alone ranks (its ranker window is then 0)."""


def roll_values(probs_fn: ProbsFn, boards: np.ndarray, outcome: np.ndarray, root_mover: np.ndarray, top: int,
                prune: int, util: Utility, opp_util: Utility,
                margin: float = math.inf, ranker: str = "pubeval", value_fn: ProbsFn | None = None
                ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """The luck control variate of each board's roll: (value of the roll that came, average over the 21 rolls).

    ``outcome`` (N,) are the rolls' indices in ``DICE36``. For each roll the mover's
    play is the evaluator's best among the ``top`` plays ranked highest (cheap: the net
    scores ``21 * top`` afterstates per trial) by pubeval or, with ``ranker`` "fitted",
    by ``bgnet.nets.ranker``'s model among pubeval's best few, less those more than
    ``margin`` (the ranker's units) below that roll's best, or with ``top == 0`` the 0-ply checker
    play itself (every play, or pubeval's best ``prune``). Values are the mover's 0-ply
    chances after that play, by ``value_fn`` when given (a cheaper net: any function of the
    position and roll keeps the luck an exact control variate), else ``probs_fn``. The
    third item is, when ``top == 0``, every trial's next board (the actual roll's play,
    which then comes for free) and its 0-ply chances for its side on roll, else None.
    """
    first, inverse = unique_rows(boards, root_mover)
    boards, root_mover = np.ascontiguousarray(boards[first]), root_mover[first]
    k = len(boards)
    nr = len(ROLLS)
    r_actual = ROLL_OF36[outcome]
    if top > 0:  # the fused path: each roll's plays ranked as they are made, each distinct afterstate valued once
        tables, extra = pubeval_tables()
        fitted = _ranker.default() if ranker == "fitted" else _NO_RANKER
        cand, slot, owner = _rk.luck_plays(boards, ROLL_DICE, int(top), float(margin), tables, extra, WIN_SCORE,
                                           fitted.tables, fitted.extra, fitted.contact,
                                           fitted.window if ranker == "fitted" else 0)
        mover = flip_probs(net_probs(probs_fn if value_fn is None else value_fn, cand))
        vals = mover_values(mover, root_mover[owner], util, opp_util)
        per_slot = np.where(slot >= 0, vals[np.maximum(slot, 0)], -np.inf)
        pick = np.take_along_axis(slot, per_slot.argmax(axis=2)[:, :, None], axis=2)[:, :, 0]
        best_mover = mover[pick]
        mean = np.einsum("nrk,r->nk", best_mover, ROLL_WEIGHTS)
        return best_mover[inverse, r_actual], mean[inverse], None
    rolled = np.repeat(boards, nr, axis=0)
    after, _s, _n, offsets = generate_plays(rolled, np.tile(ROLL_DICE, (k, 1)))
    after, offsets = pruned(after, offsets, prune, math.inf)  # top is 0 here: the checker play's own choice
    cand = swap_sides_batch(after)
    cand_probs = net_probs(probs_fn, cand)
    best, best_probs = choose(probs_fn, cand, offsets, np.repeat(root_mover, nr), 0, util, opp_util, cand_probs)
    best_mover = flip_probs(best_probs).reshape(k, nr, 5)
    free = (cand[best.reshape(k, nr)[inverse, r_actual]], best_probs.reshape(k, nr, 5)[inverse, r_actual])
    mean = np.einsum("nrk,r->nk", best_mover, ROLL_WEIGHTS)
    return best_mover[inverse, r_actual], mean[inverse], free
