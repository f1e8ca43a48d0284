"""The ``bgnet`` command line: one function per subcommand, listed in ``SUBCOMMANDS``.

Each subcommand has an ``add_<name>_arguments(parser)`` that declares its
arguments and a ``run_<name>(args) -> int`` that does the work; heavy modules
(torch, the evaluator) are imported inside ``run_<name>`` only, so that quick
commands such as ``bgnet moves`` start fast.  Any ``ValueError`` from the
library becomes one line ``bgnet: error: ...`` on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, NoReturn, Sequence

from bgnet.app.answers import (CliError, add_cube_arguments, add_hint_arguments, check_hint_arguments, check_ply_arg,
                           cube_of, hint_of, is_xgid_source, load_probs_fn, moves_to_dict, position_and_state,
                           with_money_rules)  # shared with bgnet serve
from bgnet.serve.cli import add_serve_arguments, run_serve  # stdlib-only module: the web stack loads in run_serve
from bgnet.cli.analyze import add_analyze_arguments, run_analyze  # stdlib-only: the analysis loads in run_analyze
from bgnet.cli.rollout import add_rollout_arguments, run_rollout  # stdlib-only: the rollout loads in run_rollout

if TYPE_CHECKING:  # heavy or unused at run time: imported inside the subcommands
    from bgnet.play.hint import CubeHint, MoveHints
    from bgnet.core.position import Position

PROG = "bgnet"
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


# -- bgnet moves ------------------------------------------------------------------


def add_moves_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``bgnet moves``."""
    parser.add_argument("position", metavar="POSITION", help="a gnubg Position ID (e.g. 4HPwATDgc/ABMA) or an XGID")
    parser.add_argument("dice", metavar="DICE", help="the roll, e.g. 31 or 3-1")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def run_moves(args: argparse.Namespace) -> int:
    """Print the board and every legal play of the dice with its afterstate Position ID."""
    from bgnet.core.movegen import legal_moves, parse_dice
    from bgnet.core.position import Position

    pos = Position.parse(args.position)
    dice = parse_dice(args.dice)
    moves = legal_moves(pos, dice)
    if args.json:
        print(json.dumps(moves_to_dict(pos, dice, moves)))
        return 0
    print(pos)
    print()
    print(f"Position ID {pos.position_id()}, dice {dice[0]}-{dice[1]}: {_plays(len(moves), moves[0].is_empty)}")
    width = max([len(m.text) for m in moves] + [len("(no play)")])
    for i, m in enumerate(moves, start=1):
        after = m.after.position_id() if m.after is not None else ""
        print(f"{i:4d}. {m.text or '(no play)':<{width}}  {after}")
    return 0


def _plays(n: int, empty: bool) -> str:
    """'1 legal play', 'n legal plays' or 'no legal play'."""
    if empty:
        return "no legal play (the afterstate is the position itself)"
    return f"{n} legal play" + ("" if n == 1 else "s") + " (afterstate Position IDs from the mover's side)"


# -- shared by hint, cube and play ---------------------------------------------------


def _print_hint(pos: Position, hint: MoveHints | CubeHint, as_json: bool) -> None:
    """The board and the hint's text, or the hint's JSON object."""
    if as_json:
        print(json.dumps(hint.to_dict()))
    else:
        print(pos)
        print()
        print(hint.format())


# -- bgnet hint -------------------------------------------------------------------


def run_hint(args: argparse.Namespace) -> int:
    """Print the plays of the dice ranked by equity, or without dice the cube decision."""
    check_hint_arguments(args)
    pos, hint = hint_of(args, load_probs_fn(args.model))
    _print_hint(pos, hint, args.json)
    return 0


# -- bgnet cube -------------------------------------------------------------------


def run_cube(args: argparse.Namespace) -> int:
    """Print the cube decision of the side on roll with its equities and take point."""
    pos, state, _dice = position_and_state(args)
    state = with_money_rules(args, state, is_xgid_source(args))
    check_ply_arg(args.ply)
    _print_hint(pos, cube_of(args, load_probs_fn(args.model)), args.json)
    return 0


# -- bgnet play -------------------------------------------------------------------


def add_play_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``bgnet play``."""
    parser.add_argument("--model", metavar="PATH", default=None,
                        help="the bot's checkpoint (default: the shipped checkpoints/bgnet.pt)")
    parser.add_argument("--length", type=int, default=0, metavar="N",
                        help="match length in points (default 0: a single money game)")
    parser.add_argument("--ply", type=int, default=0, metavar="N", help="the bot's search depth (default 0)")
    parser.add_argument("--seed", type=int, default=None, metavar="S", help="seed for the dice (default: random)")
    parser.add_argument("--save", metavar="FILE", default=None,
                        help="write the games to FILE (.mat, or .sgf by the suffix) for GNU Backgammon, XG or bgnet analyze")
    parser.add_argument("--jacoby", action=argparse.BooleanOptionalAction, default=False,
                        help="money game: gammons count single until the cube is turned (default: off)")
    parser.add_argument("--beavers", action="store_true", help="money game: a doubled player may beaver")
    parser.add_argument("--raccoons", action="store_true", help="money game: a beavered doubler may raccoon (needs --beavers)")
    parser.add_argument("--holland", action="store_true",
                        help="match: post-Crawford the trailer may not double until both sides have rolled twice")


def run_play(args: argparse.Namespace) -> int:
    """Play a money game or a match against the bot in the terminal, one command per line."""
    ply = check_ply_arg(args.ply)
    if args.length < 0:
        raise CliError(f"--length must be 0 (a money game) or a positive match length, got {args.length}")
    from bgnet.play.agents import DEFAULT_CHECKPOINT, NeuralAgent
    from bgnet.cli.play import play_session

    from bgnet.play.game import Rules

    rules = Rules(match_length=args.length, jacoby=args.jacoby, beavers=args.beavers, raccoons=args.raccoons,
                  holland=args.holland)
    bot = NeuralAgent(args.model or DEFAULT_CHECKPOINT, ply)
    return play_session(bot, length=args.length, seed=args.seed, inp=sys.stdin, out=sys.stdout,
                        probs_fn=bot.probs_fn, ply=ply, rules=rules, save=args.save)


# -- the table of subcommands -------------------------------------------------------


@dataclass(frozen=True)
class Subcommand:
    """One ``bgnet`` subcommand: its name, one-line help, argument declarer and runner."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


SUBCOMMANDS: list[Subcommand] = [
    Subcommand("moves", "list every legal play of a roll in a position", add_moves_arguments, run_moves),
    Subcommand("hint", "rank the plays of a roll by equity, or give the cube hint", add_hint_arguments, run_hint),
    Subcommand("cube", "the cube decision for the side on roll", add_cube_arguments, run_cube),
    Subcommand("play", "play a game or match against the bot in the terminal", add_play_arguments, run_play),
    Subcommand("serve", "serve the board page and a JSON API (localhost by default)", add_serve_arguments, run_serve),
    Subcommand("analyze", "rate every play and cube action of a .mat or .sgf match file", add_analyze_arguments, run_analyze),
    Subcommand("rollout", "roll out the plays of a roll, or the cube decision, with variance reduction", add_rollout_arguments, run_rollout),
]


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser with one subparser per entry of ``SUBCOMMANDS``."""
    parser = _Parser(prog=PROG, description="bgnet: a backgammon neural-network bot.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for cmd in SUBCOMMANDS:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(p)
        p.set_defaults(run=cmd.run)
    return parser


PASSTHROUGH = ("train", "eval")
"""Subcommands with their own parsers: ``bgnet train`` is ``python -m train``, ``bgnet eval`` is ``python -m eval``."""


def _run_passthrough(command: str, rest: list[str]) -> int:
    """Hand ``rest`` to the trainer's or the evaluator's own command line."""
    if command == "train":
        from bgnet.trainer.selfplay import main as train_main

        return int(train_main(rest))
    from bgnet.cli.eval import main as eval_main

    return int(eval_main(rest))


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bgnet`` with ``argv`` (default: the process arguments); returns the exit status."""
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw and raw[0] in PASSTHROUGH:
        return _run_passthrough(raw[0], raw[1:])
    args = build_parser().parse_args(raw)
    try:
        return int(args.run(args))
    except ValueError as err:
        message = " ".join(str(err).split()) or type(err).__name__
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # Ctrl-C before a command could stop cleanly on its own
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `bgnet moves ... | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
