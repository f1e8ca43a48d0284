"""Rollout settings: how the trials are played and scored, checked once when they are made.

``RolloutSettings`` holds plain values only, so a backend can ship it to other
processes or machines; ``RolloutError`` is what a rollout request that cannot be
carried out raises.
"""

from __future__ import annotations

from dataclasses import dataclass

from bgnet.core.errors import BgnetError

MAX_PLIES = 1000
"""A trial still going after this many plies is scored by the evaluator (never happens in practice)."""
LUCK_RANKERS = ("fitted", "pubeval")
"""How the luck's candidate plays of each roll are ranked (``RolloutSettings.luck_ranker``)."""
LUCK_NETS = ("student", "pruning", "net")
"""Which net values the luck's plays (``RolloutSettings.luck_net``)."""


class RolloutError(BgnetError):
    """A rollout request that cannot be carried out (no trials, a play that is not legal, ...)."""


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
    luck_net: str = "student"
    """Which net values those plays: "student" (the evaluator's student, ``bgnet.nets.companion``, when it carries one:
    a narrower net distilled to play like the release, about 0.6 times its cost a position, whose luck removes as
    much variance as the release's own: ``bench/rollout.py --only vr``; the trials are still played by the release),
    "net" (the evaluator itself) or "pruning" (its pruning net, ``bgnet.nets.pruning``: about 30 times cheaper a
    position, but it removes less variance, so a rollout is about 1.6 times faster and its standard error 1.25-1.35
    times larger). Any function of the position and roll keeps the luck an exact control variate. An evaluator
    without the net asked for records "net"."""
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
    pruned_play: bool = True
    """Checker play with an evaluator that carries a pruning net (``bgnet.nets.pruning.PrunedEvaluator``): the net
    values only the plays of each roll its pruning net keeps (8), as in ``bgnet play`` and GNU Backgammon's
    rollouts; False values every play. A rollout with an evaluator without one records False."""
    chunk_size: int = 324
    """Most trials per chunk: the first chunk has 36 and each next one three times as many up to this
    (``bgnet.sim.rollout_trials.chunk_plan``); the figures do not depend on it."""
    max_plies: int = MAX_PLIES
    """A trial still going after this many plies is scored by the evaluator."""

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
        if (isinstance(self.luck_candidates, bool) or not isinstance(self.luck_candidates, int)
                or self.luck_candidates < 0):
            raise RolloutError(f"luck_candidates must be 0 or a positive number of plays, got {self.luck_candidates!r}")
        if self.luck_ranker not in LUCK_RANKERS:
            raise RolloutError(f"luck_ranker must be one of {', '.join(LUCK_RANKERS)}, got {self.luck_ranker!r}")
        if self.luck_net not in LUCK_NETS:
            raise RolloutError(f"luck_net must be one of {', '.join(LUCK_NETS)}, got {self.luck_net!r}")
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
            kind += ", stopped early at bear-offs the database values exactly,"
        extras = [x for x, on in (("variance reduction", self.luck_vr), ("quasi-random dice", self.quasi_random)) if on]
        return kind + (" with " + " and ".join(extras) if extras else "")
