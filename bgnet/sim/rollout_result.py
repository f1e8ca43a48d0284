"""A rollout's result: each candidate's mean chances, equities and standard errors, as data and as JSON.

The JSON uses the names every ``--json`` shares (``docs/JSON.md``): a play is
``move`` with its afterstate's ``position_id``, ``probs`` and ``equity`` (the one
the plays are ranked by, cubeful when rolled out cubefully, with ``cubeless_equity``
beside it), the plays ``moves``; a rollout without dice lists its cube ``lines``
and the ``decision`` they give; ``rules`` names the cube rules the trials and the decision used.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from bgnet.core.probs import PROB_NAMES, Probs
from bgnet.cube.decision import rules_dict
from bgnet.cube.match import MatchState
from bgnet.play.search import match_winning_chance
from bgnet.sim.rollout_candidates import NO_PLAY
from bgnet.sim.rollout_report import format_result
from bgnet.sim.rollout_settings import RolloutSettings
from bgnet.sim.rollout_stats import Z95


@dataclass(frozen=True)
class CandidateResult:
    """One rolled-out candidate: mean chances for the root side, equities, standard errors, 95% intervals."""

    label: str
    """The play's text, or "No double" / "Double, take" for the cube lines of a rollout without dice."""
    probs: Probs
    """Mean cubeless chances of the root side (the mover of the play, or the side on roll)."""
    probs_stderr: tuple[float, float, float, float, float]
    equity: float
    """Cubeless equity (money, or normalised at the match score) of ``probs``."""
    equity_stderr: float
    cubeful_equity: float | None
    """Cubeful equity of the root side (from the cube played in the trials, or Janowski's model), when asked."""
    cubeful_stderr: float | None
    trials: int
    """Trials done."""
    cubeful_mwc: float | None = None
    """Match play with cubeful trials: the mean match winning chance behind ``cubeful_equity``."""
    position_id: str | None = None
    """A play's afterstate, seen from its mover (as ``bgnet hint`` gives it); None for a cube line."""

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

    @property
    def ranking_equity(self) -> float:
        """The equity candidates are compared by: cubeful when present, else cubeless."""
        return self.cubeful_equity if self.cubeful_equity is not None else self.equity

    def to_dict(self, state: MatchState | None = None) -> dict[str, Any]:
        """A JSON-ready dict: ``equity`` is the ranking equity (``ranking_equity``), with its standard error and
        95% interval; ``cubeless_equity`` and ``cubeless_stderr`` the cubeless figures; ``mwc`` the match winning
        chance behind ``equity`` (None in money play, or where only Janowski's conversion gives the cubeful one)."""
        cubeful = self.cubeful_equity is not None
        lo, hi = (self.cubeful_interval if cubeful else None) or self.equity_interval
        if cubeful:
            mwc = self.cubeful_mwc
        else:
            mwc = None if state is None or state.is_money else match_winning_chance(self.probs, state)
        return {"equity": self.ranking_equity,
                "equity_stderr": self.cubeful_stderr if cubeful else self.equity_stderr,
                "equity_interval95": [lo, hi], "probs": self.probs.to_dict(),
                "probs_stderr": dict(zip(PROB_NAMES, self.probs_stderr)), "mwc": mwc,
                "cubeless_equity": self.equity, "cubeless_stderr": self.equity_stderr, "trials": self.trials}


def equity_kind(cubeful: bool, state: MatchState | None) -> str:
    """What ``equity`` holds, in the words of ``bgnet hint --json``: "cubeless money", "cubeful normalised at ..."."""
    return (("cubeful " if cubeful else "cubeless ")
            + ("money" if state is None or state.is_money else "normalised at the match score"))


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
    """True when the rollout was stopped (Ctrl-C) before all trials were done: a partial result."""
    cube: dict[str, Any] | None = None
    """For a cube rollout: the decision ("action", "proper_cube_action", take point ...) from the rolled-out chances."""

    @property
    def best(self) -> CandidateResult:
        """The candidate with the highest (cubeful when present, else cubeless) equity."""
        return max(self.candidates, key=lambda r: r.ranking_equity)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict in the vocabulary of ``docs/JSON.md``: ``moves`` for the plays of a roll, each with
        ``move``, ``position_id``, ``rank`` and ``diff``; without dice, the cube ``lines`` and ``decision``."""
        cubeful = any(r.cubeful_equity is not None for r in self.candidates)
        out: dict[str, Any] = {
            "position_id": self.position_id, "dice": None if self.dice is None else list(self.dice),
            "match": None if self.state is None else self.state.to_dict(),
            "rules": rules_dict(self.state or MatchState()),
            "equity": equity_kind(cubeful, self.state), "seed": self.seed,
            "trials_requested": self.settings.trials, "trials_done": self.trials_done, "partial": self.interrupted,
            "settings": asdict(self.settings)}
        if self.cube is not None:
            out["action"] = self.cube["action"]
            out["decision"] = self.cube
            out["lines"] = [{"action": r.label.lower(), **r.to_dict(self.state)} for r in self.candidates]
            return out
        best = self.best.ranking_equity
        ranked = sorted(range(len(self.candidates)), key=lambda i: -self.candidates[i].ranking_equity)
        rank = {i: k + 1 for k, i in enumerate(ranked)}
        out["moves"] = [{"rank": rank[i], "move": "" if r.label == NO_PLAY else r.label, "position_id": r.position_id,
                         "diff": r.ranking_equity - best, **r.to_dict(self.state)}
                        for i, r in enumerate(self.candidates)]
        return out

    def format(self) -> str:
        """Text in the style of GNU Backgammon's rollout output (``bgnet.sim.rollout_report``)."""
        return format_result(self)
