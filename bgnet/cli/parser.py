"""The argparse pieces every ``bgnet`` front end shares: the one-sentence usage error and the backend flags."""

from __future__ import annotations

import argparse
from typing import NoReturn

from bgnet.sim.backends import BACKENDS

PROG = "bgnet"
EXIT_USAGE = 2
"""The exit status of a usage error or any ``BgnetError``."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def add_backend_arguments(parser: argparse.ArgumentParser, workers_flag: bool = False) -> None:
    """Declare ``--backend local|ray`` and ``--ray-address`` (and ``--workers`` when asked) on a parser."""
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="where the chunks run: this machine (local) or Ray (default local; results do not depend on it)")
    parser.add_argument("--ray-address", metavar="ADDRESS", default=None,
                        help="Ray cluster to attach to, e.g. 10.0.0.1:6379 or auto (default: start a local Ray instance)")
    if workers_flag:
        parser.add_argument("--workers", type=int, default=None,
                            help="chunks run at once (default 1 locally, every CPU of the cluster on Ray)")
