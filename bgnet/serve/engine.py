"""What ``bgnet serve`` answers, as plain Python (no web packages): hints, cube, moves and games against the bot.

``Engine`` loads the net once and turns each request into the same JSON-ready
dict as the matching ``bgnet ... --json`` command: it builds the same typed
request (``bgnet.app.requests``) and calls the same answer (``bgnet.app.answers``).
Bad input raises a ``BgnetError`` with one sentence: an ``ApiError`` carries its
own HTTP status, any other one is a 400. Deep work (searches at 2 plies and
more, rollouts, analyses) runs at most ``deep_jobs`` at a time; one more is
refused at once with status 429 rather than queued.

A game against the bot is stateless on the server: every ``play`` call gets the
whole game (``state``, as returned by the previous call) and an action, applies
it with ``bgnet.play.game``'s rules, lets the bot act until the player must decide,
and returns the new state. The dice come from ``(seed, roll number)``, so a
seed replays the same game.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from dataclasses import asdict, dataclass
from typing import Any, Iterator, Mapping, cast

import numpy as np

from bgnet.play import game as g
from bgnet.core.blas import limit_blas_threads
from bgnet.app.answers import cube_of, hint_of, moves_of, moves_to_dict, position_and_state, rollout_of
from bgnet.app.requests import (CubeRequest, HintRequest, MovesRequest, PositionRequest, RolloutRequest,
                                check_rule_choices)
from bgnet.cube.decision import cube_decision, raccoons, rules_dict
from bgnet.core.errors import BgnetError
from bgnet.play.hint import MoveHints, cube_hint, move_hint
from bgnet.cube.match import DEFAULT_MONEY_RULES, RULE_NAMES, CubeRules, MatchState
from bgnet.core.movegen import legal_moves, roll_text
from bgnet.core.notation import Move
from bgnet.core.position import Position
from bgnet.core.rules import Result, roll_opening
from bgnet.play.search import MAX_PLY, ProbsFn, best_move, evaluate_position

HUMAN, BOT = 0, 1
"""Seats in a game against the bot: the player is seat 0, bgnet seat 1."""
MAX_MATCH_LENGTH = 25


class ApiError(BgnetError):
    """A request the server refuses: an HTTP status and one sentence for the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class ServeConfigError(BgnetError):
    """Settings of ``bgnet serve`` that cannot be used: a port, a worker count or a limit out of range."""


@dataclass(frozen=True)
class ServeConfig:
    """How the server runs: which net, and the limits that keep one client from starving the others."""

    model: str | None = None
    """Checkpoint file (None: the shipped net)."""
    max_ply: int = 2
    """Deepest hint or cube search served; deeper requests get status 400."""
    deep_jobs: int = 1
    """Searches at 2 plies or more, rollouts and analyses allowed at the same time; one more gets status 429."""
    play_ply: int = 0
    """The bot's search depth in games against it (0 or 1: it answers at once)."""
    rollout_max_trials: int = 324
    """Most trials (per play) one rollout request may ask for: a few seconds of work."""
    analyze_max_ply: int = 1
    """Deepest analysis of an uploaded match."""
    max_body_bytes: int = 64 * 1024
    """Largest request body (JSON) accepted; bigger ones get status 413."""
    max_upload_bytes: int = 1024 * 1024
    """Largest match file upload accepted by /api/analyze."""
    engine_lock: bool = False
    """Run one engine call at a time (for an engine whose kernels share scratch buffers between threads)."""
    blas_threads: int = 1
    """Threads of numpy's OpenBLAS in the server process (0: leave it alone); requests run side by side instead."""

    def __post_init__(self) -> None:
        if not 0 <= self.max_ply <= MAX_PLY:
            raise ServeConfigError(f"max_ply must be from 0 to {MAX_PLY}, got {self.max_ply}")
        if not 0 <= self.play_ply <= self.max_ply:
            raise ServeConfigError(f"play_ply must be from 0 to max_ply ({self.max_ply}), got {self.play_ply}")
        if self.deep_jobs < 1 or self.rollout_max_trials < 1:
            raise ServeConfigError("deep_jobs and rollout_max_trials must be at least 1")


def _parse(text: str) -> tuple[Position, MatchState | None, tuple[int, int] | None]:
    """Position, match state and dice of a Position ID, "PositionID:MatchID" or XGID (the CLI's parser)."""
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, "give a position: a Position ID, PositionID:MatchID or an XGID")
    if len(text) > 200:
        raise ApiError(400, "the position text is too long to be a Position ID, Match ID or XGID")
    return position_and_state(PositionRequest(position=text))


def _board_dict(pos: Position, state: MatchState | None, dice: tuple[int, int] | None) -> dict[str, Any]:
    """A position as the page draws it: the 26 slots from the side on roll, IDs, pips and borne-off counts."""
    mine, theirs = pos.pips()
    return {
        "position_id": pos.position_id(),
        "xgid": _xgid(pos, state, dice),
        "board": list(pos.board),
        "pips": [mine, theirs],
        "off": [pos.off, pos.opp_off],
        "match": None if state is None else state.to_dict(),
        "dice": None if dice is None else list(dice),
    }


def _xgid(pos: Position, state: MatchState | None, dice: tuple[int, int] | None) -> str:
    """The XGID of a position with its match state and dice (money and a centred cube without a state)."""
    from bgnet.core.formats import xgid_from_position

    return xgid_from_position(pos, state, dice=dice or (0, 0))


class Engine:
    """The net, loaded once, behind every request of the server; safe to call from several threads."""

    def __init__(self, config: ServeConfig = ServeConfig(), probs_fn: ProbsFn | None = None) -> None:
        from bgnet.play.agents import checkpoint_path

        self.config = config
        self.model_path = str(checkpoint_path(config.model))  # "default" or a file, as every --model
        if probs_fn is None:
            from bgnet.nets.pruning import load_exact_evaluator, with_pruning

            probs_fn = with_pruning(load_exact_evaluator(self.model_path), self.model_path)
        self.probs_fn: ProbsFn = probs_fn
        self._deep = threading.BoundedSemaphore(config.deep_jobs)
        self._lock: threading.Lock | None = threading.Lock() if config.engine_lock else None
        if config.blas_threads:
            limit_blas_threads(config.blas_threads)

    def warm(self) -> None:
        """Run each kernel once (numba loads compiled code on first call), so the first request is fast."""
        start = Position.start()
        move_hint(self.probs_fn, start, (3, 1), ply=1)
        cube_hint(self.probs_fn, start, None, ply=0)

    # -- limits ------------------------------------------------------------------------
    def check_ply(self, ply: int) -> int:
        """``ply`` if the server searches that deep, else an ApiError (400)."""
        if isinstance(ply, bool) or not isinstance(ply, int) or ply < 0:
            raise ApiError(400, f"ply must be a whole number from 0 to {self.config.max_ply}")
        if ply > self.config.max_ply:
            raise ApiError(400, f"this server searches at most {self.config.max_ply} plies; ply {ply} was asked")
        return ply

    @contextlib.contextmanager
    def work(self, deep: bool = False) -> Iterator[None]:
        """Hold the engine for one request: deep work takes a slot or is refused (429); the optional lock serialises."""
        if deep and not self._deep.acquire(blocking=False):
            raise ApiError(429, "the server is busy with other deep searches; try again in a moment or ask for fewer plies")
        try:
            if self._lock is None:
                yield
            else:
                with self._lock:
                    yield
        finally:
            if deep:
                self._deep.release()

    # -- requests ----------------------------------------------------------------------
    def position(self, text: str) -> dict[str, Any]:
        """The board, IDs, pips, match state and dice of a pasted position."""
        pos, state, dice = _parse(text)
        return _board_dict(pos, state, dice)

    def moves(self, text: str, dice: str) -> dict[str, Any]:
        """Every legal play of ``dice``, as ``bgnet moves --json``."""
        _parse(text)
        request = MovesRequest(position=text, dice=dice)
        with self.work():
            pos, d, moves = moves_of(request)
        return moves_to_dict(pos, d, moves)

    def hint(self, text: str, dice: str | None = None, ply: int = 0, cubeful: bool = False,
             top: int | None = None, rules: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Ranked plays (with dice, from the request or the ID) or the cube hint, as ``bgnet hint --json``.

        Each ranked play also carries ``steps``, its one-die (from, to) steps in
        the mover's numbering, so that a client can draw it. ``rules``: cube rules chosen by name.
        """
        _parse(text)
        ply = self.check_ply(ply)
        request = HintRequest(position=text, dice=dice or None, ply=ply, cubeful=cubeful, top=top,
                              rules=dict(rules or {}))
        with self.work(deep=ply >= 2):
            _pos, hint = hint_of(request, self.probs_fn)
        out = hint.to_dict()
        if isinstance(hint, MoveHints):
            for row, m in zip(out["moves"], hint.moves):
                row["steps"] = [list(s) for s in m.move.steps]
        return out

    def cube(self, text: str, ply: int = 0, rules: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The cube decision of the side on roll, as ``bgnet cube --json`` (``rules``: cube rules chosen by name)."""
        _parse(text)
        ply = self.check_ply(ply)
        request = CubeRequest(position=text, ply=ply, rules=dict(rules or {}))
        with self.work(deep=ply >= 2):
            return cube_of(request, self.probs_fn)[1].to_dict()

    def rollout(self, text: str, dice: str | None, trials: int, truncate: int | None, ply: int,
                cubeful: bool, seed: int, plays: list[str] | None = None,
                rules: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A small rollout of the plays of ``dice`` (or, without dice, of the cube decision), as ``bgnet rollout --json``
        (``docs/JSON.md``). Not interruptible once started: ``rollout_max_trials`` bounds its time, and its memory
        is that of one chunk of trials whatever the count."""
        if not 1 <= trials <= self.config.rollout_max_trials:
            raise ApiError(400, f"trials must be from 1 to {self.config.rollout_max_trials} on this server, got {trials}")
        if plays is not None and not 1 <= len(plays) <= 10:
            raise ApiError(400, "plays must list from 1 to 10 plays")
        _parse(text)
        request = RolloutRequest(position=text, dice=dice or None, plays=None if plays is None else tuple(plays),
                                 trials=trials, truncate=truncate, ply=ply, cubeful=cubeful, seed=seed,
                                 rules=dict(rules or {}))
        with self.work(deep=True):
            result = rollout_of(request, self.probs_fn)
        return result.to_dict()

    def analyze(self, name: str, data: bytes, ply: int, lenient: bool = False) -> dict[str, Any]:
        """Every decision of an uploaded ``.mat``/``.sgf`` match rated, as ``bgnet analyze --json`` (plus skipped parts)."""
        if len(data) > self.config.max_upload_bytes:
            raise ApiError(413, f"the upload is larger than this server's limit of {self.config.max_upload_bytes} bytes")
        if not 0 <= ply <= self.config.analyze_max_ply:
            raise ApiError(400, f"this server analyses at most {self.config.analyze_max_ply} plies deep, got {ply}")
        text = data.decode("utf-8", errors="replace")
        from bgnet.app.analysis import analyse_match
        from bgnet.io.formats import parse_match_text

        source = f"the upload {name!r}"
        match = parse_match_text(text, name=name, lenient=lenient, source=source)
        if not match.games:
            raise ApiError(400, f"{source}: no game could be replayed")
        with self.work(deep=True):
            out = analyse_match(self.probs_fn, match, ply).to_dict()
        out["skipped"] = [str(p) for p in match.problems]
        return out

    # -- games against the bot ---------------------------------------------------------
    def play(self, request: dict[str, Any]) -> dict[str, Any]:
        """Apply one action of the player to a game against bgnet, let bgnet act, and return the new state."""
        action = request.get("action")
        with self.work():
            if action == "new":
                length = request.get("length", 0)
                if isinstance(length, bool) or not isinstance(length, int) or not 0 <= length <= MAX_MATCH_LENGTH:
                    raise ApiError(400, f"length must be 0 (a money game) or a match length up to {MAX_MATCH_LENGTH}")
                seed = request.get("seed")
                if seed is None:
                    seed = secrets.randbelow(2**31)
                if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
                    raise ApiError(400, "seed must be a non-negative whole number")
                choices = check_rule_choices(request.get("rules") or {})
                rules = g.Rules(match_length=length, cube_rules=DEFAULT_MONEY_RULES.choose(choices, length == 0))
                table = _Table(g.Match(rules), None, seed, 0, [])
                table.start_game()
            else:
                table = _Table.from_json(request.get("state"))
                table.act(action, request.get("move"))
            table.advance(self)
            return table.to_json()

    # -- the bot -----------------------------------------------------------------------
    def bot_move(self, pos: Position, dice: tuple[int, int], state: MatchState) -> Move:
        """bgnet's play of ``dice`` at the play depth."""
        return best_move(self.probs_fn, pos, dice, self.config.play_ply, state=None if state.is_money else state)

    def bot_doubles(self, pos: Position, state: MatchState) -> bool:
        """Whether bgnet, on roll in ``pos`` with cube access, doubles."""
        probs = evaluate_position(self.probs_fn, pos, self.config.play_ply, state=state)
        return cube_decision(probs, state, pos).action.startswith("double")

    def bot_answer(self, pos: Position, state: MatchState) -> str:
        """bgnet's answer to the double of the side on roll in ``pos``: "take", "pass" or (where the rules allow it)
        "beaver"."""
        probs = evaluate_position(self.probs_fn, pos, self.config.play_ply, state=state)
        return cube_decision(probs, state, pos).response or "take"

    def bot_raccoons(self, pos: Position, state: MatchState) -> bool:
        """Whether bgnet, beavered after doubling in ``pos`` (``state``: as when it doubled), raccoons: while its
        chances say it is still the favourite after the take, as the agents decide (``BaseAgent.offers_raccoon``)."""
        return raccoons(evaluate_position(self.probs_fn, pos, self.config.play_ply), state, pos)


# -- the game table: (de)serialised state plus the bot's turns ------------------------------


_PHASES = ("roll", "doubled", "beavered", "move", "over")
_KINDS = {Result.SINGLE: "single game", Result.GAMMON: "gammon", Result.BACKGAMMON: "backgammon"}
_WHO = {HUMAN: "you", BOT: "bgnet"}


def _bad_state(why: str) -> ApiError:
    return ApiError(400, f"the game state sent back is not valid: {why}")


def _int(d: dict[str, Any], key: str, lo: int, hi: int) -> int:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _bad_state(f"{key} should be a whole number from {lo} to {hi}")
    return v


def _rules(state: dict[str, Any], length: int) -> CubeRules:
    """The cube rules a game state sent back holds (a state without them: the money defaults)."""
    rules = state.get("rules")
    if rules is None:
        return DEFAULT_MONEY_RULES.for_play(length == 0)
    if not isinstance(rules, dict) or set(rules) != set(RULE_NAMES):
        raise _bad_state(f"rules should name each cube rule: {', '.join(RULE_NAMES)}")
    return CubeRules(**rules)


def _pair(d: dict[str, Any], key: str, lo: int, hi: int) -> tuple[int, int]:
    v = d.get(key)
    if (not isinstance(v, list) or len(v) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi for x in v)):
        raise _bad_state(f"{key} should be two whole numbers from {lo} to {hi}")
    return v[0], v[1]


@dataclass
class _Table:
    """A match against the bot between two requests: the match score, the game in progress, the dice seed."""

    match: g.Match
    game: g.Game | None
    seed: int
    rolls: int
    """Dice rolled so far in this match (the next roll is drawn from ``(seed, rolls)``)."""
    events: list[dict[str, Any]]

    def dice(self) -> tuple[int, int]:
        """The next roll of this match's dice."""
        a, b = np.random.default_rng([self.seed, self.rolls]).integers(1, 7, size=2)
        self.rolls += 1
        return int(a), int(b)

    def start_game(self) -> None:
        """Each side rolls one die until they differ (``roll_opening``); the higher one plays both dice first."""
        opening = roll_opening(self.dice)
        first, (mine, bots) = opening.first, opening.tries[-1]
        self.events.append({"who": _WHO[first], "action": "opening", "dice": [mine, bots],
                            "text": f"You roll {mine}, bgnet rolls {bots}: {_WHO[first]} go{'es' if first == BOT else ''} first."})
        self.game = self.match.start(first, opening.dice)

    # -- the player's actions ----------------------------------------------------------
    def act(self, action: object, move: object) -> None:
        """Apply the player's ``action`` ("roll", "double", "take", "pass", "beaver", "move" with ``move``, "next";
        after bgnet beavers: "raccoon", or "roll" to play on)."""
        game = self.game
        assert game is not None
        if action == "next":
            if not game.is_over:
                raise ApiError(409, "the game is still going on; finish it before starting the next one")
            if self.match.is_over:
                raise ApiError(409, "the match is over; start a new one")
            self.start_game()
            return
        if game.is_over:
            raise ApiError(409, "this game is over; ask for the next game or start a new match")
        if action in ("roll", "double") and game.phase != "beavered":
            if game.turn != HUMAN or game.phase != "roll":
                raise ApiError(409, f"you cannot {action} now: it is {self._waiting_for()}")
            if action == "double":
                if not g.may_double(game):
                    raise ApiError(409, "you cannot double now (no cube access, or the Crawford game)")
                self.game = g.double(game)
                self.events.append({"who": "you", "action": "double", "text": f"You double to {2 * game.cube}."})
            else:
                self._roll()
        elif action in ("take", "pass", "beaver"):
            if game.phase != "doubled" or game.turn != BOT:
                raise ApiError(409, f"you cannot {action} now: it is {self._waiting_for()}")
            if action == "beaver" and not g.may_beaver(game):
                raise ApiError(409, "you cannot beaver here (the rules or the cube limit)")
            text = f"You beaver: the cube is now at {4 * game.cube}, yours." if action == "beaver" else f"You {action}."
            self.events.append({"who": "you", "action": action, "text": text})
            self._set(g.respond(game, str(action)))
        elif action == "raccoon" or (action == "roll" and game.phase == "beavered"):
            if game.phase != "beavered" or game.turn != HUMAN:
                raise ApiError(409, f"you cannot raccoon now: it is {self._waiting_for()}")
            if action == "raccoon":
                self.events.append({"who": "you", "action": "raccoon",
                                    "text": f"You raccoon: the cube is now at {2 * game.cube}, yours."})
            self.game = g.raccoon(game, action == "raccoon")
        elif action == "move":
            if game.turn != HUMAN or game.phase != "move":
                raise ApiError(409, f"you cannot move now: it is {self._waiting_for()}")
            self._human_move(move)
        else:
            raise ApiError(400, "action must be one of new, roll, double, take, pass, beaver, raccoon, move, next")

    def _human_move(self, move: object) -> None:
        game = self.game
        assert game is not None and game.dice is not None
        if not isinstance(move, str) or not move.strip() or len(move) > 100:
            raise ApiError(400, "move must be the play's text (like 24/18 13/11) or its afterstate Position ID")
        moves = legal_moves(game.position, game.dice)
        chosen = next((m for m in moves if m.after is not None and m.after.position_id() == move.strip()), None)
        if chosen is None:
            chosen = game.position.parse_move(move, game.dice)
        self.events.append({"who": "you", "action": "move", "move": chosen.text, "steps": [list(s) for s in chosen.steps],
                            "text": f"You play {chosen.text or '(no play)'}."})
        self._set(g.play(game, chosen))

    def _waiting_for(self) -> str:
        game = self.game
        assert game is not None
        who = _WHO[game.turn]
        return {"roll": f"{who} to roll", "move": f"{who} to move", "doubled": f"{_WHO[1 - game.turn]} to answer a double",
                "beavered": f"{who} to raccoon or roll", "over": "the end of the game"}.get(game.phase, game.phase)

    def _roll(self) -> None:
        game = self.game
        assert game is not None
        dice = self.dice()
        self.events.append({"who": _WHO[game.turn], "action": "roll", "dice": list(dice),
                            "text": f"{'You roll' if game.turn == HUMAN else 'bgnet rolls'} {roll_text(dice)}."})
        self.game = g.roll(game, dice)

    def _set(self, game: g.Game) -> None:
        """Take the next game value; a finished game goes into the match score at once."""
        self.game = game
        if game.is_over and game.result is not None:
            r = game.result
            self.match = self.match.record(game)
            how = "by a dropped double" if r.dropped else f"a {_KINDS[r.kind]}"
            self.events.append({"who": _WHO[r.winner], "action": "win", "points": r.points,
                                "text": f"{'You win' if r.winner == HUMAN else 'bgnet wins'} {r.points} "
                                        f"point{'s' if r.points != 1 else ''} ({how})."})

    # -- the bot's turns ---------------------------------------------------------------
    def advance(self, engine: Engine) -> None:
        """Let bgnet act (and play forced passes) until the player must decide or the game ends."""
        while self.game is not None and not self.game.is_over:
            game = self.game
            if game.turn == BOT and game.phase == "roll":
                if g.may_double(game) and engine.bot_doubles(game.position, game.match_state()):
                    self.game = g.double(game)
                    self.events.append({"who": "bgnet", "action": "double", "text": f"bgnet doubles to {2 * game.cube}."})
                    return
                self._roll()
            elif game.turn == BOT and game.phase == "move":
                assert game.dice is not None
                m = engine.bot_move(game.position, game.dice, game.match_state())
                self.events.append({"who": "bgnet", "action": "move", "move": m.text, "steps": [list(s) for s in m.steps],
                                    "text": f"bgnet plays {m.text or '(no play: bgnet cannot move)'}."})
                self._set(g.play(game, m))
            elif game.turn == HUMAN and game.phase == "doubled":
                answer = g.allowed_answer(game, engine.bot_answer(game.position, game.match_state()))
                text = (f"bgnet beavers: the cube is now at {4 * game.cube}, bgnet's." if answer == "beaver"
                        else f"bgnet {'passe' if answer == 'pass' else answer}s.")
                self.events.append({"who": "bgnet", "action": answer, "text": text})
                self._set(g.respond(game, answer))
            elif game.turn == BOT and game.phase == "beavered":
                accept = g.may_raccoon(game) and engine.bot_raccoons(game.position, g.pre_beaver_state(game))
                if accept:
                    self.events.append({"who": "bgnet", "action": "raccoon",
                                        "text": f"bgnet raccoons: the cube is now at {2 * game.cube}, bgnet's."})
                self.game = g.raccoon(game, accept)
            elif game.turn == HUMAN and game.phase == "roll" and not g.may_double(game):
                self._roll()
            elif game.turn == HUMAN and game.phase == "move":
                assert game.dice is not None
                moves = legal_moves(game.position, game.dice)
                if not moves[0].is_empty:
                    return
                self.events.append({"who": "you", "action": "move", "move": "", "steps": [],
                                    "text": "You cannot move."})
                self._set(g.play(game, moves[0]))
            else:
                return

    # -- JSON --------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The state to send back next time, and what the page shows: the board from the player's side, legal plays."""
        game = self.game
        assert game is not None
        r = game.result
        state = {
            "length": self.match.rules.match_length, "score": list(self.match.score),
            "crawford_played": self.match.crawford_played, "games": self.match.games,
            "seed": self.seed, "rolls": self.rolls, "rules": asdict(self.match.rules.cube_rules),
            "game": {
                "position_id": game.position.position_id(), "turn": game.turn, "phase": game.phase,
                "score": list(game.score), "crawford": game.crawford, "post_crawford": game.post_crawford,
                "cube": game.cube, "owner": game.owner, "dice": None if game.dice is None else list(game.dice),
                "game_rolls": list(game.rolls), "cube_turned": game.cube_turned,
                "result": None if r is None else {"winner": r.winner, "kind": int(r.kind), "cube": r.cube, "dropped": r.dropped},
            },
        }
        mine = game.position if game.turn == HUMAN else game.position.swap_sides()
        human_state = game.match_state(HUMAN)
        out: dict[str, Any] = {
            "state": state,
            "events": self.events,
            "board": list(mine.board),
            "position_id": mine.position_id(),
            "xgid": _xgid(mine, human_state, game.dice if game.turn == HUMAN else None),
            "turn": _WHO[game.turn],
            "phase": game.phase,
            "dice": None if game.dice is None else list(game.dice),
            "waiting_for": self._waiting_for(),
            "may_double": game.turn == HUMAN and game.phase == "roll" and g.may_double(game),
            "may_beaver": game.turn == BOT and g.may_beaver(game),
            "may_raccoon": game.turn == HUMAN and g.may_raccoon(game),
            "rules": rules_dict(human_state),
            "length": self.match.rules.match_length,
            "score": {"you": self.match.score[HUMAN], "bgnet": self.match.score[BOT]},
            "cube": {"value": game.cube, "owner": "centred" if game.owner is None else _WHO[game.owner]},
            "crawford": game.crawford,
            "pips": {"you": mine.pips()[0], "bgnet": mine.pips()[1]},
            "result": None if r is None else {"winner": _WHO[r.winner], "points": r.points, "kind": _KINDS[r.kind],
                                              "dropped": r.dropped},
            "match_over": self.match.is_over,
            "legal_moves": [],
        }
        if game.turn == HUMAN and game.phase == "move" and game.dice is not None:
            moves = legal_moves(game.position, game.dice)
            rows = cast(list[dict[str, Any]], moves_to_dict(game.position, game.dice, moves)["moves"])
            out["legal_moves"] = [dict(row, after_board=list(m.after.board) if m.after is not None else None)
                                  for row, m in zip(rows, moves)]
        return out

    @classmethod
    def from_json(cls, state: object) -> "_Table":
        """The table a client sent back (validated: a bad field gets one sentence, status 400)."""
        if not isinstance(state, dict) or not isinstance(state.get("game"), dict):
            raise ApiError(400, "send the state returned by the previous call, or use the action 'new'")
        try:
            length = _int(state, "length", 0, MAX_MATCH_LENGTH)
            match = g.Match(g.Rules(match_length=length, cube_rules=_rules(state, length)), score=_pair(state, "score", 0, 10**6),
                            crawford_played=bool(state.get("crawford_played")), games=_int(state, "games", 0, 10**6))
            gs = state["game"]
            phase = gs.get("phase")
            if phase not in _PHASES:
                raise _bad_state(f"phase should be one of {', '.join(_PHASES)}")
            pid = gs.get("position_id")
            if not isinstance(pid, str):
                raise _bad_state("position_id should be a Position ID")
            owner = gs.get("owner")
            if owner not in (None, 0, 1):
                raise _bad_state("owner should be 0, 1 or null")
            cube = _int(gs, "cube", 1, 2**15)
            if cube & (cube - 1):
                raise _bad_state("cube should be a power of two")
            dice = None if gs.get("dice") is None else _pair(gs, "dice", 1, 6)
            if (dice is None) != (phase != "move"):
                raise _bad_state("dice are given exactly in the move phase")
            res = gs.get("result")
            result = None
            if phase == "over":
                if not isinstance(res, dict):
                    raise _bad_state("a finished game needs its result")
                result = g.GameResult(_int(res, "winner", 0, 1), Result(_int(res, "kind", 1, 3)), _int(res, "cube", 1, 2**15),
                                      bool(res.get("dropped")))
            game = g.Game(match.rules, Position.from_position_id(pid), _int(gs, "turn", 0, 1), phase,
                          score=_pair(gs, "score", 0, 10**6), crawford=bool(gs.get("crawford")),
                          post_crawford=bool(gs.get("post_crawford")), cube=cube, owner=owner, dice=dice,
                          rolls=_pair(gs, "game_rolls", 0, 10**6), result=result,
                          cube_turned=bool(gs.get("cube_turned")))  # after a beaver the doubler must roll
            if game.position.is_game_over() and phase != "over":
                raise _bad_state("the board shows a finished game but the phase is not 'over'")
            if phase == "over" and not game.position.is_game_over() and not (result and result.dropped):
                raise _bad_state("the phase is 'over' but the board shows a game still going on")
            seed = _int(state, "seed", 0, 2**63 - 1)
            rolls = _int(state, "rolls", 0, 10**9)
        except ApiError:
            raise
        except BgnetError as err:
            raise _bad_state(" ".join(str(err).split())) from None
        return cls(match, game, seed, rolls, [])

