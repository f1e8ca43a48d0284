"""Answers shared by the command line and the web server: ``bgnet moves`` / ``hint`` / ``cube`` / ``rollout``.

``bgnet.cli.main`` prints these answers and ``bgnet.serve`` returns them as JSON;
both front ends build the same typed request (``bgnet.app.requests``) and call the
same function here, so their output stays identical by construction. A request
that cannot be answered raises a ``BgnetError``, one sentence (exit status 2 on the
command line, HTTP 400 from the server).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Sequence

from bgnet.app.requests import (DEFAULT_PLY, CubeRequest, HintRequest, MovesRequest, PositionRequest, RequestError,
                                RolloutRequest)

if TYPE_CHECKING:  # heavy or unused at run time: imported inside the functions
    import numpy as np

    from bgnet.core.notation import Move
    from bgnet.core.position import Position
    from bgnet.cube.match import MatchState
    from bgnet.play.base_agent import BaseAgent
    from bgnet.play.hint import CubeHint, MoveHints
    from bgnet.sim.rollout import RolloutResult


def moves_to_dict(pos: Position, dice: tuple[int, int], moves: Sequence[Move]) -> dict[str, object]:
    """The JSON object of ``bgnet moves --json`` (also served by ``bgnet serve``'s ``/api/moves``): each play's
    afterstate is its ``position_id`` (seen from the mover) and ``position_id_opponent_on_roll``, as in a hint."""
    return {
        "position_id": pos.position_id(),
        "dice": list(dice),
        "moves": [
            {
                "move": m.text,
                "steps": [list(s) for s in m.steps],
                "position_id": m.after.position_id() if m.after is not None else None,
                "position_id_opponent_on_roll": m.after.swap_sides().position_id() if m.after is not None else None,
            }
            for m in moves
        ],
    }


def moves_of(request: MovesRequest) -> tuple[Position, tuple[int, int], list[Move]]:
    """The position, the dice (higher die first) and every legal play of ``request`` (``bgnet moves``,
    ``/api/moves``); a finished game or dice that contradict an XGID's are refused as ``bgnet hint`` refuses them."""
    from bgnet.core.movegen import legal_moves

    pos = playable_position(request.position)
    dice = given_dice(request.dice, dice_in_id(request.position))
    assert dice is not None
    return pos, dice, legal_moves(pos, dice)


GAME_OVER = "the game in this position is over: one side has borne off all 15 checkers"
"""Why a finished position gets no moves, hints, cube decisions or rollouts."""


def playable_position(text: str) -> Position:
    """The position ``text`` writes (Position ID, "PositionID:MatchID" or XGID); RequestError when its game is over."""
    from bgnet.core.position import Position

    pos = Position.parse(text.strip())
    if pos.is_game_over():
        raise RequestError(GAME_OVER)
    return pos


def dice_in_id(text: str) -> tuple[int, int] | None:
    """The dice an XGID or the Match ID of "PositionID:MatchID" holds (None when it holds none)."""
    from bgnet.core.formats import is_xgid, parse_match_id, parse_xgid

    text = text.strip()
    if is_xgid(text):
        dice = parse_xgid(text).dice
    elif ":" in text:
        dice = parse_match_id(text.split(":", 1)[1].strip()).dice
    else:
        return None
    return dice if dice and dice != (0, 0) else None


def given_dice(text: str | None, id_dice: tuple[int, int] | None) -> tuple[int, int] | None:
    """The roll to answer for, higher die first: the dice given, else the ID's; RequestError when both are given and
    differ (the same roll in the other order is the same roll)."""
    from bgnet.core.movegen import high_first, parse_dice, roll_text

    if text is None:
        return None if id_dice is None else high_first(id_dice)
    dice = high_first(parse_dice(text))
    if id_dice is not None and dice != high_first(id_dice):
        raise RequestError(f"the dice {roll_text(dice)} contradict the dice {roll_text(id_dice)} the ID already "
                           "holds: give the roll once (or the same roll)")
    return dice


def answer_state(request: PositionRequest, state: MatchState | None) -> MatchState:
    """The score, cube and rules an answer assumes: ``state`` (from the ID; None: money, cube centred) with the
    rules the request chose. Rules precede in this order: a rule the request chooses (a flag, an API field), then
    what the ID records (a Match ID the Jacoby rule, an XGID the Jacoby rule and beavers), then
    ``DEFAULT_MONEY_RULES``, GNU Backgammon's money defaults (``docs/CUBE.md``)."""
    from bgnet.cube.match import DEFAULT_MONEY_RULES, MatchState

    state = state or MatchState(rules=DEFAULT_MONEY_RULES)
    rules = state.rules.choose(request.rules, state.is_money)
    return state if rules == state.rules else replace(state, rules=rules)


def position_and_state(request: PositionRequest) -> tuple[Position, MatchState | None, tuple[int, int] | None]:
    """The position, the match state (from an XGID, "PositionID:MatchID", --match or --xgid; None when none is
    given) with the rules the ID does not record from the money defaults, and the dice the IDs hold."""
    from bgnet.core.formats import is_xgid as written_as_xgid
    from bgnet.core.formats import parse_match_id, parse_xgid
    from bgnet.core.position import Position
    from bgnet.cube.match import DEFAULT_MONEY_RULES, MatchState

    text = request.position.strip()
    pos = Position.parse(text)
    is_xgid = written_as_xgid(text)
    match_id = text.split(":", 1)[1].strip() if ":" in text and not is_xgid else None
    if (is_xgid or match_id) and (request.match or request.xgid):
        raise RequestError("POSITION already gives the score and cube, so --match and --xgid cannot be used with it")
    state, dice = None, None
    if is_xgid or request.xgid:
        xgid = text if is_xgid else str(request.xgid)
        state = MatchState.from_xgid(xgid, defaults=DEFAULT_MONEY_RULES)
        dice = parse_xgid(xgid).dice
    elif match_id or request.match:
        mid = match_id or str(request.match)
        state = MatchState.from_match_id(mid, defaults=DEFAULT_MONEY_RULES)
        dice = parse_match_id(mid).dice
    if pos.is_game_over():
        raise RequestError(GAME_OVER)
    return pos, state, (dice if dice and dice != (0, 0) else None)


def search_ply(model: str | None, ply: int | None, default: int = DEFAULT_PLY) -> int:
    """The depth of a search: ``ply`` when given, else the ``@ply`` of the model's specification (``default@1``),
    else ``default``; RequestError when the two are given and differ."""
    from bgnet.play.agents import split_spec

    spec_ply = split_spec(model)[1] if model else None
    if ply is not None and spec_ply is not None and ply != spec_ply:
        raise RequestError(f"--ply {ply} contradicts the depth of --model {model!r}: give the depth once")
    return ply if ply is not None else spec_ply if spec_ply is not None else default


def load_probs_fn(model: str | None, prune: bool = True) -> Callable[[np.ndarray], np.ndarray]:
    """The 0-ply probabilities of the player ``model`` names (the specs of ``bgnet.play.agents.load_agent``:
    ``default`` or None for the released net, a checkpoint file, ``gnubg``, ...); bgnet's nets are exact for pure
    bear-offs, and with ``prune`` carry their pruning net for searches (``bgnet.nets.pruning``). RequestError for a
    player without probabilities (pubeval, random)."""
    from bgnet.play.agents import load_agent

    probs_fn = probs_fn_of(load_agent(model or "default", prune=prune))
    if probs_fn is None:
        raise RequestError(f"--model {model!r} gives no probabilities to search with: name a net (default, a "
                           "checkpoint file) or gnubg")
    return probs_fn


def probs_fn_of(agent: BaseAgent) -> Callable[[np.ndarray], np.ndarray] | None:
    """The 0-ply probabilities of boards by ``agent``'s evaluator, as a function; None for a player without one."""
    evaluator = agent.evaluator
    if evaluator is None:
        return None
    return evaluator if callable(evaluator) else evaluator.probs_of_boards


def hint_of(request: HintRequest,
            probs_fn: Callable[[np.ndarray], np.ndarray]) -> tuple[Position, MoveHints | CubeHint]:
    """The position and what ``bgnet hint`` answers for ``request`` with the net ``probs_fn`` (also ``/api/hint``)."""
    from bgnet.play.hint import cube_hint, move_hint

    pos, state, id_dice = position_and_state(request)
    dice = given_dice(request.dice, id_dice)
    state = answer_state(request, state)
    if dice is None:
        return pos, cube_hint(probs_fn, pos, state, ply=request.ply)
    return pos, move_hint(probs_fn, pos, dice, ply=request.ply, state=state, top=request.top, cubeful=request.cubeful)


def cube_of(request: CubeRequest, probs_fn: Callable[[np.ndarray], np.ndarray]) -> tuple[Position, CubeHint]:
    """The position and what ``bgnet cube`` answers for ``request`` with the net ``probs_fn`` (also ``/api/cube``)."""
    from bgnet.play.hint import cube_hint

    pos, state, _dice = position_and_state(request)
    return pos, cube_hint(probs_fn, pos, answer_state(request, state), ply=request.ply)


def rollout_request_parts(request: RolloutRequest) -> tuple[Position, tuple[int, int] | None, MatchState]:
    """The position, the dice (None: the cube decision is rolled out) and the state a rollout of ``request`` plays
    (``bgnet rollout``, ``/api/rollout``)."""
    pos, state, id_dice = position_and_state(request)
    return pos, given_dice(request.dice, id_dice), answer_state(request, state)


def rollout_of(request: RolloutRequest, probs_fn: Callable[[np.ndarray], np.ndarray]) -> RolloutResult:
    """The rollout ``request`` asks for, run here with the net ``probs_fn`` (``/api/rollout``)."""
    from bgnet.sim.rollout import rollout

    pos, dice, state = rollout_request_parts(request)
    plays = None if request.plays is None else list(request.plays)
    return rollout(probs_fn, pos, dice, plays=plays, trials=request.trials, truncate=request.truncate, ply=request.ply,
                   cubeful=request.cubeful, state=state, seed=request.seed)
