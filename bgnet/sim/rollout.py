"""Rollouts: many trials of a position played out together in arrays, with variance reduction and truncation.

A rollout estimates what a play (or a position before the roll) is worth by
playing it to the end many times with the evaluator choosing every play. This
module is the entry point (``rollout``) and the result types; the parts live in
their own modules:

* ``rollout_settings``: ``RolloutSettings`` (how the trials are played) and ``RolloutError``;
* ``rollout_candidates``: what is rolled out (the plays of a roll, or the position itself);
* ``rollout_dice``: the dice, a pure function of ``(seed, trial, ply)`` (common random
  numbers, quasi-random strata), so chunks of trials can run anywhere with the same result;
* ``rollout_trials``: one chunk of trials, every candidate's trials advancing together;
* ``rollout_play``: the checker play inside the trials (0 or 1 ply, pubeval pruning);
* ``rollout_luck``: the luck of each roll, a control variate subtracted from every trial;
* ``rollout_cube``: the cube played inside the trials (cubeful rollouts, and every position without dice);
* ``rollout_stats``, ``rollout_tally``: running means and standard errors, folded in chunk by chunk;
* ``rollout_result``, ``rollout_report``: the result as data and JSON, and as text in GNU Backgammon's style.

However many trials are asked for, a rollout holds only the chunks in flight and a
few numbers per candidate, and Ctrl-C returns the result of the trials done so far.

Training labels made by rollouts or n-ply search (the "teacher") are in ``bgnet.trainer.labels``.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from bgnet.core.movegen import parse_dice
from bgnet.core.position import Position
from bgnet.core.protocols import ProbsFn
from bgnet.cube.decision import cube_decision
from bgnet.cube.match import MatchState
from bgnet.nets.pruning import PrunedEvaluator
from bgnet.sim.rollout_candidates import play_candidates, position_candidate
from bgnet.sim.rollout_play import net_probs
from bgnet.sim.rollout_result import CandidateResult, RolloutResult
from bgnet.sim.rollout_settings import RolloutError, RolloutSettings
from bgnet.sim.rollout_stats import clamp_probs
from bgnet.sim.rollout_tally import RolloutTally, combine
from bgnet.sim.rollout_trials import BearoffFn, ChunkResult, ChunkTask, chunk_plan, default_bearoff, run_chunk

if TYPE_CHECKING:
    from bgnet.sim.backends import Backend

__all__ = ["CandidateResult", "RolloutError", "RolloutResult", "RolloutSettings", "combine", "rollout", "thread_map"]

# -- the Python API -----------------------------------------------------------------------


def _probs_fn_of(agent_or_probs_fn: Any) -> ProbsFn:
    """The 0-ply ``boards -> probs`` function of an agent or evaluator, or the callable itself; an evaluator that
    carries a pruning net stays whole, so that the trials' checker play and luck can use that net."""
    if isinstance(agent_or_probs_fn, PrunedEvaluator):
        return agent_or_probs_fn
    for name in ("probs_fn", "probs_of_boards"):
        fn = getattr(agent_or_probs_fn, name, None)
        if callable(fn):
            return fn  # type: ignore[no-any-return]
    if callable(agent_or_probs_fn):
        return agent_or_probs_fn  # type: ignore[no-any-return]
    raise RolloutError(f"{agent_or_probs_fn!r} is neither an agent with probs_fn nor a boards -> probs function")


def rollout(agent_or_probs_fn: Any, position: Position | str, dice: Sequence[int] | str | None = None, *,
            plays: Sequence[str] | None = None, settings: RolloutSettings | None = None, seed: int = 0,
            cubeful: bool = False, state: MatchState | None = None,
            map_fn: Callable[..., Iterable[ChunkResult]] | None = None,
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
    Ctrl-C stops the chunks (and any workers) and returns the result of the trials finished so far
    (``interrupted``), or raises KeyboardInterrupt again when none had finished.
    """
    probs_fn = _probs_fn_of(agent_or_probs_fn)
    pos = Position.parse(position) if isinstance(position, str) else position
    if pos.is_game_over():
        raise RolloutError("the game in this position is over: one side has borne off all 15 checkers")
    settings = replace(settings or RolloutSettings(), **overrides) if overrides else (settings or RolloutSettings())
    bo: BearoffFn | None = default_bearoff() if bearoff_fn == "auto" else bearoff_fn  # type: ignore[assignment]
    if bo is None and settings.bearoff:
        settings = replace(settings, bearoff=False)  # no database: say so in the result
    if not isinstance(probs_fn, PrunedEvaluator):  # no pruning net: every play valued, the luck by the net itself
        settings = replace(settings, pruned_play=False, luck_net="net")
    elif (settings.luck_net == "student" and probs_fn.student is None) or settings.luck_candidates == 0:
        settings = replace(settings, luck_net="net")  # no student ships with this net, or the luck is the play's own
    d = parse_dice(dice) if dice is not None else None
    st = state or MatchState()
    if d is not None:
        candidates = play_candidates(pos, d, plays, probs_fn, state)
        if cubeful and cube_in_trials:
            candidates = [replace(cd, cube_lines=((st.cube_value, st.cube_owner),)) for cd in candidates]
    else:
        if plays:
            raise RolloutError("--plays needs dice: without dice the cube decision is rolled out")
        now = cube_decision(clamp_probs(net_probs(probs_fn, np.array(pos.board, np.int8)[None, :])[0]), st, pos)
        lines: tuple[tuple[int, str], ...] = ((st.cube_value, st.cube_owner),)
        if now.equity_double_take is not None:  # the side on roll may double: "Double, take" gives the cube away
            lines += ((2 * st.cube_value, "opponent"),)
        candidates = [replace(position_candidate(pos), cube_lines=lines) if cube_in_trials else position_candidate(pos)]
        cubeful = True
    plan = chunk_plan(settings)  # made lazily: a trillion trials hold no more memory than a thousand
    run = ChunkTask(probs_fn, tuple(candidates), settings, seed, state, bo)
    tally = RolloutTally(candidates)
    interrupted = False
    bar = _progress_bar(settings.trials, progress)
    source: Iterable[ChunkResult] = ()
    try:
        # chunks run off the main thread even alone, so that Ctrl-C lands here and never inside a numba kernel
        source = (map_fn or thread_map(1))(run, plan) if backend is None else backend.imap(
            run_chunk, plan, (probs_fn, candidates, settings, seed, state, bo))  # the net travels once per rollout
        for ch in source:
            tally.add(ch)
            if bar is not None:
                bar.update(ch.values.shape[1])
    except KeyboardInterrupt:
        interrupted = True
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()  # a mapper or backend stops its chunks and workers now, not when it is collected
        if bar is not None:
            bar.close()
    if interrupted and tally.trials_done == 0:
        raise KeyboardInterrupt  # nothing to show: stopped before the first chunk of trials finished
    return tally.result(position_id=pos.position_id(), dice=d, settings=settings, seed=seed, state=state,
                        cubeful=cubeful, interrupted=interrupted)


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

    Chunks are taken from ``items`` as threads come free (at most two per thread wait
    their turn), so a plan of any length is never held whole; when the caller stops
    (Ctrl-C), chunks not yet started are cancelled and those running stop at their next ply.
    """
    def mapper(func: Callable[[Any], ChunkResult], items: Iterable[Any]) -> Iterator[ChunkResult]:
        from concurrent.futures import Future, ThreadPoolExecutor

        stop = threading.Event()
        task = replace(func, stop=stop.is_set) if isinstance(func, ChunkTask) else func
        todo = iter(items)
        pool = ThreadPoolExecutor(max(1, workers))
        pending: deque[Future[ChunkResult]] = deque()
        try:
            for item in todo:
                pending.append(pool.submit(task, item))
                if len(pending) >= 2 * max(1, workers):
                    break
            while pending:
                result = pending.popleft().result()
                for item in todo:  # one more in, for the one out
                    pending.append(pool.submit(task, item))
                    break
                yield result
        finally:
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
    return mapper


if __name__ == "__main__":  # the labelling command's old address: python -m bgnet.sim.rollout label IN.npz OUT.npz
    import sys

    from bgnet.cli.labels import main

    sys.exit(main(prog="python -m bgnet.sim.rollout"))
