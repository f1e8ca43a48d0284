"""A rollout's trials: one chunk of them, all candidates' trials advancing together in arrays.

All trials of all candidates advance together, as in ``bgnet.sim.selfplay``: each ply
the cube is decided (cubeful lines, ``bgnet.sim.rollout_cube``), the roll comes from
``bgnet.sim.rollout_dice``, its luck is valued (``bgnet.sim.rollout_luck``) and the
play is chosen (``bgnet.sim.rollout_play``). A trial ends when its game does, at the
bear-off database (``bgnet.nets.bearoff``, exact), or after ``truncate`` plies
(scored by the evaluator).

``rollout_chunk`` is a pure function of its arguments: the dice of trial ``i`` at
ply ``t`` depend only on ``(seed, i, t)``, so chunks can run anywhere (``map_fn``,
a Ray backend) and the combined result does not depend on where they ran.
``chunk_plan`` yields the chunks lazily, small ones first, so that a rollout of any
number of trials holds only the chunks in flight and Ctrl-C soon has trials to show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from bgnet.core import _game_kernels as gk
from bgnet.core.probs import flip_probs
from bgnet.core.protocols import ProbsFn
from bgnet.cube.match import MatchState
from bgnet.nets.pruning import PrunedEvaluator
from bgnet.play.search import evaluate_boards, utility_for
from bgnet.sim.rollout_candidates import Candidate
from bgnet.sim.rollout_cube import CubeTracks
from bgnet.sim.rollout_dice import DICE36, dice_for
from bgnet.sim.rollout_luck import FLIP_LINEAR, roll_values
from bgnet.sim.rollout_play import net_probs, play, unique_rows
from bgnet.sim.rollout_settings import RolloutError, RolloutSettings

FIRST_CHUNK = 36
"""Trials in a rollout's first chunk (when ``chunk_size`` is larger): each next chunk is three times the one
before, up to ``chunk_size``, so the first trials finish within about a second and Ctrl-C has them to show."""

BearoffFn = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
"""Maps boards (N, 26) to (mask (N,) bool, probs (N, 5)): exact chances where ``mask`` is set."""


@dataclass(frozen=True)
class ChunkResult:
    """Per-trial results of one chunk: arrays (candidates, trials, 5) of the root side's chances."""

    first_trial: int
    """The global number of the chunk's first trial."""
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


def default_bearoff() -> BearoffFn | None:
    """``bgnet.nets.bearoff.exact_probs`` when that module exists, else None (no truncation at the database)."""
    try:
        from bgnet.nets.bearoff import exact_probs
    except ImportError:
        return None
    return exact_probs


class ChunkStopped(RolloutError):
    """Raised inside a chunk whose ``should_stop`` callback said so (a rollout stopped while chunks run on threads)."""


def rollout_chunk(probs_fn: ProbsFn, candidates: Sequence[Candidate], first_trial: int, trials_in_chunk: int,
                  settings: RolloutSettings, seed: int, state: MatchState | None = None,
                  bearoff_fn: BearoffFn | None = None,
                  should_stop: Callable[[], bool] | None = None) -> ChunkResult:
    """Play trials ``first_trial`` onwards (``trials_in_chunk`` of them) of every candidate.

    A pure function of its arguments: the same chunk gives the same arrays wherever it runs.
    ``should_stop`` is asked before every ply; when it answers True the chunk raises ``ChunkStopped``.
    """
    first = int(first_trial)
    n, c = int(trials_in_chunk), len(candidates)
    if n < 0 or first < 0:
        raise RolloutError(f"a chunk of {trials_in_chunk} trials from trial {first_trial} does not exist")
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
    known = np.full((m, 5), np.nan)  # each trial's 0-ply chances of its board, where its last play gave them
    truncate = settings.truncate
    lines_per = [len(cd.cube_lines) for cd in candidates]
    cube = CubeTracks(candidates, n, state or MatchState()) if any(lines_per) else None
    luck_fn: ProbsFn | None = None
    play_fn: ProbsFn = probs_fn
    if isinstance(probs_fn, PrunedEvaluator):  # its student or pruning net values the luck's plays; it picks the plays
        luck_net = {"pruning": probs_fn.pruning, "student": probs_fn.student}.get(settings.luck_net)
        luck_fn = None if luck_net is None else luck_net.probs_of_boards
        play_fn = probs_fn if settings.pruned_play else probs_fn.inner.probs_of_boards

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
    while True:
        live = np.flatnonzero(~done)
        if len(live) == 0:
            break
        if should_stop is not None and should_stop():
            raise ChunkStopped
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
            _lines, where = cube.active(live)
            asked = np.unique(where)
            # The root side's own action before its first roll is the candidate's ("No double", "Double, take").
            asked = asked[~((ply[live[asked]] == 0) & root_mover[asked])]
            if len(asked):  # the cube before the roll, on the net's chances of the position (once per position)
                before = known[live[asked]]
                need = np.flatnonzero(np.isnan(before[:, 0]))  # the root's positions; the rest, the play just made
                if len(need):
                    first_rows, inverse = unique_rows(b[asked[need]], root_mover[asked[need]])
                    before[need] = net_probs(probs_fn, np.ascontiguousarray(b[asked[need]][first_rows]))[inverse]
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
                got, mean, free = roll_values(play_fn, b[rows], outcome[rows], root_mover[rows],
                                              settings.luck_candidates, settings.prune, util, opp_util,
                                              math.inf if settings.luck_margin is None else settings.luck_margin,
                                              settings.luck_ranker, luck_fn)
                diff = got - mean
                root_diff = np.where(root_mover[rows, None], diff, diff @ FLIP_LINEAR)
                luck[live[rows]] += root_diff
                if cube is not None:
                    cube.add_luck(live[rows], root_diff @ np.asarray(util.weights, np.float64))
                if settings.luck_decided > 0 and settings.luck_candidates > 0:
                    eps = settings.luck_decided
                    decided[live[rows]] = ((got <= eps) | (got >= 1.0 - eps)).all(axis=1)
            nxt, nxt_probs = free if settings.ply == 0 and free is not None else \
                play(play_fn, b, DICE36[outcome], root_mover, settings.ply, settings.prune, util, opp_util)
        else:
            nxt, nxt_probs = play(play_fn, b, DICE36[outcome], root_mover, settings.ply, settings.prune, util, opp_util)
        boards[live] = nxt
        if cube is not None:  # the cube's evaluator valued the next position, unless the play had another
            known[live] = nxt_probs if play_fn is probs_fn else np.nan
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
    raw = final.reshape(c, n, 5)
    values = (final - luck).reshape(c, n, 5)
    cf = cube.results(c, n, lines_per) if cube is not None else None
    return ChunkResult(first, values, raw.copy(), ply.reshape(c, n).copy(), cf)


def run_chunk(shared: tuple[Any, ...], chunk: tuple[int, int], _seed: int) -> ChunkResult:
    """``bgnet.sim.backends`` chunk function: one ``rollout_chunk`` of ``chunk = (first_trial, trials)`` (the dice
    come from the rollout's seed and the trial numbers, so the backend's per-chunk seed is not used)."""
    probs_fn, candidates, settings, seed, state, bo = shared
    return rollout_chunk(probs_fn, candidates, chunk[0], chunk[1], settings, seed, state, bo)


@dataclass(frozen=True)
class ChunkTask:
    """``rollout_chunk`` with everything but the chunk bound: ``task((first_trial, trials_in_chunk))``.

    A plain picklable object (when ``probs_fn`` is and ``stop`` is None), so that a
    backend's ``map_fn`` can ship it to other processes or machines; ``stop`` lets a
    thread pool stop its running chunks (``rollout_chunk``).
    """

    probs_fn: ProbsFn
    candidates: tuple[Candidate, ...]
    settings: RolloutSettings
    seed: int
    state: MatchState | None = None
    bearoff_fn: BearoffFn | None = None
    stop: Callable[[], bool] | None = field(default=None, compare=False, repr=False)

    def __call__(self, chunk: tuple[int, int]) -> ChunkResult:
        return rollout_chunk(self.probs_fn, self.candidates, chunk[0], chunk[1], self.settings, self.seed,
                             self.state, self.bearoff_fn, self.stop)


def chunk_plan(settings: RolloutSettings) -> Iterator[tuple[int, int]]:
    """``(first_trial, trials_in_chunk)`` of every chunk of ``settings.trials``, made as they are asked for.

    The first has ``FIRST_CHUNK`` trials, each next one three times as many, up to
    ``settings.chunk_size``: a function of the settings alone, so every backend and
    worker count plays the same chunks.
    """
    first, size = 0, min(FIRST_CHUNK, settings.chunk_size)
    while first < settings.trials:
        n = min(size, settings.trials - first)
        yield first, n
        first += n
        size = min(3 * size, settings.chunk_size)
