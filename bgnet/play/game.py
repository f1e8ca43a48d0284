"""Cubeful games and matches as a pure state machine: doubles, takes, passes, beavers, Crawford, scoring.

A ``Game`` is an immutable value; functions return the next value:

    roll phase  --double()-->  doubled  --respond("take")--> roll phase (the doubler must roll: no second double)
         |                        |--respond("pass")--> over (the doubler wins the cube's value)
         |                        '--respond("beaver")--> roll phase (with raccoons: beavered --raccoon()--> roll)
         '--roll(dice)--> move phase --play(afterstate)--> roll phase of the other side, or over

Players are numbered 0 and 1 (absolute seats); ``Game.position`` is always seen
from ``Game.turn`` (the side on roll, or the doubler while a double is pending),
like ``Position``. ``Match`` carries the score between games and decides the
Crawford game. ``play_game`` drives a game with player callbacks (the protocol of
``bgnet.play.agents``) and shows each step to an observer (``GameEvent``); nothing
here prints or reads input. ``play`` checks that a play is legal; ``play_generated``
is its trusted twin for engines that generated the plays themselves (``bgnet.sim.duel``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable, ClassVar, Literal, Sequence, cast

import numpy as np

from bgnet.core.errors import BgnetError
from bgnet.cube.match import NO_CUBE_RULES, CubeOwner, CubeRules, HoldsCubeRules, MatchState
from bgnet.core.movegen import generate_afterstates
from bgnet.core.notation import Move
from bgnet.core.position import STARTING_POSITION, Position
from bgnet.core.protocols import Agent as Player
from bgnet.core.rules import Result, result_kind, winner

Phase = Literal["roll", "doubled", "beavered", "move", "over"]
Answer = Literal["take", "pass", "beaver"]
ANSWERS: tuple[str, ...] = ("take", "pass", "beaver")


class GameRuleError(BgnetError):
    """An action the rules or the game's current phase do not allow, or a bad match length (bad cube rules raise
    ``InvalidCubeRulesError``, as in a ``MatchState``)."""


@dataclass(frozen=True)
class Rules(HoldsCubeRules):
    """What kind of contest is played: money or a match, with or without the cube, and which optional cube rules apply.

    The cube rules may be given by name: ``Rules(jacoby=True)`` is ``Rules(cube_rules=CubeRules(jacoby=True))``.
    """

    match_length: int
    """Points needed to win the match; 0 for money play."""
    cubeful: bool
    """Whether the doubling cube is in play at all (False: cubeless games)."""
    cube_rules: CubeRules
    """The optional cube rules (Jacoby, beavers, raccoons, Holland, maximum cube); the games' MatchStates hold them."""

    RULES_FIELD: ClassVar[str] = "cube_rules"

    def __init__(self, match_length: int = 0, cubeful: bool = True, *, cube_rules: CubeRules = NO_CUBE_RULES,
                 **rule_keywords: Any) -> None:
        """The rules, checked; ``rule_keywords`` switch rules of ``cube_rules`` by name (``jacoby=True``)."""
        if isinstance(match_length, bool) or not isinstance(match_length, int) or match_length < 0:
            raise GameRuleError(f"match_length must be a non-negative int, got {match_length!r}")
        object.__setattr__(self, "match_length", match_length)
        object.__setattr__(self, "cubeful", cubeful)
        object.__setattr__(self, "cube_rules", self.fold_rule_keywords(cube_rules, rule_keywords))
        self.cube_rules.check_play(self.is_money)

    @property
    def is_money(self) -> bool:
        """True for money play."""
        return self.match_length == 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with the cube rules flat beside the match length."""
        return {"match_length": self.match_length, "cubeful": self.cubeful, **asdict(self.cube_rules)}


@dataclass(frozen=True)
class GameResult:
    """How a game ended: who won, how, and the points scored (cube included)."""

    winner: int
    """Seat (0 or 1) of the winner."""
    kind: Result
    """Single, gammon or backgammon as counted (a passed double and the Jacoby rule count single)."""
    cube: int
    """Cube value the points were multiplied by."""
    dropped: bool = False
    """True when the game ended by a passed double."""

    @property
    def points(self) -> int:
        """Points won: the cube value times 1, 2 or 3."""
        return self.cube * int(self.kind)

    def points_for(self, seat: int) -> int:
        """Signed points for ``seat``: positive when it won."""
        return self.points if seat == self.winner else -self.points


@dataclass(frozen=True)
class Game:
    """One game in progress (or finished), seen through the absolute seats 0 and 1."""

    rules: Rules
    position: Position
    """The board seen from ``turn``."""
    turn: int
    """Seat on roll (during a pending double or beaver: the doubler)."""
    phase: Phase
    score: tuple[int, int] = (0, 0)
    """Match or session score before this game, by seat."""
    crawford: bool = False
    """This game is the Crawford game (no cube)."""
    post_crawford: bool = False
    """The Crawford game of this match has already been played."""
    cube: int = 1
    owner: int | None = None
    """Seat that owns the cube, None while centred."""
    dice: tuple[int, int] | None = None
    """The dice to play (move phase only)."""
    rolls: tuple[int, int] = (0, 0)
    """Rolls each seat has made this game (the opening roll counts for the first mover)."""
    result: GameResult | None = None
    cube_turned: bool = False
    """The cube was turned this turn (double, beaver or raccoon): the doubler must now roll."""

    @property
    def is_over(self) -> bool:
        """True once the game has a result."""
        return self.phase == "over"

    @property
    def opponent(self) -> int:
        """The seat not on turn."""
        return 1 - self.turn

    def match_state(self, seat: int | None = None) -> MatchState:
        """The ``MatchState`` seen by ``seat`` (default: the side on turn); a pending double keeps the old cube."""
        me = self.turn if seat is None else seat
        r = self.rules
        owner = "centred" if self.owner is None else ("me" if self.owner == me else "opponent")
        return _match_state(r.match_length, self.score[me], self.score[1 - me], self.cube, owner, self.crawford,
                            r.cube_rules)


@lru_cache(maxsize=4096)
def _match_state(length: int, score_me: int, score_opp: int, cube: int, owner: CubeOwner, crawford: bool,
                 rules: CubeRules) -> MatchState:
    """A (cached, immutable) MatchState: games ask for the same few states over and over."""
    return MatchState(length, score_me, score_opp, cube, owner, crawford, rules=rules)


def new_game(rules: Rules, first: int, opening: Sequence[int], score: tuple[int, int] = (0, 0),
             crawford: bool = False, post_crawford: bool = False,
             position: Position = STARTING_POSITION) -> Game:
    """A game whose first mover ``first`` plays the opening roll ``opening`` (nobody may double before it)."""
    if first not in (0, 1):
        raise GameRuleError(f"the first mover must be seat 0 or 1, got {first!r}")
    dice = _dice(opening)
    if dice[0] == dice[1]:
        raise GameRuleError(f"the opening roll cannot be a double ({dice[0]}-{dice[1]}): "
                            "each side rolls one die and a tie is rolled again")
    if crawford and (rules.is_money or post_crawford):
        raise GameRuleError("a Crawford game needs match play and a match whose Crawford game is still to come")
    rolls = (1, 0) if first == 0 else (0, 1)
    return Game(rules=rules, position=position, turn=first, phase="move", score=(int(score[0]), int(score[1])),
                crawford=crawford, post_crawford=post_crawford, dice=dice, rolls=rolls)


def _evolve(game: Game, **changes: object) -> Game:
    """``dataclasses.replace`` for the hot path: a copy of the frozen Game with some fields changed, no re-validation."""
    new = object.__new__(Game)
    new.__dict__.update(game.__dict__)
    new.__dict__.update(changes)
    return new


def _dice(dice: Sequence[int]) -> tuple[int, int]:
    """Two dice as ints from 1 to 6, or a GameRuleError."""
    if type(dice) is tuple and len(dice) == 2:  # the hot path (the game loops): two plain ints in range
        d1, d2 = dice
        if type(d1) is int and type(d2) is int and 1 <= d1 <= 6 and 1 <= d2 <= 6:
            return d1, d2
    try:
        d1, d2 = (int(d) for d in dice)
    except (TypeError, ValueError):
        raise GameRuleError(f"dice {dice!r} should be two numbers from 1 to 6") from None
    if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise GameRuleError(f"dice {dice!r} should be two numbers from 1 to 6")
    return d1, d2


def _need(game: Game, phase: Phase, action: str) -> None:
    """Raise unless the game is in ``phase``."""
    if game.phase != phase:
        raise GameRuleError(f"cannot {action} now: the game is in its {game.phase!r} phase, not {phase!r}")


def may_double(game: Game) -> bool:
    """Whether the side on turn may double now (before rolling): cube access, no Crawford game, Holland, cube limit."""
    r = game.rules
    if game.phase != "roll" or not r.cubeful or game.crawford or game.cube_turned:
        return False
    if game.owner is not None and game.owner != game.turn:
        return False
    if not r.cube_rules.allows_cube(2 * game.cube):
        return False
    if not r.is_money:
        away_me = r.match_length - game.score[game.turn]
        away_opp = r.match_length - game.score[game.opponent]
        if r.cube_rules.holland and game.post_crawford and away_opp == 1 and away_me > 1 and min(game.rolls) < 2:
            return False
    return True


def may_beaver(game: Game) -> bool:
    """Whether the doubled side may beaver: beavers allowed and the quadrupled cube within ``max_cube``."""
    return game.phase == "doubled" and game.rules.cube_rules.may_beaver(game.cube)


def may_raccoon(game: Game) -> bool:
    """Whether the beavered doubler may raccoon: raccoons allowed and the doubled cube within ``max_cube``."""
    return game.phase == "beavered" and game.rules.cube_rules.may_raccoon(game.cube // 4)


def dead_cube(game: Game) -> str | None:
    """Why a double by the side on turn could not matter (a sentence), or None.

    Dead: a 1-point match or double match point, the post-Crawford leader (any win
    takes the match), or a cube that already covers the points the doubler needs.
    """
    r = game.rules
    if r.is_money:
        return None
    away_me = r.match_length - game.score[game.turn]
    away_opp = r.match_length - game.score[game.opponent]
    if away_me == 1 and away_opp == 1:
        return "the next game decides the match, so the cube is dead"
    if away_me == 1:
        return "you need only this game to win the match, so the cube is dead"
    if game.cube >= away_me:
        return f"the cube at {game.cube} already covers the {away_me} points needed, so it is dead"
    return None


def double(game: Game) -> Game:
    """The side on turn offers a double (or redouble); the opponent must answer with ``respond``."""
    _need(game, "roll", "double")
    if not may_double(game):
        raise GameRuleError("the side on roll may not double here (no cube access, Crawford game, Holland rule "
                            "or cube limit)")
    return _evolve(game, phase="doubled")


def respond(game: Game, answer: str) -> Game:
    """The doubled side's answer: "take" (cube doubles, he owns it), "pass" (he loses the old cube) or "beaver"."""
    _need(game, "doubled", "answer a double")
    if answer not in ANSWERS:
        raise GameRuleError(f"the answer to a double must be one of {', '.join(ANSWERS)}, got {answer!r}")
    if answer == "pass":
        return _evolve(game, phase="over", result=GameResult(game.turn, Result.SINGLE, game.cube, dropped=True))
    if answer == "take":
        return _evolve(game, phase="roll", cube=2 * game.cube, owner=game.opponent, cube_turned=True)
    if not game.rules.cube_rules.beavers:
        raise GameRuleError("beavers are not allowed under these rules")
    if not may_beaver(game):
        raise GameRuleError(f"a beaver would take the cube to {4 * game.cube}, above the limit of "
                            f"{game.rules.cube_rules.max_cube}")
    beavered = _evolve(game, cube=4 * game.cube, owner=game.opponent, cube_turned=True)
    return _evolve(beavered, phase="beavered" if may_raccoon(_evolve(beavered, phase="beavered")) else "roll")


def raccoon(game: Game, accept: bool) -> Game:
    """After a beaver, the doubler either raccoons (cube doubles again, he owns it) or just plays on."""
    _need(game, "beavered", "raccoon")
    if accept:
        if not may_raccoon(game):
            raise GameRuleError("raccoons are not allowed here (rules or cube limit)")
        return _evolve(game, phase="roll", cube=2 * game.cube, owner=game.turn)
    return _evolve(game, phase="roll")


def roll(game: Game, dice: Sequence[int]) -> Game:
    """The side on turn rolls ``dice`` (declining to double); the game moves to the move phase."""
    _need(game, "roll", "roll")
    return _evolve(game, phase="move", dice=_dice(dice), rolls=_one_more_roll(game), cube_turned=False)


def _one_more_roll(game: Game) -> tuple[int, int]:
    """``game.rolls`` after the side on turn rolls once more."""
    r0, r1 = game.rolls
    return (r0 + 1, r1) if game.turn == 0 else (r0, r1 + 1)


def play(game: Game, after: Position | Move) -> Game:
    """The side on turn plays to ``after`` (its afterstate, still seen by the mover, or a Move carrying one).

    An afterstate that no legal play of ``game.dice`` produces is refused. A finished
    game scores 1, 2 or 3 times the cube (single under the Jacoby rule while the cube
    is unturned).
    """
    _need(game, "move", "move")
    if isinstance(after, Move):
        if after.after is None:
            raise GameRuleError("the move carries no afterstate; take it from legal_moves or Position.parse_move")
        after = after.after
    assert game.dice is not None
    if not _is_legal_afterstate(game.position, game.dice, after):
        raise GameRuleError(f"no legal play of {game.dice[0]}-{game.dice[1]} leads to that position")
    won = winner(after)
    if won is None:
        return _evolve(game, position=after.swap_sides(), turn=game.opponent, phase="roll", dice=None)
    if won != 0:
        raise GameRuleError("a play cannot finish the game for the side that did not move")
    return _finish(game, after, result_kind(after))


def play_generated(game: Game, turned: Position, code: int = 0, after: Position | None = None) -> Game:
    """``play`` for an afterstate the caller generated itself for ``game.position`` and ``game.dice``.

    The trusted path of the game loops (``bgnet.sim.duel``): they already ran move
    generation for every table, so the legality check's second generation is
    skipped. ``turned`` is the afterstate seen by the opponent (the next position),
    ``code`` its ``bgnet.core._game_kernels.terminal_codes`` value seen by the mover (0 while
    play goes on, 1/2/3 when the mover has just won single, gammon or backgammon)
    and ``after`` the afterstate seen by the mover (default ``turned.swap_sides()``).
    """
    _need(game, "move", "move")
    if code == 0:
        return _evolve(game, position=turned, turn=game.opponent, phase="roll", dice=None)
    if code < 0:
        raise GameRuleError("a play cannot finish the game for the side that did not move")
    return _finish(game, turned.swap_sides() if after is None else after, Result(code))


def roll_and_play_generated(game: Game, dice: tuple[int, int], turned: Position, code: int = 0) -> Game:
    """``play_generated(roll(game, dice), turned, code)`` in one step, for loops that show nobody the rolled state.

    ``dice`` are two ints from 1 to 6 (the caller's own dice stream) and ``turned``
    one of the afterstates the caller generated for ``game.position`` and ``dice``.
    """
    if code != 0:  # a game-ending play (rare): through the two steps themselves
        return play_generated(roll(game, dice), turned, code)
    _need(game, "roll", "roll")
    return _evolve(game, position=turned, turn=game.opponent, rolls=_one_more_roll(game), cube_turned=False)


def _finish(game: Game, after: Position, kind: Result) -> Game:
    """The game over after the mover's winning play ``after`` (single under the Jacoby rule while the cube is unturned)."""
    if not game.match_state().gammons_count:
        kind = Result.SINGLE
    return _evolve(game, position=after, phase="over", dice=None, result=GameResult(game.turn, kind, game.cube))


def _is_legal_afterstate(pos: Position, dice: tuple[int, int], after: Position) -> bool:
    """Whether some legal play of ``dice`` in ``pos`` produces ``after`` (one kernel call, no Move objects)."""
    boards, _offsets = generate_afterstates(np.array([pos.board], np.int8), np.array([dice], np.int8))
    return bool((boards == np.array(after.board, np.int8)).all(axis=1).any())


@dataclass(frozen=True)
class Match:
    """The score of a match or money session between games, and whether the Crawford game is done."""

    rules: Rules = field(default_factory=Rules)
    score: tuple[int, int] = (0, 0)
    crawford_played: bool = False
    """The Crawford game of this match has been played (later games at 1-away are post-Crawford)."""
    games: int = 0
    """Games finished so far."""

    @property
    def is_over(self) -> bool:
        """True once a player has reached the match length (never in money play)."""
        n = self.rules.match_length
        return n > 0 and max(self.score) >= n

    @property
    def winner(self) -> int | None:
        """The seat that won the match, or None while it goes on (and in money play)."""
        if not self.is_over:
            return None
        return 0 if self.score[0] >= self.rules.match_length else 1

    @property
    def next_is_crawford(self) -> bool:
        """Whether the next game is the Crawford game: one player has just reached 1-away for the first time."""
        n = self.rules.match_length
        if n <= 1 or self.crawford_played or self.is_over:
            return False
        return (self.score[0] == n - 1) != (self.score[1] == n - 1)

    def start(self, first: int, opening: Sequence[int]) -> Game:
        """The next game of this match, with its Crawford status."""
        if self.is_over:
            raise GameRuleError("the match is over; no further game can start")
        crawford = self.rules.cubeful and self.next_is_crawford
        return new_game(self.rules, first, opening, self.score, crawford=crawford, post_crawford=self.crawford_played)

    def record(self, game: Game) -> "Match":
        """The match after a finished ``game`` (its result added to the winner's score)."""
        if game.result is None:
            raise GameRuleError("only a finished game can be recorded")
        score = list(self.score)
        score[game.result.winner] += game.result.points
        played = self.crawford_played or game.crawford or self.next_is_crawford
        return replace(self, score=(score[0], score[1]), crawford_played=played, games=self.games + 1)


def wants_raccoon(player: Player, pos: Position, state: MatchState) -> bool:
    """Whether the doubler raccoons after a beaver (``state``: as when he doubled): the player's own call."""
    return bool(player.offers_raccoon(pos, state))


def allowed_answer(game: Game, answer: str) -> str:
    """``answer`` to the pending double, a beaver turned into a take where the rules or the cube limit forbid it."""
    return "take" if answer == "beaver" and not may_beaver(game) else answer


EventKind = Literal["roll", "play", "double", "take", "pass", "beaver", "raccoon", "no raccoon", "end"]


@dataclass(frozen=True)
class GameEvent:
    """One step of ``play_game``: who did what, and the game just before and just after it."""

    kind: EventKind
    """A roll, a play, a cube action (a declined raccoon is "no raccoon"), or "end" once the game is over."""
    seat: int
    """The seat that acted (the winner for "end")."""
    before: Game
    after: Game
    """The game after the step ("end": the final game, as ``before``)."""


GameObserver = Callable[[GameEvent], None]
"""Called by ``play_game`` with each ``GameEvent`` (a recorder, a printer, a test)."""


def play_game(game: Game, players: tuple[Player, Player], dice: Callable[[], tuple[int, int]],
              observer: GameObserver | None = None) -> Game:
    """Drive ``game`` to its end, asking ``players[seat]`` for every decision and ``dice()`` for each roll.

    ``observer``, when given, sees every step as a ``GameEvent`` and then the end of the game.
    """
    kind: EventKind
    while not game.is_over:
        before, seat = game, game.turn
        me = players[seat]
        if game.phase == "move":
            assert game.dice is not None
            kind, game = "play", play(game, me.choose_move(game.position, game.dice, game.match_state()))
        elif game.phase == "roll":
            if may_double(game) and me.offers_double(game.position, game.match_state()):
                kind, game = "double", double(game)
            else:
                kind, game = "roll", roll(game, dice())
        elif game.phase == "doubled":
            seat = game.opponent
            answer = allowed_answer(game, players[seat].cube_response(game.position, game.match_state()))
            kind, game = cast(EventKind, answer), respond(game, answer)  # respond accepts only take, pass, beaver
        else:  # beavered
            accept = may_raccoon(game) and wants_raccoon(me, game.position, pre_beaver_state(game))
            kind, game = "raccoon" if accept else "no raccoon", raccoon(game, accept)
        if observer is not None:
            observer(GameEvent(kind=kind, seat=seat, before=before, after=game))
    if observer is not None:
        assert game.result is not None
        observer(GameEvent(kind="end", seat=game.result.winner, before=game, after=game))
    return game


def pre_beaver_state(game: Game) -> MatchState:
    """The doubler's MatchState as it was when he doubled (before the beaver quadrupled the cube)."""
    cube = game.cube // 4
    owner: CubeOwner = "centred" if cube == 1 else "me"
    r = game.rules
    return MatchState(r.match_length, game.score[game.turn], game.score[game.opponent], cube, owner,
                      rules=r.cube_rules)
