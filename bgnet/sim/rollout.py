"""Rollouts: many trials of a position played out together in arrays, with variance reduction and truncation.

A rollout estimates what a play (or a position before the roll) is worth by
playing it to the end many times with the evaluator choosing every play.
All trials of all candidates advance together, as in ``bgnet.sim.selfplay``: each ply
is one move generation over every live trial and one ``probs_fn`` call over
every candidate afterstate, then a segment argmax. Checker play is 0-ply (the net
judges every play, or with ``prune`` only pubeval's best few, as GNU Backgammon's
pruning nets do) or 1-ply; trials that share a position (all of them at the first
ply) choose their play once.

Reproducibility: the dice of trial ``i`` at ply ``t`` depend only on
``(seed, i, t)`` (a counter-based hash, no sequential generator), and every
candidate sees the same dice (common random numbers). So the trials can be cut
into chunks that run anywhere (``map_fn``, for example a Ray backend) and the
combined result is the same whatever the chunking.

Variance reduction, each switchable in ``RolloutSettings``:

* quasi-random dice: the first roll is stratified over the 36 outcomes and the
  first two over all 1,296 pairs (a Latin square, so any 36 consecutive trials
  also cover the second roll); later rolls are permuted per block of 36 trials,
  so each block sees every outcome once. Each trial's own dice stay i.i.d.
  uniform, so the mean is unbiased;
* luck: at every ply the value (0-ply, for the mover) after the best play of each
  of the 21 rolls is computed (by default the play ``bgnet.nets.ranker``'s fitted ranker
  puts first among pubeval's best 4, ``luck_ranker``; or the best of pubeval's top
  ``luck_candidates``; 0 judges every play); the luck of the roll that came is its value minus
  the probability-weighted average, and the sum of a trial's luck is subtracted
  from its result. The expected luck is exactly zero, so the mean does not move,
  and the plays themselves are unchanged (a control variate). The 21 rolls' plays
  come from one fused kernel (``_rollout_kernels.luck_plays``: generated, ranked by
  pubeval and the ranker, each distinct afterstate kept once per position), valued by the
  evaluator in one batch (a ``NumpyNet`` through its fused kernel); optionally a trial
  whose game is decided stops computing its luck (``luck_decided``, judged before the roll);
* truncation: after ``truncate`` plies the position is scored by the evaluator,
  and a pure bear-off covered by ``bgnet.nets.bearoff`` is scored exactly.

Cubeful rollouts (``cubeful=True``, and every position without dice) play the
cube inside the trials: a candidate carries cube lines (a cube value and owner;
"No double" and "Double, take" of one position share its trials, as they share
checker play and dice), and before every roll of every live trial the side on roll
decides by ``bgnet.cube.decision.cube_decision`` on the net's 0-ply chances of the position
(once per distinct position), doubles when it says so, and the opponent takes,
beavers or passes by the same decision. A pass ends the line at the cube value
while its cubeless trial plays on, so the cubeless numbers are exactly those of a
cubeless rollout; a finished game scores single, gammon or backgammon times the
cube (Jacoby in money play), in match winning chances at a match score; a truncated
trial (or one stopped at the bear-off database) scores the cubeful equity of
``cube_decision`` for its line's cube. With luck VR each open line is also charged
the cubeless equity luck of every roll, times its cube (``_CubeTracks.add_luck``):
the line's cube is settled before the roll, so this too is an exact control variate.

``label_positions`` is the training "teacher": many positions rolled out (or
evaluated at n-ply) at once, written as supervised targets with ``save_targets``.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, TypeVar

import numpy as np
from numba import njit

from bgnet.core import _game_kernels as gk
from bgnet.sim import _rollout_kernels as _rk
from bgnet.nets import ranker as _ranker
from bgnet.cube.decision import cube_decision, mwc_from_equity
from bgnet.core.errors import BgnetError
from bgnet.cube.match import MatchState
from bgnet.core.movegen import generate_plays, parse_dice, swap_sides_batch
from bgnet.core.notation import Move
from bgnet.core.position import Position
from bgnet.core.probs import Probs, flip_probs
from bgnet.play.search import (
    DEFAULT_FILTERS, MONEY, ROLLS, MoveFilter, Utility, evaluate_boards, rank_moves, utility_for,
)

if TYPE_CHECKING:
    from bgnet.sim.backends import Backend

ProbsFn = Callable[[np.ndarray], np.ndarray]
"""Maps boards (N, 26) int8 to (N, 5) probabilities for each board's side on roll."""
BearoffFn = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
"""Maps boards (N, 26) to (mask (N,) bool, probs (N, 5)): exact chances where ``mask`` is set."""

PROB_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
MAX_PLIES = 1000
"""A trial still going after this many plies is scored by the evaluator (never happens in practice)."""
LUCK_RANKERS = ("fitted", "pubeval")
"""How the luck's candidate plays of each roll are ranked (``RolloutSettings.luck_ranker``)."""
_NO_RANKER = _ranker.Ranker(np.zeros((2, 24, 31)), np.zeros((2, 2)), np.zeros(_ranker.N_CONTACT), 1)
"""Placeholder arrays for ``luck_plays`` when pubeval alone ranks (its ranker window is then 0)."""
Z95 = 1.959963984540054
"""Two-sided 95% normal quantile."""

_DICE36 = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], np.int8)
"""The 36 ordered outcomes, index ``6 * (a - 1) + (b - 1)``."""
_ROLL_DICE = np.array(ROLLS, np.int8)
_ROLL_WEIGHTS = np.array([1.0 / 36.0 if a == b else 2.0 / 36.0 for a, b in ROLLS], np.float64)
_ROLL_OF36 = np.array([ROLLS.index((max(a, b), min(a, b))) for a, b in _DICE36.tolist()], np.int64)
"""For each of the 36 outcomes, its index in ``ROLLS``."""
_FLIP_LINEAR = np.array([[-1, 0, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0]],
                        np.float64)
"""``flip_probs(a) - flip_probs(b) == (a - b) @ _FLIP_LINEAR``: a difference of chances seen by the other side."""


class RolloutError(BgnetError):
    """A rollout request that cannot be carried out (no trials, a play that is not legal, ...)."""


# -- settings -------------------------------------------------------------------------


@dataclass(frozen=True)
class RolloutSettings:
    """How the trials are played and scored (all plain values, so a backend can ship them)."""

    trials: int = 1296
    """Trials per candidate (a multiple of 36, or 1,296, makes the quasi-random dice exact)."""
    ply: int = 0
    """Checker play inside the trials: 0 (the net alone) or 1 (1-ply lookahead with the move filter)."""
    truncate: int | None = None
    """Stop each trial after this many plies and score the position with the evaluator (None: play to the end)."""
    truncate_eval_ply: int = 0
    """Search depth of that evaluation at the truncation point."""
    bearoff: bool = True
    """Stop a trial at a pure bear-off covered by the bear-off database and use its exact chances."""
    quasi_random: bool = True
    """Stratified dice: the first roll over 36, the first two over 1,296, later rolls permuted per 36 trials."""
    luck_vr: bool = True
    """Luck-based variance reduction: each roll's luck (21 rolls valued at every ply of every trial) is subtracted."""
    luck_candidates: int = 1
    """Plays per roll the evaluator judges for the luck: the ranker's best this many (0: the checker play's own
    choice for every roll, exact but about 20 times the work of a trial without variance reduction)."""
    luck_ranker: str = "fitted"
    """How those plays are ranked: "fitted" (``bgnet.nets.ranker``'s model re-ranks pubeval's best few; its top
    play is the net's own about 73% of the time, pubeval's about 67%) or "pubeval" (pubeval alone)."""
    luck_beam: int = 8
    """A double's plays for the luck are found by a beam of this width over its four steps (pubeval's table
    score, ``bgnet.sim._rollout_kernels.double_beam``) instead of generating every play (0); the beam's plays are the
    ones ranked. Doubles have most of the plays: at 8 the luck's plays cost about 5% less and its standard error
    grows by about 3% (``bench/rollout.py --only vr``); at 16 it matches generating every play."""
    luck_margin: float | None = None
    """Of those plays, the net judges only the ones within this much of the roll's best by the ranker's score
    (pubeval points, or about equity for "fitted"; a fixed function of the position and roll, so the luck stays
    an exact control variate; None: all of them)."""
    luck_decided: float = 0.0
    """Luck VR skips a trial's later rolls once the value after one of its rolls has all five chances within this
    of 0 or 1 (a decided game, where the luck is tiny); decided before the roll, so the luck kept stays an exact
    control variate. 0 (the default: at 0.005 the time saved did not show in ``bench/rollout.py --only vr``, and
    the standard error grew by about 1%) never skips, nor does ``luck_candidates`` 0."""
    prune: int = 0
    """Checker play: the net judges only the ``prune`` plays pubeval ranks highest (0: every play). Like GNU
    Backgammon's pruning nets, this saves most of the evaluations: at 8, pubeval's top 8 hold the net's own best
    play in about 96% of positions (measured on self-play positions), for about a third of the net's work."""
    chunk_size: int = 324
    """Trials per chunk; chunk ``k`` holds trials ``k * chunk_size`` and up (the result does not depend on it)."""
    max_plies: int = MAX_PLIES

    def __post_init__(self) -> None:
        if isinstance(self.trials, bool) or not isinstance(self.trials, int) or self.trials < 1:
            raise RolloutError(f"trials must be a positive integer, got {self.trials!r}")
        if self.ply not in (0, 1):
            raise RolloutError(f"checker play in rollouts is 0-ply or 1-ply, got ply {self.ply!r}")
        if self.truncate is not None and (isinstance(self.truncate, bool) or not isinstance(self.truncate, int)
                                          or self.truncate < 0):
            raise RolloutError(f"truncate must be a non-negative number of plies or None, got {self.truncate!r}")
        if self.truncate_eval_ply not in (0, 1, 2):
            raise RolloutError(f"the truncation evaluation is 0, 1 or 2-ply, got {self.truncate_eval_ply!r}")
        if isinstance(self.prune, bool) or not isinstance(self.prune, int) or self.prune < 0:
            raise RolloutError(f"prune must be 0 (no pruning) or a positive number of plays, got {self.prune!r}")
        if isinstance(self.luck_candidates, bool) or not isinstance(self.luck_candidates, int) or self.luck_candidates < 0:
            raise RolloutError(f"luck_candidates must be 0 or a positive number of plays, got {self.luck_candidates!r}")
        if isinstance(self.luck_beam, bool) or not isinstance(self.luck_beam, int) or not 0 <= self.luck_beam <= 64:
            raise RolloutError(f"luck_beam must be 0 (every play) or a beam width up to 64, got {self.luck_beam!r}")
        if self.luck_ranker not in LUCK_RANKERS:
            raise RolloutError(f"luck_ranker must be one of {', '.join(LUCK_RANKERS)}, got {self.luck_ranker!r}")
        if self.luck_margin is not None and (isinstance(self.luck_margin, bool)
                                             or not isinstance(self.luck_margin, (int, float)) or self.luck_margin < 0):
            raise RolloutError(f"luck_margin must be None or a non-negative number, got {self.luck_margin!r}")
        if (isinstance(self.luck_decided, bool) or not isinstance(self.luck_decided, (int, float))
                or not 0 <= self.luck_decided < 0.5):
            raise RolloutError(f"luck_decided must be a number from 0 to 0.5, got {self.luck_decided!r}")
        if not isinstance(self.chunk_size, int) or self.chunk_size < 1:
            raise RolloutError(f"chunk_size must be a positive integer, got {self.chunk_size!r}")

    def describe(self) -> str:
        """One line in GNU Backgammon's manner, e.g. "Truncated cubeless rollout (depth 7) with variance reduction"."""
        kind = "Truncated cubeless rollout" if self.truncate is not None else "Full cubeless rollout"
        if self.truncate is not None:
            kind += f" (depth {self.truncate})"
        if self.bearoff:
            kind += " (truncated at the bear-off database)"
        extras = [x for x, on in (("variance reduction", self.luck_vr), ("quasi-random dice", self.quasi_random)) if on]
        return kind + (" with " + " and ".join(extras) if extras else "")


# -- dice: a pure function of (seed, trial, ply) --------------------------------------

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on uint64 arrays (a bijection that scrambles every bit)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _hash(seed: int, *parts: np.ndarray | int | np.integer) -> np.ndarray:
    """A 64-bit hash of the seed and integer arrays (broadcast), chained through ``_mix``."""
    h = _mix(np.asarray(np.uint64(seed & 0xFFFFFFFFFFFFFFFF)))
    for p in parts:
        with np.errstate(over="ignore"):
            h = _mix(h ^ np.asarray(p).astype(np.uint64))
    return h


def _perms(seed: int, ply: int, blocks: np.ndarray) -> np.ndarray:
    """One random permutation of the 36 outcomes per block (B, 36), from (seed, ply, block)."""
    keys = _hash(seed, np.int64(ply) + 1, blocks[:, None].astype(np.int64) + 7, np.arange(36)[None, :])
    return np.argsort(keys, axis=1, kind="stable")


def dice_for(seed: int, trials: np.ndarray, ply: int, quasi_random: bool = True) -> np.ndarray:
    """Outcome indices (N,) in 0..35 of trials ``trials`` at ``ply`` (0 = the first roll after the root).

    ``_DICE36[index]`` gives the two dice. Each trial's dice are i.i.d. uniform;
    with ``quasi_random`` they are stratified across trials (see the module docstring).
    """
    trials = np.asarray(trials, np.int64)
    if not quasi_random:
        h = _hash(seed, 0x5EED, np.int64(ply), trials)
        return ((h >> np.uint64(32)) * np.uint64(36) >> np.uint64(32)).astype(np.int64)
    j = trials % 36
    if ply == 0:
        return _perms(seed, -1, np.zeros(1, np.int64))[0][j]
    if ply == 1:
        return _perms(seed, -2, np.zeros(1, np.int64))[0][(j + trials // 36) % 36]
    blocks = trials // 36
    ub, inv = np.unique(blocks, return_inverse=True)
    return _perms(seed, ply, ub)[inv, j]


# -- candidates -------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """What one column of a rollout plays out: a play of the root's dice, or the position itself (no dice)."""

    label: str
    """The play's text (``"8/5 6/5"``), or "Current position" / "No double" / "Double, take" for cube rollouts."""
    board: tuple[int, ...]
    """The board the trials start from, seen from its side on roll (for a play: the opponent after it)."""
    root_on_roll: bool
    """Whether the root's side (the mover, or the side on roll of a position) is on roll in ``board``."""
    cube_lines: tuple[tuple[int, str], ...] = ()
    """Cubeful trials: the cube lines to follow, each ``(cube value, owner)`` with the owner ("centred", "me",
    "opponent") seen by the root side; every line shares the candidate's checker play and dice (none: cubeless)."""


def play_candidates(pos: Position, dice: Sequence[int] | str, plays: Sequence[str] | None, probs_fn: ProbsFn,
                    state: MatchState | None = None, filter: MoveFilter | None = None) -> list[Candidate]:
    """The plays to roll out: ``plays`` given as text, or those the hint's move filter keeps."""
    d = parse_dice(dice)
    chosen: list[Move]
    if plays:
        chosen = []
        for text in plays:
            move = pos.parse_move(text, d)
            if move not in chosen:
                chosen.append(move)
    else:
        f = filter or DEFAULT_FILTERS[0]
        ranked = rank_moves(probs_fn, pos, d, 0, filter=f, state=state)
        values = np.array([r.equity for r in ranked])
        chosen = [ranked[i].move for i in f.select(values)]
    out = []
    for m in chosen:
        assert m.after is not None
        out.append(Candidate(m.text or "(no play)", tuple(int(x) for x in m.after.swap_sides().board), False))
    return out


def position_candidate(pos: Position, label: str = "Current position") -> Candidate:
    """The position itself, its side on roll rolling first."""
    return Candidate(label, tuple(int(x) for x in pos.board), True)


# -- one chunk ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkResult:
    """Per-trial results of one chunk: arrays (candidates, trials, 5) of the root side's chances."""

    first_trial: int
    values: np.ndarray
    """Each trial's result with its luck subtracted (equal to ``raw`` without luck VR)."""
    raw: np.ndarray
    """Each trial's plain result (terminal outcome, truncation or bear-off value)."""
    plies: np.ndarray
    """(candidates, trials) plies played in each trial."""
    cubeful: np.ndarray | None = None
    """(candidates, lines, trials) each cube line's result for the root side, money points per root cube or
    match winning chances, each less its luck under luck VR (NaN past a candidate's lines); None without cube
    lines."""


def _default_bearoff() -> BearoffFn | None:
    """``bgnet.nets.bearoff.exact_probs`` when that module exists, else None (no truncation at the database)."""
    try:
        from bgnet.nets.bearoff import exact_probs
    except ImportError:
        return None
    return exact_probs


def _net(probs_fn: ProbsFn, boards: np.ndarray) -> np.ndarray:
    """0-ply chances (N, 5) float64 for each board's side on roll, exact for finished games."""
    return evaluate_boards(probs_fn, boards, 0)


def _values(probs_mover: np.ndarray, root_mover: np.ndarray, util: Utility, opp_util: Utility) -> np.ndarray:
    """What each mover maximises: the root side's utility where it moves, the opponent's elsewhere."""
    if util == opp_util:
        return util.of(probs_mover)
    return np.where(root_mover, util.of(probs_mover), opp_util.of(probs_mover))


def _segment_filter(values: np.ndarray, offsets: np.ndarray, f: MoveFilter) -> np.ndarray:
    """Indices kept by move filter ``f`` in every segment at once (the best always), sorted."""
    n = len(offsets) - 1
    counts = np.diff(offsets)
    seg = np.repeat(np.arange(n), counts)
    order = np.lexsort((-values, seg))
    rank = np.arange(len(values)) - np.repeat(offsets[:-1], counts)
    best = np.repeat(values[order[offsets[:-1]]], counts)
    v = values[order]
    keep = (rank < max(1, f.accept)) | ((rank < max(1, f.accept) + f.extra) & (v >= best - f.threshold))
    return np.sort(order[keep])


def _choose(probs_fn: ProbsFn, cand: np.ndarray, offsets: np.ndarray, root_mover: np.ndarray, ply: int,
            util: Utility, opp_util: Utility, cand_probs: np.ndarray | None = None) -> np.ndarray:
    """Index into ``cand`` of each segment's best play for its mover, at 0 or 1 ply."""
    counts = np.diff(offsets)
    row_root = np.repeat(root_mover, counts)
    if cand_probs is None:
        cand_probs = _net(probs_fn, cand)
    values = _values(flip_probs(cand_probs), row_root, util, opp_util)
    if ply == 0:
        return gk.segment_argmax(values, offsets)
    alive = _segment_filter(values, offsets, DEFAULT_FILTERS[0])
    deep = np.empty((len(alive), 5), np.float64)
    for side in (True, False):  # the side on roll of cand is the mover's opponent
        rows = alive[row_root[alive] == side]
        if len(rows):
            on_roll, other = (opp_util, util) if side else (util, opp_util)
            deep[row_root[alive] == side] = evaluate_boards(probs_fn, cand[rows], 1, on_roll, other)
    lifted = np.full(len(values), -np.inf)
    lifted[alive] = _values(flip_probs(deep), row_root[alive], util, opp_util)
    return gk.segment_argmax(lifted, offsets)


# -- cubeful trials: the cube played inside every trial ------------------------------------

_OWNER_CODE = {"centred": 0, "me": 1, "opponent": -1}
_OWNER_NAME = {0: "centred", 1: "me", -1: "opponent"}


def _after_game(state: MatchState, won: int, lost: int) -> float:
    """The root side's match winning chance after it wins ``won`` and loses ``lost`` points in this game."""
    from bgnet.cube.met import default_met

    return default_met().after_game(state.away_me - won, state.away_opp - lost, state.crawford_done)


def cube_units(state: MatchState) -> tuple[float, float]:
    """``(w1, l1)``: what the root side's winning and losing a single game at its cube is worth.

    Money: +-1 (points per cube); match: the two match winning chances behind GNU
    Backgammon's normalised equity ``2 (mwc - l1) / (w1 - l1) - 1``.
    """
    if state.is_money:
        return 1.0, -1.0
    return _after_game(state, state.cube_value, 0), _after_game(state, 0, state.cube_value)


class _CubeTracks:
    """Cube lines followed alongside the cubeless trials: per line, a cube value and owner, and a result.

    A line belongs to one trial row (candidate x trial); several lines may share a row
    (no double and double/take of one position), as their checker play and dice are
    the same. Results are in the root side's terms: money points per root cube, or
    match winning chances. A pass ends a line while its (cubeless) trial plays on.
    """

    def __init__(self, candidates: Sequence[Candidate], n: int, state: MatchState) -> None:
        rows, cube, owner = [], [], []
        for ci, cd in enumerate(candidates):
            for value, own in cd.cube_lines:
                rows.append(np.arange(ci * n, (ci + 1) * n))
                cube.append(np.full(n, value, np.int64))
                owner.append(np.full(n, _OWNER_CODE[own], np.int8))
        self.state = state
        self.row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        self.cube = np.concatenate(cube) if cube else np.zeros(0, np.int64)
        self.owner = np.concatenate(owner) if owner else np.zeros(0, np.int8)
        self.done = np.zeros(len(self.row), bool)
        self.value = np.zeros(len(self.row), np.float64)
        self.luck = np.zeros(len(self.row), np.float64)
        self.doubles = np.zeros(len(self.row), np.int64)
        self._states: dict[tuple[bool, int, int], MatchState] = {}

    def on_roll_state(self, root_on_roll: bool, cube: int, owner: int) -> MatchState:
        """The ``MatchState`` of the side on roll for a line's cube (cached: few distinct ones)."""
        key = (root_on_roll, cube, owner)
        st = self._states.get(key)
        if st is None:
            root = replace(self.state, cube_value=int(cube), cube_owner=_OWNER_NAME[owner])  # type: ignore[arg-type]
            st = root if root_on_roll else root.swap_sides()
            self._states[key] = st
        return st

    def active(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lines, where)``: the open lines of trial rows ``rows`` and each one's index into ``rows``."""
        pos = np.full(int(self.row.max()) + 1 if len(self.row) else 0, -1, np.int64)
        pos[rows[rows < len(pos)]] = np.flatnonzero(rows < len(pos))
        lines = np.flatnonzero(~self.done & (pos[self.row] >= 0)) if len(pos) else np.zeros(0, np.int64)
        return lines, pos[self.row[lines]]

    def _points(self, lines: np.ndarray, root_points: np.ndarray) -> None:
        """Close ``lines`` with the root side winning ``root_points`` (negative: losing) points of this game."""
        st = self.state
        for ln, pts in zip(lines.tolist(), root_points.tolist()):
            if st.is_money:
                self.value[ln] = pts / st.cube_value
            else:
                k = int(round(pts))
                self.value[ln] = _after_game(st, k, 0) if k > 0 else _after_game(st, 0, -k)
        self.done[lines] = True

    def end_game(self, rows: np.ndarray, codes: np.ndarray, root_on_roll: np.ndarray) -> None:
        """Score the open lines of finished trial rows: single, gammon or backgammon times the line's cube.

        ``codes`` are ``terminal_codes`` of the rows' boards (for their side on roll),
        ``root_on_roll`` whether the root side is on roll there. Jacoby: a gammon with
        the cube never turned counts single in money play.
        """
        lines, where = self.active(rows)
        if len(lines) == 0:
            return
        c = codes[where].astype(np.int64)
        c = np.where(root_on_roll[where], c, -c)
        if self.state.is_money and self.state.jacoby:
            c = np.where(self.owner[lines] == 0, np.sign(c), c)
        self._points(lines, c * self.cube[lines])

    def estimate(self, rows: np.ndarray, probs: np.ndarray, boards: np.ndarray, root_on_roll: np.ndarray) -> None:
        """Close the open lines of truncated rows with the cubeful equity (``bgnet.cube.decision``) of the side on roll.

        ``probs`` (len(rows), 5) are the chances of that side, ``boards`` the rows' boards.
        """
        lines, where = self.active(rows)
        for ln, w in zip(lines.tolist(), where.tolist()):
            mine = bool(root_on_roll[w])
            st = self.on_roll_state(mine, int(self.cube[ln]), int(self.owner[ln]))
            eq = cube_decision(_clamp_probs(probs[w]), st, Position._trusted(tuple(boards[w].tolist()))).equity
            if self.state.is_money:
                self.value[ln] = (eq if mine else -eq) * self.cube[ln] / self.state.cube_value
            else:
                w1, l1 = cube_units(st)
                mwc = mwc_from_equity(eq, w1, l1)
                self.value[ln] = mwc if mine else 1.0 - mwc
            self.done[ln] = True

    def decide(self, rows: np.ndarray, probs: np.ndarray, boards: np.ndarray, root_on_roll: np.ndarray) -> None:
        """Cube actions before the roll of trial rows ``rows``: the side on roll doubles when ``bgnet.cube.decision`` says so.

        The opponent takes, beavers or passes by the same decision; a pass closes the
        line at the cube value, a take turns the cube over to the taker.
        """
        lines, where = self.active(rows)
        for ln, w in zip(lines.tolist(), where.tolist()):
            mine = bool(root_on_roll[w])
            owner = int(self.owner[ln])
            if owner == (-1 if mine else 1):
                continue  # the side on roll has no access to the cube
            cube = int(self.cube[ln])
            st = self.on_roll_state(mine, cube, owner)
            if not st.may_double:
                continue
            d = cube_decision(_clamp_probs(probs[w]), st, Position._trusted(tuple(boards[w].tolist())))
            if d.action not in ("double, take", "double, pass"):
                continue
            self.doubles[ln] += 1
            if d.response == "pass":
                self._points(np.array([ln]), np.array([cube if mine else -cube]))
            else:
                self.cube[ln] = cube * (4 if d.response == "beaver" else 2)
                self.owner[ln] = -1 if mine else 1

    def add_luck(self, rows: np.ndarray, equity_luck: np.ndarray) -> None:
        """Charge the open lines of trial rows ``rows`` with the luck of the roll about to be played.

        ``equity_luck`` (len(rows),) is the root side's cubeless equity luck of each row's
        roll; a line's share is that times its cube over the root's, in points (money) or
        turned into match winning chances by ``(w1 - l1) / 2`` (``cube_units``: the slope
        of the chance in normalised equity). Each line's cube and whether it is open are settled before the roll,
        so the luck charged to it has mean zero: a control variate for the cubeful results.
        """
        lines, where = self.active(rows)
        if len(lines) == 0:
            return
        st = self.state
        if st.is_money:
            scale = self.cube[lines] / st.cube_value
        else:
            w1, l1 = cube_units(st)
            scale = 0.5 * (w1 - l1) * self.cube[lines] / st.cube_value
        self.luck[lines] += scale * equity_luck[where]

    def results(self, c: int, n: int, lines_per: Sequence[int]) -> np.ndarray:
        """Line results less their luck as (candidates, max lines, trials), NaN where a candidate has fewer lines."""
        out = np.full((c, max(lines_per, default=0), n), np.nan)
        reduced = self.value - self.luck
        k = 0
        for ci, nl in enumerate(lines_per):
            for li in range(nl):
                out[ci, li] = reduced[k * n:(k + 1) * n]
                k += 1
        return out


def rollout_chunk(probs_fn: ProbsFn, candidates: Sequence[Candidate], chunk_index: int, trials_in_chunk: int,
                  settings: RolloutSettings, seed: int, state: MatchState | None = None,
                  bearoff_fn: BearoffFn | None = None) -> ChunkResult:
    """Play trials ``chunk_index * settings.chunk_size`` onwards (``trials_in_chunk`` of them) of every candidate.

    A pure function of its arguments: the same chunk gives the same arrays wherever it runs.
    """
    first = chunk_index * settings.chunk_size
    n, c = int(trials_in_chunk), len(candidates)
    if n < 0 or first < 0:
        raise RolloutError(f"chunk {chunk_index} with {trials_in_chunk} trials does not exist")
    util = utility_for(state)
    opp_util = utility_for(state.swap_sides()) if state is not None else util
    m = n * c
    boards = np.repeat(np.array([cd.board for cd in candidates], np.int8).reshape(c, 26), n, axis=0)
    trial = np.tile(np.arange(first, first + n, dtype=np.int64), c)
    root_on_roll = np.repeat(np.array([cd.root_on_roll for cd in candidates], bool), n)
    ply = np.zeros(m, np.int64)
    luck = np.zeros((m, 5), np.float64)
    decided = np.zeros(m, bool)  # luck VR: the trial's game is decided (see RolloutSettings.luck_decided)
    final = np.zeros((m, 5), np.float64)
    done = np.zeros(m, bool)
    truncate = settings.truncate
    lines_per = [len(cd.cube_lines) for cd in candidates]
    cube = _CubeTracks(candidates, n, state or MatchState()) if any(lines_per) else None

    def finish(rows: np.ndarray, on_roll_probs: np.ndarray) -> None:
        """Record the chances (for each row's side on roll) of finished rows, turned to the root's side."""
        probs = np.asarray(on_roll_probs, np.float64)
        mine = root_on_roll[rows][:, None]
        final[rows] = np.where(mine, probs, flip_probs(probs))
        done[rows] = True

    # Games already over (a play that bore off the last checker).
    codes = gk.terminal_codes(boards)
    if (codes != 0).any():
        rows = np.flatnonzero(codes != 0)
        exact = np.zeros((len(rows), 5), np.float32)
        gk.apply_terminal(codes[rows], exact)
        finish(rows, exact)
        if cube is not None:
            cube.end_game(rows, codes[rows], root_on_roll[rows])
    step = 0
    while True:
        live = np.flatnonzero(~done)
        if len(live) == 0:
            break
        if bearoff_fn is not None and settings.bearoff:
            mask, exact_p = bearoff_fn(boards[live])
            mask = np.asarray(mask, bool)
            if mask.any():
                finish(live[mask], np.asarray(exact_p)[mask])
                if cube is not None:
                    cube.estimate(live[mask], np.asarray(exact_p, np.float64)[mask], boards[live[mask]],
                                  root_on_roll[live[mask]])
                live = live[~mask]
        limit = settings.max_plies if truncate is None else min(truncate, settings.max_plies)
        stop = ply[live] >= limit
        if stop.any():
            rows = live[stop]
            at_stop = evaluate_boards(probs_fn, boards[rows], settings.truncate_eval_ply)
            finish(rows, at_stop)
            if cube is not None:
                cube.estimate(rows, np.asarray(at_stop, np.float64), boards[rows], root_on_roll[rows])
            live = live[~stop]
        if len(live) == 0:
            continue
        b = boards[live]
        k = len(live)
        root_mover = root_on_roll[live]
        if cube is not None:
            open_lines, where = cube.active(live)
            asked = np.unique(where)
            # The root side's own action before its first roll is the candidate's ("No double", "Double, take").
            asked = asked[~((ply[live[asked]] == 0) & root_mover[asked])]
            if len(asked):  # the cube before the roll, on the net's chances of the position (once per position)
                first_rows, inverse = _unique_rows(b[asked], root_mover[asked])
                before = _net(probs_fn, np.ascontiguousarray(b[asked][first_rows]))[inverse]
                cube.decide(live[asked], before, b[asked], root_mover[asked])
        outcome = np.empty(k, np.int64)
        for p in np.unique(ply[live]):  # trials of a chunk may sit at different plies after a truncation
            sel = ply[live] == p
            outcome[sel] = dice_for(seed, trial[live][sel], int(p), settings.quasi_random)
        if settings.luck_vr:
            # Skipping the luck of a trial is decided before its roll (from the previous roll's value), so the
            # luck that is kept still has mean zero.
            use = ~decided[live] if settings.luck_candidates > 0 else np.ones(k, bool)
            rows = np.flatnonzero(use)
            free = None
            if len(rows):
                got, mean, free = _roll_values(probs_fn, b[rows], outcome[rows], root_mover[rows],
                                               settings.luck_candidates, settings.prune, util, opp_util,
                                               math.inf if settings.luck_margin is None else settings.luck_margin,
                                               settings.luck_ranker, settings.luck_beam)
                diff = got - mean
                root_diff = np.where(root_mover[rows, None], diff, diff @ _FLIP_LINEAR)
                luck[live[rows]] += root_diff
                if cube is not None:
                    cube.add_luck(live[rows], root_diff @ np.asarray(util.weights, np.float64))
                if settings.luck_decided > 0 and settings.luck_candidates > 0:
                    eps = settings.luck_decided
                    decided[live[rows]] = ((got <= eps) | (got >= 1.0 - eps)).all(axis=1)
            nxt = free if settings.ply == 0 and free is not None else \
                _play(probs_fn, b, _DICE36[outcome], root_mover, settings.ply, settings.prune, util, opp_util)
        else:
            nxt = _play(probs_fn, b, _DICE36[outcome], root_mover, settings.ply, settings.prune, util, opp_util)
        boards[live] = nxt
        ply[live] += 1
        root_on_roll[live] = ~root_mover
        codes = gk.terminal_codes(nxt)
        over = codes != 0
        if over.any():
            exact = np.zeros((int(over.sum()), 5), np.float32)
            gk.apply_terminal(codes[over], exact)
            finish(live[over], exact)
            if cube is not None:
                cube.end_game(live[over], codes[over], root_on_roll[live[over]])
        step += 1
    raw = final.reshape(c, n, 5)
    values = (final - luck).reshape(c, n, 5)
    cf = cube.results(c, n, lines_per) if cube is not None else None
    return ChunkResult(first, values, raw.copy(), ply.reshape(c, n).copy(), cf)


def _roll_values(probs_fn: ProbsFn, boards: np.ndarray, outcome: np.ndarray, root_mover: np.ndarray, top: int,
                 prune: int, util: Utility, opp_util: Utility,
                 margin: float = math.inf, ranker: str = "pubeval", beam: int = 0
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The luck control variate of each board's roll: (value of the roll that came, average over the 21 rolls).

    For each roll the mover's play is the evaluator's best among the ``top`` plays
    ranked highest (cheap: the net scores ``21 * top`` afterstates per trial) by pubeval
    or, with ``ranker`` "fitted", by ``bgnet.nets.ranker``'s model among pubeval's best few, less
    those more than ``margin`` (the ranker's units) below that roll's best (a double's
    plays found by a beam of width ``beam``, when it is not 0),
    or with ``top == 0`` the 0-ply checker play itself (every play, or pubeval's best
    ``prune``). Values are the mover's 0-ply chances after that play. The third item
    is, when ``top == 0``, every trial's next board (the actual roll's play, which
    then comes for free), else None.
    """
    first, inverse = _unique_rows(boards, root_mover)
    boards, root_mover = np.ascontiguousarray(boards[first]), root_mover[first]
    k = len(boards)
    nr = len(ROLLS)
    r_actual = _ROLL_OF36[outcome]
    if top > 0:  # the fused path: each roll's plays ranked as they are made, each distinct afterstate valued once
        global _PUB_TABLES
        if _PUB_TABLES is None:
            _PUB_TABLES = _pubeval_tables()
        from bgnet.nets.pubeval import WIN_SCORE

        fitted = _ranker.default() if ranker == "fitted" else _NO_RANKER
        cand, slot, owner = _rk.luck_plays(boards, _ROLL_DICE, int(top), float(margin), _PUB_TABLES[0],
                                           _PUB_TABLES[1], WIN_SCORE, fitted.tables, fitted.extra, fitted.contact,
                                           fitted.window if ranker == "fitted" else 0, int(beam))
        mover = flip_probs(_net(probs_fn, cand))
        vals = _values(mover, root_mover[owner], util, opp_util)
        per_slot = np.where(slot >= 0, vals[np.maximum(slot, 0)], -np.inf)
        pick = np.take_along_axis(slot, per_slot.argmax(axis=2)[:, :, None], axis=2)[:, :, 0]
        best_mover = mover[pick]
        mean = np.einsum("nrk,r->nk", best_mover, _ROLL_WEIGHTS)
        return best_mover[inverse, r_actual], mean[inverse], None
    rolled = np.repeat(boards, nr, axis=0)
    after, _s, _n, offsets = generate_plays(rolled, np.tile(_ROLL_DICE, (k, 1)))
    after, offsets = _pruned(after, offsets, prune if top == 0 else top, margin if top > 0 else math.inf)
    cand = swap_sides_batch(after)
    cand_probs = _net(probs_fn, cand)
    best = _choose(probs_fn, cand, offsets, np.repeat(root_mover, nr), 0, util, opp_util, cand_probs)
    best_mover = flip_probs(cand_probs[best]).reshape(k, nr, 5)
    free = cand[best.reshape(k, nr)[inverse, r_actual]] if top == 0 else None
    mean = np.einsum("nrk,r->nk", best_mover, _ROLL_WEIGHTS)
    return best_mover[inverse, r_actual], mean[inverse], free


def _pruned(after: np.ndarray, offsets: np.ndarray, keep: int, margin: float = math.inf
            ) -> tuple[np.ndarray, np.ndarray]:
    """The ``keep`` plays of each segment that pubeval ranks highest (all of them when ``keep`` is 0),
    less those more than ``margin`` pubeval points below the best."""
    if keep <= 0:
        return after, offsets
    idx, new_offsets = _pubeval_top(after, offsets, keep, margin)
    return after[idx], new_offsets


def _pubeval_tables() -> tuple[np.ndarray, np.ndarray]:
    """Pubeval's weights as lookup tables: (2, 24, 31) value of each point's count (-15..15), (2, 2) bar/off weights.

    Index 0 is the race vector, 1 the contact one: a point's term is then one table
    read instead of pubeval's branches, for the fused ``_pubeval_top`` below.
    """
    from bgnet.nets.pubeval import CONTACT_WEIGHTS, RACE_WEIGHTS

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
    return tables, extra


_PUB_TABLES: tuple[np.ndarray, np.ndarray] | None = None


@njit(cache=True, nogil=True)
def _pubeval_top_kernel(after, offsets, k, margin, tables, extra, win_score):  # type: ignore[no-untyped-def]
    """Per segment: the ``k`` plays pubeval scores highest, less those more than ``margin`` below the best."""
    n = offsets.shape[0] - 1
    scores = np.empty(after.shape[0], np.float64)
    for i in range(after.shape[0]):
        scores[i] = _rk.pubeval_row(after[i], tables, extra, win_score)
    out = np.empty(n * k, np.int64)
    new_offsets = np.empty(n + 1, np.int64)
    top = np.empty(k, np.int64)
    m = 0
    for i in range(n):
        new_offsets[i] = m
        lo, hi = offsets[i], offsets[i + 1]
        c = 0
        for j in range(lo, hi):  # insertion into the sorted (best first) window of the best k
            if c < k:
                q = c
                c += 1
            elif scores[j] > scores[top[k - 1]]:
                q = k - 1
            else:
                continue
            while q > 0 and scores[top[q - 1]] < scores[j]:
                top[q] = top[q - 1]
                q -= 1
            top[q] = j
        if c == 0:
            continue
        best = scores[top[0]]
        kept = 0
        for q in range(c):
            if scores[top[q]] >= best - margin:
                kept += 1
        window = top[:kept].copy()
        window.sort()
        for q in range(kept):
            out[m] = window[q]
            m += 1
    new_offsets[n] = m
    return out[:m], new_offsets


def _pubeval_top(after: np.ndarray, offsets: np.ndarray, keep: int, margin: float = math.inf
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(indices, offsets)`` of each segment's best ``keep`` plays by pubeval (ties: the first), fused in one pass.

    ``margin`` drops those of them more than that many pubeval points below the
    segment's best (a fixed function of the position and roll, so a luck built on
    it stays an exact control variate).
    """
    global _PUB_TABLES
    if _PUB_TABLES is None:
        _PUB_TABLES = _pubeval_tables()
    from bgnet.nets.pubeval import WIN_SCORE

    return _pubeval_top_kernel(np.ascontiguousarray(after, np.int8), np.asarray(offsets, np.int64), int(keep),
                               float(margin), _PUB_TABLES[0], _PUB_TABLES[1], WIN_SCORE)  # type: ignore[no-any-return]


def _unique_rows(*arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)``: indices of the distinct rows of the arrays side by side, and each row's distinct one.

    Early in a rollout many trials share a position (at the first ply all of them
    do), so their plays are chosen once.
    """
    key = np.ascontiguousarray(np.concatenate([a.reshape(len(a), -1).astype(np.int8) for a in arrays], axis=1))
    packed = key.view(np.dtype((np.void, key.shape[1]))).ravel()
    _vals, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def _play(probs_fn: ProbsFn, boards: np.ndarray, dice: np.ndarray, root_mover: np.ndarray, ply: int, prune: int,
          util: Utility, opp_util: Utility) -> np.ndarray:
    """Each board's best play of its dice, as the next board (the other side on roll)."""
    first, inverse = _unique_rows(boards, dice, root_mover)
    after, _s, _n, offsets = generate_plays(boards[first], dice[first])
    after, offsets = _pruned(after, offsets, prune)
    cand = swap_sides_batch(after)
    return cand[_choose(probs_fn, cand, offsets, root_mover[first], ply, util, opp_util)][inverse]


# -- results -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CandidateResult:
    """One rolled-out candidate: mean chances for the root side, equities, standard errors, 95% intervals."""

    label: str
    probs: Probs
    """Mean cubeless chances of the root side (the mover of the play, or the side on roll)."""
    probs_stderr: tuple[float, float, float, float, float]
    equity: float
    """Cubeless equity (money, or normalised at the match score) of ``probs``."""
    equity_stderr: float
    cubeful_equity: float | None
    """Cubeful equity of the root side (Janowski's model from ``probs``), when asked."""
    cubeful_stderr: float | None
    trials: int
    """Trials done."""
    cubeful_mwc: float | None = None
    """Match play with cubeful trials: the mean match winning chance behind ``cubeful_equity``."""

    @property
    def equity_interval(self) -> tuple[float, float]:
        """The 95% interval of the cubeless equity."""
        return (self.equity - Z95 * self.equity_stderr, self.equity + Z95 * self.equity_stderr)

    @property
    def cubeful_interval(self) -> tuple[float, float] | None:
        """The 95% interval of the cubeful equity."""
        if self.cubeful_equity is None or self.cubeful_stderr is None:
            return None
        return (self.cubeful_equity - Z95 * self.cubeful_stderr, self.cubeful_equity + Z95 * self.cubeful_stderr)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"label": self.label, "probs": dict(zip(PROB_NAMES, self.probs.as_list())),
                "probs_stderr": dict(zip(PROB_NAMES, self.probs_stderr)), "equity": self.equity,
                "equity_stderr": self.equity_stderr, "equity_interval95": list(self.equity_interval),
                "cubeful_equity": self.cubeful_equity, "cubeful_stderr": self.cubeful_stderr,
                "cubeful_interval95": None if self.cubeful_interval is None else list(self.cubeful_interval),
                "cubeful_mwc": self.cubeful_mwc, "trials": self.trials}


@dataclass(frozen=True)
class RolloutResult:
    """The outcome of a rollout: one ``CandidateResult`` per candidate, in the order they were given."""

    position_id: str
    dice: tuple[int, int] | None
    candidates: tuple[CandidateResult, ...]
    settings: RolloutSettings
    seed: int
    trials_done: int
    state: MatchState | None = None
    interrupted: bool = False
    """True when the rollout was stopped (Ctrl-C) before all trials were done."""
    cube: dict[str, Any] | None = None
    """For a cube rollout: the decision ("action", "proper_cube_action", take point ...) from the rolled-out chances."""

    @property
    def best(self) -> CandidateResult:
        """The candidate with the highest (cubeful when present, else cubeless) equity."""
        return max(self.candidates, key=lambda r: r.cubeful_equity if r.cubeful_equity is not None else r.equity)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"position_id": self.position_id, "dice": None if self.dice is None else list(self.dice),
                "match": None if self.state is None else asdict(self.state), "seed": self.seed,
                "trials_requested": self.settings.trials, "trials_done": self.trials_done,
                "interrupted": self.interrupted, "settings": asdict(self.settings),
                "candidates": [r.to_dict() for r in self.candidates], "cube": self.cube}

    def format(self) -> str:
        """Text in the style of GNU Backgammon's rollout output."""
        s = self.settings
        where = "money game" if self.state is None or self.state.is_money else str(self.state)
        head = f"Position ID {self.position_id}"
        head += f", dice {self.dice[0]}-{self.dice[1]}" if self.dice else ", cube decision"
        lines = [f"{head}, {where}", ""]
        best = self.best
        for i, r in enumerate(self.candidates, 1):
            p = r.probs
            se = r.probs_stderr
            eq = f"CL {r.equity:+.3f}"
            eq_se = f"CL {r.equity_stderr:6.3f}"
            if r.cubeful_equity is not None and r.cubeful_stderr is not None:
                eq += f" CF {r.cubeful_equity:+.3f}"
                eq_se += f" CF {r.cubeful_stderr:6.3f}"
            diff = "" if r is best or self.cube is not None else f" ({(r.cubeful_equity if r.cubeful_equity is not None else r.equity) - (best.cubeful_equity if best.cubeful_equity is not None else best.equity):+.3f})"
            lines.append(f"{i}. {r.label}:{diff}")
            lines.append(f"  {p.win:.3f} {p.win_gammon:.3f} {p.win_backgammon:.3f} - "
                         f"{p.lose:.3f} {p.lose_gammon:.3f} {p.lose_backgammon:.3f} {eq}")
            lines.append(f" [{se[0]:.3f} {se[1]:.3f} {se[2]:.3f} - {se[0]:.3f} {se[3]:.3f} {se[4]:.3f} {eq_se}]")
            lo, hi = r.equity_interval
            lines.append(f"  95% interval (cubeless) {lo:+.3f} .. {hi:+.3f}")
        if self.cube is not None and self.cube.get("method") == "cubeful trials":
            lines.append("")
            lines.append("Cubeful equities:")
            nd, dt, dp = (self.cube["equity_no_double"], self.cube["equity_double_take"],
                          self.cube["equity_double_pass"])
            opts = [("No double", nd)] + ([] if dt is None else [("Double, take", dt), ("Double, pass", dp)])
            top = nd if dt is None else max(nd, min(dt, dp))
            for i, (name, eq) in enumerate(opts, 1):
                diff = "" if abs(eq - top) < 5e-7 else f" ({eq - top:+.3f})"
                lines.append(f"{i}. {name:<14}{eq:+.3f}{diff}")
        lines.append("")
        cubeful_trials = any(r.cubeful_equity is not None for r in self.candidates) and (
            self.cube is None or self.cube.get("method") == "cubeful trials")
        lines.append(s.describe().replace("cubeless rollout", "cubeful rollout") if cubeful_trials
                     else s.describe())
        lines.append(f"{self.trials_done} games{' (stopped early)' if self.interrupted else ''}, "
                     f"counter-based dice with seed {self.seed}")
        play = f"Play: {s.ply}-ply cubeless" + (f", pruned to pubeval's best {s.prune}" if s.prune else "")
        if s.truncate is not None:
            play += f"; truncation evaluation {s.truncate_eval_ply}-ply"
        if s.luck_vr:
            plays = "play" if s.luck_candidates == 1 else f"{s.luck_candidates} plays"
            ranked = (f"pubeval's best {plays}" if s.luck_ranker == "pubeval"
                      else f"the fitted ranker's best {plays} of pubeval's {_ranker.default().window}")
            unit = "pubeval points" if s.luck_ranker == "pubeval" else "ranker points"
            play += ("; luck judged on the checker play's choice" if s.luck_candidates == 0
                     else f"; luck judged on {ranked} for each roll"
                     + ("" if s.luck_margin is None else f" within {s.luck_margin:g} {unit}")
                     + (f", doubles by a beam of {s.luck_beam}" if s.luck_beam else ""))
        lines.append(play)
        if cubeful_trials:
            lines.append("Cube: played in every trial by bgnet.cube.decision on the net's 0-ply chances before each roll"
                         + ("; cubeful results less each roll's luck times the cube" if s.luck_vr else ""))
        if self.cube is not None:
            lines.append(f"Proper cube action: {self.cube['proper_cube_action']}"
                         + (f" (Janowski on the rolled-out chances: {self.cube['janowski_action']})"
                            if self.cube.get("janowski_action") else ""))
        return "\n".join(lines)


def _stats(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean (5,), standard errors (5,) and covariance of the mean (5, 5) of per-trial rows (n, 5)."""
    n = len(values)
    mean = values.mean(axis=0)
    if n < 2:
        return mean, np.zeros(5), np.zeros((5, 5))
    cov = np.cov(values, rowvar=False, ddof=1) / n
    return mean, np.sqrt(np.maximum(np.diag(cov), 0.0)), cov


def _clamp_probs(p: np.ndarray) -> Probs:
    """Mean chances made consistent (VR can push a mean a hair outside [0, 1] or out of order)."""
    w = min(1.0, max(0.0, float(p[0])))
    wg = min(w, max(0.0, float(p[1])))
    wb = min(wg, max(0.0, float(p[2])))
    lg = min(1.0 - w, max(0.0, float(p[3])))
    lb = min(lg, max(0.0, float(p[4])))
    return Probs(w, wg, wb, lg, lb)


def cubeful_after_play(probs: Probs, after_next: Position, state: MatchState) -> float:
    """Cubeful equity of a play's mover, whose opponent is on roll in ``after_next``, from the mover's chances.

    The opponent takes his best cube action (``bgnet.cube.decision``), the mover answers his best way.
    """
    return -cube_decision(probs.flip(), state.swap_sides(), after_next).equity


def _cubeful_value(cd: Candidate, probs: Probs, state: MatchState, line: str = "auto") -> float:
    """Cubeful equity of the root side for a candidate with rolled-out chances ``probs``.

    ``line`` for a position (the root side on roll): "no double" or "double, take";
    a play's value is after the opponent's best cube action.
    """
    board = Position._trusted(cd.board)
    if cd.root_on_roll:
        d = cube_decision(probs, state, board)
        if line == "double, take":
            if d.equity_double_take is None:
                raise RolloutError("the side on roll cannot double at this score and cube")
            return d.equity_double_take
        return d.equity_no_double
    return cubeful_after_play(probs, board, state)


def cubeful_stats(trials: np.ndarray, state: MatchState | None) -> tuple[float, float, float | None]:
    """``(equity, stderr, mwc)`` of a cube line's per-trial results (see ``ChunkResult.cubeful``).

    Money: points per root cube; match: GNU Backgammon's normalised equity (EMG) of
    the mean match winning chance, which is also returned.
    """
    st = state or MatchState()
    n = len(trials)
    mean = float(trials.mean())
    se = float(trials.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0
    if st.is_money:
        return mean, se, None
    w1, l1 = cube_units(st)
    scale = 2.0 / (w1 - l1) if w1 > l1 else 0.0
    return scale * (mean - l1) - 1.0, scale * se, mean


def _candidate_result(cd: Candidate, values: np.ndarray, state: MatchState | None, cubeful: bool,
                      label: str | None = None, line: str = "auto", cf_trials: np.ndarray | None = None
                      ) -> CandidateResult:
    """Statistics of one candidate's per-trial rows (``line``: which cube line of a position, see ``_cubeful_value``).

    ``cf_trials``: the per-trial results of the cubeful trials of this line (else the
    cubeful equity is Janowski's conversion of the mean chances).
    """
    util = utility_for(state)
    mean, se, cov = _stats(values)
    w = np.asarray(util.weights, np.float64)
    equity = float(util.const + mean @ w)
    eq_se = float(math.sqrt(max(w @ cov @ w, 0.0)))
    cf = cf_se = mwc = None
    if cf_trials is not None:
        cf, cf_se, mwc = cubeful_stats(cf_trials, state)
    elif cubeful:
        st = state or MatchState()
        cf = _cubeful_value(cd, _clamp_probs(mean), st, line)
        grad = np.zeros(5)
        h = 1e-4  # delta method with a numerical gradient of the cubeful conversion
        for i in range(5):
            e = np.zeros(5)
            e[i] = h
            grad[i] = (_cubeful_value(cd, _clamp_probs(mean + e), st, line)
                       - _cubeful_value(cd, _clamp_probs(mean - e), st, line)) / (2 * h)
        cf_se = float(math.sqrt(max(grad @ cov @ grad, 0.0)))
    return CandidateResult(label or cd.label, _clamp_probs(mean), tuple(float(x) for x in se),  # type: ignore[arg-type]
                           equity, eq_se, cf, cf_se, int(len(values)), mwc)


def combine(chunks: Sequence[ChunkResult], candidates: Sequence[Candidate], *, position_id: str,
            dice: tuple[int, int] | None, settings: RolloutSettings, seed: int, state: MatchState | None = None,
            cubeful: bool = False, interrupted: bool = False) -> RolloutResult:
    """The rollout result of some chunks (in any order; trials are put back in their global order).

    A cube rollout (``dice`` None, one candidate: the position) reports two lines
    from the same trials: "No double" and "Double, take", with cubeful equities.
    """
    ordered = sorted(chunks, key=lambda ch: ch.first_trial)
    if not ordered or sum(ch.values.shape[1] for ch in ordered) == 0:
        raise RolloutError("the rollout was stopped before any trial finished")
    values = np.concatenate([ch.values for ch in ordered], axis=1)
    trial_cube = (np.concatenate([ch.cubeful for ch in ordered], axis=2)  # type: ignore[misc]
                  if all(ch.cubeful is not None for ch in ordered) else None)
    cube = None
    if dice is None and len(candidates) == 1 and candidates[0].root_on_roll:
        cd = candidates[0]
        st = state or MatchState()
        if trial_cube is not None:
            lines = ["no double", "double, take"][:len(cd.cube_lines)]
        else:
            lines = ["no double"] + (["double, take"] if st.may_double else [])
        results = tuple(_candidate_result(cd, values[0], state, True, line.capitalize(), line,
                                          None if trial_cube is None else trial_cube[0, i])
                        for i, line in enumerate(lines))
        cube = _cube_summary(results[0].probs, st, Position._trusted(cd.board))
        if trial_cube is not None:
            cube.update(_rolled_cube_action(results, st))
    else:
        results = tuple(_candidate_result(cd, values[i], state, cubeful, None, "auto",
                                          None if trial_cube is None or not cd.cube_lines else trial_cube[i, 0])
                        for i, cd in enumerate(candidates))
    return RolloutResult(position_id, dice, results, settings, seed, int(values.shape[1]), state, interrupted, cube)


def _chunk_task(shared: tuple[Any, ...], chunk: tuple[int, int], _seed: int) -> ChunkResult:
    """``bgnet.sim.backends`` chunk function: one ``rollout_chunk`` (the dice come from the rollout's seed and the
    trial numbers, so the backend's per-chunk seed is not used)."""
    probs_fn, candidates, settings, seed, state, bo = shared
    return rollout_chunk(probs_fn, candidates, chunk[0], chunk[1], settings, seed, state, bo)


@dataclass(frozen=True)
class ChunkTask:
    """``rollout_chunk`` with everything but the chunk bound: ``task((chunk_index, trials_in_chunk))``.

    A plain picklable object (when ``probs_fn`` is), so that a backend's ``map_fn``
    can ship it to other processes or machines.
    """

    probs_fn: ProbsFn
    candidates: tuple[Candidate, ...]
    settings: RolloutSettings
    seed: int
    state: MatchState | None = None
    bearoff_fn: BearoffFn | None = None

    def __call__(self, chunk: tuple[int, int]) -> ChunkResult:
        return rollout_chunk(self.probs_fn, self.candidates, chunk[0], chunk[1], self.settings, self.seed,
                             self.state, self.bearoff_fn)


def chunk_plan(settings: RolloutSettings) -> list[tuple[int, int]]:
    """``(chunk_index, trials_in_chunk)`` for every chunk of ``settings.trials``."""
    size = settings.chunk_size
    return [(k, min(size, settings.trials - k * size)) for k in range((settings.trials + size - 1) // size)]


# -- the Python API -----------------------------------------------------------------------


def _probs_fn_of(agent_or_probs_fn: Any) -> ProbsFn:
    """The 0-ply ``boards -> probs`` function of an agent or evaluator, or the callable itself."""
    for name in ("probs_fn", "probs_of_boards"):
        fn = getattr(agent_or_probs_fn, name, None)
        if callable(fn):
            return fn  # type: ignore[no-any-return]
    if callable(agent_or_probs_fn):
        return agent_or_probs_fn  # type: ignore[no-any-return]
    raise RolloutError(f"{agent_or_probs_fn!r} is neither an agent with probs_fn nor a boards -> probs function")


def rollout(agent_or_probs_fn: Any, position: Position | str, dice: Sequence[int] | str | None = None, *,
            plays: Sequence[str] | None = None, settings: RolloutSettings | None = None, seed: int = 0,
            cubeful: bool = False, state: MatchState | None = None, map_fn: Callable[..., Iterable[ChunkResult]] | None = None,
            bearoff_fn: BearoffFn | None | str = "auto", progress: bool = False, backend: Backend | None = None,
            cube_in_trials: bool = True, **overrides: Any) -> RolloutResult:
    """Roll out the plays of ``dice`` in ``position`` (or, without dice, its cube decision) and return the result.

    ``plays`` (texts such as ``"8/5 6/5"``) picks the plays; by default the hint's
    move filter keeps the best and those within 0.16 of it. Without dice the
    position is rolled out with its side on roll rolling first, and its cube
    decision (no double against double/take) comes from the rolled-out chances.
    Cubeful equities come from the cube played inside the trials; ``cube_in_trials=False``
    plays them cubeless and converts the rolled-out chances by Janowski's model instead.
    ``overrides`` are ``RolloutSettings`` fields (``trials=144, truncate=7``).
    ``map_fn(func, chunk_args)`` runs chunks elsewhere (default: here, in order), or ``backend``
    (``bgnet.sim.backends``: local or Ray) runs them with the net sent once; the result is the same;
    Ctrl-C stops and returns the trials finished so far (``interrupted``).
    """
    probs_fn = _probs_fn_of(agent_or_probs_fn)
    pos = Position.parse(position) if isinstance(position, str) else position
    if pos.is_game_over():
        raise RolloutError("the game in this position is over: one side has borne off all 15 checkers")
    settings = replace(settings or RolloutSettings(), **overrides) if overrides else (settings or RolloutSettings())
    bo: BearoffFn | None = _default_bearoff() if bearoff_fn == "auto" else bearoff_fn  # type: ignore[assignment]
    if bo is None and settings.bearoff:
        settings = replace(settings, bearoff=False)  # no database: say so in the result
    d = parse_dice(dice) if dice is not None else None
    st = state or MatchState()
    if d is not None:
        candidates = play_candidates(pos, d, plays, probs_fn, state)
        if cubeful and cube_in_trials:
            candidates = [replace(cd, cube_lines=((st.cube_value, st.cube_owner),)) for cd in candidates]
    else:
        if plays:
            raise RolloutError("--plays needs dice: without dice the cube decision is rolled out")
        now = cube_decision(_clamp_probs(_net(probs_fn, np.array(pos.board, np.int8)[None, :])[0]), st, pos)
        lines: tuple[tuple[int, str], ...] = ((st.cube_value, st.cube_owner),)
        if now.equity_double_take is not None:  # the side on roll may double: "Double, take" gives the cube away
            lines += ((2 * st.cube_value, "opponent"),)
        candidates = [replace(position_candidate(pos), cube_lines=lines) if cube_in_trials else position_candidate(pos)]
        cubeful = True
    plan = chunk_plan(settings)
    run = ChunkTask(probs_fn, tuple(candidates), settings, seed, state, bo)
    done: list[ChunkResult] = []
    interrupted = False
    bar = _progress_bar(settings.trials, progress)
    try:
        source = (map_fn or map)(run, plan) if backend is None else backend.imap(
            _chunk_task, plan, (probs_fn, candidates, settings, seed, state, bo))  # the net travels once per rollout
        for ch in source:
            done.append(ch)
            if bar is not None:
                bar.update(ch.values.shape[1])
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if bar is not None:
            bar.close()
    return combine(done, candidates, position_id=pos.position_id(), dice=d, settings=settings, seed=seed,
                   state=state, cubeful=cubeful, interrupted=interrupted)


def _cube_summary(probs: Probs, state: MatchState, pos: Position) -> dict[str, Any]:
    """The cube decision from rolled-out chances, as a JSON-ready dict."""
    d = cube_decision(probs, state, pos)
    return {"janowski_action": d.proper_cube_action, "action": d.action, "proper_cube_action": d.proper_cube_action, "response": d.response,
            "equity_no_double": d.equity_no_double, "equity_double_take": d.equity_double_take,
            "equity_double_pass": d.equity_double_pass, "take_point": d.take_point}


def _rolled_cube_action(results: Sequence[CandidateResult], state: MatchState) -> dict[str, Any]:
    """The cube decision from the rolled-out cubeful equities of "No double" and "Double, take" (pass = +1)."""
    nd = results[0].cubeful_equity
    assert nd is not None
    out: dict[str, Any] = {"method": "cubeful trials"}
    word = "redouble" if state.cube_owner == "me" else "double"
    if len(results) < 2 or results[1].cubeful_equity is None:
        out.update(action="no double", proper_cube_action=f"No {word} (no access to the cube or a dead cube)",
                   response=None, equity_no_double=nd, equity_double_take=None, equity_double_pass=None)
        return out
    dt, dp = results[1].cubeful_equity, 1.0
    response = "pass" if dt >= dp else "take"
    double_value = min(dt, dp)
    if double_value >= nd:
        action, text = ("double, pass" if response == "pass" else "double, take"), f"{word.capitalize()}, {response}"
    elif nd > dp:
        action, text = "too good", f"Too good to {word}, {response}"
    else:
        action, text = "no double", f"No {word}, {response}"
    out.update(action=action, proper_cube_action=text, response=response, equity_no_double=nd,
               equity_double_take=dt, equity_double_pass=dp)
    return out


def _progress_bar(total: int, enabled: bool) -> Any:
    """A tqdm bar on stderr, or None."""
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, unit="trial", desc="rollout", leave=False)


def thread_map(workers: int) -> Callable[..., Iterator[ChunkResult]]:
    """A ``map_fn`` that runs chunks on ``workers`` threads (the kernels and numpy release the GIL), in order.

    When the caller stops early (Ctrl-C), chunks not yet started are cancelled.
    """
    def mapper(func: Callable[[Any], ChunkResult], items: Iterable[Any]) -> Iterator[ChunkResult]:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max(1, workers))
        try:
            futures = [pool.submit(func, item) for item in items]
            for fut in futures:
                yield fut.result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    return mapper


# -- the teacher: labels for supervised training ------------------------------------------


@dataclass(frozen=True)
class Targets:
    """Supervised targets: boards (N, 26) int8, chances (N, 5) for each board's side on roll, standard errors."""

    boards: np.ndarray
    probs: np.ndarray
    stderr: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)


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
    bo: BearoffFn | None = _default_bearoff() if bearoff_fn == "auto" else bearoff_fn  # type: ignore[assignment]
    probs = np.zeros((n, 5), np.float64)
    stderr = np.zeros((n, 5), np.float64)
    per = max(1, batch // trials)  # positions whose trials advance together
    groups = [(s, boards[s:s + per], int(_hash(seed, 0x7EAC4E5, s)) & 0x7FFFFFFFFFFFFFFF) for s in range(0, n, per)]
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
        raise ValueError(f"evaluate_pruned needs ply >= 1 and top >= 1, got ply {ply}, top {top}")

    def pruned_1ply(live: np.ndarray) -> np.ndarray:
        n = len(live)
        return _roll_values(probs_fn, live, np.zeros(n, np.int64), np.ones(n, bool), top, 0, MONEY, MONEY)[1]

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
        mean, se, _cov = _stats(ch.values[i])
        probs[i] = np.asarray(_clamp_probs(mean).as_list())
        stderr[i] = se
    return probs, stderr


def save_targets(path: str | os.PathLike[str], boards: np.ndarray, probs: np.ndarray, stderr: np.ndarray,
                 **meta: Any) -> None:
    """Write targets to ``path`` (.npz) atomically: a temporary file in the same folder, then a rename."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, boards=np.asarray(boards, np.int8), probs=np.asarray(probs, np.float32),
                     stderr=np.asarray(stderr, np.float32),
                     meta=np.array([f"{k}={v}" for k, v in sorted(meta.items())]))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_targets(path: str | os.PathLike[str]) -> Targets:
    """Targets written by ``save_targets`` (read with ``allow_pickle=False``)."""
    with np.load(os.fspath(path), allow_pickle=False) as data:
        meta = dict(str(x).split("=", 1) for x in data["meta"]) if "meta" in data else {}
        return Targets(data["boards"].astype(np.int8), data["probs"].astype(np.float32),
                       data["stderr"].astype(np.float32), meta)


def _main(argv: Sequence[str] | None = None) -> int:
    """``python -m bgnet.sim.rollout label IN.npz OUT.npz [--trials N] [--ply N] [--seed S] [--model PATH]
    [--backend local|ray] [--ray-address ADDRESS]``."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m bgnet.sim.rollout",
                                     description="Label positions for supervised training with rollouts or n-ply evaluations.")
    sub = parser.add_subparsers(dest="command", required=True)
    lab = sub.add_parser("label", help="IN.npz (an array 'boards' (N, 26) int8) -> OUT.npz (boards, probs, stderr)")
    lab.add_argument("inp", metavar="IN.npz")
    lab.add_argument("out", metavar="OUT.npz")
    lab.add_argument("--trials", type=int, default=0, help="trials per position (0: evaluate at --ply instead)")
    lab.add_argument("--ply", type=int, default=0, help="checker play in the trials, or the evaluation depth")
    lab.add_argument("--truncate", type=int, default=None, help="truncate trials after this many plies")
    lab.add_argument("--seed", type=int, default=0)
    lab.add_argument("--model", default=None, help="checkpoint (default: the shipped net)")
    lab.add_argument("--backend", choices=("local", "ray"), default="local",
                     help="where the groups of positions run: this process or a Ray cluster (same targets)")
    lab.add_argument("--ray-address", metavar="ADDRESS", default=None,
                     help="Ray cluster to attach to (default: a local Ray instance)")
    lab.add_argument("--workers", type=int, default=None, help="Ray tasks in flight (default: every CPU of the cluster)")
    args = parser.parse_args(argv)
    try:
        with np.load(args.inp, allow_pickle=False) as data:
            if "boards" not in data:
                raise RolloutError(f"{args.inp} has no array named 'boards'")
            boards = np.asarray(data["boards"])
        if boards.ndim != 2 or boards.shape[1] != 26:
            raise RolloutError(f"'boards' in {args.inp} must be (N, 26), got {boards.shape}")
        from bgnet.nets.fastnet import load_numpy_net
        from bgnet.core.resources import default_checkpoint

        fn = load_numpy_net(args.model or default_checkpoint()).probs_of_boards
        settings = RolloutSettings(trials=max(1, args.trials), ply=min(args.ply, 1) if args.trials > 0 else 0,
                                   truncate=args.truncate)
        from bgnet.sim.backends import make_backend, single_blas_thread

        single_blas_thread()  # one BLAS thread, as on Ray's workers: --backend local and ray give the same bits
        backend = (make_backend(args.backend, args.workers, args.ray_address)
                   if args.backend == "ray" or args.ray_address else None)
        b, p, se = label_positions(fn, boards, trials=args.trials, ply=args.ply, seed=args.seed, settings=settings,
                                   backend=backend)
        save_targets(args.out, b, p, se, trials=args.trials, ply=args.ply, seed=args.seed,
                     truncate=args.truncate, model=args.model or "default")
    except (ValueError, OSError) as err:
        print(f"python -m bgnet.sim.rollout: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    print(f"wrote {len(b)} targets to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
