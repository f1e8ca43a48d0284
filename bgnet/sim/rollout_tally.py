"""A rollout's running statistics: chunks of trials folded in as they finish, in trial order, then one result.

A rollout keeps no per-trial arrays: each chunk's rows go into a ``Moments`` per
candidate (and per cube line) and are dropped, so its memory does not grow with
the number of trials. Chunks are folded in trial order (a chunk that finishes
early waits for the ones before it), so the same chunks give the same bits on
any backend and worker count, and a stopped rollout's result is that of its
first ``trials_done`` trials.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from bgnet.core.position import Position
from bgnet.cube.match import MatchState
from bgnet.play.search import utility_for
from bgnet.sim.rollout_candidates import Candidate
from bgnet.sim.rollout_cube import candidate_cubeful, cube_summary, cubeful_stats, rolled_cube_action
from bgnet.sim.rollout_result import CandidateResult, RolloutResult
from bgnet.sim.rollout_settings import RolloutError, RolloutSettings
from bgnet.sim.rollout_stats import Moments, clamp_probs
from bgnet.sim.rollout_trials import ChunkResult


class RolloutTally:
    """Each candidate's running statistics over the trials folded in so far (trials 0 to ``trials_done`` - 1)."""

    def __init__(self, candidates: Sequence[Candidate]) -> None:
        self.candidates = tuple(candidates)
        self.values = [Moments(5) for _ in self.candidates]
        """Per candidate: the trials' chances (less their luck)."""
        self.lines = [Moments(len(cd.cube_lines)) for cd in self.candidates]
        """Per candidate: its cube lines' cubeful results (less their luck), one column a line."""
        self.trials_done = 0
        self._waiting: dict[int, ChunkResult] = {}

    def add(self, chunk: ChunkResult) -> None:
        """Fold in a finished chunk, or keep it until the chunks before it have come."""
        self._waiting[chunk.first_trial] = chunk
        while self.trials_done in self._waiting:
            ch = self._waiting.pop(self.trials_done)
            for i, cd in enumerate(self.candidates):
                self.values[i].add(ch.values[i])
                if cd.cube_lines and ch.cubeful is not None:
                    self.lines[i].add(ch.cubeful[i, :len(cd.cube_lines)].T)
            self.trials_done += ch.values.shape[1]

    def result(self, *, position_id: str, dice: tuple[int, int] | None, settings: RolloutSettings, seed: int,
               state: MatchState | None = None, cubeful: bool = False, interrupted: bool = False) -> RolloutResult:
        """The rollout result over the trials folded in so far.

        A cube rollout (``dice`` None, one candidate: the position) reports two lines
        from the same trials: "No double" and "Double, take", with cubeful equities.
        """
        if self.trials_done == 0:
            raise RolloutError("the rollout was stopped before any trial finished")
        cube = None
        trial_lines = any(cd.cube_lines for cd in self.candidates)
        if dice is None and len(self.candidates) == 1 and self.candidates[0].root_on_roll:
            cd = self.candidates[0]
            st = state or MatchState()
            if trial_lines:
                lines = ["no double", "double, take"][:len(cd.cube_lines)]
            else:
                lines = ["no double"] + (["double, take"] if st.may_double else [])
            results = tuple(self._candidate(0, state, True, line.capitalize(), line, i if trial_lines else None)
                            for i, line in enumerate(lines))
            cube = cube_summary(results[0].probs, st, Position._trusted(cd.board))
            if trial_lines:
                nd = results[0].cubeful_equity
                assert nd is not None
                cube.update(rolled_cube_action(nd, results[1].cubeful_equity if len(results) > 1 else None, st))
        else:
            results = tuple(self._candidate(i, state, cubeful, None, "auto", 0 if cd.cube_lines else None)
                            for i, cd in enumerate(self.candidates))
        return RolloutResult(position_id, dice, results, settings, seed, self.trials_done, state, interrupted, cube)

    def _candidate(self, index: int, state: MatchState | None, cubeful: bool, label: str | None, line: str,
                   cube_line: int | None) -> CandidateResult:
        """Statistics of one candidate (``line``: which cube line of a position, see ``candidate_cubeful``).

        ``cube_line``: the column of the candidate's cubeful trials to report (else, with
        ``cubeful``, the cubeful equity is Janowski's conversion of the mean chances).
        """
        cd = self.candidates[index]
        util = utility_for(state)
        mean, se, cov = self.values[index].stats()
        w = np.asarray(util.weights, np.float64)
        equity = float(util.const + mean @ w)
        eq_se = float(math.sqrt(max(w @ cov @ w, 0.0)))
        cf = cf_se = mwc = None
        if cube_line is not None:
            line_mean, line_se, _cov = self.lines[index].stats()
            cf, cf_se, mwc = cubeful_stats(float(line_mean[cube_line]), float(line_se[cube_line]), state)
        elif cubeful:
            st = state or MatchState()
            cf = candidate_cubeful(cd, clamp_probs(mean), st, line)
            grad = np.zeros(5)
            h = 1e-4  # delta method with a numerical gradient of the cubeful conversion
            for i in range(5):
                e = np.zeros(5)
                e[i] = h
                grad[i] = (candidate_cubeful(cd, clamp_probs(mean + e), st, line)
                           - candidate_cubeful(cd, clamp_probs(mean - e), st, line)) / (2 * h)
            cf_se = float(math.sqrt(max(grad @ cov @ grad, 0.0)))
        after = None if cd.root_on_roll else Position._trusted(cd.board).swap_sides().position_id()
        se5: tuple[float, float, float, float, float] = tuple(float(x) for x in se)  # type: ignore[assignment]
        return CandidateResult(label or cd.label, clamp_probs(mean), se5, equity, eq_se, cf, cf_se,
                               self.values[index].n, mwc, after)


def combine(chunks: Sequence[ChunkResult], candidates: Sequence[Candidate], *, position_id: str,
            dice: tuple[int, int] | None, settings: RolloutSettings, seed: int, state: MatchState | None = None,
            cubeful: bool = False, interrupted: bool = False) -> RolloutResult:
    """The rollout result of some chunks (in any order; they are folded in trial order from trial 0)."""
    tally = RolloutTally(candidates)
    for ch in chunks:
        tally.add(ch)
    return tally.result(position_id=position_id, dice=dice, settings=settings, seed=seed, state=state,
                        cubeful=cubeful, interrupted=interrupted)
