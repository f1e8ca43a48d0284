"""MatchState: the score, cube and rules of a money game or match, seen from the side on roll.

"me" is the player whose turn it is (like ``Position``): in a gnubg Match ID the
dice owner, in an XGID the turn player. During a pending double "me" is the
doubler and the cube still holds its pre-double value, as both formats store it.
The optional cube rules (Jacoby, beavers, raccoons, Holland, maximum cube) are one
frozen ``CubeRules`` that the state holds (``state.rules``) and a game's rules hold
too (``bgnet.play.game.Rules``): a new cube rule is one new field of ``CubeRules``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, ClassVar, Literal, Mapping

from bgnet.core.errors import BgnetError

CubeOwner = Literal["centred", "me", "opponent"]
CUBE_OWNERS: tuple[str, ...] = ("centred", "me", "opponent")


class InvalidMatchStateError(BgnetError):
    """A score, cube or rule combination that cannot occur."""


class InvalidCubeRulesError(InvalidMatchStateError):
    """Cube rules that cannot apply: raccoons without beavers, the Jacoby rule in a match, ..."""


MONEY, MATCH, BOTH = "money", "match", "both"
"""Where a cube rule can apply (``CubeRules`` field metadata ``"play"``)."""


def _rule(default: bool | int, play: str, help: str) -> Any:
    """A ``CubeRules`` field: its default, where it can apply and the one-line help of its flag (``bgnet.cli``)."""
    return field(default=default, metadata={"play": play, "help": help})


@dataclass(frozen=True)
class CubeRules:
    """Which optional cube rules apply; each is off by default (the commands' money defaults: ``DEFAULT_MONEY_RULES``).

    Each field's metadata says where the rule can apply (``"play"``: money, match or both) and the help of the
    flag every command builds from it (``bgnet.cli.parser.add_cube_rule_arguments``): a new rule is one field here.
    """

    jacoby: bool = _rule(False, MONEY, "money: gammons and backgammons count single while the cube is centred")
    """Money only: gammons and backgammons count single while the cube is centred."""
    beavers: bool = _rule(False, MONEY, "money: a doubled player may redouble at once (beaver) and keep the cube")
    """Money only: a player who is doubled may redouble at once and keep the cube."""
    raccoons: bool = _rule(False, MONEY, "money: after a beaver the doubler may redouble again (raccoon); "
                                         "needs beavers")
    """Money only (needs beavers): after a beaver the doubler may redouble again at once and keep the cube."""
    holland: bool = _rule(False, MATCH, "match: post-Crawford the trailer may not double until each side has "
                                        "rolled twice")
    """Match only: post-Crawford the trailer may not double until each side has rolled twice."""
    max_cube: int = _rule(0, BOTH, "the highest value the cube may reach by a double, beaver or raccoon (0: no limit)")
    """Highest value a double, beaver or raccoon may take the cube to (0: no limit)."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type in ("int", int) and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise InvalidCubeRulesError(f"{f.name} must be a non-negative int, got {value!r}")
            if f.type in ("bool", bool) and not isinstance(value, bool):
                raise InvalidCubeRulesError(f"{f.name} must be True or False, got {value!r}")
        if self.raccoons and not self.beavers:
            raise InvalidCubeRulesError("raccoons need beavers to be allowed")

    def check_play(self, money: bool) -> None:
        """Raise InvalidCubeRulesError unless these rules can apply to money play (``money``) or to a match."""
        if money and self.holland:
            raise InvalidCubeRulesError("the Holland rule applies only to match play")
        if not money and (self.jacoby or self.beavers or self.raccoons):
            raise InvalidCubeRulesError("the Jacoby rule, beavers and raccoons apply only to money play")

    def for_play(self, money: bool) -> "CubeRules":
        """These rules less those that cannot apply to money play (``money``) or to a match."""
        off = MATCH if money else MONEY
        defaults: dict[str, Any] = {f.name: f.default for f in fields(self) if f.metadata["play"] == off}
        return replace(self, **defaults)

    def choose(self, choices: Mapping[str, bool | int | None], money: bool) -> "CubeRules":
        """These rules with the rules a user chose by name switched (None: as these rules have it).

        The one place where flags and API fields become rules: turning beavers off turns raccoons off unless
        they are chosen too; a rule chosen on where it cannot apply (the Jacoby rule in a match) is an
        InvalidCubeRulesError, one chosen off there is simply off.
        """
        given: dict[str, Any] = {name: value for name, value in choices.items() if value is not None}
        unknown = [name for name in given if name not in RULE_NAMES]
        if unknown:
            raise InvalidCubeRulesError(f"there is no cube rule {unknown[0]!r}; the rules are {', '.join(RULE_NAMES)}")
        rules = self.for_play(money)
        if given.get("beavers") is False and "raccoons" not in given:
            given["raccoons"] = False
        if given.get("raccoons") is True and "beavers" not in given:
            given["beavers"] = True
        chosen = replace(rules, **given)
        chosen.check_play(money)
        return chosen

    def describe(self, money: bool) -> str:
        """The rules in words, as every command prints them: "Jacoby rule on, beavers and raccoons allowed" (money),
        "no Holland rule" (a match), with ", cube limit 8" when there is one."""
        if money:
            text = (f"Jacoby rule {'on' if self.jacoby else 'off'}, "
                    + ("beavers and raccoons allowed" if self.raccoons
                       else "beavers allowed, no raccoons" if self.beavers else "no beavers"))
        else:
            text = "Holland rule" if self.holland else "no Holland rule"
        return text + (f", cube limit {self.max_cube}" if self.max_cube else "")

    def allows_cube(self, value: int) -> bool:
        """Whether the cube may reach ``value`` (within ``max_cube``)."""
        return not self.max_cube or value <= self.max_cube

    def may_beaver(self, cube: int) -> bool:
        """Whether a double of the cube at ``cube`` may be beavered: beavers allowed and 4 * ``cube`` allowed."""
        return self.beavers and self.allows_cube(4 * cube)

    def may_raccoon(self, cube: int) -> bool:
        """Whether a beavered double of the cube at ``cube`` may be raccooned: raccoons allowed, 8 * ``cube`` too."""
        return self.raccoons and self.allows_cube(8 * cube)


RULE_NAMES: tuple[str, ...] = tuple(f.name for f in fields(CubeRules))
"""The names of the cube rules, in field order."""
NO_CUBE_RULES = CubeRules()
"""Every optional cube rule off (the library's default, and self-play's)."""
DECISION_SKIPS = ("holland",)
"""Cube rules that mean nothing to one decision (the Holland rule counts the rolls of a whole game): hint, cube and
rollout leave them out of their flags and fields."""
DEFAULT_MONEY_RULES = CubeRules(jacoby=True, beavers=True, raccoons=True)
"""The money rules every command and the HTTP API assume unless told otherwise: GNU Backgammon's defaults for
new money sessions (the Jacoby rule, beavers and raccoons; no cube limit). A match uses ``for_play(False)`` of
it: no optional rule."""


class HoldsCubeRules:
    """Base of the values that hold a ``CubeRules`` (``MatchState``, ``bgnet.play.game.Rules``).

    It keeps the flat spelling of the rules working for one version: ``MatchState(jacoby=True)``
    switches the rule in the held ``CubeRules`` (``fold_rule_keywords``), and ``state.jacoby``
    reads it. New code reads the rule set itself: ``state.rules.jacoby``.
    """

    RULES_FIELD: ClassVar[str]
    """The name of the field that holds the ``CubeRules``."""

    def __getattr__(self, name: str) -> Any:
        """A rule of the held rule set read by its flat name (``state.jacoby``)."""
        rules = self.__dict__.get(self.RULES_FIELD)
        if name in RULE_NAMES and rules is not None:
            return getattr(rules, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @classmethod
    def fold_rule_keywords(cls, rules: CubeRules, keywords: dict[str, Any]) -> CubeRules:
        """``rules`` with the rules given by name as keywords (``jacoby=True``) switched as given."""
        if not isinstance(rules, CubeRules):
            raise InvalidCubeRulesError(f"{cls.RULES_FIELD} must be a CubeRules, got {rules!r}")
        if not keywords:
            return rules
        unknown = [k for k in keywords if k not in RULE_NAMES]
        if unknown:
            raise InvalidCubeRulesError(f"there is no cube rule {unknown[0]!r}; the rules are {', '.join(RULE_NAMES)}")
        return replace(rules, **keywords)


@dataclass(frozen=True)
class MatchState(HoldsCubeRules):
    """Match or money state seen from the side on roll ("me").

    ``match_length`` 0 is money play (scores are then session points and may be any
    non-negative number). ``cube_owner`` is "centred", "me" or "opponent". The rules
    may be given by name: ``MatchState(jacoby=True)`` is ``MatchState(rules=CubeRules(jacoby=True))``.
    """

    match_length: int
    """Points needed to win the match; 0 for money play."""
    score_me: int
    """Points already won by the side on roll."""
    score_opp: int
    """Points already won by the opponent."""
    cube_value: int
    """Current cube value (a power of two); during a pending double the pre-double value."""
    cube_owner: CubeOwner
    """Who may turn the cube next: "centred" (either), "me" or "opponent"."""
    crawford: bool
    """This game is the Crawford game (a player has just reached 1-away): no cube."""
    rules: CubeRules
    """The optional cube rules in force (Jacoby, beavers, raccoons, Holland, maximum cube)."""

    RULES_FIELD: ClassVar[str] = "rules"

    def __init__(self, match_length: int = 0, score_me: int = 0, score_opp: int = 0, cube_value: int = 1,
                 cube_owner: CubeOwner = "centred", crawford: bool = False, *, rules: CubeRules = NO_CUBE_RULES,
                 **rule_keywords: Any) -> None:
        """The state, checked; ``rule_keywords`` switch rules of ``rules`` by name (``jacoby=True``)."""
        put = object.__setattr__
        put(self, "match_length", match_length)
        put(self, "score_me", score_me)
        put(self, "score_opp", score_opp)
        put(self, "cube_value", cube_value)
        put(self, "cube_owner", cube_owner)
        put(self, "crawford", crawford)
        put(self, "rules", rules if not rule_keywords and type(rules) is CubeRules
            else self.fold_rule_keywords(rules, rule_keywords))
        problem = self._problem()
        if problem is not None:
            raise InvalidMatchStateError(problem)

    def _problem(self) -> str | None:
        """The first reason this state is impossible, or None (rules that cannot apply raise InvalidCubeRulesError)."""
        for name in ("match_length", "score_me", "score_opp", "cube_value"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                return f"{name} must be an int, got {value!r}"
            if value < 0:
                return f"{name} must not be negative, got {value}"
        if self.cube_owner not in CUBE_OWNERS:
            return f"cube_owner must be one of {', '.join(CUBE_OWNERS)}, got {self.cube_owner!r}"
        cube = self.cube_value
        if cube < 1 or cube & (cube - 1):
            return f"the cube value must be a power of two (1, 2, 4, ...), got {cube}"
        if cube == 1 and self.cube_owner != "centred":
            return "a cube at 1 has not been turned yet, so it must be centred"
        if cube > 1 and self.cube_owner == "centred":
            return f"a cube at {cube} has been turned, so it must be owned by 'me' or 'opponent'"
        self.rules.check_play(self.match_length == 0)
        if self.match_length == 0:
            return "the Crawford rule applies only to match play" if self.crawford else None
        n = self.match_length
        if self.score_me >= n or self.score_opp >= n:
            return f"a score of {self.score_me}-{self.score_opp} has already ended a {n}-point match"
        if self.crawford:
            if (self.away_me == 1) == (self.away_opp == 1):
                return "the Crawford game needs exactly one player at 1-away"
            if cube != 1:
                return "the cube cannot be used in the Crawford game, so it must be 1 and centred"
        return None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with the rules flat beside the score (``max_cube`` only when a limit is set)."""
        d: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "rules"}
        d.update(asdict(self.rules))
        if not self.rules.max_cube:
            del d["max_cube"]
        return d

    # -- derived ------------------------------------------------------------
    @property
    def is_money(self) -> bool:
        """True for money play (no match length)."""
        return self.match_length == 0

    @property
    def gammons_count(self) -> bool:
        """False in money play under the Jacoby rule while the cube is centred: gammons and backgammons count single."""
        return not (self.is_money and self.rules.jacoby and self.cube_owner == "centred")

    @property
    def away_me(self) -> int:
        """Points the side on roll still needs (match play only)."""
        if self.is_money:
            raise InvalidMatchStateError("'away' has no meaning in money play")
        return self.match_length - self.score_me

    @property
    def away_opp(self) -> int:
        """Points the opponent still needs (match play only)."""
        if self.is_money:
            raise InvalidMatchStateError("'away' has no meaning in money play")
        return self.match_length - self.score_opp

    @property
    def post_crawford(self) -> bool:
        """A match game, not the Crawford game, with a player at 1-away (includes double match point)."""
        return (not self.is_money and not self.crawford
                and self.match_length > 1 and (self.away_me == 1 or self.away_opp == 1))

    @property
    def crawford_done(self) -> bool:
        """Whether the Crawford game has been or is being played, so later 1-away games are post-Crawford."""
        return self.crawford or self.post_crawford

    @property
    def may_double(self) -> bool:
        """Whether the side on roll has access to the cube (owns it or it is centred, not Crawford, within the
        cube limit)."""
        return self.cube_owner != "opponent" and not self.crawford and self.rules.allows_cube(2 * self.cube_value)

    def swap_sides(self) -> "MatchState":
        """The same state seen by the opponent."""
        owner: CubeOwner = "centred" if self.cube_owner == "centred" else "opponent" if self.cube_owner == "me" else "me"
        return MatchState(self.match_length, self.score_opp, self.score_me, self.cube_value, owner, self.crawford,
                          rules=self.rules)

    # -- construction from IDs ----------------------------------------------
    @classmethod
    def from_match_id(cls, match_id: str, *, beavers: bool = False,
                      defaults: CubeRules = NO_CUBE_RULES) -> "MatchState":
        """State from a gnubg Match ID, seen by its dice owner (the player on roll or the doubler).

        The Match ID records the Jacoby rule (bit 66, money play; old IDs carry 0 there and so read as Jacoby on)
        and no other rule: those come from ``defaults`` (as far as they apply), beavers also from ``beavers``.
        """
        from bgnet.core.formats import parse_match_id

        f = parse_match_id(match_id)
        me = int(f.dice_owner)
        if f.cube_owner == 3:
            owner: CubeOwner = "centred"
        else:
            owner = "me" if int(f.cube_owner) == me else "opponent"
        score = tuple(f.score)
        length = int(f.match_length)
        money = length == 0
        rules = defaults.for_play(money)
        if money:
            rules = replace(rules, jacoby=not f.jacoby_off, beavers=rules.beavers or bool(beavers))
        return cls(match_length=length, score_me=int(score[me]), score_opp=int(score[1 - me]),
                   cube_value=int(f.cube_value), cube_owner=owner, crawford=bool(f.crawford) and not money,
                   rules=rules)

    @classmethod
    def from_xgid(cls, xgid: str, *, defaults: CubeRules = NO_CUBE_RULES) -> "MatchState":
        """State from an XGID, seen by its turn player (the player on roll or the doubler).

        In money play the XGID records the Jacoby rule and beavers (raccoons only with beavers); the rules it
        does not record come from ``defaults`` (as far as they apply).
        """
        from bgnet.core.formats import parse_xgid

        f = parse_xgid(xgid)
        me = int(f.turn)
        position = int(f.cube_position)
        owner: CubeOwner = "centred" if position == 0 else ("me" if position == me else "opponent")
        if me == 1:
            score_me, score_opp = int(f.score_bottom), int(f.score_top)
        else:
            score_me, score_opp = int(f.score_top), int(f.score_bottom)
        length = int(f.match_length)
        recorded = int(f.rules)
        rules = defaults.for_play(length == 0)
        if length == 0:
            beavers = bool(recorded & 2)
            return cls(0, score_me, score_opp, 1 << int(f.cube_log2), owner,
                       rules=replace(rules, jacoby=bool(recorded & 1), beavers=beavers,
                                     raccoons=rules.raccoons and beavers))
        return cls(length, score_me, score_opp, 1 << int(f.cube_log2), owner, crawford=bool(recorded & 1),
                   rules=rules)

    def __str__(self) -> str:
        cube = "centred" if self.cube_owner == "centred" else f"{self.cube_value}, owned by {self.cube_owner}"
        if self.is_money:
            rules = [r for r, on in (("Jacoby", self.rules.jacoby), ("beavers", self.rules.beavers),
                                     ("raccoons", self.rules.raccoons)) if on]
            return f"money game, cube {cube}" + (f" ({', '.join(rules)})" if rules else "")
        tag = " (Crawford game)" if self.crawford else (" (post-Crawford)" if self.post_crawford else "")
        return (f"{self.match_length}-point match, {self.score_me}-{self.score_opp} "
                f"({self.away_me}-away, {self.away_opp}-away){tag}, cube {cube}")
