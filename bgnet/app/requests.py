"""What a user asks bgnet, as frozen dataclasses that the command line and the HTTP server both build.

``bgnet.cli`` builds a request from its arguments, ``bgnet.serve`` from JSON, and
``bgnet.app.answers`` answers it, so both front ends accept and refuse the same
things. Each request checks its own fields when it is built and raises
``RequestError`` with one sentence (exit status 2 on the command line, HTTP 400
from the server). Reading the position, the IDs and the dice waits until the
request is answered: those errors come from the parsers that own the formats.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Mapping

from bgnet.core.errors import BgnetError
from bgnet.cube.match import CubeRules

DEFAULT_PLY = 2
"""Search depth of ``bgnet hint`` and ``bgnet cube`` when none is asked (about a second)."""
DEFAULT_ROLLOUT_TRIALS = 1296
"""Trials per play of a rollout when none are asked."""


class RequestError(BgnetError):
    """A request whose fields cannot be answered as given (a depth out of range, options that exclude each other)."""


def _whole(value: object) -> bool:
    """Whether ``value`` is a whole number (an int, and not True or False)."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_ply(ply: object) -> int:
    """``ply`` when the search supports that depth, else a RequestError."""
    from bgnet.play.search import MAX_PLY

    if not _whole(ply) or not 0 <= ply <= MAX_PLY:  # type: ignore[operator]
        raise RequestError(f"--ply must be from 0 to {MAX_PLY}, got {ply!r}")
    return ply  # type: ignore[return-value]


def check_seed(seed: object) -> int:
    """``seed`` when it is a whole number of at least 0 (numpy's seeds), else a RequestError."""
    if not _whole(seed) or seed < 0:  # type: ignore[operator]
        raise RequestError(f"--seed must be a whole number of at least 0, got {seed!r}")
    return seed  # type: ignore[return-value]


def _check_text(value: object, what: str, optional: bool = True) -> None:
    """A RequestError unless ``value`` is a string (or None when ``optional``)."""
    if not (isinstance(value, str) or (optional and value is None)):
        raise RequestError(f"{what} must be text, got {value!r}")


def _check_flag(value: object, what: str, optional: bool = False) -> None:
    """A RequestError unless ``value`` is True or False (or None, "as the ID says", when ``optional``)."""
    if not (isinstance(value, bool) or (optional and value is None)):
        raise RequestError(f"{what} must be true or false, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class PositionRequest:
    """A position with its score and cube: a Position ID, "PositionID:MatchID" or an XGID, or the score given apart."""

    position: str
    """Position ID (optionally ``PositionID:MatchID``) or XGID, from the side on roll."""
    match: str | None = None
    """gnubg Match ID with the score and cube, when ``position`` carries none (None: money, cube centred)."""
    xgid: str | None = None
    """An XGID whose score and cube to use, when ``position`` carries none."""
    rules: Mapping[str, bool | int | None] = field(default_factory=dict, hash=False)
    """Cube rules chosen by name (``{"jacoby": False}``; None: not chosen). They win over what the ID records,
    which wins over the money defaults (``bgnet.cube.match.DEFAULT_MONEY_RULES``)."""

    def __post_init__(self) -> None:
        _check_text(self.position, "the position", optional=False)
        _check_text(self.match, "--match")
        _check_text(self.xgid, "--xgid")
        if self.match is not None and self.xgid is not None:
            raise RequestError("give the score and cube once: --match or --xgid, not both")
        check_rule_choices(self.rules)


def check_rule_choices(choices: object) -> Mapping[str, bool | int | None]:
    """``choices`` when it maps cube rule names to a value of the rule's type (or None), else a RequestError."""
    kinds = {f.name: f.type for f in fields(CubeRules)}
    if not isinstance(choices, Mapping):
        raise RequestError(f"the cube rules must be given by name, got {choices!r}")
    for name, value in choices.items():
        flag = "--" + str(name).replace("_", "-")
        if name not in kinds:
            raise RequestError(f"there is no cube rule {name!r}; the rules are {', '.join(kinds)}")
        if kinds[name] in ("bool", bool):
            _check_flag(value, flag, optional=True)
        elif value is not None and (not _whole(value) or value < 0):
            raise RequestError(f"{flag} must be a whole number of at least 0, got {value!r}")
    return choices


@dataclass(frozen=True, kw_only=True)
class MovesRequest:
    """Every legal play of a roll in a position (``bgnet moves``, ``/api/moves``)."""

    position: str
    """Position ID or XGID, from the side on roll."""
    dice: str
    """The roll as text: ``31`` or ``3-1``."""

    def __post_init__(self) -> None:
        _check_text(self.position, "the position", optional=False)
        _check_text(self.dice, "the dice", optional=False)


@dataclass(frozen=True, kw_only=True)
class SearchRequest(PositionRequest):
    """A position searched at a depth."""

    ply: int = DEFAULT_PLY
    """Search depth: 0 (the net alone) up to ``bgnet.play.search.MAX_PLY``."""

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ply(self.ply)


@dataclass(frozen=True, kw_only=True)
class CubeRequest(SearchRequest):
    """The cube decision of the side on roll (``bgnet cube``, ``/api/cube``)."""


@dataclass(frozen=True, kw_only=True)
class HintRequest(SearchRequest):
    """The plays of a roll ranked by equity, or without dice the cube hint (``bgnet hint``, ``/api/hint``)."""

    dice: str | None = None
    """The roll as text; None: the dice of the ID, or the cube hint when it has none."""
    top: int | None = None
    """Show only the best ``top`` plays (None: all of them)."""
    cubeful: bool = True
    """Rank plays by cubeful equity (the opponent's best cube action next), as GNU Backgammon and XG show them;
    False: by cubeless equity."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.top is not None and (not _whole(self.top) or self.top < 1):
            raise RequestError(f"--top must be at least 1, got {self.top!r}")
        _check_text(self.dice, "the dice")
        _check_flag(self.cubeful, "--cubeful")


@dataclass(frozen=True, kw_only=True)
class RolloutRequest(PositionRequest):
    """A rollout of the plays of a roll, or without dice of the cube decision (``bgnet rollout``, ``/api/rollout``)."""

    dice: str | None = None
    """The roll as text; None: the dice of the ID, or the position itself (its cube decision) when it has none."""
    plays: tuple[str, ...] | None = None
    """The plays to roll out, as move text (None: those the hint's move filter keeps)."""
    trials: int = DEFAULT_ROLLOUT_TRIALS
    """Games played out per play."""
    truncate: int | None = None
    """Stop each trial after this many plies and score it with the net (None: play to the end)."""
    ply: int = 0
    """Checker play inside the trials: 0 or 1 ply."""
    cubeful: bool = False
    """Also roll out cubefully: the cube is played in every trial."""
    seed: int = 0
    """Dice seed: the same seed gives the same numbers."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.xgid is not None:
            raise RequestError("a rollout takes its score and cube from POSITION or --match, not --xgid")
        _check_text(self.dice, "the dice")
        if self.plays is not None and (not self.plays or not all(isinstance(p, str) for p in self.plays)):
            raise RequestError("--plays needs at least one play, each written as move text like 8/5 6/5")
        if not _whole(self.trials) or self.trials < 1:
            raise RequestError(f"--trials must be at least 1, got {self.trials!r}")
        if not _whole(self.ply) or self.ply not in (0, 1):
            raise RequestError(f"--ply must be 0 or 1 in rollouts, got {self.ply!r}")
        if self.truncate is not None and (not _whole(self.truncate) or self.truncate < 0):
            raise RequestError(f"--truncate must be 0 or more plies, got {self.truncate!r}")
        _check_flag(self.cubeful, "--cubeful")
        check_seed(self.seed)
