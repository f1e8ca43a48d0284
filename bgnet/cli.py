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
from typing import Callable, NoReturn, Sequence

PROG = "bgnet"
EXIT_USAGE = 2


class CliError(ValueError):
    """A command-line problem reported as one line and exit status 2."""


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
    from bgnet.movegen import legal_moves, parse_dice
    from bgnet.position import Position

    pos = Position.parse(args.position)
    dice = parse_dice(args.dice)
    moves = legal_moves(pos, dice)
    if args.json:
        out = {
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
        print(json.dumps(out))
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bgnet`` with ``argv`` (default: the process arguments); returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except ValueError as err:
        message = " ".join(str(err).split()) or type(err).__name__
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `bgnet moves ... | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
