"""The ``bgnet`` command line: one function per subcommand, listed in ``SUBCOMMANDS``.

Each subcommand has an ``add_<name>_arguments(parser)`` that declares its
arguments and a ``run_<name>(args) -> int`` that turns them into a request of
``bgnet.app.requests`` (the same one ``bgnet serve`` builds from JSON) and prints
the answer; heavy modules (torch, the evaluator) are imported inside
``run_<name>`` only, so that quick commands such as ``bgnet moves`` start fast.
A ``BgnetError`` becomes one line ``bgnet: error: ...`` on stderr and exit status
2; any other exception is a bug and keeps its traceback. The ``bgnet`` script and
``python -m bgnet`` run ``program``: ``main`` with the garbage collector kept off the imports.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from bgnet.app.requests import DEFAULT_PLY, CubeRequest, HintRequest, MovesRequest, check_ply, check_seed
from bgnet.cli.analyze import add_analyze_arguments, run_analyze  # stdlib-only: the analysis loads in run_analyze
from bgnet.cli.parser import PROG, CliError, Parser, add_cube_rule_arguments, add_prune_argument, cube_rule_choices, run_command
from bgnet.cube.match import DECISION_SKIPS
from bgnet.cli.rollout import add_rollout_arguments, run_rollout  # stdlib-only: the rollout loads in run_rollout
from bgnet.serve.cli import add_serve_arguments, run_serve  # stdlib-only module: the web stack loads in run_serve

if TYPE_CHECKING:  # heavy or unused at run time: imported inside the subcommands
    from bgnet.core.position import Position
    from bgnet.play.hint import CubeHint, MoveHints


# -- bgnet moves ------------------------------------------------------------------


def add_moves_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``bgnet moves``."""
    parser.add_argument("position", metavar="POSITION", help="a gnubg Position ID (e.g. 4HPwATDgc/ABMA) or an XGID")
    parser.add_argument("dice", metavar="DICE", help="the roll, e.g. 31 or 3-1")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def run_moves(args: argparse.Namespace) -> int:
    """Print the board and every legal play of the dice with its afterstate Position ID."""
    from bgnet.app.answers import moves_of, moves_to_dict

    from bgnet.core.movegen import roll_text

    pos, dice, moves = moves_of(MovesRequest(position=args.position, dice=args.dice))
    if args.json:
        print(json.dumps(moves_to_dict(pos, dice, moves)))
        return 0
    print(pos)
    print()
    print(f"Position ID {pos.position_id()}, dice {roll_text(dice)}: {_plays(len(moves), moves[0].is_empty)}")
    width = max([len(m.text) for m in moves] + [len("(no play)")])
    for i, m in enumerate(moves, start=1):
        after = m.after.swap_sides().position_id() if m.after is not None else ""
        print(f"{i:4d}. {m.text or '(no play)':<{width}}  {after}")
    return 0


def _plays(n: int, empty: bool) -> str:
    """'1 legal play', 'n legal plays' or 'no legal play'."""
    if empty:
        return "no legal play (the opponent rolls next in the same position)"
    return (f"{n} legal play" + ("" if n == 1 else "s")
            + " (the Position ID after each, opponent on roll, as GNU Backgammon shows it)")


# -- shared by hint and cube ---------------------------------------------------------


MODEL_HELP = ("the net: default (the released net), a checkpoint file, gnubg (needs gnubg-nn), each with an "
              "optional @ply (default@1)")
"""The help of every ``--model``: the specifications of ``bgnet.play.agents.load_agent``."""


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """``--ply`` and ``--model``."""
    from bgnet.play.search import MAX_PLY

    parser.add_argument("--ply", type=int, default=None, metavar="N",
                        help=f"search depth from 0 (the net alone, fastest) to {MAX_PLY} (a few seconds) "
                             f"(default {DEFAULT_PLY}, about a second, or the @ply of --model)")
    parser.add_argument("--model", metavar="SPEC", default=None, help=MODEL_HELP + " (default: default)")
    add_prune_argument(parser)




def add_match_arguments(parser: argparse.ArgumentParser) -> None:
    """``--match`` or ``--xgid`` for the score and cube."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--match", metavar="MATCHID",
                       help="gnubg Match ID with the score and cube (default: money, cube centred)")
    group.add_argument("--xgid", metavar="XGID", help="an XGID whose score and cube to use")


def _print_hint(pos: Position, hint: MoveHints | CubeHint, as_json: bool) -> None:
    """The board and the hint's text, or the hint's JSON object."""
    if as_json:
        print(json.dumps(hint.to_dict()))
    else:
        print(pos)
        print()
        print(hint.format())


# -- bgnet hint -------------------------------------------------------------------


def add_hint_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``bgnet hint``."""
    parser.add_argument("position", metavar="POSITION",
                        help="a gnubg Position ID (optionally PositionID:MatchID) or an XGID")
    parser.add_argument("dice", metavar="DICE", nargs="?", default=None,
                        help="the roll, e.g. 31 or 3-1; without it (and no dice in an XGID) the cube hint")
    add_match_arguments(parser)
    add_cube_rule_arguments(parser, skip=DECISION_SKIPS)
    add_engine_arguments(parser)
    parser.add_argument("--top", type=int, default=None, metavar="N", help="show only the best N plays")
    equity = parser.add_mutually_exclusive_group()
    equity.add_argument("--cubeful", action="store_true", default=True,
                        help="rank plays by cubeful equity, the opponent's best cube action next (the default, as "
                             "GNU Backgammon and XG show them)")
    equity.add_argument("--cubeless", dest="cubeful", action="store_false",
                        help="rank plays by cubeless equity instead")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def run_hint(args: argparse.Namespace) -> int:
    """Print the plays of the dice ranked by equity (cubeful unless asked), or without dice the cube decision."""
    from bgnet.app.answers import hint_of, load_probs_fn, search_ply

    request = HintRequest(position=args.position, dice=args.dice, match=args.match, xgid=args.xgid,
                          rules=cube_rule_choices(args), ply=search_ply(args.model, args.ply), top=args.top,
                          cubeful=args.cubeful)
    pos, hint = hint_of(request, load_probs_fn(args.model, prune=not args.no_prune))
    _print_hint(pos, hint, args.json)
    return 0


# -- bgnet cube -------------------------------------------------------------------


def add_cube_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``bgnet cube``."""
    parser.add_argument("position", metavar="POSITION",
                        help="a gnubg Position ID (optionally PositionID:MatchID) or an XGID")
    add_match_arguments(parser)
    add_cube_rule_arguments(parser, skip=DECISION_SKIPS)
    add_engine_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def run_cube(args: argparse.Namespace) -> int:
    """Print the cube decision of the side on roll with its equities and take point."""
    from bgnet.app.answers import answer_state, cube_of, load_probs_fn, position_and_state, search_ply

    request = CubeRequest(position=args.position, match=args.match, xgid=args.xgid, rules=cube_rule_choices(args),
                          ply=search_ply(args.model, args.ply))
    answer_state(request, position_and_state(request)[1])  # a bad position or rule is refused before the net loads
    pos, hint = cube_of(request, load_probs_fn(args.model, prune=not args.no_prune))
    _print_hint(pos, hint, args.json)
    return 0


# -- bgnet play -------------------------------------------------------------------


def add_play_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``bgnet play``."""
    from bgnet.play.search import MAX_PLY

    parser.add_argument("--model", metavar="SPEC", default=None,
                        help="the bot: " + MODEL_HELP + ", pubeval, random (default: default)")
    parser.add_argument("--length", type=int, default=0, metavar="N",
                        help="match length in points (default 0: a single money game)")
    parser.add_argument("--ply", type=int, default=None, metavar="N",
                        help=f"the bot's search depth from 0 to {MAX_PLY} (default 0, or the @ply of --model)")
    parser.add_argument("--seed", type=int, default=None, metavar="S",
                        help="seed for the dice, 0 or more (default: random)")
    parser.add_argument("--save", metavar="FILE", default=None,
                        help="write the games to FILE (.mat, or .sgf by the suffix) for GNU Backgammon, XG or "
                             "bgnet analyze")
    add_cube_rule_arguments(parser)
    parser.epilog = "Exit status: 0 when the game ends or you type quit; 1 when the input ends first (game unfinished)."


def run_play(args: argparse.Namespace) -> int:
    """Play a money game or a match against the bot in the terminal, one command per line."""
    from bgnet.app.answers import probs_fn_of, search_ply

    ply = check_ply(search_ply(args.model, args.ply, default=0))
    if args.length < 0:
        raise CliError(f"--length must be 0 (a money game) or a positive match length, got {args.length}")
    if args.seed is not None:
        check_seed(args.seed)
    from bgnet.cli.play import play_session
    from bgnet.cube.match import DEFAULT_MONEY_RULES
    from bgnet.play.agents import load_agent
    from bgnet.play.game import Rules

    money = args.length == 0
    rules = Rules(match_length=args.length, cube_rules=DEFAULT_MONEY_RULES.choose(cube_rule_choices(args), money))
    bot = load_agent(args.model or "default", ply)
    return play_session(bot, length=args.length, seed=args.seed, inp=sys.stdin, out=sys.stdout,
                        probs_fn=probs_fn_of(bot), ply=ply, rules=rules, save=args.save)


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
    Subcommand("analyze", "rate every play and cube action of a .mat or .sgf match file", add_analyze_arguments,
               run_analyze),
    Subcommand("rollout", "roll out the plays of a roll, or the cube decision, with variance reduction",
               add_rollout_arguments, run_rollout),
]


PASSTHROUGH = {"eval": "pit two bots against each other with paired dice (also tournaments, learning curves)",
               "train": "train a net by TD(lambda) self-play from a config (--config quick)"}
"""Subcommands with their own parsers (``bgnet.cli.eval``, ``bgnet.cli.train``), by name with their help: the
rest of the command line goes to them unparsed (``python -m eval`` and ``python -m train`` in the repository)."""


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser with one subparser per entry of ``SUBCOMMANDS``, and ``PASSTHROUGH``'s listed in
    ``--help``."""
    parser = Parser(prog=PROG, description="bgnet: a backgammon neural-network bot.",
                    epilog=f"'{PROG} COMMAND --help' gives the arguments of each command.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for cmd in SUBCOMMANDS:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(p)
        p.set_defaults(run=cmd.run)
    for name, help_text in PASSTHROUGH.items():  # listed only: main() hands them their arguments first
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _run_passthrough(command: str, rest: list[str]) -> int:
    """Hand ``rest`` to the trainer's or the evaluator's own command line, named ``bgnet train``/``bgnet eval``."""
    if command == "train":
        from bgnet.cli.train import main as train_main

        return int(train_main(rest, prog=f"{PROG} train"))
    from bgnet.cli.eval import main as eval_main

    return int(eval_main(rest, prog=f"{PROG} eval"))


def _command(raw: list[str]) -> Callable[[], int]:
    """The command ``raw`` asks for, parsed (its parser's imports done), ready to run; returns its exit status."""
    if raw and raw[0] in PASSTHROUGH:
        return lambda: _run_passthrough(raw[0], raw[1:])
    args = build_parser().parse_args(raw)

    def run() -> int:
        from bgnet.core.first_run import compile_notice  # imports numba, which every subcommand's run needs

        try:
            with compile_notice(PROG):  # a cold start says that numba is compiling, on stderr
                return run_command(PROG, lambda: args.run(args))
        except BrokenPipeError:  # e.g. `bgnet moves ... | head`
            sys.stderr.close()
            return 0
    return run


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bgnet`` with ``argv`` (default: the process arguments); returns the exit status."""
    return _command(list(sys.argv[1:] if argv is None else argv))()


def program() -> int:
    """The ``bgnet`` program: ``main`` with the garbage collector kept off the objects that live as long as the
    process (numba's and the modules'), which it would otherwise sweep while they are imported and again at exit:
    about 0.1 s of every command (``bench/startup.py``)."""
    gc.disable()
    try:
        command = _command(sys.argv[1:])
    finally:
        gc.freeze()  # the imports' objects: kept, and left out of every sweep from now on
        gc.enable()  # the command itself collects its garbage
    try:
        return command()
    finally:
        gc.freeze()  # the interpreter's exit then leaves them to the end of the process


if __name__ == "__main__":
    sys.exit(program())
