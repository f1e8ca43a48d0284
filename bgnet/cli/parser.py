"""The argparse pieces every ``bgnet`` front end shares: the one-sentence usage error, the backend flags, the
cube rule flags, and the rule that only a ``BgnetError`` becomes a one-sentence error (anything else is a bug with
its traceback)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from typing import Callable, Collection, NoReturn

from bgnet.core.errors import BgnetError
from bgnet.cube.match import DEFAULT_MONEY_RULES, MATCH, CubeRules
from bgnet.sim.backends import BACKENDS

PROG = "bgnet"
EXIT_USAGE = 2
"""The exit status of a usage error or any ``BgnetError``."""
EXIT_INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT, as a shell reports it)."""


class CliError(BgnetError):
    """Command-line options that cannot be used as given: out of range, or contradicting each other."""


def run_command(prog: str, command: Callable[[], int]) -> int:
    """``command()``'s exit status; a ``BgnetError`` becomes one sentence on stderr and exit status 2.

    Anything else is a bug and propagates with its traceback; Ctrl-C prints one line and gives 130.
    """
    try:
        return int(command())
    except BgnetError as err:
        message = " ".join(str(err).split()) or type(err).__name__
        print(f"{prog}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # Ctrl-C before the command could stop cleanly on its own
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def add_backend_arguments(parser: argparse.ArgumentParser, workers_flag: bool = False,
                          help_for: dict[str, str] | None = None) -> None:
    """Declare ``--backend local|ray`` and ``--ray-address`` (and ``--workers`` when asked) on a parser;
    ``help_for`` replaces the help of a flag by its name (``backend``, ``ray_address``, ``workers``)."""
    helps = {"backend": "where the chunks run: this machine (local) or Ray (default local; results do not depend on it)",
             "ray_address": "Ray cluster to attach to, e.g. 10.0.0.1:6379 or auto (default: start a local Ray instance)",
             "workers": "chunks run at once (default 1 locally, every CPU of the cluster on Ray)", **(help_for or {})}
    parser.add_argument("--backend", choices=BACKENDS, default="local", help=helps["backend"])
    parser.add_argument("--ray-address", metavar="ADDRESS", default=None, help=helps["ray_address"])
    if workers_flag:
        parser.add_argument("--workers", type=int, default=None, help=helps["workers"])


RULES_HELP = ("Money play assumes GNU Backgammon's defaults: " + DEFAULT_MONEY_RULES.describe(True)
              + ". A rule a Match ID or XGID records (a Match ID the Jacoby rule, an XGID the Jacoby rule and "
              "beavers) wins over the default; a flag wins over both.")
"""The description of the cube rule flags in every command's help."""


def add_cube_rule_arguments(parser: argparse.ArgumentParser, skip: Collection[str] = ()) -> None:
    """Declare one flag per ``CubeRules`` field (``--jacoby/--no-jacoby``, ..., ``--max-cube N``), each None unless
    given; ``skip`` names rules that mean nothing to the command. ``cube_rule_choices`` reads them back."""
    group = parser.add_argument_group("cube rules", RULES_HELP)
    for f in fields(CubeRules):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        default = getattr(DEFAULT_MONEY_RULES, f.name)
        if f.type in ("bool", bool):
            where = "" if f.metadata["play"] == MATCH else " for money"
            group.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                               help=f"{f.metadata['help']} (default{where}: {'on' if default else 'off'})")
        else:
            group.add_argument(flag, type=int, default=None, metavar="N", help=f"{f.metadata['help']}")


def cube_rule_choices(args: argparse.Namespace) -> dict[str, bool | int]:
    """The cube rules given as flags (``add_cube_rule_arguments``), by name; the rules not given are left out."""
    chosen = {f.name: getattr(args, f.name, None) for f in fields(CubeRules)}
    return {name: value for name, value in chosen.items() if value is not None}


def add_precision_argument(parser: argparse.ArgumentParser) -> None:
    """``--precision``: the arithmetic of the net's evaluations (``bgnet.nets.bf16net``)."""
    from bgnet.nets.bf16net import PRECISIONS

    parser.add_argument("--precision", choices=PRECISIONS, default="float32",
                        help="the net's arithmetic: float32 (default) or bfloat16 (on CPUs with AMX about half the "
                             "net's cost in large batches; chances within about 0.001 of float32's; the same seed "
                             "gives the same result on any number of workers of the same machine)")


def note_precision(prog: str, precision: str) -> None:
    """Say on stderr, in one line, when the asked-for ``precision`` is slower on this CPU than the default
    (``bgnet.nets.bf16net.precision_note``: bfloat16 without AMX tiles); the command still runs as asked."""
    from bgnet.nets.bf16net import precision_note

    note = precision_note(precision)
    if note is not None:
        print(f"{prog}: note: {note}", file=sys.stderr)


def add_prune_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-prune``: searches value every reply (``bgnet.nets.pruning``)."""
    parser.add_argument("--no-prune", action="store_true",
                        help="value every reply inside the search (slower); by default the released net's "
                             "pruning net picks the few replies of each roll that the net values")
