"""Answers shared by the command line and the web server: the position parser, ``bgnet hint`` / ``cube`` / ``moves``.

``bgnet.cli.main`` prints these answers and ``bgnet.serve`` returns them as JSON, so
both front ends call the same functions with the same arguments (an
``argparse.Namespace`` of the ``hint`` or ``cube`` subcommand, declared here):
their output stays identical by construction. Bad input raises ``CliError``, one
sentence (exit status 2 on the command line, HTTP 400 from the server).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Callable, Sequence

from bgnet.core.errors import BgnetError

if TYPE_CHECKING:  # heavy or unused at run time: imported inside the functions
    import numpy as np

    from bgnet.play.hint import CubeHint, MoveHints
    from bgnet.cube.match import MatchState
    from bgnet.core.notation import Move
    from bgnet.core.position import Position


class CliError(BgnetError):
    """A request (command-line arguments, or the same fields from the server) answered with one sentence."""


def moves_to_dict(pos: Position, dice: tuple[int, int], moves: Sequence[Move]) -> dict[str, object]:
    """The JSON object of ``bgnet moves --json`` (also served by ``bgnet serve``'s ``/api/moves``)."""
    return {
        "position_id": pos.position_id(),
        "dice": list(dice),
        "moves": [
            {
                "move": m.text,
                "steps": [list(s) for s in m.steps],
                "after_position_id": m.after.position_id() if m.after is not None else None,
                "next_position_id": m.after.swap_sides().position_id() if m.after is not None else None,
            }
            for m in moves
        ],
    }



def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """``--ply`` and ``--model``."""
    parser.add_argument("--ply", type=int, default=2, metavar="N",
                        help="search depth: 0 (the net alone, fastest), 1 or 2 plies (default 2, about a second)")
    parser.add_argument("--model", metavar="PATH", default=None,
                        help="checkpoint file (default: the shipped checkpoints/bgnet.pt)")


def add_money_rule_arguments(parser: argparse.ArgumentParser) -> None:
    """``--jacoby/--no-jacoby`` and ``--beavers/--no-beavers`` for money positions (defaults as gnubg: both on)."""
    parser.add_argument("--jacoby", action=argparse.BooleanOptionalAction, default=None,
                        help="money play: gammons count single until the cube is turned (default: on, or as the ID says)")
    parser.add_argument("--beavers", action=argparse.BooleanOptionalAction, default=None,
                        help="money play: a doubled player may beaver (default: allowed, or as an XGID says)")


def with_money_rules(args: argparse.Namespace, state: MatchState | None, from_xgid: bool) -> MatchState:
    """The money rules of the hint: gnubg's defaults (Jacoby on, beavers allowed), the ID's, or the flags'."""
    from dataclasses import replace

    from bgnet.cube.match import MatchState

    if state is not None and not state.is_money:
        if args.jacoby is not None or args.beavers is not None:
            raise CliError("--jacoby and --beavers apply only to money play, not to a match score")
        return state
    if state is None:
        state = MatchState(jacoby=True, beavers=True)
    elif not from_xgid:  # a Match ID carries the Jacoby rule but not beavers
        state = replace(state, beavers=True)
    jacoby = state.jacoby if args.jacoby is None else args.jacoby
    beavers = state.beavers if args.beavers is None else args.beavers
    return replace(state, jacoby=jacoby, beavers=beavers, raccoons=state.raccoons and beavers)


def is_xgid_source(args: argparse.Namespace) -> bool:
    """Whether the score and cube come from an XGID (which records the beaver rule) rather than a Match ID."""
    text = args.position.strip()
    return bool(args.xgid) or text.upper().startswith("XGID=") or text.count(":") >= 9


def add_match_arguments(parser: argparse.ArgumentParser) -> None:
    """``--match`` or ``--xgid`` for the score and cube."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--match", metavar="MATCHID", help="gnubg Match ID with the score and cube (default: money, cube centred)")
    group.add_argument("--xgid", metavar="XGID", help="an XGID whose score and cube to use")


def check_ply_arg(ply: int) -> int:
    """``ply`` when the search supports it (checked before the model is loaded)."""
    from bgnet.play.search import MAX_PLY

    if not 0 <= ply <= MAX_PLY:
        raise CliError(f"--ply must be from 0 to {MAX_PLY}, got {ply}")
    return ply


def position_and_state(args: argparse.Namespace) -> tuple[Position, MatchState | None, tuple[int, int] | None]:
    """The position, the match state (from an XGID POSITION, a "PositionID:MatchID", --match or --xgid) and any dice they hold."""
    from bgnet.core.formats import is_xgid as written_as_xgid
    from bgnet.core.formats import parse_match_id, parse_xgid
    from bgnet.cube.match import MatchState
    from bgnet.core.position import Position

    text = args.position.strip()
    pos = Position.parse(text)
    is_xgid = written_as_xgid(text)
    match_id = text.split(":", 1)[1].strip() if ":" in text and not is_xgid else None
    if (is_xgid or match_id) and (args.match or args.xgid):
        raise CliError("POSITION already gives the score and cube, so --match and --xgid cannot be used with it")
    state, dice = None, None
    if is_xgid or args.xgid:
        xgid = text if is_xgid else args.xgid
        state = MatchState.from_xgid(xgid)
        dice = parse_xgid(xgid).dice
    elif match_id or args.match:
        mid = match_id or args.match
        state = MatchState.from_match_id(mid)
        dice = parse_match_id(mid).dice
    if pos.is_game_over():
        raise CliError("the game in this position is over: one side has borne off all 15 checkers")
    return pos, state, (dice if dice and dice != (0, 0) else None)


def load_probs_fn(model: str | None) -> Callable[[np.ndarray], np.ndarray]:
    """The 0-ply probabilities of a checkpoint (numpy forward pass; torch only on a cache miss), exact for pure bear-offs."""
    from bgnet.nets.bearoff import with_database
    from bgnet.nets.fastnet import load_evaluator
    from bgnet.core.resources import default_checkpoint

    return with_database(load_evaluator(model or default_checkpoint()))


def add_hint_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``bgnet hint``."""
    parser.add_argument("position", metavar="POSITION",
                        help="a gnubg Position ID (optionally PositionID:MatchID) or an XGID")
    parser.add_argument("dice", metavar="DICE", nargs="?", default=None,
                        help="the roll, e.g. 31 or 3-1; without it (and no dice in an XGID) the cube hint")
    add_match_arguments(parser)
    add_money_rule_arguments(parser)
    add_engine_arguments(parser)
    parser.add_argument("--top", type=int, default=None, metavar="N", help="show only the best N plays")
    parser.add_argument("--cubeful", action="store_true",
                        help="rank plays by cubeful equity (the opponent's best cube action next), not cubeless")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def check_hint_arguments(args: argparse.Namespace) -> None:
    """``--ply`` and ``--top`` of ``bgnet hint`` (checked before the model is loaded)."""
    check_ply_arg(args.ply)
    if args.top is not None and args.top < 1:
        raise CliError(f"--top must be at least 1, got {args.top}")


def hint_of(args: argparse.Namespace, probs_fn: Callable[[np.ndarray], np.ndarray]) -> tuple[Position, MoveHints | CubeHint]:
    """The position and what ``bgnet hint`` answers for ``args`` with the net ``probs_fn`` (also ``bgnet serve``'s)."""
    from bgnet.play.hint import cube_hint, move_hint
    from bgnet.core.movegen import parse_dice

    check_hint_arguments(args)
    pos, state, id_dice = position_and_state(args)
    dice = parse_dice(args.dice) if args.dice is not None else id_dice
    ply = args.ply
    if dice is None:
        return pos, cube_hint(probs_fn, pos, with_money_rules(args, state, is_xgid_source(args)), ply=ply)
    if args.cubeful or args.jacoby is not None or args.beavers is not None:
        state = with_money_rules(args, state, is_xgid_source(args))
    return pos, move_hint(probs_fn, pos, dice, ply=ply, state=state, top=args.top, cubeful=args.cubeful)


def add_cube_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``bgnet cube``."""
    parser.add_argument("position", metavar="POSITION",
                        help="a gnubg Position ID (optionally PositionID:MatchID) or an XGID")
    add_match_arguments(parser)
    add_money_rule_arguments(parser)
    add_engine_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def cube_of(args: argparse.Namespace, probs_fn: Callable[[np.ndarray], np.ndarray]) -> CubeHint:
    """What ``bgnet cube`` answers for ``args`` with the net ``probs_fn`` (also ``bgnet serve``'s ``/api/cube``)."""
    from bgnet.play.hint import cube_hint

    pos, state, _dice = position_and_state(args)
    state = with_money_rules(args, state, is_xgid_source(args))
    return cube_hint(probs_fn, pos, state, ply=check_ply_arg(args.ply))


def request_defaults(command: str) -> dict[str, Any]:
    """The arguments ``bgnet COMMAND POSITION`` gets when nothing else is given (``command`` "hint" or "cube")."""
    declare = {"hint": add_hint_arguments, "cube": add_cube_arguments}[command]
    parser = argparse.ArgumentParser(add_help=False)
    declare(parser)
    return vars(parser.parse_args(["POSITION"]))
